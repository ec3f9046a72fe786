/** Exchange sync of a listing without page limit (deposits, withdrawals), checked that no answer was cut. */
import type { Window } from './plan.js';
import { fullAt, learnPage } from './plan.js';
import { validateRecords } from './schemas.js';
import type { ExchangeSync } from './sync-common.js';
import { checkAbort } from '../common/abort.js';
import {
  commitLeaf,
  learnedCapCursors,
  type LeafResult,
  type OpenedStream,
  type WindowStream,
} from './sync-windows.js';

/** One answer of a list without a limit, with what the verification needs. */
interface Answer<T> {
  leaf: LeafResult<T>;
  size: number;
  keys: string[];
  lo: number;
  hi: number;
}

/**
 * Syncs a list that takes no limit and documents no cap (deposits, withdrawals): one answer per
 * window is normally complete, but a silent cut at an unknown size cannot be excluded. So:
 *
 * - an empty answer, or one smaller than the largest answer the endpoint has ever given (the
 *   server's cap, if any, is at least that; learned in s.cap), is complete at no extra cost;
 * - otherwise the answer is checked with the window's tails: [start, oldest] and [newest, end].
 *   A tail that brings only records of the answer shows that nothing is missing on its side;
 * - a tail that brings a record the answer lacked shows that the answer was cut: its size is the
 *   server's cap, and the answer is a contiguous run of the sorted records (the premise of
 *   plan.ts), so what is missing lies on that side only. The window is walked on that way,
 *   each tail answer being the next page, until an answer smaller than the cap. A walk that
 *   reaches a full answer bringing nothing new (a millisecond holding more than the cap) is
 *   recorded as unsettled.
 *
 * The lower tail is tried first: lists are newest first, so a cut drops the oldest records.
 * The cursor moves to the window's end with the last answer, once everything is stored.
 */
export async function walkAnswers<T, R extends { raw: string }>(
  env: ExchangeSync,
  s: WindowStream<T, R>,
  { persist, start, end, cov }: OpenedStream,
): Promise<void> {
  // Each answer is written before the next is asked; the last one carries the cursor.
  let held: LeafResult<T> | null = null;
  const fetch = async (w: Window): Promise<Answer<T>> => {
    checkAbort(env.signal);
    if (held) await commitLeaf(env, s, held, learnedCapCursors(s));
    const page = await s.fetch(w, undefined, env.signal);
    const validated = validateRecords(s.schema, page.records, s.keyField, s.int64Key, undefined, page.response.text);
    const leaf: LeafResult<T> = { window: w, pages: [page], validated, settled: true };
    held = leaf;
    let lo = Infinity;
    let hi = -Infinity;
    for (const v of validated.valid) {
      const t = s.timestampOf(v.value);
      if (t === null) continue;
      lo = Math.min(lo, t);
      hi = Math.max(hi, t);
    }
    // A quarantined record without a readable id cannot be told apart from others: it is left out.
    const keys = [
      ...validated.valid.map((v) => s.key(s.toRow(v))),
      ...validated.invalid.flatMap((r) => (r.key === null ? [] : [r.key])),
    ];
    return { leaf, size: page.records.length, keys, lo, hi };
  };
  const unsettled = (a: Answer<T>, reason: string) => {
    a.leaf.settled = false;
    a.leaf.detail = { window: a.leaf.window, reason };
  };

  const window: Window = { start, end };
  const answer = await fetch(window);
  const maybeCut = answer.size >= fullAt(s.cap);
  learnPage(s.cap, answer.size);
  if (maybeCut) {
    const known = new Set(answer.keys);
    if (answer.lo > answer.hi)
      unsettled(answer, 'an answer as large as the largest ever seen, without one readable timestamp to check it by');
    else {
      // Returns true when the tail showed the answer cut (and walked on).
      const walk = async (side: 'lower' | 'upper'): Promise<boolean> => {
        let bound = side === 'lower' ? answer.lo : answer.hi;
        let cut = false;
        for (;;) {
          const tail = await fetch(
            side === 'lower' ? { start: window.start, end: bound } : { start: bound, end: window.end },
          );
          learnPage(s.cap, tail.size);
          const fresh = tail.keys.filter((k) => !known.has(k));
          tail.keys.forEach((k) => known.add(k));
          if (fresh.length === 0) {
            // Only records already known, as many as the cap: a millisecond holds more than the
            // server sends (a single record is never taken for a cap).
            if (tail.size >= answer.size && tail.size > 1) unsettled(tail, 'a full answer within one millisecond');
            return cut;
          }
          cut = true;
          if (tail.size < answer.size) return true;
          if (tail.lo > tail.hi) {
            unsettled(tail, 'a cut answer without one readable timestamp to walk on from');
            return true;
          }
          bound = side === 'lower' ? tail.lo : tail.hi;
        }
      };
      if (!(await walk('lower'))) await walk('upper');
    }
  }
  const last = held as LeafResult<T> | null;
  if (last)
    await commitLeaf(env, s, last, [
      ...(persist ? [{ name: s.cursor, value: String(end) }] : []),
      ...learnedCapCursors(s),
    ]);
  if (persist) cov.cursor = String(end);
}
