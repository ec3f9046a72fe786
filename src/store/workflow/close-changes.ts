/** Prior-period adjustments (close_change, sql/0024; docs/closing.md "Late data against a closed period"): each change a
 * run saw to a record of a signed period, kept in step with the records after every reconcile, and read for reports.
 */
import { sql } from 'kysely';
import type { Db } from '../db/database.js';
import { spanOf } from '../db/keyset.js';
import { changedRow } from '../recon/changes.js';
import { byEntity, placedIn } from '../recon/record-sql.js';
import { cursorPages, differingRecords, inUtc, streamTable, type DifferingRecord } from './close-records.js';
import { listCloses, type CloseRecord } from './closes.js';
import { breakId } from '../../domain/break.js';
import {
  EVIDENCE_STREAMS,
  recordChanges,
  type CloseChange,
  type ClosedPeriodChanges,
  type EvidenceStream,
  type RecordChange,
} from '../../domain/evidence.js';
import type { Decimal } from '../../decimal/decimal.js';

/** Values the changes of one differing record in USD (the caller's rates: report/adjustment-impact.ts). */
export type ValueChanges = (
  stream: EvidenceStream,
  record: DifferingRecord,
  changes: RecordChange[],
) => Array<RecordChange & { usdImpact: Decimal | null }>;

/** Rows per insert statement. */
const INSERT_ROWS = 500;

/** The account's signed closes (a reopened one records nothing more and shows nothing). */
export async function signedClosesOf(db: Db, account: string): Promise<CloseRecord[]> {
  return (await listCloses(db, [account])).filter((c) => c.state === 'signed');
}

/**
 * Whether a record placed in the close's period, or one it signed (it may have moved out), changed since `since`
 * (sql/0017; null: the account was never judged, so everything counts): only then can its adjustments differ.
 */
export async function closeTouchedSince(db: Db, close: CloseRecord, since: string | null): Promise<boolean> {
  if (since === null) return true;
  const span = spanOf(close.period);
  for (const stream of EVIDENCE_STREAMS) {
    const { table, key, time } = streamTable(stream);
    const at = sql.raw(time);
    const r = await sql`select 1 from ${sql.table(table)} t
      where t.account = ${close.account} and ${changedRow('t', since)}
        and ((${at} >= ${span.from} and ${at} < ${span.to}) or exists (select 1 from close_record c
          where c.close_id = ${close.id} and c.stream = ${stream} and c.record_id = t.${sql.ref(key)}::text))
      limit 1`.execute(db);
    if (r.rows.length) return true;
  }
  return false;
}

/**
 * Brings the close's adjustments in step with its records as they stand, in the caller's transaction (the one that
 * records the run's reconcile): every field that differs from the signed document is upserted, keeping the run that
 * first saw it and its time but the latest `after` and impact; a row whose field equals the signed one again is
 * deleted. Streamed a page of records at a time. Returns how many changes the close has.
 */
export async function recordCloseChanges(
  trx: Db,
  close: CloseRecord,
  run: { id: string; at: Date },
  value: ValueChanges,
): Promise<number> {
  await inUtc(trx);
  const span = spanOf(close.period);
  const seen = new Set<string>();
  for (const stream of EVIDENCE_STREAMS)
    for await (const page of cursorPages(trx, differingRecords(close.id, stream, close.account, span))) {
      const changes = page.flatMap((r) => value(stream, r, recordChanges(stream, r.id, r.before, r.after)));
      for (const c of changes) seen.add(changeKey(c.stream, c.id, c.field));
      for (let i = 0; i < changes.length; i += INSERT_ROWS)
        await upsertChanges(trx, close.id, run, changes.slice(i, i + INSERT_ROWS));
    }
  const stored = await sql<{ stream: string; record_id: string; field: string }>`
    select stream, record_id, field from close_change where close_id = ${close.id}`.execute(trx);
  const gone = stored.rows.filter((r) => !seen.has(changeKey(r.stream, r.record_id, r.field)));
  for (let i = 0; i < gone.length; i += INSERT_ROWS) {
    const keys = gone.slice(i, i + INSERT_ROWS).map((g) => sql`(${g.stream}, ${g.record_id}, ${g.field})`);
    await sql`delete from close_change
      where close_id = ${close.id} and (stream, record_id, field) in (${sql.join(keys)})`.execute(trx);
  }
  return seen.size;
}

