/** Sync cursors and the sync's day-by-day coverage of each stream. */
import type { Db } from './database.js';
import type { CoverageRow } from '../domain/index.js';
import type { CoverageRec } from '../report/model.js';

/** Reads a sync cursor; null when the stream has never been synced. */
export async function getCursor(db: Db, account: string, source: string, name: string): Promise<string | null> {
  const row = await db
    .selectFrom('sync_cursor')
    .select('value')
    .where('account', '=', account)
    .where('source', '=', source)
    .where('name', '=', name)
    .executeTakeFirst();
  return row?.value ?? null;
}

/** Moves a cursor. Call it inside the transaction that stores the rows the cursor covers. */
export async function setCursor(db: Db, account: string, source: string, name: string, value: string): Promise<void> {
  await db
    .insertInto('sync_cursor')
    .values({ account, source, name, value, updated_at: new Date() })
    .onConflict((oc) => oc.columns(['account', 'source', 'name']).doUpdateSet({ value, updated_at: new Date() }))
    .execute();
}

export async function listCursors(db: Db, account: string): Promise<Record<string, string>> {
  const rows = await db.selectFrom('sync_cursor').select(['source', 'name', 'value']).where('account', '=', account).execute();
  return Object.fromEntries(rows.map((r) => [`${r.source}.${r.name}`, r.value]));
}

/** Coverage rows the sync left unsettled (S_COVERAGE), plus how many rows there are in all. */
export async function unsettledCoverage(db: Db, account: string): Promise<{ unsettled: CoverageRow[]; total: number }> {
  const rows = await db.selectFrom('sync_coverage').select(['source', 'stream', 'day', 'settled', 'pages', 'rows', 'detail']).where('account', '=', account).where('settled', '=', false).execute();
  const { n } = await db.selectFrom('sync_coverage').select((eb) => eb.fn.countAll<string>().as('n')).where('account', '=', account).executeTakeFirstOrThrow();
  return { unsettled: rows.map((r) => ({ source: r.source, stream: r.stream, day: String(r.day), settled: r.settled, pages: r.pages, rows: r.rows, detail: r.detail })), total: Number(n) };
}

/** Coverage rows of the period's days, by source, stream and day (the workbook's Coverage sheet). */
export async function coverageOfDays(db: Db, account: string, period: { from: string; to: string }): Promise<CoverageRec[]> {
  const rows = await db
    .selectFrom('sync_coverage')
    .selectAll()
    .where('account', '=', account)
    .where('day', '>=', period.from)
    .where('day', '<', period.to)
    .orderBy('source')
    .orderBy('stream')
    .orderBy('day')
    .execute();
  return rows.map((r) => ({
    source: r.source,
    stream: r.stream,
    day: String(r.day),
    pages: Number(r.pages),
    rows: Number(r.rows),
    quarantined: Number(r.quarantined),
    settled: r.settled,
    runId: r.run_id,
  }));
}

/** Days of the period that have a coverage row of (source, stream), settled or not: the days some sync listed. */
export async function listedDays(db: Db, account: string, source: string, stream: string, period: { from: string; to: string }): Promise<Set<string>> {
  const rows = await db
    .selectFrom('sync_coverage')
    .select('day')
    .where('account', '=', account)
    .where('source', '=', source)
    .where('stream', '=', stream)
    .where('day', '>=', period.from)
    .where('day', '<', period.to)
    .execute();
  return new Set(rows.map((r) => String(r.day)));
}

/**
 * The check of a cursor the sync expected to advance: one row `cursor:<name>` (its day is the
 * run's), settled = false while the cursor is stuck with newer records at the API, true once a
 * later sync moved it. The row replaces the cursor's earlier one, whatever its day.
 */
export async function saveCursorCheck(db: Db, account: string, runId: string | null, check: { source: string; name: string; settled: boolean; detail: unknown }, now: Date): Promise<void> {
  const stream = `cursor:${check.name}`;
  await db.deleteFrom('sync_coverage').where('account', '=', account).where('source', '=', check.source).where('stream', '=', stream).execute();
  await db
    .insertInto('sync_coverage')
    .values({ account, source: check.source, stream, day: now.toISOString().slice(0, 10), pages: 0, rows: 0, quarantined: 0, settled: check.settled, detail: JSON.stringify(check.detail), run_id: runId, updated_at: now })
    .execute();
}

/**
 * Marks a stream's unsettled coverage rows settled: only for a scan that re-read what they miss
 * (the fills walk that completed from a cursor that had not moved; a backfill that read every
 * window of the days `within` completely). Rows a scan did not re-read are never cleared.
 */
export async function settleCoverage(db: Db, account: string, runId: string | null, source: string, stream: string, within: { from: string; to: string } | null): Promise<void> {
  await db
    .updateTable('sync_coverage')
    .set({ settled: true, run_id: runId, updated_at: new Date() })
    .where('account', '=', account)
    .where('source', '=', source)
    .where('stream', '=', stream)
    .where('settled', '=', false)
    .$if(within !== null, (q) => q.where('day', '>=', within!.from).where('day', '<', within!.to))
    .execute();
}
