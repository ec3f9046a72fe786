/** Exchange sync step: fills, paged by execId as an async generator and stored page by page with their cursor. */
import { getCursor, saveCursorCheck, setCursor, settleCoverage } from '../../store/sync/cursors.js';
import { inTransaction, type Db } from '../../store/db/database.js';
import { FILLS_PAGE_LIMIT } from './client.js';
import type { Page } from '../common/page.js';
import {
  applyFillsPage,
  nextFillsRequest,
  normalizeFillsState,
  type FillsPlanState,
  type FillsRequest,
} from './plan.js';
import { fastFill, fillSchema, validateRecords, type Fill, type Validated, type ValidatedPage } from './schemas.js';
import { toFillRow, utcDay } from './transform.js';
import { markedNumber } from '../common/wire-decimal.js';
import { isLosslessNumber, type LosslessNumber } from '../../decimal/json.js';
import { padded } from './sync-windows.js';
import { commitFillsPage, recordPage, upsertFills } from '../../store/sync/exchange-records.js';
import {
  bump,
  handleQuarantine,
  SOURCE,
  streamCoverage,
  type ExchangeSync,
  type StreamCoverage,
} from './sync-common.js';
import { FILLS_SYNCED_CURSOR } from './streams.js';
import { fillsReach, readFillsPage } from './fills-reach.js';
import { writeOrSplit, type Refused } from '../common/record-fallback.js';
import { checkAbort } from '../common/abort.js';
import { isUniqueViolation } from '../../store/db/database-errors.js';
import type { CoverageDelta } from '../../store/sync/exchange-records.js';
import type { NewExchangeFill } from '../../store/db/schema.js';

export const FILLS_CURSOR = 'fills.execId';
/** Ranges above the cursor already stored while walking a newest-first history down (JSON). */
export const FILLS_PENDING_CURSOR = 'fills.pending';

export interface FillsPage {
  request: FillsRequest;
  page: Page;
  validated: ValidatedPage<Fill>;
  /** Readable execIds of every record of the page, valid or not (the page's extent). */
  ids: string[];
  full: boolean;
}

/**
 * Pages of fills as an async generator of validated pages, driven by the plan in plan.ts.
 * The next page is requested while the caller stores the current one (the plan needs only the
 * page's ids, known before it is stored), which keeps the API and the database both busy.
 * `commit` is called with each page and the plan state it establishes; it must store both in
 * one transaction before the generator moves on.
 */
export async function* fillPages(
  env: ExchangeSync,
  start: FillsPlanState,
  extra: { from?: number; to?: number },
): AsyncGenerator<{ page: FillsPage; state: FillsPlanState; done: boolean; stuck?: string }> {
  let state = start;
  const fetchPage = (request: FillsRequest) => {
    const p = env.client
      .fills(
        {
          fromExecId: request.fromExecId,
          toExecId: request.toExecId,
          from: extra.from,
          to: extra.to,
          limit: FILLS_PAGE_LIMIT,
        },
        env.signal,
      )
      .then((page) => ({ request, page }));
    // Rejections are observed when awaited; this keeps an abandoned prefetch from crashing the process.
    p.catch(() => {});
    return p;
  };
  let inflight = fetchPage(nextFillsRequest(state));
  for (;;) {
    const { request, page } = await inflight;
    // The plan needs only the page's size and ids: the next request leaves before this page is
    // validated, so validation overlaps the round trip (which is the critical path).
    const ids = page.records.map(rawExecId).filter((id): id is string => id !== null);
    const full = page.records.length >= FILLS_PAGE_LIMIT;
    const outcome = applyFillsPage(state, request, ids, full);
    if (outcome.kind === 'advanced' && !outcome.done) inflight = fetchPage(nextFillsRequest(outcome.state));
    const validated = validateRecords(fillSchema, page.records, 'execId', true, fastFill, page.response.text);
    const fp: FillsPage = { request, page, validated, ids, full };
    if (outcome.kind === 'stuck') {
      yield { page: fp, state, done: true, stuck: outcome.reason };
      return;
    }
    yield { page: fp, state: outcome.state, done: outcome.done };
    state = outcome.state;
    if (outcome.done) return;
  }
}

