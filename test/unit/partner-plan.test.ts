import { describe, expect, it } from 'vitest';
import { CLOCK_SKEW_MARGIN_MS, consecutivePeriods, dayIsOver, listingCost, relistIsCheaper } from '../../src/sources/partner/plan.js';

describe('partner sync plan', () => {
  it('a day is over only once the clock-skew margin after its midnight has passed', () => {
    expect(CLOCK_SKEW_MARGIN_MS).toBe(300_000);
    expect(dayIsOver('2026-11-20', new Date('2026-11-20T23:59:59.999Z'))).toBe(false);
    expect(dayIsOver('2026-11-20', new Date('2026-11-21T00:04:59.999Z'))).toBe(false);
    expect(dayIsOver('2026-11-20', new Date('2026-11-21T00:05:00.000Z'))).toBe(true);
    expect(dayIsOver('2026-11-20', new Date('2026-11-23T02:00:00Z'))).toBe(true);
    expect(dayIsOver('2026-11-21', new Date('2026-11-21T15:30:00Z'))).toBe(false);
  });

  it('a listing costs its full pages plus the short page that ends it', () => {
    expect([0, 1, 49, 50, 51, 99, 100, 120, 10_000].map(listingCost)).toEqual([1, 1, 1, 2, 2, 2, 3, 3, 201]);
  });

  it("a past day's open orders: list the day again only when that takes fewer requests than one each", () => {
    // 120 stored orders: 3 pages. Three open orders cost 3 by id (a tie: by id), four cost more.
    expect(relistIsCheaper(120, 3)).toBe(false);
    expect(relistIsCheaper(120, 4)).toBe(true);
    // 10,000 orders: 201 pages against 200 or 202 requests by id.
    expect(relistIsCheaper(10_000, 200)).toBe(false);
    expect(relistIsCheaper(10_000, 202)).toBe(true);
    expect(relistIsCheaper(0, 1)).toBe(false);
  });

  it('groups days into periods of consecutive days', () => {
    expect(consecutivePeriods([])).toEqual([]);
    expect(consecutivePeriods(['2026-11-21', '2026-11-18', '2026-11-19', '2026-12-31', '2027-01-01'])).toEqual([
      { from: '2026-11-18', to: '2026-11-20' },
      { from: '2026-11-21', to: '2026-11-22' },
      { from: '2026-12-31', to: '2027-01-02' },
    ]);
  });
});
