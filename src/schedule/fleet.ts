/** The fleet on pg-boss: a batch planned as one job per account, worked by any number of workers on any machines, and
 * the group report fanned in once every account has ended (or at the batch's deadline).
 */
import { PgBoss } from 'pg-boss';
import { accountConfigs, type Config } from '../config/load.js';
import { ConfigError } from '../errors.js';
import type { Logger } from '../log/logger.js';
import type { Period } from '../domain/period.js';
import type { Store } from '../store/database.js';
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

/** One job per account of a batch: at most one active per account (singletonKey), across the fleet. */
export const ACCOUNT_QUEUE = 'ramp-recon-account';
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

/**
 * The queue's tables live in a schema of their own beside ours: `<search_path>_queue` when DATABASE_URL names a
 * search_path (each test its own), else `ramp_recon_queue`.
 */
export function queueSchema(databaseUrl: string): string {
  const options = new URL(databaseUrl).searchParams.get('options') ?? '';
  const path = /search_path=([A-Za-z_][A-Za-z0-9_]*)/.exec(options)?.[1];
  return path ? `${path}_queue` : 'ramp_recon_queue';
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
  await boss.createQueue(ACCOUNT_QUEUE, { policy: 'singleton', ...retry });
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
  if (!created) {
    deps.logger.info({ batchId: id, period: input.period }, 'batch of this night already planned: not planned again');
    return { batchId: id, created };
  }
  for (const c of accounts)
    await deps.boss.send(ACCOUNT_QUEUE, { batchId: id, account: c.account } satisfies AccountJob, {
      singletonKey: c.account,
      // accounts of one rate group run one at a time across the fleet: two workers never double its rate
      group: { id: c.rateGroup },
    });
  await deps.boss.sendAfter(
    REPORT_QUEUE,
    { batchId: id, deadline: true } satisfies ReportJob,
    { singletonKey: id },
    deadlineAt,
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
      pollingIntervalSeconds: 1,
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
  await deps.boss.work<ReportJob>(REPORT_QUEUE, { pollingIntervalSeconds: 1 }, async ([job]) => {
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
        signal: job.signal,
        batchId: data.batchId,
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
