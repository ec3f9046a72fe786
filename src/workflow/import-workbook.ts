/** The import of a returned workbook's filled-in rows (docs/working-breaks.md "The workbook as the way back in"), in
 * one transaction: each row's outcome decided by returned-row.ts, only what changes state written, the file recorded
 * so it is applied once.
 */
import { breakId, NO_WORKFLOW, type Actor, type ReturnedRow } from '../domain/index.js';
import { inTransaction, type Db } from '../store/db/database.js';
import { appendAudit, auditBreakChange } from '../store/workflow/audit-log.js';
import {
  importOf,
  lockBreak,
  recordImport,
  recordWorkflowChange,
  workflowRecordOf,
  workflowsOf,
} from '../store/workflow/break-workflow.js';
import { getRun } from '../store/runs/runs.js';
import { actionDecision, filledIn, rowOutcome, type ImportAction } from './returned-row.js';
import { BreakWorkflowError } from './workflow-error.js';

export interface ImportResult {
  runId: string;
  sha256: string;
  by: string;
  /** Set when this file was imported before: nothing was done. */
  alreadyImported: { at: Date; by: string } | null;
  applied: Array<{ row: number; code: string; key: string; actions: ImportAction[] }>;
  skipped: Array<{ row: number; code: string; key: string; reason: string }>;
  /** Filled-in rows that asked for nothing new (the pre-filled owner and explanation, unchanged). */
  unchanged: number;
}

/**
 * Records the filled-in rows of a returned workbook of run `runId`, in one transaction: per row only what changes
 * state; rows whose break is gone or whose amounts changed since that workbook are skipped with the reason. A file (by
 * sha256) is applied once. A workbook of a run the account does not have is an error.
 */
export async function importReturnedRows(
  db: Db,
  account: string,
  input: { runId: string; sha256: string; rows: readonly ReturnedRow[]; by: string; at?: Date },
): Promise<ImportResult> {
  const run = await getRun(db, input.runId);
  if (!run || run.account !== account)
    throw new BreakWorkflowError(
      `the workbook is of run ${input.runId}, which account ${account} does not have: ` +
        'import it into the database that wrote it',
    );
  const at = input.at ?? new Date();
  const actor: Actor = { by: input.by, source: `workbook:${input.runId}`, at };
  const result: ImportResult = {
    runId: input.runId,
    sha256: input.sha256,
    by: input.by,
    alreadyImported: null,
    applied: [],
    skipped: [],
    unchanged: 0,
  };
  return inTransaction(db, async (trx) => {
    const done = await importOf(trx, account, input.sha256);
    if (done) return { ...result, alreadyImported: { at: done.at, by: done.by } };
    const filled = input.rows.filter(filledIn);
    // Where people stood when the import began: every row is planned against it.
    const workflows = await workflowsOf(trx, account, filled);
    for (const r of filled) {
      const b = await lockBreak(trx, account, r.code, r.key);
      const outcome = rowOutcome(r, b, workflows.get(breakId(r.code, r.key)) ?? NO_WORKFLOW);
      if ('skip' in outcome) {
        result.skipped.push({ row: r.row, code: r.code, key: r.key, reason: outcome.skip });
        continue;
      }
      if ('unchanged' in outcome) {
        result.unchanged += 1;
        continue;
      }
      for (const a of outcome.apply) {
        // Each action against the row as the previous one left it.
        const w = await workflowRecordOf(trx, account, outcome.break.code, outcome.break.key);
        const decision = actionDecision(outcome.break, w, a);
        if (decision.write) {
          await recordWorkflowChange(trx, account, outcome.break, decision.write, actor);
          await auditBreakChange(trx, account, outcome.break, decision.write.event, actor);
        }
      }
      result.applied.push({ row: r.row, code: r.code, key: r.key, actions: outcome.apply });
    }
    await recordImport(trx, {
      account,
      runId: input.runId,
      sha256: input.sha256,
      by: input.by,
      at,
      applied: result.applied.length,
      skipped: result.skipped.length,
    });
    await appendAudit(
      trx,
      {
        actor: input.by,
        action: 'import',
        subject: `workbook:${input.sha256}`,
        payload: { account, runId: input.runId, applied: result.applied.length, skipped: result.skipped.length },
      },
      at,
    );
    return result;
  });
}
