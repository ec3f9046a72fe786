/** A batch: every account of a multi-account config (or those named) run one after another in this process, each as
 * its own run (its own run row, lock, cursors and breaks), then one group report and one group e-mail.
 */
import { hostname } from 'node:os';
import type { Config } from '../config/load.js';
import type { Store } from '../store/database.js';
import type { Logger } from '../log/logger.js';
import type { Period } from '../domain/period.js';
import { retryOnLostConnection } from '../store/database.js';
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
} from '../store/batches.js';
import { runPipeline, type PipelineOptions, type PipelineResult } from './run.js';
import { errorText } from './execute.js';
import { deliverGroupReport, writeGroupReport, type GroupReportWritten } from '../stages/group-report.js';
import type { DeliveryResult } from '../stages/deliver.js';
import type { Stages } from './load-stages.js';

export interface BatchOptions extends Pick<
  PipelineOptions,
  'period' | 'trigger' | 'email' | 'wait' | 'signal' | 'now'
> {
  /** Runs the pipeline of one account (tests and the demo pass their own stages through it). */
  stages?: Stages;
}

export interface BatchResult {
  batchId: string;
  /** succeeded: every account's run succeeded; failed: one failed or never ran. */
  status: 'succeeded' | 'failed';
  period: Period;
  /** Every account's run result, in config order; null for an account whose run never started. */
  runs: Array<{ account: string; result: PipelineResult | null; error?: string }>;
  report: GroupReportWritten | null;
  /** The group report could not be written: why (the accounts' runs and the batch row are kept). */
  reportError?: string;
  delivery: DeliveryResult | null;
  batch: BatchInfo;
}

/** Who runs an account: this host and process, as `runs` shows it. */
export function workerName(): string {
  return `${hostname()}:${process.pid}`;
}

/**
 * Runs the batch: one account after another, each failure recorded and never stopping the others (a signal stops
 * before the next account and leaves the rest "not run"); then the group workbook, then one group e-mail.
 */
export async function runBatch(
  deps: { store: Store; logger: Logger },
  accounts: readonly Config[],
  options: BatchOptions,
): Promise<BatchResult> {
  const { db } = deps.store;
  const first = accounts[0];
  if (!first) throw new Error('a batch needs at least one account');
  const now = options.now ?? new Date();
  const { id: batchId } = await planBatch(db, {
    trigger: options.trigger,
    period: options.period,
    accounts: accounts.map((c) => c.account),
    startedAt: now,
  });
  const log = deps.logger.child({ batchId });
  log.info({ accounts: accounts.map((c) => c.account), period: options.period }, 'batch started');
  const runs: BatchResult['runs'] = [];
  for (const [i, config] of accounts.entries()) {
    const account = config.account;
    if (options.signal?.aborted) {
      const why = `not run: the batch was stopped (${errorText(options.signal.reason)}) before this account`;
      await retryOnLostConnection(() => finishBatchAccount(db, batchId, account, { status: 'failed', error: why }));
      runs.push({ account, result: null, error: why });
      continue;
    }
    log.info({ account, position: `${i + 1} of ${accounts.length}` }, 'account run started');
    await retryOnLostConnection(() => startBatchAccount(db, batchId, account, workerName()));
    try {
      const result = await runPipeline(
        { store: deps.store, config, logger: deps.logger.child({ account }), stages: options.stages },
        {
          period: options.period,
          trigger: options.trigger,
          // an account's own e-mail goes only to its own recipients; the group's gets the batch's
          email: options.email && config.accountEmailTo.length > 0,
          noEmailReason: options.email
            ? "the batch's group e-mail reports this account (it has no recipients of its own)"
            : '--no-email',
          wait: options.wait,
          signal: options.signal,
          batchId,
          onRunCreated: (runId) => void setBatchAccountRun(db, batchId, account, runId).catch(() => {}),
        },
      );
      await retryOnLostConnection(() =>
        finishBatchAccount(db, batchId, account, {
          status: result.status,
          runId: result.runId,
          failedStage: result.failedStage ?? null,
          error: result.error ?? null,
        }),
      );
      runs.push({ account, result });
      log.info({ account, runId: result.runId, status: result.status }, 'account run ended');
    } catch (err) {
      // Refused before its run began (config, run lock, database): recorded, and the next account runs.
      const error = errorText(err, config);
      await retryOnLostConnection(() => finishBatchAccount(db, batchId, account, { status: 'failed', error }));
      runs.push({ account, result: null, error });
      log.error({ account, error }, 'account run could not start');
    }
  }
  const failed = runs.some((r) => r.result?.status !== 'succeeded');
  await retryOnLostConnection(() => finishBatch(db, batchId, failed ? 'failed' : 'succeeded'));

  const groupDeps = { store: deps.store, config: first, logger: log, now };
  let report: GroupReportWritten | null = null;
  let reportError: string | undefined;
  try {
    const pending = await pendingGroupReport(db, batchId);
    report = await writeGroupReport(groupDeps, batchId, pending ?? undefined);
  } catch (err) {
    reportError = errorText(err, first);
    log.error({ error: reportError }, 'group report not written');
  }
  let delivery: DeliveryResult | null = null;
  if (report && options.email && first.smtpUrl) delivery = await deliverGroupReport(groupDeps, batchId, report);
  if (report) await recordGroupReported(db, batchId, { version: report.digest.version, states: report.states });
  const batch = await loadBatch(db, batchId);
  log.info({ status: batch.status, verdict: report?.digest.verdict }, 'batch ended');
  return {
    batchId,
    status: failed ? 'failed' : 'succeeded',
    period: options.period,
    runs,
    report,
    ...(reportError ? { reportError } : {}),
    delivery,
    batch,
  };
}
