/** The nightly pipeline for one period: sync, reconcile, report, deliver, as one recorded run. */
import { requireSources } from '../config/load.js';
import { countOpenBreaks } from '../store/recon/counts.js';
import { retryOnLostConnection } from '../store/db/database.js';
import { mergeStageDetail } from '../store/runs/runs.js';
import { addDays, isPartial } from '../util/dates.js';
import { openBreakCounts } from '../domain/index.js';
import type { Period } from '../domain/period.js';
import { executeRun, type RunDeps } from './execute.js';
import { deliverStage } from './deliver-stage.js';
import { reportFailedRun } from './failure-report.js';
import { loadStages, type JsonSummary, type Stages } from './load-stages.js';

export type { RunDeps } from './execute.js';

export interface PipelineOptions {
  period: Period;
  trigger: 'cli' | 'schedule' | 'demo' | 'enqueue';
  /** Send the workbook by e-mail when SMTP is configured (`--no-email` turns it off). */
  email: boolean;
  /** Why `email` is off, as `runs` shows the skipped deliver stage (default: --no-email). */
  noEmailReason?: string;
  wait?: boolean;
  signal?: AbortSignal;
  /**
   * Days before the period whose partner order listings the sync reads again when no earlier
   * listing read them completely (default: partner.lookbackDays). The look-back is a sync setting
   * only: past days are judged again through their changes (docs/rules.md "What a run judges").
   */
  lookbackDays?: number;
  now?: Date;
  /** The batch this is an account's run of (multi-account configs), and who to tell its run id. */
  batchId?: string;
  /** Hold the account's rate group lock for the run (workers: one run of a group at a time across the fleet). */
  rateGroup?: string;
  onRunCreated?: (runId: string) => void;
  /** False for a worker's attempt that will be retried: its failure report is written, but only the last attempt mails one. */
  failureEmail?: boolean;
}

export interface PipelineResult {
  runId: string;
  status: 'succeeded' | 'failed';
  failedStage?: string;
  error?: string;
  openBreaks: number;
  reportPath?: string;
  /** The run's detail folder: every record of the period, one gzip CSV per data sheet. */
  detailDir?: string;
  summary: JsonSummary;
}

/**
 * The whole nightly job for one period: sync (exchange up to now, partner for the period and
 * its look-back plus refreshes) -> reconcile (the period and every change since the last
 * judgement) -> report -> deliver. The one function behind `run`, `schedule`, the demo and the
 * end-to-end tests: whichever calls it, and however often, the open breaks are the same.
 */
export async function runPipeline(
  deps: RunDeps & { stages?: Stages },
  options: PipelineOptions,
): Promise<PipelineResult> {
  requireSources(deps.config, ['partner', 'exchange']);
  const stages = deps.stages ?? (await loadStages());
  const { syncSources, reconcilePeriod, jsonSummary, writeReport, deliverRun } = stages;
  const { period } = options;
  const lookbackDays = options.lookbackDays ?? deps.config.partner.lookbackDays;
  const syncPeriod: Period = { from: addDays(period.from, -lookbackDays), to: period.to };
  let reportPath: string | undefined;
  let detailDir: string | undefined;
  // Set once the report stage begins: a failure before it is reported by reportFailedRun, one after it is not.
  let reportBegun = false;

  const outcome = await executeRun(
    deps,
    {
      command: 'run',
      trigger: options.trigger,
      period,
      wait: options.wait,
      signal: options.signal,
      now: options.now,
      batchId: options.batchId,
      rateGroup: options.rateGroup,
      onRunCreated: options.onRunCreated,
      // A failure before the report still writes a workbook saying so and sends one e-mail (issue 42).
      afterFailure: async (ctx, stage, failure) => {
        if (reportBegun) return;
        const written = await reportFailedRun(ctx, stage, failure, stages, options);
        reportPath = written?.path;
        detailDir = written?.detailDir;
      },
    },
    async (ctx, stage) => {
      const runId = ctx.runId as string;
      // Each source its own stage, the exchange first (src/sources/registry.ts says why); the partner lists the
      // period's days and the look-back's.
      const synced = syncSources(ctx, { period: syncPeriod }, stage);
      stages.prefetch?.();
      await synced;
      // The period and every record changed since the account was last judged, whatever its day.
      await stage(
        'reconcile',
        () => reconcilePeriod(ctx, period),
        (r) => pick(r, ['detected', 'lifecycle', 'judged']),
      );
      // A read and an idempotent merge: safe to repeat on a fresh connection.
      const openBreaks = await retryOnLostConnection(() => countOpenBreaks(ctx.store.db, ctx.config.account));
      await retryOnLostConnection(() => mergeStageDetail(ctx.store.db, runId, 'reconcile', { openBreaks }));

      reportBegun = true;
      const report = await stage(
        'report',
        () => writeReport(ctx, runId),
        (r) => ({ path: r.path, sheets: r.sheets, detail: r.detail.dir }),
      );
      reportPath = report.path;
      detailDir = report.detail.dir;
      await deliverStage(ctx, stage, { ...options, runId, reportPath: report.path, deliverRun });
    },
  );

  const summary = await retryOnLostConnection(() =>
    jsonSummary(deps.store.db, deps.config.account, outcome.runId),
  ).catch((err: unknown) => {
    // A run that failed because the database went away usually cannot read its summary either:
    // the summary then says what the run knows itself, so `--json` still prints one.
    if (outcome.status === 'succeeded') throw err;
    deps.logger.warn(
      { error: err instanceof Error ? err.message : String(err) },
      'could not read the run back for its summary; printing what the run knows',
    );
    return fallbackSummary(outcome.runId, period, options.now ?? new Date(), deps.config.account);
  });
  return {
    runId: outcome.runId,
    status: outcome.status,
    ...(outcome.failedStage ? { failedStage: outcome.failedStage } : {}),
    ...(outcome.error ? { error: outcome.error } : {}),
    openBreaks: summary.breaks.length,
    ...(reportPath ? { reportPath } : {}),
    ...(detailDir ? { detailDir } : {}),
    summary,
  };
}

/** The JSON summary of a failed run whose row cannot be read (the database is gone): no counts, no breaks. */
export function fallbackSummary(runId: string, period: Period, startedAt: Date, account: string): JsonSummary {
  return {
    runId,
    account,
    status: 'failed',
    period: { from: period.from, to: period.to },
    partial: isPartial(period, startedAt),
    counts: {
      partnerOrders: 0,
      fills: 0,
      exchangeOrders: 0,
      deposits: 0,
      withdrawals: 0,
      balanceSnapshots: 0,
      quarantined: 0,
    },
    requests: {},
    breaks: [],
    report: null,
    detail: null,
    breakCounts: openBreakCounts([]),
    webhooks: null,
    lateData: { total: 0, opened: 0, reopened: 0, resolved: 0, breaks: [] },
    moneyAtStake: null,
    closedPeriods: [],
  };
}

/** The small, stable part of a stage's result for run.stages (coverage lists stay in their own tables). */
export function pick(result: unknown, keys: string[]): Record<string, unknown> | undefined {
  if (!result || typeof result !== 'object') return undefined;
  const out: Record<string, unknown> = {};
  for (const k of keys) if (k in result) out[k] = (result as Record<string, unknown>)[k];
  return out;
}
