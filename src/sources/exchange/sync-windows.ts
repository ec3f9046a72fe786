/** Exchange sync of a listing by time windows (orders, trades, deposits, withdrawals): split, paged, stored with its
 * cursor.
 */
import type { z } from 'zod';
import { inTransaction, type Db } from '../../store/db/database.js';
import { getCursor, settleCoverage } from '../../store/sync/cursors.js';
import type { Page } from '../common/page.js';
import { fullAt, learnPage, WindowPlan, type PageCap, type WalkState, type Window } from './plan.js';
import { validateRecords, type Rejected, type Validated, type ValidatedPage } from './schemas.js';
import {
  recordPage,
  type CoverageDelta,
  type CursorWrite,
  type PageBookkeeping,
} from '../../store/sync/exchange-records.js';
import {
  bump,
  dayOfMs,
  handleQuarantine,
  SOURCE,
  streamCoverage,
  type StreamCoverage,
  type ExchangeSync,
} from './sync-common.js';
import { checkAbort } from '../common/abort.js';
import { writeOrSplit, type Refused } from '../common/record-fallback.js';

/** A stream listed by from/to windows (orders of one status, trades, deposits, withdrawals). */
export interface WindowStream<T, R extends { raw: string }> {
  /** Coverage stream name, e.g. "orders.FILLED". */
  stream: string;
  /** Cursor name (epoch ms up to which the stream is complete). */
  cursor: string;
  entity: string;
  keyField: string;
  int64Key: boolean;
  schema: z.ZodType<T, unknown>;
  /** The schema's fast path for the kind's many records (exchange orders: fastOrder); null leaves a record to it. */
  fast?: (raw: unknown) => T | null;
  cap: StreamCap;
  fetch(window: Window, symbol: string | undefined, signal?: AbortSignal): Promise<Page>;
  toRow(v: Validated<T>): R;
  key(row: R): string;
  timestampOf(v: T): number | null;
  /** Stores rows; with `bookkeeping`, the page's coverage and cursor in the same statement. */
  write(db: Db, rows: R[], bookkeeping?: PageBookkeeping): Promise<number>;
  /** Symbols to split a full one-millisecond window by (orders and trades accept `symbol`). */
  symbols?: string[];
  /** How far before its cursor each run starts again (default WINDOW_OVERLAP_MS). */
  overlapMs?: number;
  /**
   * A listing whose gaps are caught otherwise (the open orders: one not listed is asked by id),
   * so a page it cannot settle is logged but is no coverage gap.
   */
  bestEffort?: boolean;
  /**
   * A later end than `env.nowMs` for a sync without a range (the payments: up to the balance
   * snapshot's fetch time, so every flow before the roll-forward's closing snapshot is listed).
   */
  endAtLeastMs?: number;
}

/** When a page may have been cut (fullAt), learned upwards; `cursor` persists `learned` per account. */
export type StreamCap = PageCap & { cursor: string; persisted: number };

/**
 * Records written before the cursor can still appear late (a deposit listed after the window
 * that covers its time was read): each run re-reads this much before its cursor. Upserts by
 * key make the overlap free of duplicates.
 */
export const WINDOW_OVERLAP_MS = 5 * 60_000;

/** SQLSTATE of a transaction rolled back to break a deadlock. */
const DEADLOCK = '40P01';

/**
 * The wire bounds of a window. The contract does not say whether from/to are inclusive: asking
 * for one millisecond more on each side covers [start, end] under every reading, and the records
 * of the neighbouring milliseconds that come along are upserted by key, never stored twice.
 */
export function padded(w: Window): { from: number; to: number } {
  return { from: Math.max(0, w.start - 1), to: w.end + 1 };
}

export interface LeafResult<T> {
  window: Window;
  pages: Page[];
  validated: ValidatedPage<T>;
  settled: boolean;
  detail?: unknown;
}

/** A fetched page and whether it may have been cut (as many records as the server can send). */
interface Fetched<T> extends LeafResult<T> {
  full: boolean;
  timestamps: number[];
}

/**
 * The cap of an endpoint's pages for this sync, with the largest page learned by earlier syncs
 * (cursor row `cursor`, e.g. orders.maxPage: the server's cap is at least that, whatever it documents).
 */
export async function loadPageCap(env: ExchangeSync, cursor: string, asked: number, floor: number): Promise<StreamCap> {
  const stored = Number((await getCursor(env.db, env.account, SOURCE, cursor)) ?? 0);
  const learned = Number.isSafeInteger(stored) && stored > 0 ? stored : 0;
  return { asked, floor, learned, persisted: learned, cursor };
}

