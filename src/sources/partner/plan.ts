/** Pure planning of the partner sync: whether a day is over, runs of consecutive days, the cheapest refresh of open
 * orders.
 */
import type { Period } from '../../domain/period.js';
import { addDays, dayStart } from '../../util/dates.js';
import { ORDERS_PAGE_LIMIT } from './client.js';

/**
 * How far the operator's clock may run behind ours. A day counts as over only this long after
 * its UTC midnight, so that an order the server still stamps with the day cannot arrive after
 * a pass we took for the day's last.
 */
export const CLOCK_SKEW_MARGIN_MS = 5 * 60_000;

/**
 * A day is over when `now` (the run's start, so every pass of the run starts later) is past its
 * end by the skew margin. No order is created in such a day any more, so offset paging over its
 * list cannot drift: one complete pass reads all of it.
 */
export function dayIsOver(day: string, now: Date): boolean {
  return now.getTime() >= dayStart(addDays(day, 1)).getTime() + CLOCK_SKEW_MARGIN_MS;
}

/** Requests one complete listing of `orders` orders costs: full pages, then the short one that ends it. */
export function listingCost(orders: number): number {
  return Math.floor(orders / ORDERS_PAGE_LIMIT) + 1;
}

/**
 * How to refresh a past day's open orders (newest first, each with its rank in the day's
 * newest-first list) at the fewest requests: list the day until the page that passes the
 * `listThrough`-th open order (listingCost(its rank) pages at most) and fetch the older ones by
 * id, one request each. 0 means no listing, every one by id; a tie goes to fewer listed pages.
 * The open orders of a day are mostly its last ones, but one order stuck since the morning must
 * not cost the whole day.
 */
export function cheapestRefresh(ranks: readonly number[]): { listThrough: number; requests: number } {
  let best = { listThrough: 0, requests: ranks.length };
  for (let j = 1; j <= ranks.length; j++) {
    const requests = listingCost(ranks[j - 1]!) + (ranks.length - j);
    if (requests < best.requests) best = { listThrough: j, requests };
  }
  return best;
}

/** Days (sorted) grouped into periods of consecutive days: one bounded listing per period. */
export function consecutivePeriods(days: readonly string[]): Period[] {
  const periods: Period[] = [];
  for (const day of [...days].sort()) {
    const last = periods[periods.length - 1];
    if (last && last.to === day) last.to = addDays(day, 1);
    else periods.push({ from: day, to: addDays(day, 1) });
  }
  return periods;
}
