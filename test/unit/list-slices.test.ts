/** The reconcile's list of judged fill ids, cut into the pages it judges (store/db/keyset.ts listSlices). */
import { describe, expect, it } from 'vitest';
import { listSlices } from '../../src/store/db/keyset.js';

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