/** The cursor row of a stream's persisted walk (WalkState), next to its time cursor. */
const walkCursorName = (stream: string): string => `${stream}.walk`;

/** Reads a persisted walk; anything unreadable is ignored (the walk is then done again). */
function parseWalk(value: string | null): WalkState | null {
  if (!value) return null;
  const m = /^(\d+)\.\.(\d+)$/.exec(value);
  return m ? { from: Number(m[1]), to: Number(m[2]) } : null;
}

const walkText = (walk: WalkState | null): string => (walk ? `${walk.from}..${walk.to}` : '');

/**
 * Covers [start, end] with the windows of a WindowPlan: a page is trusted as complete only below
 * fullAt(s.cap), so no record can be missed whatever cap, order or bound semantics the exchange
 * uses; a full page is stored and its window continued past it (or, when its order cannot be
 * told, split). The cursor moves in the statement that stores the page that completes what it
 * covers. The next window is fetched while the current page is written.
 */
export async function walkWindows<T, R extends { raw: string }>(
  env: ExchangeSync,
  s: WindowStream<T, R>,
  { persist, start, end, cov }: OpenedStream,
): Promise<void> {
  const resume = persist ? parseWalk(await getCursor(env.db, env.account, SOURCE, walkCursorName(s.stream))) : null;
  const plan = new WindowPlan(start, end, resume);
  let walkStored = walkText(plan.walk);
  // For the progress line: the range read is the range less the windows still to fetch and the one fetched ahead.
  const reach = env.progress.span(s.stream, start, end);
  let aheadMs = 0;
  const fetchNext = () => {
    const w = plan.next();
    aheadMs = w ? w.end - w.start : 0;
    if (!w) return null;
    const p = fetchPage(env, s, w);
    // Observed when awaited; this keeps a prefetch abandoned by an error from crashing the process.
    p.catch(() => {});
    return p;
  };
  let pending = fetchNext();
  let allSettled = true;
  while (pending) {
    checkAbort(env.signal);
    let leaf: LeafResult<T> = await pending;
    const page = leaf as Fetched<T>;
    let cursor: number | null;
    if (page.full) {
      const verdict = plan.full(page.window, page.timestamps);
      if (verdict && verdict.kind === 'split') {
        env.counters.pages++;
        cov.pages++;
        pending = fetchNext();
        continue;
      }
      if (verdict) cursor = verdict.cursor;
      else {
        // One millisecond holds a full page: split by symbol where the endpoint allows it.
        leaf = await splitBySymbol(env, s, page);
        cursor = plan.complete(page.window);
      }
    } else {
      cursor = plan.complete(page.window);
    }
    pending = fetchNext();
    const cursors: CursorWrite[] = [];
    if (persist) {
      if (cursor !== null) cursors.push({ name: s.cursor, value: String(cursor) });
      const walk = walkText(plan.walk);
      if (walk !== walkStored) cursors.push({ name: walkCursorName(s.stream), value: walk });
      walkStored = walk;
    }
    cursors.push(...learnedCapCursors(s));
    if (!leaf.settled) allSettled = false;
    // Said with the page's tick, which commitLeaf gives once it is stored.
    reach.cover(end - start - plan.remainingMs() - aheadMs);
    await commitLeaf(env, s, leaf, cursors);
  }
  reach.end();
  if (persist) cov.cursor = String(end);
  // A backfill that read every window of its range completely settles the whole days inside it
  // (a rescan from the cursor never does: it reads only part of a day).
  else if (allSettled && !s.bestEffort) {
    const days = wholeDays(start, end);
    if (days) await settleCoverage(env.db, env.account, env.runId, SOURCE, s.stream, days);
  }
}

/** The UTC days lying wholly inside [start, end] (epoch ms), as a [from, to) day range; null when none. */
export function wholeDays(start: number, end: number): { from: string; to: string } | null {
  const DAY = 86_400_000;
  const first = Math.ceil(start / DAY) * DAY;
  const last = Math.floor(end / DAY) * DAY;
  return first < last ? { from: dayOfMs(first), to: dayOfMs(last) } : null;
}

/**
 * Syncs a stream over `range`, or without one from its cursor, with `walk` (walkWindows, walkAnswers): the walk reads
 * the range openStream opened; nothing when there is nothing to read.
 */
