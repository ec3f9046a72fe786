/** What a run changed against the previous run of its period: the breaks it opened, reopened and resolved. */
import type { Db } from '../db/database.js';
import { breakId, type Break, type BreakRef, type Changes, type RunInfo } from '../../domain/index.js';
import { previousRunOfPeriod } from '../runs/runs.js';
import { severity } from '../recon/break-rows.js';

/** What changed in this run against the previous run of the same period: breaks opened, reopened and resolved. */
export async function loadChanges(db: Db, run: RunInfo, openBreaks: Break[]): Promise<Changes> {
  const previous = await previousRunOfPeriod(db, run);
  const ref = (b: BreakRef): BreakRef => ({ code: b.code, key: b.key, severity: b.severity, message: b.message });
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
  const reopenedSet = new Set(reopenedKeys.map((r) => breakId(r.code, r.key)));
  const reopened = openBreaks.filter((b) => b.firstSeenRun !== run.id && reopenedSet.has(breakId(b.code, b.key)));
  return {
    previous,
    opened: opened.map(ref),
    reopened: reopened.map(ref),
    resolved: resolvedRows.map((r) => ref({ ...r, severity: severity(r.severity) })),
    stillOpen: openBreaks.length - opened.length - reopened.length,
  };
}
