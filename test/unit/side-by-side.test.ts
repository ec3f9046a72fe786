import { describe, expect, it } from 'vitest';
import { allSettledOrThrow, sideBySideInOrder } from '../../src/util/side-by-side.js';

const after = <T>(ms: number, value: T, fail = false): Promise<T> =>
  new Promise((resolve, reject) => setTimeout(() => (fail ? reject(new Error(String(value))) : resolve(value)), ms));

describe('allSettledOrThrow', () => {
  it('returns the values in the order given, whatever order they settle in', async () => {
    expect(await allSettledOrThrow([after(30, 'a'), after(5, 'b'), after(15, 'c')])).toEqual(['a', 'b', 'c']);
  });

  it('throws only once every part has settled, the first failure in the order given', async () => {
    let slowDone = false;
    const slow = after(40, 'slow').then((v) => {
      slowDone = true;
      return v;
    });
    await expect(allSettledOrThrow([after(20, 'second', true), after(5, 'first', true), slow])).rejects.toThrow(
      'second',
    );
    expect(slowDone).toBe(true);
  });
});

describe('sideBySideInOrder', () => {
  /** A scan of pages (arrays of numbers), each after `ms`, that logs when it reads and when it stops. */
  function scan(name: string, pages: number[][], ms: number, log: string[], failAt = -1): AsyncIterable<number[]> {
    return (async function* () {
      try {
        for (const [i, page] of pages.entries()) {
          await after(ms, null);
          if (i === failAt) throw new Error(`${name} failed`);
          log.push(`${name}${i}`);
          yield page;
        }
      } finally {
        log.push(`${name} stopped`);
      }
    })();
  }

  it('hands the pages over in the scans order while the later scan reads ahead', async () => {
    const log: string[] = [];
    const out: number[][] = [];
    const a = scan('a', [[1], [2], [3]], 20, log);
    const b = scan('b', [[4], [5]], 5, log);
    for await (const page of sideBySideInOrder([a, b], (p) => p.length, 10)) out.push(page);
    expect(out).toEqual([[1], [2], [3], [4], [5]]);
    // b read both its pages before a's first one came: the two ran side by side.
    expect(log.indexOf('b1')).toBeLessThan(log.indexOf('a0'));
  });

  it('a later scan stops reading ahead while it holds maxHeld', async () => {
    const log: string[] = [];
    const a = scan('a', [[1], [2]], 30, log);
    const b = scan(
      'b',
      [
        [1, 1],
        [1, 1],
        [1, 1],
        [1, 1],
      ],
      1,
      log,
    );
    const out: number[][] = [];
    for await (const page of sideBySideInOrder([a, b], (p) => p.length, 3)) {
      if (out.length === 0)
        expect(log.filter((e) => e.startsWith('b') && !e.includes('stopped'))).toEqual(['b0', 'b1']);
      out.push(page);
    }
    expect(out.length).toBe(6);
  });

  it('throws the first failure at once and stops the other scans', async () => {
    const log: string[] = [];
    const a = scan('a', [[1], [2], [3], [4]], 25, log);
    const b = scan('b', [[5], [6]], 5, log, 1);
    const out: number[][] = [];
    await expect(
      (async () => {
        for await (const page of sideBySideInOrder([a, b], (p) => p.length, 10)) out.push(page);
      })(),
    ).rejects.toThrow('b failed');
    expect(out.length).toBeLessThan(3);
    expect(log).toContain('a stopped');
    expect(log).toContain('b stopped');
  });

  it('stops every scan when the consumer stops early', async () => {
    const log: string[] = [];
    const a = scan('a', [[1], [2], [3]], 5, log);
    const b = scan('b', [[4], [5], [6]], 5, log);
    for await (const page of sideBySideInOrder([a, b], (p) => p.length, 10)) if (page[0] === 1) break;
    expect(log).toContain('a stopped');
    expect(log).toContain('b stopped');
    expect(log).not.toContain('a2');
  });
});
