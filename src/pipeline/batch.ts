/** The one batch driver: plan a batch, run an account of it, write and deliver the batch's report. `run` in one process
 * (`runBatch`) and the pg-boss fleet (`src/fleet/`) call the same three steps; a config without `accounts` is a batch
 * of one, on the same path.
 */
import { hostname } from 'node:os';
import type { Account, Group } from '../config/load.js';
import type { Store } from '../store/db/database.js';
import type { Logger } from '../log/logger.js';
import type { Period } from '../domain/period.js';
import { retryOnLostConnection } from '../store/db/database.js';
import {
  finishBatch,
  finishBatchAccount,
  loadBatch,
  pendingGroupReport,
  planBatch,
  recordGroupReported,
  setBatchAccountRun,
  startBatchAccount,
  type BatchInfo,
} from '../store/runs/batches.js';
import { runPipeline, type PipelineOptions, type PipelineResult } from './run.js';
import { errorText } from './execute.js';
import type { GroupReportWritten } from '../stages/group-report.js';
import type { DeliveryResult } from '../stages/deliver.js';
import type { Stages } from './load-stages.js';

/** The IO handles of a batch: the store, the loaded config (the group and its accounts) and the root logger. */
export interface BatchDeps {
  store: Store;
  group: Group;
  logger: Logger;
  /** Runs the pipeline of one account (tests and the demo pass their own stages through it). */
  stages?: Stages;
}

export type BatchOptions = Pick<PipelineOptions, 'period' | 'trigger' | 'email' | 'wait' | 'signal' | 'now'>;

export interface BatchResult {
  batchId: string;
  /** succeeded: every account's run succeeded; failed: one failed or never ran. */
  status: 'succeeded' | 'failed';
  period: Period;
  /** Every account's run result, in config order; null for an account whose run never started. */
  runs: AccountOutcome[];
  /** The group workbook; null for a batch of one (the account's own workbook is its report) or when not written. */
  report: GroupReportWritten | null;
  /** The group report could not be written: why (the accounts' runs and the batch row are kept). */
  reportError?: string;
  delivery: DeliveryResult | null;
  batch: BatchInfo;
}

/** What became of an account's run: its result, or why it never started (and what refused it). */
export interface AccountOutcome {
  account: string;
  result: PipelineResult | null;
  error?: string;
  /** What refused the run before it began (config, run lock, database): a batch of one rethrows it. */
  refusal?: unknown;
}

/** Who runs an account: this host and process, as `runs` shows it. */
export function workerName(): string {
  return `${hostname()}:${process.pid}`;
}

/** Plans a batch of these accounts: its row and one pending row per account (a scheduled night only once). */
export function planAccounts(
  store: Store,
  accounts: readonly Account[],
  input: { period: Period; trigger: string; now: Date; deadlineAt?: Date },
): Promise<{ id: string; created: boolean }> {
  return planBatch(store.db, {
    trigger: input.trigger,
    period: input.period,
    accounts: accounts.map((a) => a.name),
    startedAt: input.now,
    ...(input.deadlineAt ? { deadlineAt: input.deadlineAt } : {}),
  });
}

/**
 * One account's run in a batch, wherever it runs: the same pipeline and run lock as `run`. Its own e-mail goes to its
 * own recipients (a group of one: the config's); the batch's group e-mail reports the others. The outcome is returned,
 * not recorded: a worker retries a failed attempt, a batch in one process records it at once.
 */
export async function runBatchAccount(
  deps: BatchDeps,
  batchId: string,
  account: Account,
  options: Omit<PipelineOptions, 'batchId' | 'onRunCreated' | 'noEmailReason'> & { logger?: Logger },
): Promise<AccountOutcome> {
  const { db } = deps.store;
  const ownMail = !deps.group.settings.multiAccount || account.emailTo.length > 0;
  await retryOnLostConnection(() => startBatchAccount(db, batchId, account.name, workerName()));
  try {
    const result = await runPipeline(
      {
        store: deps.store,
        config: account.config,
        logger: options.logger ?? deps.logger.child({ account: account.name }),
        stages: deps.stages,
        secrets: deps.group.secrets,
      },
      {
        ...options,
        email: options.email && ownMail,
        noEmailReason: options.email
          ? "the batch's group e-mail reports this account (it has no recipients of its own)"
          : '--no-email',
        batchId,
        onRunCreated: (runId) => void setBatchAccountRun(db, batchId, account.name, runId).catch(() => {}),
      },
    );
    return { account: account.name, result };
  } catch (err) {
    return { account: account.name, result: null, error: errorText(err, account.config), refusal: err };
  }
}