const changeKey = (stream: string, id: string, field: string) => JSON.stringify([stream, id, field]);

async function upsertChanges(
  trx: Db,
  closeId: string,
  run: { id: string; at: Date },
  changes: ReadonlyArray<RecordChange & { usdImpact: Decimal | null }>,
): Promise<void> {
  if (!changes.length) return;
  const rows = changes.map(
    (c) =>
      sql`(${closeId}, ${c.stream}, ${c.id}, ${c.field}, ${c.before}, ${c.after},
        ${c.usdImpact?.toFixed() ?? null}::numeric, ${run.id}, ${run.at})`,
  );
  await sql`insert into close_change (close_id, stream, record_id, field, before, after, usd_impact, run_id, seen_at)
    values ${sql.join(rows)}
    on conflict (close_id, stream, record_id, field) do update
      set before = excluded.before, after = excluded.after, usd_impact = excluded.usd_impact`.execute(trx);
}

interface ChangeRow {
  stream: EvidenceStream;
  record_id: string;
  field: string;
  before: string | null;
  after: string | null;
  usd_impact: Decimal | null;
  run_id: string;
  seen_at: Date;
}

/**
 * The account's signed closes with the adjustments recorded against each (none: count 0), oldest period first; of
 * each, the `limit` largest by absolute USD impact (those with none last), then by stream, record and field.
 */
export async function closedPeriodChanges(db: Db, account: string, limit: number): Promise<ClosedPeriodChanges[]> {
  const closes = (await signedClosesOf(db, account)).sort((a, b) => a.period.from.localeCompare(b.period.from));
  const out: ClosedPeriodChanges[] = [];
  for (const c of closes) {
    const [count, rows] = await Promise.all([
      sql<{ n: string; total: Decimal | null }>`select count(*)::text as n, sum(usd_impact) as total
        from close_change where close_id = ${c.id}`.execute(db),
      sql<ChangeRow>`select stream, record_id, field, before, after, usd_impact, run_id, seen_at from close_change
        where close_id = ${c.id}
        order by abs(usd_impact) desc nulls last, stream collate "C", record_id collate "C", field collate "C"
        limit ${limit}`.execute(db),
    ]);
    out.push({
      closeId: c.id,
      account: c.account,
      period: c.period,
      by: c.by,
      at: c.at,
      count: Number(count.rows[0]!.n),
      usdTotal: count.rows[0]!.total,
      changes: rows.rows.map(changeOf),
    });
  }
  return out;
}

function changeOf(r: ChangeRow): CloseChange {
  return {
    stream: r.stream,
    id: r.record_id,
    field: r.field,
    before: r.before,
    after: r.after,
    usdImpact: r.usd_impact,
    runId: r.run_id,
    seenAt: r.seen_at,
  };
}

/**
 * The open breaks of the account that lie inside a signed close's period (by their record's day, or their own day, as
 * "This period?" places them), by break id (code NUL key): the Breaks sheet marks them with the close id.
 */
export async function breaksOnClosedPeriods(
  db: Db,
  account: string,
  closes: ReadonlyArray<Pick<ClosedPeriodChanges, 'closeId' | 'period'>>,
): Promise<Map<string, string>> {
  const out = new Map<string, string>();
  for (const c of closes) {
    const span = spanOf(c.period);
    const placed = byEntity(sql.ref('b.entity'), (kind) => placedIn(kind, account, sql.ref('b.key'), span), sql`false`);
    const r = await sql<{ code: string; key: string }>`select b.code, b.key from break b
      where b.account = ${account} and b.status = 'open' and coalesce(case when b.day is not null
        then b.day >= ${c.period.from} and b.day < ${c.period.to} else ${placed} end, false)`.execute(db);
    for (const b of r.rows) if (!out.has(breakId(b.code, b.key))) out.set(breakId(b.code, b.key), c.closeId);
  }
  return out;
}
