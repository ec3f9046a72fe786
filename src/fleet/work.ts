/** What a worker does with the queue's jobs: an account job is the one batch driver's account run (retried while
 * attempts remain), a lost job is recorded as failed, and the batch's report is the driver's, fanned in once every
 * account has ended (or at the batch's deadline).
 */
import type { PgBoss } from 'pg-boss';
import { accountNamed, type Group } from '../config/load.js';
import type { Logger } from '../log/logger.js';
import type { Store } from '../store/db/database.js';
import { batchEnded, finishBatch, finishBatchAccount, loadBatch, retryBatchAccount } from '../store/runs/batches.js';
import { RunLockedError } from '../pipeline/lock.js';
import { recordAccountOutcome, reportBatch, runBatchAccount, type AccountOutcome } from '../pipeline/batch.js';
import { ACCOUNT_QUEUE, LOST_QUEUE, REPORT_QUEUE, type AccountJob, type ReportJob } from './queues.js';

export interface WorkDeps {
  store: Store;
  boss: PgBoss;
  /** The config: every account a job may name. */
  group: Group;
  logger: Logger;
}

/**
 * Works account jobs and report jobs until `stop`: each account job is the account's run (the same pipeline and run
 * lock as `run`); a failed attempt is retried (backing off) while attempts remain, then recorded as failed for good;
 * when the batch's last account ends, its report job is sent.
 */
export async function workJobs(deps: WorkDeps, options: { concurrency: number }): Promise<void> {
  await deps.boss.work<AccountJob>(
    ACCOUNT_QUEUE,
    {
      localConcurrency: options.concurrency,
      groupConcurrency: 1,
      includeMetadata: true,
      // an idle worker asks for a job twice a second: a batch's accounts start without waiting on the poll
      pollingIntervalSeconds: 0.5,
    },
    async ([job]) => {
      // includeMetadata: the job's attempt and its retry limit come with it
      const meta = job as (NonNullable<typeof job> & { retryCount: number; retryLimit: number }) | undefined;
      if (meta)
        await runAccountJob(deps, meta.data, {
          attempt: meta.retryCount,
          retryLimit: meta.retryLimit,
          signal: meta.signal,
        });
    },
  );
  await deps.boss.work<AccountJob>(LOST_QUEUE, { pollingIntervalSeconds: 1 }, async ([job]) => {
    if (job) await accountJobLost(deps, job.data);
  });
  await deps.boss.work<ReportJob>(REPORT_QUEUE, { pollingIntervalSeconds: 0.5 }, async ([job]) => {
    if (job) await fanIn(deps, job.data.batchId, { deadline: job.data.deadline === true });
  });
}

async function runAccountJob(
  deps: WorkDeps,
  data: AccountJob,
  job: { attempt: number; retryLimit: number; signal?: AbortSignal },
): Promise<void> {
  const log = deps.logger.child({ batchId: data.batchId, account: data.account, attempt: job.attempt + 1 });
  const account = accountNamed(deps.group, data.account);
  if (!account) {
    const error = `account ${data.account} is not in this worker's config (${deps.group.settings.configFile ?? 'no config file'})`;
    await finishBatchAccount(
      deps.store.db,
      data.batchId,
      data.account,
      { status: 'failed', error },
      deps.group.secrets,
    );
    log.error({ error }, 'account job failed for good');
    return afterAccount(deps, data.batchId);
  }
  const batch = await loadBatch(deps.store.db, data.batchId);
  log.info('account job started');
  const outcome = await runBatchAccount(deps, data.batchId, account, {
    period: { from: batch.periodFrom, to: batch.periodTo },
    trigger: batch.trigger === 'schedule' ? 'schedule' : 'enqueue',
    email: true,
    // the run lock stays authoritative: a manual run, or this account's run on a stopped worker whose job came
    // here, is waited for (never two runs of one account at once); the job's signal ends the wait if its claim goes
    wait: true,
    signal: job.signal,
    // pg-boss's group limit is counted at fetch time: two workers fetching at once can both claim a job of the
    // group. The group's lock, held for the run, makes the second wait for the first (docs/workers.md).
    rateGroup: account.rateGroup,
    // a failed attempt that will be retried writes its failure report but mails nothing: one e-mail per night
    failureEmail: job.attempt >= job.retryLimit,
    logger: log,
  });
  if (outcome.refusal && !(outcome.refusal instanceof RunLockedError))
    log.warn({ error: outcome.error }, 'account run could not start');
  // Our claim on the job is gone (we were stopped or cut off past the heartbeat): the job is another worker's now, and
  // so is the account's row on the batch.
  if (job.signal?.aborted) {
    log.warn("the job moved to another worker while this one was silent: its outcome is that worker's to record");
    return;
  }
  if (failed(outcome) && job.attempt < job.retryLimit) {
    await retryBatchAccount(deps.store.db, data.batchId, data.account, attemptFailure(outcome), deps.group.secrets);
    log.warn(
      { error: attemptFailure(outcome).error, retriesLeft: job.retryLimit - job.attempt },
      'account run failed: retrying',
    );
    // pg-boss retries the job, backing off
    throw new Error(attemptFailure(outcome).error);
  }
  await recordAccountOutcome(deps.store, data.batchId, outcome, deps.group.secrets);
  if (failed(outcome)) log.error({ error: attemptFailure(outcome).error }, 'account run failed after its last attempt');
  else log.info('account job succeeded');
  await afterAccount(deps, data.batchId);
}

