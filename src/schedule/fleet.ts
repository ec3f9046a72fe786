/** The fleet on pg-boss: a batch planned as one job per account, worked by any number of workers on any machines, and
 * the group report fanned in once every account has ended (or at the batch's deadline).
 */
import { createHash } from 'node:crypto';
import { PgBoss } from 'pg-boss';
import { accountConfigs, type Config } from '../config/load.js';
import { ConfigError } from '../errors.js';
import type { Logger } from '../log/logger.js';
import type { Period } from '../domain/period.js';
import type { Store } from '../store/database.js';
import { queueSchema } from '../store/job-queue.js';

export { queueSchema } from '../store/job-queue.js';
import {
  batchEnded,
  finishBatch,
  finishBatchAccount,
  loadBatch,
  pendingGroupReport,
  planBatch,
  recordGroupReported,
  retryBatchAccount,
  setBatchAccountRun,
  startBatchAccount,
} from '../store/batches.js';
import { errorText } from '../pipeline/execute.js';
import { RunLockedError } from '../pipeline/lock.js';
import { runPipeline } from '../pipeline/run.js';
import { workerName } from '../pipeline/batch.js';
import { deliverGroupReport, writeGroupReport } from '../stages/group-report.js';
import { yesterday } from '../util/dates.js';

/**
 * One job per account of a batch. Each carries its account's rate group (the account's own name by default) and
 * workers take at most one job of a group at a time across the fleet (groupConcurrency): never two live jobs of one
 * account, nor of one organisation. (pg-boss enforces group limits on standard queues only, not on singleton ones.)
 */
export const ACCOUNT_QUEUE = 'ramp-recon-account';
/**
 * An account job that failed for good without its handler saying so (its worker killed or silent on its last attempt):
 * pg-boss moves it here (deadLetter), and a worker records the account as failed on the batch.
 */
export const LOST_QUEUE = 'ramp-recon-account-lost';
/** The group report of a batch: one active per batch; sent when the last account ends, and at the deadline. */
export const REPORT_QUEUE = 'ramp-recon-report';
/** The nightly schedule's firing: plans yesterday's batch (one per night, however many schedulers fire). */
export const NIGHTLY_QUEUE = 'ramp-recon-nightly';

export interface AccountJob {
  batchId: string;
  account: string;
}
export interface ReportJob {
  batchId: string;
  deadline?: boolean;
}

/** Workers need a server: the embedded database is one process's. */
export function requireServer(config: Config, command: string): string {
  if (config.database.url) return config.database.url;
  throw new ConfigError([
    `${command}: workers need a Postgres server shared by every machine (DATABASE_URL); the embedded database is one ` +
      "process's, so use `ramp-recon run` (or `schedule`) there",
  ]);
}

/** pg-boss on our database, started, its queues created: the monitor fails a job whose worker fell silent. */
export async function openBoss(config: Config, logger: Logger, command: string): Promise<PgBoss> {
  const url = requireServer(config, command);
  const w = config.workers;
  const boss = new PgBoss({
    connectionString: url,
    schema: queueSchema(url),
    application_name: `ramp-recon ${command}`,
    // a dead worker's job is failed (and retried) within one heartbeat plus one monitor pass
    monitorIntervalSeconds: Math.min(60, w.heartbeatSeconds),
    instanceName: `${command} ${workerName()}`,
    max: 4,
  });
  boss.on('error', (err: unknown) => logger.warn({ error: errorText(err) }, 'job queue: error (pg-boss retries)'));
  await boss.start();
  const retry = {
    retryLimit: w.retryLimit,
    retryDelay: w.retryDelaySeconds,
    retryBackoff: true,
    // heartbeats, not a long expiry, tell a dead worker: its account runs elsewhere within minutes
    heartbeatSeconds: w.heartbeatSeconds,
    expireInSeconds: 12 * 3600,
  };
  // the dead letter queue exists before the queue that names it
  await boss.createQueue(LOST_QUEUE, { policy: 'standard', retryLimit: w.retryLimit, retryDelay: w.retryDelaySeconds });
  await boss.createQueue(ACCOUNT_QUEUE, { policy: 'standard', deadLetter: LOST_QUEUE, ...retry });
  await boss.createQueue(REPORT_QUEUE, { policy: 'singleton', ...retry });
  await boss.createQueue(NIGHTLY_QUEUE, { policy: 'singleton', ...retry });
  return boss;
}

