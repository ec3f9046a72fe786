/** The reconcile's list of judged fill ids, cut into the pages it judges (store/db/keyset.ts listSlices, idRanges). */
import { describe, expect, it } from 'vitest';
import { idRanges, listSlices } from '../../src/store/db/keyset.js';

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
