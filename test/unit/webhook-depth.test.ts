import { describe, expect, it } from 'vitest';
import { datedAheadReason, MAX_BODY_DEPTH, nestedDeeperThan } from '../../src/sources/partner/webhook-body.js';
import { deepValue } from '../helpers/webhook-corpus.js';

describe('body nesting depth, read without parsing', () => {
  it('counts arrays and objects, not brackets inside strings or escaped quotes', () => {
    expect(MAX_BODY_DEPTH).toBe(64);
    expect(nestedDeeperThan('{"a":[1,{"b":[]}]}', 4)).toBe(false);
    expect(nestedDeeperThan('{"a":[1,{"b":[]}]}', 3)).toBe(true);
    expect(nestedDeeperThan(`{"a":"${'['.repeat(1000)}"}`, 1)).toBe(false);
    expect(nestedDeeperThan(`{"a":"\\"${'{'.repeat(10)}\\\\","b":[[]]}`, 2)).toBe(true);
    expect(nestedDeeperThan(`{"a":"\\"${'{'.repeat(10)}\\\\","b":[[]]}`, 3)).toBe(false);
  });

  it('draws the line at the limit, and answers for text that is not JSON', () => {
    expect(nestedDeeperThan(`{"x":${deepValue(63)}}`, 64)).toBe(false);
    expect(nestedDeeperThan(`{"x":${deepValue(64)}}`, 64)).toBe(true);
    expect(nestedDeeperThan('['.repeat(1_000_000), 64)).toBe(true);
    expect(nestedDeeperThan(']]]]'.repeat(100) + '['.repeat(64), 64)).toBe(false);
    expect(nestedDeeperThan('"unterminated [[[[', 1)).toBe(false);
  });
});

describe('events dated ahead of the receiver clock', () => {
  const now = new Date('2026-11-20T12:00:00Z');
  const at = (orderStateUpdatedAt: string, createdAt = '2026-11-20T10:00:00Z') => ({ orderStateUpdatedAt, createdAt });

  it('believes the allowed skew, refuses beyond it with the field, the value and the clock', () => {
    expect(datedAheadReason(at('2026-11-20T12:10:00Z'), now, 600)).toBeNull();
    expect(datedAheadReason(at('2026-11-20T12:10:00.001Z'), now, 600)).toBe(
      `orderStateUpdatedAt "2026-11-20T12:10:00.001Z" is 600 s ahead of the receiver's clock (2026-11-20T12:00:00.000Z), more than the 600 s allowed (webhooks.maxClockSkewSeconds): quarantined, never applied; polling keeps the order's state`,
    );
    // Offsets and nanoseconds are read as the instant they name.
    expect(datedAheadReason(at('2026-11-20T14:09:59.999999999+02:00'), now, 600)).toBeNull();
    expect(datedAheadReason(at('2026-11-20T14:11:00+0200'), now, 600)).toMatch(/^orderStateUpdatedAt .* 660 s ahead/);
    expect(datedAheadReason(at('2026-11-20T10:00:00Z', '2099-01-01T00:00:00Z'), now, 600)).toMatch(/^createdAt "2099/);
    expect(datedAheadReason(at('2026-11-20T12:00:01Z'), now, 0)).toMatch(/1 s ahead/);
  });
});
