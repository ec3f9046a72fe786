/** The reconcile's prior-period adjustments (docs/closing.md "Late data against a closed period"): after the breaks,
 * each signed close whose records may have changed is brought in step with them in close_change.
 */
import type { Db } from '../store/db/database.js';
import { spanOf } from '../store/db/keyset.js';
import { usdRateInputs } from '../store/report/usd-rates.js';
import {
  closeTouchedSince,
  recordCloseChanges,
  signedClosesOf,
  type ValueChanges,
} from '../store/workflow/close-changes.js';
import type { CloseRecord } from '../store/workflow/closes.js';
import { UsdRates } from '../report/usd-rates.js';
import { withUsdImpact } from '../report/adjustment-impact.js';
import type { ReconcileRun } from './reconcile-run.js';

/** A signed close to bring in step, with its changes' valuation (the rates its period's breaks are valued at). */
export interface CloseToRecord {
  close: CloseRecord;
  value: ValueChanges;
}

/**
 * The account's signed closes whose records changed since the account was last judged (all of them on its first
 * judgement), each with its rates, read before the write transaction.
 */
export async function closesToRecord(run: ReconcileRun): Promise<CloseToRecord[]> {
  const { db, account, judgement, ctx } = run;
  const out: CloseToRecord[] = [];
  for (const close of await signedClosesOf(db, account)) {
    if (!(await closeTouchedSince(db, close, judgement.since))) continue;
    const rates = new UsdRates(await usdRateInputs(db, account, ctx.config.exchange.account, spanOf(close.period)));
    out.push({ close, value: (stream, r, changes) => withUsdImpact(stream, r.before, r.after, changes, rates) });
  }
  return out;
}

/** Records the adjustments of each close, in the transaction that records the run's reconcile. */
export async function recordAdjustments(trx: Db, run: ReconcileRun, closes: readonly CloseToRecord[]): Promise<void> {
  for (const { close, value } of closes) {
    const changes = await recordCloseChanges(trx, close, { id: run.runId, at: run.ctx.now }, value);
    run.log.info({ closeId: close.id, changes }, 'closed period checked against its sign-off');
  }
}