/** Records an account's final outcome on the batch. */
export function recordAccountOutcome(
  store: Store,
  batchId: string,
  outcome: AccountOutcome,
  secrets: readonly string[],
): Promise<void> {
  const r = outcome.result;
  return retryOnLostConnection(() =>
    finishBatchAccount(
      store.db,
      batchId,
      outcome.account,
      r
        ? { status: r.status, runId: r.runId, failedStage: r.failedStage ?? null, error: r.error ?? null }
        : { status: 'failed', error: outcome.error ?? 'failed' },
      secrets,
    ),
  );
}

/** The batch's report as its accounts stand: what `reportBatch` wrote and sent. */
export interface BatchReport {
  report: GroupReportWritten | null;
  reportError?: string;
  delivery: DeliveryResult | null;
}

/**
 * The batch's report, written and sent once for each set of account outcomes. A batch of one has no group workbook:
 * its account's own workbook and e-mail (sent by its run, also when it failed) are the batch's report. A group's
 * workbook is written from the group's shared settings, never one account's; a failure to write it is returned, not
 * thrown, so the accounts' outcomes stay recorded.
 */
export async function reportBatch(
  deps: BatchDeps,
  batchId: string,
  options: { email: boolean; now: Date },
): Promise<BatchReport> {
  const { db } = deps.store;
  if (!deps.group.settings.multiAccount) return { report: null, delivery: null };
  const log = deps.logger.child({ batchId });
  const groupDeps = { store: deps.store, group: deps.group, logger: log, now: options.now };
  // Loaded here, not with the batch: the workbook's module brings exceljs (about a quarter of a second), which held
  // back the first stage of every `run`, a single account's too.
  const { deliverGroupReport, writeGroupReport } = await import('../stages/group-report.js');
  let report: GroupReportWritten;
  let pending: Awaited<ReturnType<typeof pendingGroupReport>>;
  try {
    pending = await pendingGroupReport(db, batchId);
    if (!pending) return { report: null, delivery: null };
    report = await writeGroupReport(groupDeps, batchId, pending);
  } catch (err) {
    const reportError = errorText(err);
    log.error({ error: reportError }, 'group report not written');
    return { report: null, reportError, delivery: null };
  }
  const send = options.email && deps.group.settings.smtpUrl;
  const delivery = send ? await deliverGroupReport(groupDeps, batchId, report) : null;
  await recordGroupReported(db, batchId, { version: pending.version, states: report.states });
  return { report, delivery };
}

/**
 * A batch in this process: one account after another, each failure recorded and never stopping the others (a signal
 * stops before the next account and leaves the rest "not run"); then the batch's report and its e-mail.
 */
export async function runBatch(
  deps: BatchDeps,
  accounts: readonly Account[],
  options: BatchOptions,
): Promise<BatchResult> {
  if (accounts.length === 0) throw new Error('a batch needs at least one account');
  const now = options.now ?? new Date();
  const { id: batchId } = await planAccounts(deps.store, accounts, { ...options, now });
  const log = deps.logger.child({ batchId });
  log.info({ accounts: accounts.map((a) => a.name), period: options.period }, 'batch started');
  const runs: AccountOutcome[] = [];
  for (const [i, account] of accounts.entries()) {
    const outcome = options.signal?.aborted
      ? notRun(account, options.signal.reason)
      : await runInBatch(deps, batchId, account, { ...options, position: `${i + 1} of ${accounts.length}` });
    await recordAccountOutcome(deps.store, batchId, outcome, deps.group.secrets);
    runs.push(outcome);
  }
  const failed = runs.some((r) => r.result?.status !== 'succeeded');
  await retryOnLostConnection(() => finishBatch(deps.store.db, batchId, failed ? 'failed' : 'succeeded'));
  const reported = await reportBatch(deps, batchId, { email: options.email, now });
  const batch = await loadBatch(deps.store.db, batchId);
  log.info({ status: batch.status, verdict: reported.report?.digest.verdict }, 'batch ended');
  return { batchId, status: failed ? 'failed' : 'succeeded', period: options.period, runs, ...reported, batch };
}

async function runInBatch(
  deps: BatchDeps,
  batchId: string,
  account: Account,
  options: BatchOptions & { position: string },
): Promise<AccountOutcome> {
  const log = deps.logger.child({ batchId });
  log.info({ account: account.name, position: options.position }, 'account run started');
  const { position: _position, ...pipeline } = options;
  const outcome = await runBatchAccount(deps, batchId, account, pipeline);
  if (outcome.result)
    log.info(
      { account: account.name, runId: outcome.result.runId, status: outcome.result.status },
      'account run ended',
    );
  // Refused before its run began (config, run lock, database): recorded, and the next account runs.
  else log.error({ account: account.name, error: outcome.error }, 'account run could not start');
  return outcome;
}

function notRun(account: Account, reason: unknown): AccountOutcome {
  const error = `not run: the batch was stopped (${errorText(reason)}) before this account`;
  return { account: account.name, result: null, error };
}
