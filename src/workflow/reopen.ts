/** The reopen of acknowledgements whose figures changed, in the transaction that writes a run's breaks: the candidates
 * read, each decided by acknowledgement.ts, the reopened ones written with an event by ramp-recon.
 */
import type { Actor } from '../domain/index.js';
import type { Db } from '../store/db/database.js';
import { explainedWithChangedFigures, recordWorkflowChange } from '../store/workflow/break-workflow.js';
import { reopening } from './acknowledgement.js';

/**
 * Inside the transaction that writes a run's breaks (`trx`): every explained break whose amounts are no longer the
 * acknowledged ones becomes unexplained again, with a 'reopened' event by ramp-recon (source `run:<runId>`) saying
 * what changed (its explanation stays, for the reader). Returns how many were reopened.
 */
export async function reopenChangedAcknowledgements(
  trx: Db,
  account: string,
  runId: string,
  at: Date = new Date(),
): Promise<number> {
  const actor: Actor = { by: 'ramp-recon', source: `run:${runId}`, at };
  let reopened = 0;
  for (const c of await explainedWithChangedFigures(trx, account)) {
    const write = reopening(c.break, c.acknowledged);
    if (!write) continue;
    await recordWorkflowChange(trx, account, c.break, write, actor);
    reopened += 1;
  }
  return reopened;
}
