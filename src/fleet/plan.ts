/** Planning a batch on the job queue: the batch's rows (the one batch driver's plan), one job per account, a deadline. */
import type { PgBoss } from 'pg-boss';
import type { Account, Group } from '../config/load.js';
import type { Logger } from '../log/logger.js';
import type { Period } from '../domain/period.js';
import type { Store } from '../store/db/database.js';
import { loadBatch } from '../store/runs/batches.js';
import { planAccounts } from '../pipeline/batch.js';
import { ACCOUNT_QUEUE, jobId, REPORT_QUEUE, type AccountJob, type ReportJob } from './queues.js';

/**
 * Plans a batch: its row, one pending row and one job per account, and the deadline's report job. A scheduled night
 * planned already (by another scheduler) is not planned again.
 */
export async function planFleetBatch(
  deps: { store: Store; boss: PgBoss; group: Group; logger: Logger },
  accounts: readonly Account[],
  input: { period: Period; trigger: string; now?: Date },
): Promise<{ batchId: string; created: boolean }> {
  const now = input.now ?? new Date();
  const deadlineAt = new Date(now.getTime() + deps.group.settings.schedule.deadlineMinutes * 60_000);
  const { id, created } = await planAccounts(deps.store, accounts, { ...input, now, deadlineAt });
  if (!created)
    deps.logger.info({ batchId: id, period: input.period }, 'batch of this night already planned: not planned again');
  // The jobs have ids of their own (from the batch and the account): sending them again is a no-op, so a planner
  // that died between the batch row and its jobs (or a second scheduler) completes the plan, never doubles it.
  const batch = await loadBatch(deps.store.db, id);
  const open = new Set(
    batch.accounts.filter((a) => a.status === 'pending' || a.status === 'running').map((a) => a.account),
  );
  for (const a of accounts.filter((x) => open.has(x.name)))
    await deps.boss.send(ACCOUNT_QUEUE, { batchId: id, account: a.name } satisfies AccountJob, {
      id: jobId(id, a.name),
      // one live job per rate group across the fleet: two workers never run one account twice at once, nor double an
      // organisation's request rate
      group: { id: a.rateGroup },
    });
  if (batch.reportVersion === 0)
    await deps.boss.sendAfter(
      REPORT_QUEUE,
      { batchId: id, deadline: true } satisfies ReportJob,
      { id: jobId(id, 'deadline'), singletonKey: id },
      batch.deadlineAt ?? deadlineAt,
    );
  deps.logger.info(
    { batchId: id, accounts: accounts.map((a) => a.name), period: input.period, deadlineAt },
    'batch planned: one job per account',
  );
  return { batchId: id, created };
}
