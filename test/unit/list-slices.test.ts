/**
 * The reconcile's list of judged fill ids, cut into the pages it judges, and those pages asked for ahead
 * (store/db/keyset.ts listSlices, idRanges, prefetched).
 */
import { describe, expect, it } from 'vitest';
import { idRanges, listSlices, prefetched } from '../../src/store/db/keyset.js';

describe('listSlices', () => {
  it('cuts a comma-separated list into slices of at most `size` items, in order, every item once', () => {
    expect([...listSlices('1,2,3,4,5', 2)]).toEqual(['1,2', '3,4', '5']);
    expect([...listSlices('1,2,3,4', 2)]).toEqual(['1,2', '3,4']);
    expect([...listSlices('10,200,3000', 5)]).toEqual(['10,200,3000']);
    expect([...listSlices('7', 1)]).toEqual(['7']);
    expect([...listSlices('1,2,3', 1)]).toEqual(['1', '2', '3']);
  });

  it('gives no slice for no list', () => {
    expect([...listSlices(null, 3)]).toEqual([]);
    expect([...listSlices('', 3)]).toEqual([]);
  });

  it('keeps every id of a long list, each slice full but the last', () => {
    const ids = Array.from({ length: 1234 }, (_, i) => String(9_000_000_000_000_000 + i * 7));
    const slices = [...listSlices(ids.join(','), 500)].map((s) => s.split(','));
    expect(slices.map((s) => s.length)).toEqual([500, 500, 234]);
    expect(slices.flat()).toEqual(ids);
  });
});

describe('idRanges', () => {
  it('gives each slice as (after, through] with the ids of the subset in it, the first from the start given', () => {
    expect([...idRanges('-5,2,3,40,41,500,600', 3, '-5,41,600', '-9')]).toEqual([
      { after: '-9', through: '3', subset: ['-5'] },
      { after: '3', through: '500', subset: ['41'] },
      { after: '500', through: '600', subset: ['600'] },
    ]);
  });

  it('compares ids as integers beyond 2^53, not as text', () => {
    const big = ['9007199254740993', '9007199254740995', '10000000000000000001'];
    expect([...idRanges(big.join(','), 1, `${big[1]},${big[2]}`)]).toEqual([
      { after: null, through: big[0], subset: [] },
      { after: big[0], through: big[1], subset: [big[1]] },
      { after: big[1], through: big[2], subset: [big[2]] },
    ]);
  });

  it('gives no range for no list, and empty subsets for no subset', () => {
    expect([...idRanges(null, 3, '1')]).toEqual([]);
    expect([...idRanges('1,2', 5, null)]).toEqual([{ after: null, through: '2', subset: [] }]);
  });
});

describe('prefetched', () => {
  /** Pages that answer when told to, recording how many were asked for and not yet taken. */
  function pagesOnDemand() {
    const asked: number[] = [];
    const answer = new Map<number, () => void>();
    const fetch = (item: number) =>
      new Promise<string>((resolve) => {
        asked.push(item);
        answer.set(item, () => resolve(`page ${item}`));
      });
    return { asked, answer, fetch };
  }

  it("asks for the next `ahead` pages while the consumer holds one, and yields them in the items' order", async () => {
    const { asked, answer, fetch } = pagesOnDemand();
    const pages = prefetched([1, 2, 3, 4, 5][Symbol.iterator](), fetch, 2);
    const first = pages.next();
    await Promise.resolve();
    expect(asked).toEqual([1, 2]);
    // The second page answers first: the first is still what comes first.
    answer.get(2)!();
    answer.get(1)!();
    expect((await first).value).toBe('page 1');
    expect(asked).toEqual([1, 2, 3]);
    const rest: string[] = [];
    const consume = (async () => {
      for await (const page of pages) rest.push(page);
    })();
    // Every page asked for answers at once from here on; never more than two are asked for and not yet taken.
    for (let i = 0; i < 10; i++) {
      await new Promise((r) => setTimeout(r, 0));
      expect(asked.length - rest.length - 1).toBeLessThanOrEqual(2);
      for (const item of asked) answer.get(item)!();
    }
    await consume;
    expect(rest).toEqual(['page 2', 'page 3', 'page 4', 'page 5']);
    expect(asked).toEqual([1, 2, 3, 4, 5]);
  });

  it('asks for one page ahead by default', async () => {
    const { asked, answer, fetch } = pagesOnDemand();
    const pages = prefetched([1, 2, 3][Symbol.iterator](), fetch);
    const first = pages.next();
    await Promise.resolve();
    expect(asked).toEqual([1]);
    answer.get(1)!();
    expect((await first).value).toBe('page 1');
    expect(asked).toEqual([1, 2]);
    answer.get(2)!();
    await pages.return(undefined);
    expect(asked).toEqual([1, 2]);
  });

  it('ends, when a page fails or the consumer stops, only once every page asked for has settled', async () => {
    const settled: number[] = [];
    const fetch = (item: number) =>
      new Promise<string>((resolve, reject) =>
        setTimeout(
          () => {
            settled.push(item);
            if (item === 2) reject(new Error('page 2 refused'));
            else resolve(`page ${item}`);
          },
          item === 3 ? 30 : 1,
        ),
      );
    // Page 2 fails while page 3, asked for beside it, still runs: the failure comes after page 3 settled.
    const failing = prefetched([1, 2, 3, 4][Symbol.iterator](), fetch, 2);
    expect((await failing.next()).value).toBe('page 1');
    await expect(failing.next()).rejects.toThrow('page 2 refused');
    expect(settled).toEqual([1, 2, 3]);
    // The consumer stops after the first page: the stop waits for the pages in flight (2 and 3).
    settled.length = 0;
    const stopped = prefetched([1, 3, 5][Symbol.iterator](), fetch, 2);
    expect((await stopped.next()).value).toBe('page 1');
    await stopped.return(undefined);
    expect(settled).toEqual([1, 5, 3]);
  });
});
