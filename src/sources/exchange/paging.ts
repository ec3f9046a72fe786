/**
 * Pure paging plans of the exchange sync: what to ask next, and what a page proves.
 *
 * Both plans rest on one property that holds whichever order the exchange sorts a page in
 * (oldest-first from the lower bound, or newest-first down from the upper bound) and whether
 * its bounds are inclusive or exclusive: a page that is not full holds everything inside its
 * bounds; a full page holds a contiguous run of the sorted records, so everything strictly
 * between its smallest and largest key is in it. Nothing else is assumed.
 */

// ------------------------------------------------------------------ fills, by execId

export interface FillsPlanState {
  /** Every fill with execId <= watermark is stored; null before the first fill. */
  watermark: string | null;
  /**
   * Ranges [lo, hi] above the watermark known to be stored completely, sorted, disjoint. A
   * newest-first page leaves one (the gap below it is walked down with toExecId).
   */
  blocks: Array<[string, string]>;
}

export interface FillsRequest {
  kind: 'top' | 'gap';
  fromExecId?: string;
  toExecId?: string;
}

export type FillsOutcome =
  | { kind: 'advanced'; state: FillsPlanState; done: boolean }
  /** A full page that moved nothing (all ids unreadable, or the exchange ignores the bounds). */
  | { kind: 'stuck'; state: FillsPlanState; reason: string };

export function nextFillsRequest(state: FillsPlanState): FillsRequest {
  const from = state.watermark ?? undefined;
  const first = state.blocks[0];
  if (!first) return { kind: 'top', fromExecId: from };
  return { kind: 'gap', fromExecId: from, toExecId: first[0] };
}

const big = (s: string) => BigInt(s);
const maxOf = (a: string, b: string) => (big(a) >= big(b) ? a : b);
const minOf = (a: string, b: string) => (big(a) <= big(b) ? a : b);

/**
 * Folds a page into the plan. `ids` are the readable execIds of the page, `full` whether it
 * came back with as many records as the limit.
 */
export function applyFillsPage(state: FillsPlanState, request: FillsRequest, ids: string[], full: boolean): FillsOutcome {
  const blocks = state.blocks.map((b) => [...b] as [string, string]);
  let watermark = state.watermark;
  const first = blocks[0];

  if (!full) {
    // Everything between the request's bounds is in this page.
    if (request.kind === 'gap' && first) {
      watermark = first[1];
      blocks.shift();
      return { kind: 'advanced', state: normalizeFillsState({ watermark, blocks: mergeBlocks(blocks) }), done: false };
    }
    for (const id of ids) watermark = watermark === null ? id : maxOf(watermark, id);
    return { kind: 'advanced', state: { watermark, blocks }, done: true };
  }

  if (ids.length === 0) return { kind: 'stuck', state, reason: 'a full fills page without one readable execId' };
  let lo = ids[0]!;
  let hi = ids[0]!;
  for (const id of ids) {
    lo = minOf(lo, id);
    hi = maxOf(hi, id);
  }
  if (watermark !== null && big(lo) <= big(watermark)) {
    // The page reaches back to the cursor: everything up to its largest id is stored.
    watermark = maxOf(watermark, hi);
  } else {
    blocks.push([lo, hi]);
  }
  const next = normalizeFillsState({ watermark, blocks: mergeBlocks(blocks) });
  if (sameState(next, state)) return { kind: 'stuck', state, reason: `a full fills page (${lo}..${hi}) added nothing to what was known` };
  return { kind: 'advanced', state: next, done: false };
}

/** Sorts and merges overlapping or adjacent ranges (ids are integers: nothing lies between n and n+1). */
function mergeBlocks(blocks: Array<[string, string]>): Array<[string, string]> {
  const sorted = blocks.slice().sort((a, b) => (big(a[0]) < big(b[0]) ? -1 : big(a[0]) > big(b[0]) ? 1 : 0));
  const out: Array<[string, string]> = [];
  for (const b of sorted) {
    const last = out[out.length - 1];
    if (last && big(b[0]) <= big(last[1]) + 1n) last[1] = maxOf(last[1], b[1]);
    else out.push([b[0], b[1]]);
  }
  return out;
}

/** Blocks that reach the watermark extend it. */
export function normalizeFillsState(state: FillsPlanState): FillsPlanState {
  let watermark = state.watermark;
  let blocks = state.blocks.slice();
  for (;;) {
    const first = blocks[0];
    if (watermark === null || !first || big(first[0]) > big(watermark) + 1n) break;
    watermark = maxOf(watermark, first[1]);
    blocks = blocks.slice(1);
  }
  return { watermark, blocks };
}

function sameState(a: FillsPlanState, b: FillsPlanState): boolean {
  return a.watermark === b.watermark && JSON.stringify(a.blocks) === JSON.stringify(b.blocks);
}

// ------------------------------------------------------------------ time windows

export interface Window {
  /** Epoch ms; requested as from=start&to=end, so consecutive windows share their end points. */
  start: number;
  end: number;
}

/** A window of one millisecond cannot be split by time (consecutive windows share end points). */
export function canSplit(window: Window): boolean {
  return window.end - window.start > 1;
}

/**
 * Where to split a window that came back full. Any point strictly inside is correct (only
 * pages that are not full are ever trusted); the page's own timestamps pick a point that makes
 * one side come back not full at once: newest-first pages split just above their oldest
 * timestamp, oldest-first pages just below their newest one. Records sharing that millisecond fall in
 * a window that is fetched again, so none is lost, and upserts by key store each once.
 */
export function splitPoint(window: Window, timestamps: number[]): number | null {
  if (!canSplit(window)) return null;
  const mid = window.start + Math.floor((window.end - window.start) / 2);
  if (timestamps.length < 2) return mid;
  const firstTs = timestamps[0]!;
  const lastTs = timestamps[timestamps.length - 1]!;
  let lo = Infinity;
  let hi = -Infinity;
  for (const t of timestamps) {
    lo = Math.min(lo, t);
    hi = Math.max(hi, t);
  }
  const inside = (p: number) => p > window.start && p < window.end;
  // Windows are requested one millisecond wider on each side (padded()), hence the 2.
  if (firstTs > lastTs && inside(lo + 2)) return lo + 2;
  if (firstTs < lastTs && inside(hi - 2)) return hi - 2;
  return mid;
}

/**
 * The windows that cover [start, end], left to right. A window that comes back full is split
 * (splitPoint) and its pieces are fetched next, left first; only pages below the limit are
 * trusted, so no record can be missed whatever order or bound semantics the exchange uses.
 *
 * Sizing windows ahead from the density of earlier pages was tried and dropped: on records whose
 * rate changes through the day, with bursts, it cost as many requests as splitting alone (full
 * windows where the rate rose, plus the search for where a long empty history ends).
 */
export class WindowPlan {
  /** Windows still to fetch, the next on top; together they cover what is left, in order. */
  private readonly todo: Window[];

  constructor(start: number, end: number) {
    this.todo = start < end ? [{ start, end }] : [];
  }

  /** The next window to fetch, or null when the range is covered. */
  next(): Window | null {
    return this.todo.pop() ?? null;
  }

  /**
   * The window came back full. Returns false when it cannot be split (one millisecond: the
   * caller splits by another parameter or records it as unsettled); otherwise its two pieces
   * are fetched next, left first, so windows still finish in time order.
   */
  full(w: Window, timestamps: number[]): boolean {
    const at = splitPoint(w, timestamps);
    if (at === null) return false;
    this.todo.push({ start: at, end: w.end }, { start: w.start, end: at });
    return true;
  }
}
