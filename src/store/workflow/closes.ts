/** Period closes (sql/0024, docs/closing.md): the sign-off rows, the breaks open at sign-off, what a close checks
 * before it signs (the period's last reconcile, unjudged changes, overlapping closes) and its reopening.
 */
import { sql } from 'kysely';
import type { Db } from '../db/database.js';
import type { Span } from '../db/keyset.js';
import { changedRow } from '../recon/changes.js';
import { RECORD_KINDS } from '../../domain/record-kinds.js';
import { EVIDENCE_STREAMS } from '../../domain/evidence.js';
import type { Period } from '../../domain/period.js';

export type CloseState = 'signed' | 'reopened';

export interface CloseRecord {
  id: string;
  account: string;
  period: Period;
  by: string;
  at: Date;
  note: string | null;
  runId: string;
  digest: string;
  records: number;
  rulesetVersion: string;
  configHash: string;
  workbook: string;
  workbookSha256: string;
  state: CloseState;
  reopenedBy: string | null;
  reopenedAt: Date | null;
  reopenReason: string | null;
}

/** A break open on the period at sign-off, with where people stood on it. */
export interface ClosedBreak {
  code: string;
  key: string;
  severity: string;
  firstSeenAt: Date;
  explained: boolean;
  owner: string | null;
  lastNote: string | null;
}

interface CloseRow {
  id: string;
  account: string;
  period_from: string;
  period_to: string;
  closed_by: string;
  closed_at: Date;
  note: string | null;
  run_id: string;
  digest: string;
  record_count: string;
  ruleset_version: string;
  config_hash: string;
  workbook_path: string;
  workbook_sha256: string;
  state: CloseState;
  reopened_by: string | null;
  reopened_at: Date | null;
  reopen_reason: string | null;
}

function closeOf(r: CloseRow): CloseRecord {
  return {
    id: r.id,
    account: r.account,
    period: { from: r.period_from, to: r.period_to },
    by: r.closed_by,
    at: r.closed_at,
    note: r.note,
    runId: r.run_id,
    digest: r.digest,
    records: Number(r.record_count),
    rulesetVersion: r.ruleset_version,
    configHash: r.config_hash,
    workbook: r.workbook_path,
    workbookSha256: r.workbook_sha256,
    state: r.state,
    reopenedBy: r.reopened_by,
    reopenedAt: r.reopened_at,
    reopenReason: r.reopen_reason,
  };
}

/** Dates as YYYY-MM-DD text on both databases. */
const COLUMNS = sql`id, account, period_from::text as period_from, period_to::text as period_to, closed_by, closed_at,
  note, run_id, digest, record_count::text as record_count, ruleset_version, config_hash, workbook_path,
  workbook_sha256, state, reopened_by, reopened_at, reopen_reason`;

/** Writes the close and its open breaks (in the caller's transaction: with its records and its audit row). */
export async function insertClose(trx: Db, close: CloseRecord, breaks: readonly ClosedBreak[]): Promise<void> {
  await sql`insert into period_close (id, account, period_from, period_to, closed_by, closed_at, note, run_id, digest,
      record_count, ruleset_version, config_hash, workbook_path, workbook_sha256)
    values (${close.id}, ${close.account}, ${close.period.from}, ${close.period.to}, ${close.by}, ${close.at},
      ${close.note}, ${close.runId}, ${close.digest}, ${close.records}, ${close.rulesetVersion}, ${close.configHash},
      ${close.workbook}, ${close.workbookSha256})`.execute(trx);
  for (const b of breaks)
    await sql`insert into close_break (close_id, code, key, severity, first_seen_at, explained, owner, last_note)
      values (${close.id}, ${b.code}, ${b.key}, ${b.severity}, ${b.firstSeenAt}, ${b.explained}, ${b.owner}, ${b.lastNote})`.execute(
      trx,
    );
}

export async function getClose(db: Db, id: string): Promise<CloseRecord | null> {
  const r = await sql<CloseRow>`select ${COLUMNS} from period_close where id = ${id}`.execute(db);
  return r.rows[0] ? closeOf(r.rows[0]) : null;
}

