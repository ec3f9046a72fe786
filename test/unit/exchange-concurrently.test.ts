import { describe, expect, it } from 'vitest';
import { runConcurrently, type ExchangeSync } from '../../src/sources/exchange/sync-common.js';
import { checkAbort, SyncAbortedError } from '../../src/sources/common/abort.js';

const tick = () => new Promise((r) => setTimeout(r, 1));

/** Only the signal matters to runConcurrently; the rest is passed through untouched. */
function env(signal?: AbortSignal): ExchangeSync {
  return { signal, counters: { pages: 0 } } as unknown as ExchangeSync;
}

/** A listing of `pages` pages that checks for abort between pages, as walkWindows does. */
function listing(name: string, pages: number, log: string[], running: { now: number; max: number }, failAt?: number) {
  return async (e: ExchangeSync) => {
    running.now++;
    running.max = Math.max(running.max, running.now);
    try {
      for (let p = 0; p < pages; p++) {
        checkAbort(e.signal);
        if (p === failAt) throw new Error(`${name} failed`);
        log.push(`${name}${p}`);
        await tick();
      }
    } finally {
      running.now--;
    }
  };
}

describe('runConcurrently', () => {
  it('runs every task, at most `concurrency` at once', async () => {
    const log: string[] = [];
    const running = { now: 0, max: 0 };
    const e = env();
    await runConcurrently(
      e,
      ['a', 'b', 'c', 'd', 'e'].map((n) => listing(n, 3, log, running)),
      2,
    );
    expect(running.max).toBe(2);
    expect(log.sort()).toEqual([
      'a0',
      'a1',
      'a2',
      'b0',
      'b1',
      'b2',
      'c0',
      'c1',
      'c2',
      'd0',
      'd1',
      'd2',
      'e0',
      'e1',
      'e2',
    ]);
  });

  it('runs one after another when concurrency is 1 (one database session)', async () => {
    const log: string[] = [];
    const running = { now: 0, max: 0 };
    await runConcurrently(
      env(),
      ['a', 'b'].map((n) => listing(n, 2, log, running)),
      1,
    );
    expect(running.max).toBe(1);
    expect(log).toEqual(['a0', 'a1', 'b0', 'b1']);
  });

  it('stops the others at their next page on the first failure, starts no new task, and throws that failure', async () => {
    const log: string[] = [];
    const running = { now: 0, max: 0 };
    const tasks = [listing('a', 50, log, running), listing('b', 50, log, running, 2), listing('c', 50, log, running)];
    await expect(runConcurrently(env(), tasks, 2)).rejects.toThrow('b failed');
    expect(log.filter((l) => l.startsWith('c'))).toEqual([]);
    expect(log.filter((l) => l.startsWith('a')).length).toBeLessThan(6);
    expect(running.now).toBe(0);
  });

  it('passes the caller abort on to every running task', async () => {
    const log: string[] = [];
    const running = { now: 0, max: 0 };
    const ctl = new AbortController();
    const p = runConcurrently(
      env(ctl.signal),
      ['a', 'b', 'c'].map((n) => listing(n, 1000, log, running)),
      3,
    );
    await tick();
    ctl.abort(new Error('stop'));
    await expect(p).rejects.toBeInstanceOf(SyncAbortedError);
    expect(log.length).toBeLessThan(60);
  });
});