/**
 * The execId of a raw record when it is plain digits. Any subset of a page's ids is safe for
 * the plan (the range it proves complete only shrinks), so an odd id is simply left out.
 */
function rawExecId(record: unknown): string | null {
  if (!record || typeof record !== 'object') return null;
  const v = (record as Record<string, unknown>).execId;
  const t = isLosslessNumber(v) ? (v as LosslessNumber).value : (markedNumber(v) ?? (typeof v === 'string' ? v : null));
  return t !== null && /^\d{1,30}$/.test(t) ? t.replace(/^0+(?=\d)/, '') : null;
}

export async function loadFillsState(db: Db, account: string): Promise<FillsPlanState> {
  const watermark = await getCursor(db, account, SOURCE, FILLS_CURSOR);
  const pending = await getCursor(db, account, SOURCE, FILLS_PENDING_CURSOR);
  const blocks = pending ? (JSON.parse(pending) as Array<[string, string]>) : [];
  return normalizeFillsState({ watermark, blocks });
}

/**
 * Incremental fills: from the stored cursor up to the newest fill. The cursor (and the list of
 * ranges stored above it) moves in the transaction that stores the page.
 */
export async function syncFills(env: ExchangeSync): Promise<void> {
  const start = await loadFillsState(env.db, env.account);
  await runFills(env, start, {}, true);
}

/** Backfill of a time range: fetched by from/to and execId, stored, no cursor moved. */
export async function backfillFills(env: ExchangeSync, range: { from: number; to: number }): Promise<void> {
  // Bounds widened by a millisecond: whatever the exchange's from/to semantics, the range's edges are in.
  await runFills(env, { watermark: null, blocks: [] }, padded({ start: range.from, end: range.to }), false);
}

/** What the pages of one fills walk share. */
interface FillsWalk {
  env: ExchangeSync;
  cov: StreamCoverage;
  /** An incremental walk moves the cursors with its pages; a backfill moves none. */
  persist: boolean;
  /**
   * New fills go in as plain inserts until a page meets a stored fill; then that page and every later one upserts
   * (runFills says why).
   */
  fresh: boolean;
  /** The write of the page before: a page commits only after it did (committed pages form a prefix of the walk). */
  previous: Promise<void>;
}

/** One page of the walk as it is written: its rows (the request's bounds left out) and its coverage by day. */
interface FillsPageRows {
  rows: NewExchangeFill[];
  /** The valid records behind `rows`: written one by one when the database refuses the page. */
  fallback: Array<Validated<Fill>>;
  byDay: Map<string, CoverageDelta>;
  /** The UTC day of the page's first row, which its page and quarantined records are counted on. */
  pageDay: string | null;
}