export async function syncStream<T, R extends { raw: string }>(
  env: ExchangeSync,
  s: WindowStream<T, R>,
  range: { from: number; to: number } | undefined,
  walk: (env: ExchangeSync, s: WindowStream<T, R>, opened: OpenedStream) => Promise<void>,
): Promise<void> {
  const opened = await openStream(env, s, range);
  if (opened) await walk(env, s, opened);
}

/** A stream's range as openStream opens it. `persist`: the cursor is to move. */
export interface OpenedStream {
  persist: boolean;
  start: number;
  end: number;
  cov: StreamCoverage;
}

/**
 * Starts a sync of a stream over `range`, or without one from its cursor (streamRange), when there is anything to read:
 * null when the range is empty (without a range, the cursor moves to its end).
 */
async function openStream<T, R extends { raw: string }>(
  env: ExchangeSync,
  s: WindowStream<T, R>,
  range: { from: number; to: number } | undefined,
): Promise<OpenedStream | null> {
  const persist = range === undefined;
  const { start, end } = range ? { start: range.from, end: range.to } : await streamRange(env, s);
  const cov = streamCoverage(env, s.stream);
  if (start >= end) {
    if (persist) cov.cursor = String(end);
    return null;
  }
  env.progress.setStage(s.stream);
  return { persist, start, end, cov };
}

/** What a sync reads of a stream without a range: from its cursor (less the overlap) or historyStart, up to now. */
async function streamRange<T, R extends { raw: string }>(
  env: ExchangeSync,
  s: WindowStream<T, R>,
): Promise<{ start: number; end: number }> {
  const stored = await getCursor(env.db, env.account, SOURCE, s.cursor);
  const start =
    stored === null
      ? env.historyStartMs
      : Math.max(env.historyStartMs, Number(stored) - (s.overlapMs ?? WINDOW_OVERLAP_MS));
  return { start, end: Math.max(env.nowMs, s.endAtLeastMs ?? 0) };
}

/**
 * The learned-cap cursor row when this page raised it, written as one that only grows (CursorWrite): a concurrent
 * listing that commits a lower cap later does not lower it.
 */
export function learnedCapCursors<T, R extends { raw: string }>(s: WindowStream<T, R>): CursorWrite[] {
  const c = s.cap;
  if (c.learned <= c.persisted) return [];
  c.persisted = c.learned;
  return [{ name: c.cursor, value: String(c.learned), grows: true }];
}