function failed(outcome: AccountOutcome): boolean {
  return outcome.result?.status !== 'succeeded';
}

/** A failed attempt as the batch row keeps it: its run, stage and error (or why it never started). */
function attemptFailure(outcome: AccountOutcome): { runId?: string; failedStage?: string | null; error: string } {
  const r = outcome.result;
  if (!r) return { error: outcome.error ?? 'failed' };
  return { runId: r.runId, failedStage: r.failedStage ?? null, error: r.error ?? 'failed' };
}

/**
 * An account job failed for good with no outcome recorded (its last attempt's worker died or fell silent past its
 * heartbeat): the account is failed on the batch, saying so, and the batch's fan-in goes on. An account whose outcome
 * was recorded (its handler's own last word) is left as it is.
 */
export async function accountJobLost(deps: WorkDeps, data: AccountJob): Promise<void> {
  const batch = await loadBatch(deps.store.db, data.batchId);
  const row = batch.accounts.find((a) => a.account === data.account);
  if (!row || row.status === 'succeeded' || row.status === 'failed') return;
  const error =
    `its last attempt ended without an outcome: the worker running it${row.worker ? ` (${row.worker})` : ''} died or ` +
    `fell silent past its heartbeat, and no attempt was left${row.error ? `; the attempt before failed: ${row.error}` : ''}`;
  await finishBatchAccount(
    deps.store.db,
    data.batchId,
    data.account,
    { status: 'failed', failedStage: row.failedStage, error },
    deps.group.secrets,
  );
  deps.logger.error({ batchId: data.batchId, account: data.account, error }, 'account job lost');
  await afterAccount(deps, data.batchId);
}

/** The batch's last account has ended: its report job (one active per batch; a repeated one writes nothing). */
async function afterAccount(deps: WorkDeps, batchId: string): Promise<void> {
  const batch = await loadBatch(deps.store.db, batchId);
  if (!batchEnded(batch)) return;
  await finishBatch(
    deps.store.db,
    batchId,
    batch.accounts.every((a) => a.status === 'succeeded') ? 'succeeded' : 'failed',
  );
  await deps.boss.send(REPORT_QUEUE, { batchId } satisfies ReportJob, { singletonKey: batchId });
}

/**
 * The batch's report (the one driver's `reportBatch`), written and mailed once for each set of account outcomes: when
 * every account has ended; at the deadline whatever is still running (naming those accounts); again, amended, when a
 * late account ends after that.
 */
export async function fanIn(deps: WorkDeps, batchId: string, options: { deadline: boolean }): Promise<void> {
  const batch = await loadBatch(deps.store.db, batchId);
  const ended = batchEnded(batch);
  // before the deadline an unfinished batch waits; after a report, an unfinished one waits for its next end
  if (!ended && !(options.deadline && batch.reportVersion === 0)) return;
  const { report, reportError } = await reportBatch(deps, batchId, { email: true, now: new Date() });
  // a report that could not be written fails the job: pg-boss retries it
  if (reportError) throw new Error(`group report of batch ${batchId} not written: ${reportError}`);
  if (report)
    deps.logger.info(
      { batchId, version: report.digest.version, verdict: report.digest.verdict, deadline: !ended },
      ended ? 'group report sent' : 'group report sent at the deadline, accounts still running',
    );
}