async function runFills(
  env: ExchangeSync,
  start: FillsPlanState,
  extra: { from?: number; to?: number },
  persist: boolean,
): Promise<void> {
  env.progress.setStage('fills');
  const range = persist ? await walkRange(env) : { from: extra.from ?? env.historyStartMs, to: extra.to ?? env.nowMs };
  const reach = fillsReach(range.from, range.to);
  const span = env.progress.span('fills', range.from, range.to);
  // An incremental walk reads only above the cursor and outside the ranges stored above it (the request bounds, stored
  // already, are left out below), so its fills are new: their pages go in as plain inserts, without the upsert's
  // conflict handling (a quarter of Postgres's cost per row). A page that meets a stored fill all the same (the
  // exchange changed a fill, or wrote into a range already read) fails with a unique violation and is written again
  // as an upsert, as is every later page of the walk. A backfill reads stored ranges: it upserts.
  const walk: FillsWalk = {
    env,
    cov: streamCoverage(env, 'fills'),
    persist,
    fresh: persist,
    previous: Promise.resolve(),
  };
  let last = start;
  let stuck: string | null = null;
  // Page k+1 is fetched and validated while page k is written. On a Postgres server two page
  // transactions also insert at once (two backends), but each one moves the cursor and commits
  // only after the previous one committed: committed pages always form a prefix of the walk,
  // so the cursor never covers a page that is not stored.
  const depth = env.parallelWrites ? 2 : 1;
  const inFlight: Array<Promise<void>> = [];
  const settleOldest = async () => {
    const p = inFlight.shift();
    if (!p) return;
    await p;
    checkAbort(env.signal);
  };
  try {
    for await (const step of fillPages(env, start, extra)) {
      const page = pageRows(walk, step);
      if (step.stuck) stuck = step.stuck;
      while (inFlight.length >= depth) await settleOldest();
      // Only figures are kept for after the commit: the page's records and rows can be collected
      // while the write runs (fewer survivors for the young-generation GC to copy).
      const state = step.state;
      const timestamps = step.page.validated.valid.map((v) => v.value.timestamp);
      const lastPage = step.done === true && !step.stuck;
      const done = writeFillsPage(walk, step, page, depth).then(({ written, quarantined }) => {
        last = state;
        env.counters.fills += written;
        env.counters.pages++;
        walk.cov.pages++;
        walk.cov.rows += written;
        walk.cov.quarantined += quarantined;
        // The walk's last page: everything up to the end of the range is stored, whatever its newest fill's time.
        span.cover(lastPage ? range.to - range.from : readFillsPage(reach, timestamps));
        env.progress.tick(written);
      });
      // Observed in order by settleOldest(); this keeps a failure from being reported as unhandled meanwhile.
      done.catch(() => {});
      walk.previous = done;
      inFlight.push(done);
    }
    while (inFlight.length) await settleOldest();
    if (persist) await recordWalk(env, stuck, last.watermark);
    span.end();
  } finally {
    // On an error elsewhere, let the writes in flight finish before the caller closes the store.
    await Promise.allSettled(inFlight);
    if (persist) walk.cov.cursor = last.watermark;
  }
}

/** The time an incremental walk reads: from the start of the last complete walk (or historyStart) up to now. */
async function walkRange(env: ExchangeSync): Promise<{ from: number; to: number }> {
  const synced = Number(await getCursor(env.db, env.account, SOURCE, FILLS_SYNCED_CURSOR));
  return { from: Number.isFinite(synced) && synced > 0 ? synced : env.historyStartMs, to: env.nowMs };
}

type FillsStep = { page: FillsPage; state: FillsPlanState; done?: boolean; stuck?: string };

/** The page's rows and coverage; a page the walk got stuck on leaves its day unsettled and the stream too. */
function pageRows(walk: FillsWalk, step: FillsStep): FillsPageRows {
  const { env } = walk;
  const { validated } = step.page;
  // The bounds of a request are stored already (watermark, edge of a stored range): skipping
  // them keeps re-runs from rewriting and recounting them.
  const bounds = new Set([step.page.request.fromExecId, step.page.request.toExecId]);
  const fallback = validated.valid.filter((v) => !bounds.has(v.value.execId));
  const rows = fallback.map((v) => toFillRow(v, { raw: false }));
  const byDay = new Map<string, CoverageDelta>();
  for (const r of rows) bump(byDay, utcDay(r.timestamp), { rows: 1 });
  const pageDay = rows.length ? utcDay(rows[0]!.timestamp) : null;
  if (pageDay) bump(byDay, pageDay, { pages: 1, quarantined: validated.invalid.length });
  if (step.stuck) {
    bump(byDay, pageDay ?? new Date(env.nowMs).toISOString().slice(0, 10), {
      settled: false,
      detail: { reason: step.stuck },
    });
    env.logger.error(
      { reason: step.stuck, request: step.page.request },
      'exchange fills paging made no progress; stopping fills for this run',
    );
    walk.cov.settled = false;
  }
  return { rows, fallback, byDay, pageDay };
}

/**
 * Writes one page with its coverage and, for an incremental walk, its cursors, after the page before committed;
 * resolves to the rows written and the records quarantined. A page the database still refuses is written again
 * record by record (each with its own raw record), the refused ones quarantined with the database's reason.
 */
