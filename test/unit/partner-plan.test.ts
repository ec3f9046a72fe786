import { describe, expect, it } from 'vitest';
import {
  CLOCK_SKEW_MARGIN_MS,
  cheapestRefresh,
  consecutivePeriods,
  dayIsOver,
  listingCost,
} from '../../src/sources/partner/plan.js';

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

  it("a past day's open orders: list the day newest first as far as pays, the older ones by id", () => {
    // Three open orders anywhere in a 120-order day: listing through the last costs 3 pages, by id 3 (a tie: by id).
    expect(cheapestRefresh([40, 80, 120])).toEqual({ listThrough: 0, requests: 3 });
    // Four: one page through the 40th and two by id (3) beats four requests, and ties the whole day (3 pages).
    expect(cheapestRefresh([10, 40, 80, 120])).toEqual({ listThrough: 2, requests: 3 });
    expect(cheapestRefresh([10, 40, 80, 100, 120])).toEqual({ listThrough: 5, requests: 3 });
    // The last 300 orders of a 10,000-order day are open and one is stuck since the morning:
    // 6 pages through the 299th, the 300th and the stuck one by id: 8 requests, not 201 pages
    // (7 pages through the 300th plus one by id ties; fewer pages win).
    const ranks = [...Array.from({ length: 300 }, (_, i) => i + 1), 9_000];
    expect(cheapestRefresh(ranks)).toEqual({ listThrough: 299, requests: 8 });
    // The same without the stuck one.
    expect(cheapestRefresh(ranks.slice(0, 300))).toEqual({ listThrough: 299, requests: 7 });
    expect(cheapestRefresh([])).toEqual({ listThrough: 0, requests: 0 });
    expect(cheapestRefresh([1])).toEqual({ listThrough: 0, requests: 1 });
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