/**
 * Plans a batch: its row, one pending row and one job per account, and the deadline's report job. A scheduled night
 * planned already (by another scheduler) is not planned again.
 */
export async function planFleetBatch(
  deps: { store: Store; boss: PgBoss; logger: Logger },
  accounts: readonly Config[],
  input: { period: Period; trigger: string; now?: Date },
): Promise<{ batchId: string; created: boolean }> {
  const first = accounts[0]!;
  const now = input.now ?? new Date();
  const deadlineAt = new Date(now.getTime() + first.schedule.deadlineMinutes * 60_000);
  const { id, created } = await planBatch(deps.store.db, {
    trigger: input.trigger,
    period: input.period,
    accounts: accounts.map((c) => c.account),
    startedAt: now,
    deadlineAt,
  });
  if (!created)
    deps.logger.info({ batchId: id, period: input.period }, 'batch of this night already planned: not planned again');
  // The jobs have ids of their own (from the batch and the account): sending them again is a no-op, so a planner
  // that died between the batch row and its jobs (or a second scheduler) completes the plan, never doubles it.
  const batch = await loadBatch(deps.store.db, id);
  const open = new Set(
    batch.accounts.filter((a) => a.status === 'pending' || a.status === 'running').map((a) => a.account),
  );
  for (const c of accounts.filter((a) => open.has(a.account)))
    await deps.boss.send(ACCOUNT_QUEUE, { batchId: id, account: c.account } satisfies AccountJob, {
      id: jobId(id, c.account),
      // one live job per rate group across the fleet: two workers never run one account twice at once, nor double an
      // organisation's request rate
      group: { id: c.rateGroup },
    });
  if (batch.reportVersion === 0)
    await deps.boss.sendAfter(
      REPORT_QUEUE,
      { batchId: id, deadline: true } satisfies ReportJob,
      { id: jobId(id, 'deadline'), singletonKey: id },
      batch.deadlineAt ?? deadlineAt,
    );
  deps.logger.info(
    { batchId: id, accounts: accounts.map((c) => c.account), period: input.period, deadlineAt },
    'batch planned: one job per account',
  );
  return { batchId: id, created };
}

