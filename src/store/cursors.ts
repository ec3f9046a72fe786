/** Sync cursors and the sync's day-by-day coverage of each stream. */
import { sql } from 'kysely';
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

/**
 * The streams whose records are stored one per row with a time of their own: a day's coverage
 * counts what is stored for it (table, time column) and what is still open in quarantine for it
 * (entity, the raw record's time field), whatever scan read them.
 */
const ACCUMULATED: Record<string, { table: 'partner_order' | 'exchange_fill' | 'exchange_deposit' | 'exchange_withdrawal'; time: 'created_at' | 'timestamp'; entity: string; rawTime: string }> = {
  'partner:orders': { table: 'partner_order', time: 'created_at', entity: 'partner_order', rawTime: 'createdAt' },
  'exchange:fills': { table: 'exchange_fill', time: 'timestamp', entity: 'fill', rawTime: 'timestamp' },
  'exchange:deposits': { table: 'exchange_deposit', time: 'timestamp', entity: 'deposit', rawTime: 'timestamp' },
  'exchange:withdrawals': { table: 'exchange_withdrawal', time: 'timestamp', entity: 'withdrawal', rawTime: 'timestamp' },
};

/**
 * Coverage rows of the period's days, by source, stream and day (the workbook's Coverage sheet).
 * Coverage accumulates (issue 17): for the streams of ACCUMULATED, rows is everything stored for
 * the day and quarantined everything still open for it, not the last scan's numbers (a nightly
 * scan from a cursor reads only what is new: 86 rows of a day that holds 701).
 */
export async function coverageOfDays(db: Db, account: string, period: { from: string; to: string }): Promise<CoverageRec[]> {
  const scanned = await scannedCoverage(db, account, period);
  const streams = new Set(scanned.map((c) => `${c.source}:${c.stream}`));
  const stored = new Map<string, number>();
  const open = new Map<string, number>();
  for (const stream of streams) {
    const acc = ACCUMULATED[stream];
    if (!acc) continue;
    const res = await sql<{ day: string; n: string }>`
      select to_char(${sql.ref(acc.time)} at time zone 'UTC', 'YYYY-MM-DD') as day, count(*) as n
      from ${sql.table(acc.table)}
      where account = ${account} and ${sql.ref(acc.time)} >= ${`${period.from}T00:00:00Z`} and ${sql.ref(acc.time)} < ${`${period.to}T00:00:00Z`}
      group by 1`.execute(db);
    for (const r of res.rows) stored.set(`${stream}:${r.day}`, Number(r.n));
    const quarantined = await db
      .selectFrom('quarantine')
      .select('raw_text')
      .where('account', '=', account)
      .where('source', '=', stream.split(':')[0]!)
      .where('entity', '=', acc.entity)
      .where('resolved_at', 'is', null)
      .execute();
    for (const q of quarantined) {
      const day = rawRecordDay(q.raw_text, acc.rawTime);
      if (day && day >= period.from && day < period.to) open.set(`${stream}:${day}`, (open.get(`${stream}:${day}`) ?? 0) + 1);
    }
  }
  return scanned.map((c) => {
    const key = `${c.source}:${c.stream}:${c.day}`;
    if (!ACCUMULATED[`${c.source}:${c.stream}`]) return c;
    return { ...c, rows: stored.get(key) ?? 0, quarantined: Math.max(open.get(key) ?? 0, c.quarantined) };
  });
}

/** The UTC day of a quarantined record from its raw time field (ISO text or epoch milliseconds), or null when unreadable. */
export function rawRecordDay(rawText: string, field: string): string | null {
  let record: unknown;
  try {
    record = JSON.parse(rawText);
  } catch {
    return null;
  }
  if (!record || typeof record !== 'object') return null;
  const v = (record as Record<string, unknown>)[field];
  if (typeof v === 'string' && /^\d{4}-\d{2}-\d{2}[Tt ]/.test(v)) return v.slice(0, 10);
  const ms = typeof v === 'number' ? v : typeof v === 'string' && /^\d{10,15}$/.test(v) ? Number(v) : NaN;
  if (!Number.isFinite(ms)) return null;
  const d = new Date(ms);
  return Number.isNaN(d.getTime()) ? null : d.toISOString().slice(0, 10);
}

/** The sync_coverage rows as the scans wrote them. */
async function scannedCoverage(db: Db, account: string, period: { from: string; to: string }): Promise<CoverageRec[]> {
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
