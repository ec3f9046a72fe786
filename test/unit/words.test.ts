import { describe, expect, it } from 'vitest';
import { listText, plural } from '../../src/util/words.js';

describe('counts and lists in words', () => {
  it('says one thing in the singular, any other count in the plural', () => {
    expect([0, 1, 2].map((n) => plural(n, 'attempt'))).toEqual(['0 attempts', '1 attempt', '2 attempts']);
    expect(plural(1, 'entry', 'entries')).toBe('1 entry');
    expect(plural(3, 'entry', 'entries')).toBe('3 entries');
  });

  it('joins a list with commas and a final "and"', () => {
    expect([[], ['A'], ['A', 'B'], ['A', 'B', 'C']].map(listText)).toEqual(['', 'A', 'A and B', 'A, B and C']);
  });
});
