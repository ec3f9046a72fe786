/** Pure paging plans of the exchange sync: what to ask next, and what a page proves. */
/**
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
export function applyFillsPage(
  state: FillsPlanState,
  request: FillsRequest,
  ids: string[],
  full: boolean,
): FillsOutcome {
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
  if (sameState(next, state))
    return { kind: 'stuck', state, reason: `a full fills page (${lo}..${hi}) added nothing to what was known` };
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
function canSplit(window: Window): boolean {
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
 * What a walk has stored above the window being fetched, beyond the stream's cursor: every
 * record with from < timestamp <= to. Persisted with each page of the walk, so that a sync
 * killed in the middle of a long walk resumes below `from` instead of walking again from `to`.
 */
export interface WalkState {
  from: number;
  to: number;
}

/** What a full page proves (WindowPlan.full). */
export type FullVerdict =
  /** The page holds every record of its window in a known part: store it; the rest is fetched next. */
  | { kind: 'advanced'; cursor: number | null }
  /** Nothing is known from the page: it is dropped and its window fetched again in two pieces. */
  | { kind: 'split' };

/** The page's size at which it may have been cut: min(asked, the largest page ever seen, at least `floor`). */
export interface PageCap {
  /** The limit the request asks for (Infinity when the endpoint takes none). */
  asked: number;
  /** A size the server is known to answer at least (the contract's limit); 0 when nothing is known. */
  floor: number;
  /** The largest page the server has returned on this endpoint (persisted per account). */
  learned: number;
}

/**
 * A page is trusted as complete only when it holds fewer records than any cap the server can
 * have: the server's cap is at least the largest page it has ever returned (and at least the
 * contract's limit), and a page below both that and the limit asked was not cut. An empty page
 * is always complete.
 */
export function fullAt(cap: PageCap): number {
  return Math.max(1, Math.min(cap.asked, Math.max(cap.floor, cap.learned)));
}

/** Records the size of a page the server returned: caps are learned upwards only. */
export function learnPage(cap: PageCap, size: number): void {
  if (size > cap.learned) cap.learned = size;
}

type Todo = Window | { cursorTo: number };

/**
 * The windows that cover [start, end], left to right. A full page is never trusted as a whole:
 *
 * - a full newest-first page holds every record of its window newer than its oldest timestamp
 *   `lo` (the page is the top of the sorted list), so it is stored and the window continues with
 *   [start, lo] (1 request per page, the walk);
 * - a full oldest-first page likewise holds everything older than its newest timestamp `hi`, so
 *   it is stored, the cursor moves to `hi`, and the window continues with [hi, end];
 * - a full page whose order cannot be told (one timestamp) is dropped and its window split
 *   (splitPoint), pieces fetched left first.
 *
 * The records of the boundary millisecond (lo or hi) are fetched again with the rest and
 * upserted by key. The stream's cursor ("complete up to") moves only when everything before it
 * is stored: a walk goes down from the top of its window, so the cursor moves to the window's
 * end only when the walk reaches the bottom (a marker below the rest of the window), and
 * meanwhile `walk` says what is stored above, for a resumed sync.
 */
export class WindowPlan {
  /** Windows still to fetch, the next on top, and the cursor markers between them. */
  private readonly todo: Todo[];
  walk: WalkState | null = null;

  /** `resume`: a walk persisted by an interrupted sync; used when it lies inside [start, end]. */
  constructor(start: number, end: number, resume?: WalkState | null) {
    this.todo = start < end ? [{ start, end }] : [];
    if (resume && start <= resume.from && resume.from < resume.to && resume.to <= end) {
      this.todo = [{ start: resume.to, end }, { cursorTo: resume.to }, { start, end: resume.from }];
      this.walk = { ...resume };
    }
  }

  /** Time of the windows still to fetch (the progress line's part of the range not read yet). */
  remainingMs(): number {
    let ms = 0;
    for (const t of this.todo) if ('start' in t) ms += t.end - t.start;
    return ms;
  }

  /** The next window to fetch, or null when the range is covered. */
  next(): Window | null {
    for (let t = this.todo.pop(); t; t = this.todo.pop()) if ('start' in t) return t;
    return null;
  }

  /** The window came back complete: returns how far the stream's cursor may move. */
  complete(w: Window): number {
    let cursor = w.end;
    for (let t = this.todo[this.todo.length - 1]; t && 'cursorTo' in t; t = this.todo[this.todo.length - 1]) {
      cursor = Math.max(cursor, t.cursorTo);
      this.todo.pop();
    }
    if (this.walk && cursor >= this.walk.to) this.walk = null;
    return cursor;
  }

  /**
   * The window came back full. Returns false when it cannot be split (one millisecond: the
   * caller splits by another parameter or records it as unsettled).
   */
  full(w: Window, timestamps: number[]): FullVerdict | false {
    const first = timestamps[0];
    const last = timestamps[timestamps.length - 1];
    let lo = Infinity;
    let hi = -Infinity;
    for (const t of timestamps) {
      lo = Math.min(lo, t);
      hi = Math.max(hi, t);
    }
    if (first !== undefined && last !== undefined && first > last && lo < w.end) {
      // Everything in (lo, w.end] is in the page.
      if (lo < w.start) return { kind: 'advanced', cursor: this.complete(w) };
      this.todo.push({ cursorTo: w.end }, { start: w.start, end: lo });
      this.walk = this.walk && this.walk.from === w.end ? { from: lo, to: this.walk.to } : { from: lo, to: w.end };
      return { kind: 'advanced', cursor: null };
    }
    if (first !== undefined && last !== undefined && first < last && hi > w.start) {
      // Everything in [w.start, hi) is in the page; what lies before w.start is done already.
      if (hi > w.end) return { kind: 'advanced', cursor: this.complete(w) };
      this.todo.push({ start: hi, end: w.end });
      return { kind: 'advanced', cursor: hi };
    }
    const at = splitPoint(w, timestamps);
    if (at === null) return false;
    this.todo.push({ start: at, end: w.end }, { start: w.start, end: at });
    return { kind: 'split' };
  }
}
