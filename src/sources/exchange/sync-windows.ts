import type { z } from 'zod';
import type { Db } from '../../db/database.js';
import { getCursor } from '../../store/cursors.js';
import type { Page } from './client.js';
import { canSplit, WindowPlan, type Window } from './paging.js';
import { validateRecords, type Validated, type ValidatedPage } from './schemas.js';
import { recordPage, type CoverageDelta, type PageBookkeeping } from './store.js';
import { bump, checkAbort, dayOfMs, handleQuarantine, SOURCE, streamCoverage, type SyncEnv } from './sync-common.js';

/** A stream listed by from/to windows (orders of one status, trades, deposits, withdrawals). */
export interface WindowStream<T, R extends { raw: string }> {
  /** Coverage stream name, e.g. "orders.FILLED". */
  stream: string;
  /** Cursor name (epoch ms up to which the stream is complete). */
  cursor: string;
  entity: string;
  keyField: string;
  int64Key: boolean;
  schema: z.ZodType<T, any>;
  limit: number;
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
}

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

interface LeafResult<T> {
  window: Window;
  pages: Page[];
  validated: ValidatedPage<T>;
  settled: boolean;
  detail?: unknown;
}

/** A window that came back full and can be split: its timestamps guide the split. */
interface FullResult {
  window: Window;
  full: true;
  timestamps: number[];
}

/**
 * Covers [start, end] with windows that are never trusted when full: a full window is split
 * (at a point its own timestamps suggest) until every piece comes back below the limit, so no
 * record can be missed whatever order or bound semantics the exchange uses (WindowPlan).
 * Windows finish left to right, so after each one the cursor can move to its end in the
 * statement that stores its rows. The next window is fetched while the current one is written.
 */
export async function syncWindows<T, R extends { raw: string }>(
  env: SyncEnv,
  s: WindowStream<T, R>,
  range?: { from: number; to: number },
): Promise<void> {
  const persist = range === undefined;
  let start: number;
  let end: number;
  if (range) {
    start = range.from;
    end = range.to;
  } else {
    const stored = await getCursor(env.db, env.account, SOURCE, s.cursor);
    start = stored === null ? env.historyStartMs : Math.max(env.historyStartMs, Number(stored) - (s.overlapMs ?? WINDOW_OVERLAP_MS));
    end = env.nowMs;
  }
  const cov = streamCoverage(env, s.stream);
  if (start >= end) {
    if (persist) cov.cursor = String(end);
    return;
  }
  env.progress.setStage(s.stream);
  const plan = new WindowPlan(start, end);
  const fetchNext = () => {
    const w = plan.next();
    if (!w) return null;
    const p = fetchLeaf(env, s, w);
    // Observed when awaited; this keeps a prefetch abandoned by an error from crashing the process.
    p.catch(() => {});
    return p;
  };
  let pending = fetchNext();
  while (pending) {
    checkAbort(env);
    const leaf = await pending;
    if ('full' in leaf) {
      // fetchLeaf reports a page as full only when canSplit: a false here would lose the window.
      if (!plan.full(leaf.window, leaf.timestamps)) throw new Error(`window ${leaf.window.start}..${leaf.window.end} of ${s.stream} cannot be split`);
      env.counters.pages++;
      cov.pages++;
      pending = fetchNext();
      continue;
    }
    pending = fetchNext();
    await commitLeaf(env, s, leaf, persist);
  }
  if (persist) cov.cursor = String(end);
}

/** Stores a window's rows with its coverage and cursor: one statement unless records need quarantine work. */
async function commitLeaf<T, R extends { raw: string }>(env: SyncEnv, s: WindowStream<T, R>, leaf: LeafResult<T>, persist: boolean): Promise<void> {
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
  if (!leaf.settled) {
    bump(byDay, pageDay, { settled: false, detail: leaf.detail });
    cov.settled = false;
    env.logger.warn({ stream: s.stream, window: w, detail: leaf.detail }, 'exchange window still full at one millisecond; some records may be missing');
  }
  const bookkeeping: PageBookkeeping = {
    account: env.account,
    runId: env.runId,
    coverageStream: s.stream,
    coverage: byDay,
    cursors: persist ? [{ name: s.cursor, value: String(w.end) }] : [],
  };
  const endpoint = leaf.pages[0]?.endpoint ?? s.stream;
  const commit =
    leaf.validated.invalid.length === 0 && !env.openQuarantine.has(s.entity)
      ? () => s.write(env.db, rows, bookkeeping)
      : () =>
          env.db.transaction().execute(async (trx) => {
            await s.write(trx, rows);
            await handleQuarantine(env, trx, endpoint, s.entity, leaf.validated.invalid, rows.map(s.key));
            await recordPage(trx, bookkeeping);
          });
  // Listings written side by side lock shared rows in key order, so a deadlock should not
  // happen; if Postgres still picks this page as a deadlock victim, it rolled back whole and
  // is simply written again.
  for (let attempt = 1; ; attempt++) {
    try {
      await commit();
      break;
    } catch (err) {
      if ((err as { code?: string }).code !== DEADLOCK || attempt >= 3) throw err;
      env.logger.warn({ stream: s.stream, window: w, attempt }, 'exchange page chosen as deadlock victim; writing it again');
    }
  }
  cov.pages += leaf.pages.length;
  cov.rows += rows.length;
  cov.quarantined += leaf.validated.invalid.length;
  env.counters.pages += leaf.pages.length;
  env.progress.tick(rows.length, leaf.pages.length);
}

/**
 * Fetches a window: the timestamps of a full page that can be split, or the records of a window
 * that is complete (or cannot be split further).
 */
async function fetchLeaf<T, R extends { raw: string }>(env: SyncEnv, s: WindowStream<T, R>, w: Window): Promise<LeafResult<T> | FullResult> {
  const page = await s.fetch(w, undefined, env.signal);
  const validated = validateRecords(s.schema, page.records, s.keyField, s.int64Key, undefined, page.response.text);
  if (page.records.length < s.limit) return { window: w, pages: [page], validated, settled: true };
  const timestamps = validated.valid.map((v) => s.timestampOf(v.value)).filter((t): t is number => t !== null);
  if (canSplit(w)) return { window: w, full: true, timestamps };
  // One millisecond holds a full page: split by symbol where the endpoint allows it.
  if (!s.symbols?.length) return { window: w, pages: [page], validated, settled: false, detail: { window: w, reason: 'full page within one millisecond' } };
  const pages: Page[] = [];
  const merged: ValidatedPage<T> = { valid: [], invalid: [] };
  const stillFull: string[] = [];
  for (const symbol of s.symbols) {
    checkAbort(env);
    const p = await s.fetch(w, symbol, env.signal);
    pages.push(p);
    const v = validateRecords(s.schema, p.records, s.keyField, s.int64Key, undefined, p.response.text);
    merged.valid.push(...v.valid);
    merged.invalid.push(...v.invalid);
    if (p.records.length >= s.limit) stillFull.push(symbol);
  }
  return stillFull.length
    ? { window: w, pages, validated: merged, settled: false, detail: { window: w, reason: 'full page within one millisecond and one symbol', symbols: stillFull } }
    : { window: w, pages, validated: merged, settled: true };
}
