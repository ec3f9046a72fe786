/** Break reads of the report and the e-mail: the account's open breaks, and what changed since the previous run of the period. */
import type { Db } from './database.js';
import type { BreakInfo, BreakRef, Changes, RunInfo } from '../report/model.js';

function toBreak(r: {
  code: string;
  key: string;
  severity: string;
  currency: string | null;
  expected: string | null;
  actual: string | null;
  difference: string | null;
  message: string | null;
  detail: unknown;
  status: string;
  first_seen_run: string;
  first_seen_at: Date;
  last_seen_run: string;
  last_seen_at: Date;
  resolved_run: string | null;
  resolved_at: Date | null;
  reopened_count: number;
}): BreakInfo {
  return {
    code: r.code,
    key: r.key,
    severity: r.severity,
    currency: r.currency,
    expected: r.expected,
    actual: r.actual,
    difference: r.difference,
    message: r.message,
    detail: r.detail,
    status: r.status,
    firstSeenRun: r.first_seen_run,
    firstSeenAt: r.first_seen_at,
    lastSeenRun: r.last_seen_run,
    lastSeenAt: r.last_seen_at,
    resolvedRun: r.resolved_run,
    resolvedAt: r.resolved_at,
    reopenedCount: Number(r.reopened_count),
  };
}

/** Every open break of the account, whatever run found it (sorting is the builder's job). */
export async function loadOpenBreaks(db: Db, account: string): Promise<BreakInfo[]> {
  const rows = await db.selectFrom('break').selectAll().where('account', '=', account).where('status', '=', 'open').execute();
  return rows.map(toBreak);
}

export async function loadChanges(db: Db, run: RunInfo, openBreaks: BreakInfo[]): Promise<Changes> {
  const previous = await db
    .selectFrom('run')
    .select(['id', 'started_at', 'status'])
    .where('account', '=', run.account)
    .where('period_from', '=', run.periodFrom)
    .where('period_to', '=', run.periodTo)
    .where('started_at', '<', run.startedAt)
    .where('id', '!=', run.id)
    .orderBy('started_at', 'desc')
    .limit(1)
    .executeTakeFirst();
  const ref = (b: Pick<BreakInfo, 'code' | 'key' | 'severity' | 'message'>): BreakRef => ({ code: b.code, key: b.key, severity: b.severity, message: b.message });
  const opened = openBreaks.filter((b) => b.firstSeenRun === run.id);
  const resolvedRows = await db
    .selectFrom('break')
    .select(['code', 'key', 'severity', 'message'])
    .where('account', '=', run.account)
    .where('resolved_run', '=', run.id)
    .where('status', '=', 'resolved')
    .execute();
  const reopenedKeys = await db
    .selectFrom('break_event')
    .select(['code', 'key'])
    .where('account', '=', run.account)
    .where('run_id', '=', run.id)
    .where('event', '=', 'reopened')
    .execute();
  const reopenedSet = new Set(reopenedKeys.map((r) => `${r.code}\u0000${r.key}`));
  const reopened = openBreaks.filter((b) => b.firstSeenRun !== run.id && reopenedSet.has(`${b.code}\u0000${b.key}`));
  return {
    previous: previous ? { id: previous.id, startedAt: previous.started_at, status: previous.status } : null,
    opened: opened.map(ref),
    reopened: reopened.map(ref),
    resolved: resolvedRows.map(ref),
    stillOpen: openBreaks.length - opened.length - reopened.length,
  };
}