/** Every close of the accounts, newest first. */
export async function listCloses(db: Db, accounts: readonly string[]): Promise<CloseRecord[]> {
  if (!accounts.length) return [];
  const r = await sql<CloseRow>`select ${COLUMNS} from period_close
    where account in (${sql.join(accounts)}) order by closed_at desc, id desc`.execute(db);
  return r.rows.map(closeOf);
}

/** The breaks recorded with a close. */
export async function closedBreaks(db: Db, closeId: string): Promise<ClosedBreak[]> {
  const r = await sql<{
    code: string;
    key: string;
    severity: string;
    first_seen_at: Date;
    explained: boolean;
    owner: string | null;
    last_note: string | null;
  }>`select code, key, severity, first_seen_at, explained, owner, last_note from close_break
    where close_id = ${closeId} order by code, key`.execute(db);
  return r.rows.map((b) => ({
    code: b.code,
    key: b.key,
    severity: b.severity,
    firstSeenAt: b.first_seen_at,
    explained: b.explained,
    owner: b.owner,
    lastNote: b.last_note,
  }));
}

/** A signed close of the account whose period overlaps this one (a period is signed once until reopened). */
export async function overlappingSignedClose(db: Db, account: string, period: Period): Promise<CloseRecord | null> {
  const r = await sql<CloseRow>`select ${COLUMNS} from period_close
    where account = ${account} and state = 'signed' and period_from < ${period.to} and period_to > ${period.from}
    order by closed_at limit 1`.execute(db);
  return r.rows[0] ? closeOf(r.rows[0]) : null;
}

/** The newest run or reconcile of exactly this period whose reconcile stage succeeded: what the close signs. */
export async function lastReconcileOf(
  db: Db,
  account: string,
  period: Period,
): Promise<{ id: string; rulesetVersion: string; configHash: string } | null> {
  const r = await sql<{ id: string; ruleset_version: string | null; config_hash: string | null }>`
    select id, ruleset_version, config_hash from run
    where account = ${account} and command in ('run', 'reconcile') and period_from = ${period.from}
      and period_to = ${period.to} and status != 'running' and stages -> 'reconcile' ->> 'status' = 'succeeded'
    order by started_at desc limit 1`.execute(db);
  const row = r.rows[0];
  return row ? { id: row.id, rulesetVersion: row.ruleset_version ?? '', configHash: row.config_hash ?? '' } : null;
}

/**
 * How many records of the span changed since the account was last judged (sql/0017): a close signs only what a
 * reconcile has seen. Every record counts when the account was never judged.
 */
export async function unjudgedRecords(db: Db, account: string, span: Span): Promise<number> {
  const mark = await sql<{ snapshot: string }>`
    select judged_snapshot::text as snapshot from reconcile_watermark where account = ${account}`.execute(db);
  const since = mark.rows[0]?.snapshot ?? null;
  let total = 0;
  for (const stream of EVIDENCE_STREAMS) {
    const kind = RECORD_KINDS[stream];
    const time = sql.raw(
      kind.time!.length > 1 ? `coalesce(${kind.time!.map((c) => `t.${c}`).join(', ')})` : `t.${kind.time![0]}`,
    );
    const r = await sql<{ n: string }>`select count(*)::text as n from ${sql.table(kind.table!)} t
      where t.account = ${account} and ${time} >= ${span.from} and ${time} < ${span.to} and ${changedRow('t', since)}`.execute(
      db,
    );
    total += Number(r.rows[0]!.n);
  }
  return total;
}

/** Marks a signed close reopened; false when it was not signed (already reopened). */
export async function markReopened(trx: Db, id: string, by: string, at: Date, reason: string): Promise<boolean> {
  const r = await sql`update period_close set state = 'reopened', reopened_by = ${by}, reopened_at = ${at},
    reopen_reason = ${reason} where id = ${id} and state = 'signed'`.execute(trx);
  return Number(r.numAffectedRows ?? 0) > 0;
}
