/** How much of its time range a fills walk has read (the progress line's figure), whichever order the pages come in. */

/** A walk's range (epoch ms), read up from its start by oldest-first pages, down from its end by newest-first ones. */
export interface FillsReach {
  fromMs: number;
  toMs: number;
  up: number;
  down: number;
}

export function fillsReach(fromMs: number, toMs: number): FillsReach {
  return { fromMs, toMs, up: fromMs, down: toMs };
}

/**
 * Folds a stored page's timestamps (in the order the exchange sent them) into the reach and returns the time read: an
 * oldest-first page reads up to its last, a newest-first one down to its last; a page of one timestamp tells no order.
 */
export function readFillsPage(reach: FillsReach, timestamps: readonly number[]): number {
  const first = timestamps[0];
  const last = timestamps[timestamps.length - 1];
  if (first !== undefined && last !== undefined && first < last) reach.up = Math.max(reach.up, last);
  if (first !== undefined && last !== undefined && first > last) reach.down = Math.min(reach.down, last);
  const length = Math.max(0, reach.toMs - reach.fromMs);
  return Math.min(length, Math.max(0, reach.up - reach.fromMs) + Math.max(0, reach.toMs - reach.down));
}
