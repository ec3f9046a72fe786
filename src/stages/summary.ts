/** The `--json` run summary of a stored run: read through the store, shaped by the report (report/json-summary.ts). */
import type { Db } from '../store/db/database.js';
import { openBreaksOfRun } from '../store/recon/breaks.js';
import { webhookStatsIn } from '../store/report/partner-sheets.js';
import { spanOf } from '../store/db/keyset.js';
import { getRun, plainDigest, readLateBreaks } from '../store/runs/runs.js';
import { jsonSummaryOf, type JsonSummary } from '../report/json-summary.js';
import { closedPeriodChanges } from '../store/workflow/close-changes.js';

export type { JsonSummary } from '../report/json-summary.js';

export class RunNotFoundError extends Error {
  readonly code = 'RUN_NOT_FOUND';
  constructor(runId: string) {
    super(`run ${runId} not found`);
    this.name = 'RunNotFoundError';
  }
}

export async function jsonSummary(db: Db, account: string, runId: string): Promise<JsonSummary> {
  const run = await getRun(db, runId);
  if (!run) throw new RunNotFoundError(runId);
  const breaks = await openBreaksOfRun(
    db,
    { id: run.id, account, periodFrom: run.period_from, periodTo: run.period_to },
    'severity',
  );
  return jsonSummaryOf(run, account, {
    breaks,
    webhooks:
      run.period_from && run.period_to
        ? await webhookStatsIn(db, account, spanOf({ from: run.period_from, to: run.period_to }))
        : null,
    late: readLateBreaks(run.late_breaks),
    moneyAtStake: plainDigest(run.report_digest)?.figures?.moneyAtStake ?? null,
    closedPeriods: await closedPeriodChanges(db, account, 0),
  });
}
