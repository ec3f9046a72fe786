/** Facts about other processes on this machine. */

/**
 * Whether a process with this pid exists (signal 0 checks without sending; EPERM: it exists, owned by another user).
 */
export function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}