/** Stores a page's rows with its coverage and cursors: one statement unless records need quarantine work. */
export async function commitLeaf<T, R extends { raw: string }>(
  env: ExchangeSync,
  s: WindowStream<T, R>,
  leaf: LeafResult<T>,
  cursors: CursorWrite[],
): Promise<void> {
  const w = leaf.window;
  const cov = streamCoverage(env, s.stream);
  const rows = leaf.validated.valid.map(s.toRow);
  const byDay = new Map<string, CoverageDelta>();
  let latest: number | null = null;
  for (const v of leaf.validated.valid) {
    const ts = s.timestampOf(v.value);
    if (ts === null) continue;
    bump(byDay, dayOfMs(ts), { rows: 1 });
    latest = latest === null ? ts : Math.max(latest, ts);
  }
  // A window can span years of nothing (the first one starts at historyStart): its pages count
  // on the day of its newest record, or on the last day it covers when it is empty.
  const pageDay = dayOfMs(latest ?? Math.max(w.start, Math.min(w.end, env.nowMs) - 1));
  bump(byDay, pageDay, { pages: leaf.pages.length, quarantined: leaf.validated.invalid.length });
  if (!leaf.settled && s.bestEffort)
    env.logger.warn(
      { stream: s.stream, window: w, detail: leaf.detail },
      'exchange listing still full at one millisecond; what it misses is asked by id',
    );
  else if (!leaf.settled) {
    bump(byDay, pageDay, { settled: false, detail: leaf.detail });
    cov.settled = false;
    env.logger.warn(
      { stream: s.stream, window: w, detail: leaf.detail },
      'exchange window still full at one millisecond; some records may be missing',
    );
  }
  const bookkeeping: PageBookkeeping = {
    account: env.account,
    runId: env.runId,
    coverageStream: s.stream,
    coverage: byDay,
    cursors,
  };
  const endpoint = leaf.pages[0]?.endpoint ?? s.stream;
  const commit =
    leaf.validated.invalid.length === 0 && !env.openQuarantine.has(s.entity)
      ? () => s.write(env.db, rows, bookkeeping)
      : () =>
          inTransaction(env.db, async (trx) => {
            await s.write(trx, rows);
            await handleQuarantine(env, trx, endpoint, s.entity, leaf.validated.invalid, rows.map(s.key));
            await recordPage(trx, bookkeeping);
          });
  // A page the database still refuses (a value the schema did not foresee) is written again
  // record by record: the refused records are quarantined with the database's reason.
  const items = leaf.validated.valid.map((v, i) => ({ v, row: rows[i]! }));
  let written = rows.length;
  let quarantined = leaf.validated.invalid.length;
  const finish = async (trx: Db, kept: typeof items, refused: Array<Refused<(typeof items)[number]>>) => {
    for (const r of refused) {
      const ts = s.timestampOf(r.item.v.value);
      if (ts !== null) bump(byDay, dayOfMs(ts), { rows: -1 });
    }
    bump(byDay, pageDay, { quarantined: refused.length });
    const dbRefused: Rejected[] = refused.map((r) => ({
      index: r.item.v.index,
      raw: r.item.v.raw,
      reason: r.reason,
      key: s.key(r.item.row),
    }));
    await handleQuarantine(
      env,
      trx,
      endpoint,
      s.entity,
      [...leaf.validated.invalid, ...dbRefused],
      kept.map((k) => s.key(k.row)),
    );
    await recordPage(trx, bookkeeping);
  };
  // Listings written side by side lock shared rows in key order, so a deadlock should not
  // happen; if Postgres still picks this page as a deadlock victim, it rolled back whole and
  // is simply written again.
  for (let attempt = 1; ; attempt++) {
    try {
      const split = await writeOrSplit(env.db, items, commit, (trx, it) => s.write(trx, [it.row]), finish);
      if (split) {
        written = split.kept.length;
        quarantined += split.refused.length;
        env.logger.warn(
          {
            stream: s.stream,
            window: w,
            refused: split.refused.map((r) => ({ key: s.key(r.item.row), reason: r.reason })),
          },
          'exchange page refused by the database; written record by record, the refused records quarantined',
        );
      }
      break;
    } catch (err) {
      if ((err as { code?: string }).code !== DEADLOCK || attempt >= 3) throw err;
      env.logger.warn(
        { stream: s.stream, window: w, attempt },
        'exchange page chosen as deadlock victim; writing it again',
      );
    }
  }
  cov.pages += leaf.pages.length;
  cov.rows += written;
  cov.quarantined += quarantined;
  env.counters.pages += leaf.pages.length;
  env.progress.tick(written, leaf.pages.length);
}

/** Fetches a window's page and tells whether it may have been cut (fullAt), learning the cap from it. */
async function fetchPage<T, R extends { raw: string }>(
  env: ExchangeSync,
  s: WindowStream<T, R>,
  w: Window,
): Promise<Fetched<T>> {
  const page = await s.fetch(w, undefined, env.signal);
  const validated = validateRecords(s.schema, page.records, s.keyField, s.int64Key, s.fast, page.response.text);
  const full = page.records.length >= fullAt(s.cap);
  learnPage(s.cap, page.records.length);
  const timestamps = full
    ? validated.valid.map((v) => s.timestampOf(v.value)).filter((t): t is number => t !== null)
    : [];
  return { window: w, pages: [page], validated, settled: true, full, timestamps };
}

/** A full page within one millisecond: the window again, once per symbol (where the endpoint takes one). */
async function splitBySymbol<T, R extends { raw: string }>(
  env: ExchangeSync,
  s: WindowStream<T, R>,
  leaf: Fetched<T>,
): Promise<LeafResult<T>> {
  const w = leaf.window;
  if (!s.symbols?.length)
    return { ...leaf, settled: false, detail: { window: w, reason: 'full page within one millisecond' } };
  const pages: Page[] = [...leaf.pages];
  const merged: ValidatedPage<T> = { valid: [], invalid: [] };
  const stillFull: string[] = [];
  for (const symbol of s.symbols) {
    checkAbort(env.signal);
    const p = await s.fetch(w, symbol, env.signal);
    pages.push(p);
    const v = validateRecords(s.schema, p.records, s.keyField, s.int64Key, s.fast, p.response.text);
    merged.valid.push(...v.valid);
    merged.invalid.push(...v.invalid);
    const full = p.records.length >= fullAt(s.cap);
    learnPage(s.cap, p.records.length);
    if (full) stillFull.push(symbol);
  }
  return stillFull.length
    ? {
        window: w,
        pages,
        validated: merged,
        settled: false,
        detail: { window: w, reason: 'full page within one millisecond and one symbol', symbols: stillFull },
      }
    : { window: w, pages, validated: merged, settled: true };
}