export interface WorkDeps {
  store: Store;
  boss: PgBoss;
  /** The config: every account a job may name. */
  config: Config;
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
  const { db } = deps.store;
  const log = deps.logger.child({ batchId: data.batchId, account: data.account, attempt: job.attempt + 1 });
  const config = accountConfigs(deps.config).find((c) => c.account === data.account);
  const last = job.attempt >= job.retryLimit;
  if (!config) {
    const error = `account ${data.account} is not in this worker's config (${deps.config.configFile ?? 'no config file'})`;
    await finishBatchAccount(db, data.batchId, data.account, { status: 'failed', error });
    log.error({ error }, 'account job failed for good');
    return afterAccount(deps, data.batchId);
  }
  const batch = await loadBatch(db, data.batchId);
  await startBatchAccount(db, data.batchId, data.account, workerName());
  log.info('account job started');
  let outcome: { runId?: string; failedStage?: string | null; error: string } | null = null;
  try {
    const result = await runPipeline(
      { store: deps.store, config, logger: log },
      {
        period: { from: batch.periodFrom, to: batch.periodTo },
        trigger: batch.trigger === 'schedule' ? 'schedule' : 'enqueue',
        email: config.accountEmailTo.length > 0,
        noEmailReason: "the batch's group e-mail reports this account (it has no recipients of its own)",
        // the run lock stays authoritative: a manual run, or this account's run on a stopped worker whose job came
        // here, is waited for (never two runs of one account at once); the job's signal ends the wait if its claim goes
        wait: true,
        signal: job.signal,
        batchId: data.batchId,
        // pg-boss's group limit is counted at fetch time: two workers fetching at once can both claim a job of the
        // group. The group's lock, held for the run, makes the second wait for the first (docs/workers.md).
        rateGroup: config.rateGroup,
        onRunCreated: (runId) => void setBatchAccountRun(db, data.batchId, data.account, runId).catch(() => {}),
      },
    );
    if (result.status === 'succeeded')
      await finishBatchAccount(db, data.batchId, data.account, { status: 'succeeded', runId: result.runId });
    else outcome = { runId: result.runId, failedStage: result.failedStage, error: result.error ?? 'failed' };
  } catch (err) {
    // Refused before its run began: the run lock (a manual run, or this account's previous attempt still alive on a
    // stopped worker) or the config. Retried like a failed run.
    outcome = { error: errorText(err, config) };
    if (!(err instanceof RunLockedError)) log.warn({ error: outcome.error }, 'account run could not start');
  }
  // Our claim on the job is gone (we were stopped or cut off past the heartbeat): the job is another worker's now, and
  // so is the account's row on the batch.
  if (job.signal?.aborted) {
    log.warn("the job moved to another worker while this one was silent: its outcome is that worker's to record");
    return;
  }
  if (outcome && !last) {
    await retryBatchAccount(db, data.batchId, data.account, outcome);
    log.warn({ error: outcome.error, retriesLeft: job.retryLimit - job.attempt }, 'account run failed: retrying');
    // pg-boss retries the job, backing off
    throw new Error(outcome.error);
  }
  if (outcome) {
    await finishBatchAccount(db, data.batchId, data.account, { status: 'failed', ...outcome });
    log.error({ error: outcome.error }, 'account run failed after its last attempt');
  } else log.info('account job succeeded');
  await afterAccount(deps, data.batchId);
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
  await finishBatchAccount(deps.store.db, data.batchId, data.account, {
    status: 'failed',
    failedStage: row.failedStage,
    error,
  });
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
 * The group report, written and mailed once for each set of account outcomes: when every account has ended; at the
 * deadline whatever is still running (naming those accounts); again, amended, when a late account ends after that.
 */
export async function fanIn(deps: WorkDeps, batchId: string, options: { deadline: boolean }): Promise<void> {
  const { db } = deps.store;
  const batch = await loadBatch(db, batchId);
  const ended = batchEnded(batch);
  // before the deadline an unfinished batch waits; after a report, an unfinished one waits for its next end
  if (!ended && !(options.deadline && batch.reportVersion === 0)) return;
  const pending = await pendingGroupReport(db, batchId);
  if (!pending) return;
  const log = deps.logger.child({ batchId });
  const groupDeps = { store: deps.store, config: deps.config, logger: log, now: new Date() };
  const written = await writeGroupReport(groupDeps, batchId, pending);
  if (deps.config.smtpUrl) await deliverGroupReport(groupDeps, batchId, written);
  await recordGroupReported(db, batchId, { version: pending.version, states: written.states });
  log.info(
    { version: pending.version, verdict: written.digest.verdict, deadline: !ended },
    ended ? 'group report sent' : 'group report sent at the deadline, accounts still running',
  );
}

/**
 * `schedule` on Postgres with several accounts: registers the nightly cron in pg-boss (one firing per night for the
 * whole fleet, however many schedulers run), plans yesterday's batch at each firing, and works the jobs too unless
 * `work` is false (a fleet of workers does).
 */
export async function scheduleFleet(deps: WorkDeps, options: { work: boolean; concurrency: number }): Promise<void> {
  const { boss, config, logger } = deps;
  await boss.schedule(NIGHTLY_QUEUE, config.schedule.cron, {}, { tz: config.schedule.timezone });
  await boss.work(NIGHTLY_QUEUE, { pollingIntervalSeconds: 5, includeMetadata: true }, async ([job]) => {
    if (!job) return;
    const firedAt = (job as typeof job & { createdOn?: Date }).createdOn ?? new Date();
    const period = yesterday(firedAt);
    await planFleetBatch({ store: deps.store, boss, logger }, accountConfigs(config), {
      period,
      trigger: 'schedule',
      now: firedAt,
    });
  });
  if (options.work) await workJobs(deps, { concurrency: options.concurrency });
  logger.info(
    { cron: config.schedule.cron, timezone: config.schedule.timezone, work: options.work },
    'schedule: the nightly batch is registered in the job queue (one firing for the whole fleet)',
  );
}

/** A job's own id, the same for the same batch and part: a UUID from their hash. */
export function jobId(batchId: string, part: string): string {
  const h = createHash('sha256').update(`${batchId}:${part}`).digest('hex');
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-5${h.slice(13, 16)}-a${h.slice(17, 20)}-${h.slice(20, 32)}`;
}
