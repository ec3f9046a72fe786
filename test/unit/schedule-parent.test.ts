/** Issue 42 item 7: a process npm started stops when npm is gone, since npm passes no SIGTERM on. */
import { describe, expect, it } from 'vitest';
import { startedByNpm, watchParent } from '../../src/schedule/signals.js';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('the parent process', () => {
  it('is watched until its pid changes (this process re-parented), then `gone` is called once', async () => {
    let ppid = 4242;
    let gone = 0;
    const stop = watchParent(() => (gone += 1), { intervalMs: 10, ppid: () => ppid });
    await sleep(60);
    expect(gone).toBe(0);
    ppid = 1;
    await sleep(60);
    ppid = 77; // re-parented again (a subreaper): still once
    await sleep(60);
    expect(gone).toBe(1);
    stop();
  });

  it('stops being watched when the handlers are removed', async () => {
    let ppid = 4242;
    let gone = 0;
    const stop = watchParent(() => (gone += 1), { intervalMs: 10, ppid: () => ppid });
    stop();
    ppid = 1;
    await sleep(60);
    expect(gone).toBe(0);
  });

  it('npm (npx, npm run, npm exec) is known by npm_command in the environment it gives its children', () => {
    expect(startedByNpm({ npm_command: 'exec', npm_lifecycle_event: 'npx' })).toBe(true);
    expect(startedByNpm({ npm_command: 'run-script' })).toBe(true);
    expect(startedByNpm({ PATH: '/usr/bin' })).toBe(false);
  });
});
