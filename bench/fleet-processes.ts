/**
 * bench:fleet's `ramp-recon` processes: each on the sandbox's clock (bench/clock-preload.ts), none outliving the bench
 * (killed when it exits; when it is killed outright, they notice their parent is gone and stop), and a worker's peak
 * memory and CPU read off /proc before it stops.
 */
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const CLI = fileURLToPath(new URL('../src/cli/main.js', import.meta.url));
const PRELOAD = new URL('./clock-preload.js', import.meta.url).href;
/** What is kept of a process's output: its end (a worker logging at info says a lot over a batch). */
const KEEP_CHARS = 1_000_000;

export interface CliOutcome {
  code: number | null;
  signal: NodeJS.Signals | null;
  out: string;
  err: string;
}

export interface CliProcess {
  child: ChildProcess;
  /** The output so far (its last KEEP_CHARS of each stream). */
  output(): { out: string; err: string };
  done: Promise<CliOutcome>;
}

/** Processes started and not yet ended. */
const live = new Set<ChildProcess>();
process.on('exit', () => {
  for (const child of live) child.kill('SIGKILL');
});

/** Kills every process still running (a signal to the bench: nothing of a batch is kept). */
export function killAll(): void {
  for (const child of live) child.kill('SIGKILL');
}

/**
 * `ramp-recon <args>` with `env`, its clock `clockOffsetMs` from the real one. npm_command set: the CLI then stops
 * when its parent is gone (its check under `npm run`, src/schedule/signals.ts), so a bench killed outright leaves no
 * worker nor `enqueue --wait` behind.
 */
export function startCli(args: string[], env: NodeJS.ProcessEnv, clockOffsetMs: number): CliProcess {
  const child = spawn(process.execPath, ['--import', PRELOAD, CLI, ...args], {
    env: { ...env, BENCH_CLOCK_OFFSET_MS: String(Math.round(clockOffsetMs)), npm_command: 'run-script' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  live.add(child);
  let out = '';
  let err = '';
  const keep = (s: string): string => (s.length > KEEP_CHARS ? s.slice(-KEEP_CHARS) : s);
  child.stdout!.on('data', (d: Buffer) => (out = keep(out + d.toString())));
  child.stderr!.on('data', (d: Buffer) => (err = keep(err + d.toString())));
  const done = new Promise<CliOutcome>((resolve) =>
    child.on('close', (code, signal) => {
      live.delete(child);
      resolve({ code, signal, out, err });
    }),
  );
  return { child, output: () => ({ out, err }), done };
}

/** The lines of a process's output, for an error message. */
export function tail(text: string, lines = 15): string {
  return text.trim().split('\n').slice(-lines).join('\n');
}

/** `count` workers, resolved once each says it takes jobs (its info log line): a batch's wall time has no start-up. */
export async function startWorkers(
  count: number,
  env: NodeJS.ProcessEnv,
  clockOffsetMs: number,
): Promise<CliProcess[]> {
  const workers = Array.from({ length: count }, () =>
    startCli(['worker'], { ...env, LOG_LEVEL: 'info' }, clockOffsetMs),
  );
  const READY = 'worker: taking account jobs';
  const ready = Promise.all(
    workers.map(
      (w, i) =>
        new Promise<void>((resolve, reject) => {
          const timer = setInterval(() => {
            const { out, err } = w.output();
            if (out.includes(READY) || err.includes(READY)) {
              clearInterval(timer);
              resolve();
            }
          }, 100);
          void w.done.then((o) => {
            clearInterval(timer);
            reject(
              new Error(`worker ${i + 1} exited (${o.code ?? o.signal}) before taking jobs:\n${tail(o.err || o.out)}`),
            );
          });
        }),
    ),
  );
  try {
    await ready;
  } catch (err) {
    await stopAll(workers);
    throw err;
  }
  return workers;
}

/** A process's peak resident memory (VmHWM, KiB), or null where /proc cannot tell (not Linux, or it has exited). */
export function peakMemoryKb(pid: number | undefined): number | null {
  if (pid === undefined) return null;
  try {
    const match = /^VmHWM:\s+(\d+) kB/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return match ? Number(match[1]) : null;
  } catch {
    return null;
  }
}

let ticksPerSecond: number | undefined;

/** The CPU a running process has spent (user + system, ms), or null where /proc cannot tell. */
export function cpuMs(pid: number | undefined): number | null {
  if (pid === undefined) return null;
  try {
    ticksPerSecond ??= Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim());
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // after the command name (in parentheses, may hold spaces): field 3 on; utime and stime are fields 14 and 15
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return ((Number(fields[11]) + Number(fields[12])) * 1000) / ticksPerSecond;
  } catch {
    return null;
  }
}

/** SIGTERM (a worker finishes its job in hand and exits); after `graceMs`, SIGKILL. Resolves when all have exited. */
export async function stopAll(processes: readonly CliProcess[], graceMs = 30_000): Promise<void> {
  for (const p of processes) p.child.kill('SIGTERM');
  const timer = setTimeout(() => processes.forEach((p) => p.child.kill('SIGKILL')), graceMs);
  await Promise.all(processes.map((p) => p.done));
  clearTimeout(timer);
}
