import { describe, expect, it } from 'vitest';
import { allSettledOrThrow } from '../../src/util/side-by-side.js';

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
