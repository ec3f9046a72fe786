/** The fleet's nightly schedule: one firing per night for the whole fleet, registered in the job queue. */
import { yesterday } from '../util/dates.js';
import { planFleetBatch } from './plan.js';
import { NIGHTLY_QUEUE } from './queues.js';
import { workJobs, type WorkDeps } from './work.js';

/**
 * `schedule` on Postgres with several accounts: registers the nightly cron in pg-boss (one firing per night for the
 * whole fleet, however many schedulers run), plans yesterday's batch at each firing, and works the jobs too unless
 * `work` is false (a fleet of workers does).
 */
export async function scheduleFleet(deps: WorkDeps, options: { work: boolean; concurrency: number }): Promise<void> {
  const { boss, group, logger } = deps;
  const { cron, timezone } = group.settings.schedule;
  await boss.schedule(NIGHTLY_QUEUE, cron, {}, { tz: timezone });
  await boss.work(NIGHTLY_QUEUE, { pollingIntervalSeconds: 5, includeMetadata: true }, async ([job]) => {
    if (!job) return;
    const firedAt = (job as typeof job & { createdOn?: Date }).createdOn ?? new Date();
    await planFleetBatch(deps, group.accounts, { period: yesterday(firedAt), trigger: 'schedule', now: firedAt });
  });
  if (options.work) await workJobs(deps, { concurrency: options.concurrency });
  logger.info(
    { cron, timezone, work: options.work },
    'schedule: the nightly batch is registered in the job queue (one firing for the whole fleet)',
  );
}