function writeFillsPage(
  walk: FillsWalk,
  step: FillsStep,
  { rows, fallback, byDay, pageDay }: FillsPageRows,
  depth: number,
): Promise<{ written: number; quarantined: number }> {
  const { env } = walk;
  const { page, validated } = step.page;
  const cursors =
    walk.persist && !step.stuck
      ? [
          ...(step.state.watermark !== null ? [{ name: FILLS_CURSOR, value: step.state.watermark }] : []),
          { name: FILLS_PENDING_CURSOR, value: JSON.stringify(step.state.blocks) },
        ]
      : [];
  const bookkeeping = { account: env.account, runId: env.runId, coverageStream: 'fills', coverage: byDay, cursors };
  const before = walk.previous;
  const write = (asFresh: boolean) =>
    depth === 1 && validated.invalid.length === 0 && !env.openQuarantine.has('fill')
      ? commitFillsPage(env.db, { ...bookkeeping, rows, pageText: page.response.text }, asFresh)
      : inTransaction(env.db, async (trx) => {
          // The rows first: a unique violation of a fresh insert leaves nothing else of the page to undo.
          await upsertFills(trx, env.account, rows, page.response.text, validated.invalid.length === 0, asFresh);
          await handleQuarantine(
            env,
            trx,
            page.endpoint,
            'fill',
            validated.invalid,
            rows.map((r) => r.exec_id),
          );
          // A failed predecessor fails (rolls back) this page too: nothing commits past a gap.
          await before;
          await recordPage(trx, bookkeeping);
        });
  const whole = async () => {
    if (!walk.fresh) return write(false);
    try {
      return await write(true);
    } catch (err) {
      if (!isUniqueViolation(err)) throw err;
      // A stored fill among the page's: written again as an upsert, and so is every later page of this sync.
      walk.fresh = false;
      return write(false);
    }
  };
  const finish = async (trx: Db, kept: typeof fallback, refused: Array<Refused<(typeof fallback)[number]>>) => {
    for (const r of refused) bump(byDay, utcDay(toFillRow(r.item, { raw: false }).timestamp), { rows: -1 });
    if (pageDay) bump(byDay, pageDay, { quarantined: refused.length });
    const dbRefused = refused.map((r) => ({
      index: r.item.index,
      raw: r.item.raw,
      reason: r.reason,
      key: r.item.value.execId,
    }));
    await handleQuarantine(
      env,
      trx,
      page.endpoint,
      'fill',
      [...validated.invalid, ...dbRefused],
      kept.map((k) => k.value.execId),
    );
    await before;
    await recordPage(trx, bookkeeping);
  };
  const figures = { written: rows.length, quarantined: validated.invalid.length };
  return writeOrSplit(env.db, fallback, whole, (trx, v) => upsertFills(trx, env.account, [toFillRow(v)]), finish).then(
    (split) => {
      if (!split) return figures;
      env.logger.warn(
        { stream: 'fills', refused: split.refused.map((r) => ({ key: r.item.value.execId, reason: r.reason })) },
        'exchange fills page refused by the database; written record by record, the refused records quarantined',
      );
      return { written: split.kept.length, quarantined: figures.quarantined + split.refused.length };
    },
  );
}

/**
 * After an incremental walk: the fills cursor's check row (S_COVERAGE `exchange:cursor:fills.execId`),
 * unsettled when the walk got stuck, i.e. the cursor did not advance although the API listed a
 * full page of fills it could not place above it. A walk that completed read every fill above a
 * cursor that never moved past a gap: it settles the fills rows a stuck walk left, and records
 * its start as the time up to which every fill is stored (FILLS_SYNCED_CURSOR).
 */
async function recordWalk(env: ExchangeSync, stuck: string | null, watermark: string | null): Promise<void> {
  const now = new Date(env.nowMs);
  await saveCursorCheck(
    env.db,
    env.account,
    env.runId,
    {
      source: SOURCE,
      name: FILLS_CURSOR,
      settled: stuck === null,
      detail: stuck ? { reason: stuck, watermark } : { watermark },
    },
    now,
  );
  if (stuck !== null) return;
  await settleCoverage(env.db, env.account, env.runId, SOURCE, 'fills', null);
  await setCursor(env.db, env.account, SOURCE, FILLS_SYNCED_CURSOR, String(env.nowMs));
}
