/**
 * One `run` of the pipeline in a process of its own, so that its peak RSS is the run's alone
 * (not the bench's, not the sandbox's). Input as JSON in argv[2] (PipelineChildInput); the
 * result goes to the parent over IPC (PipelineChildResult), then the process exits.
 *
 * `first` is `ramp-recon run --from --to --no-email`; `nightly` is what the scheduler (or a plain
 * `ramp-recon run` from cron) fires: yesterday, without the e-mail.
 * Both open and migrate the store as the CLI does and call runPipeline with the real stages;
 * the exchange sync's own result is kept on the way for its per-stage figures.
 * With `batch`, the config has several accounts and the process runs `run` as the CLI does for
 * them: runBatch over every account (one after another), then the group workbook (BatchChildResult).
 */
import { stat } from 'node:fs/promises';
import { PerformanceObserver } from 'node:perf_hooks';
import { setClockOffset } from './clock.js';
import type { writeReport } from '../src/stages/report.js';
import type { Period } from '../src/domain/period.js';
import type { Stages } from '../src/pipeline/load-stages.js';
import type { ExchangeFigures } from '../src/sources/exchange/index.js';
import type { Store } from '../src/store/db/database.js';
import type { RunRow } from '../src/store/db/schema.js';

export interface PipelineChildInput {
  mode: 'first' | 'nightly';
  /** The first run's period; the nightly run takes yesterday of its clock. */
  period?: Period;
  env: Record<string, string>;
  configPath: string;
  /** This process's clock runs this far from the real one: the sandbox's calendar. */
  clockOffsetMs: number;
  /** Run every account of the config as one batch (runBatch) instead of one runPipeline. */
  batch?: boolean;
}

interface RecordedStage {
  name: string;
  ms: number;
  status: string;
}

export interface PipelineChildResult {
  runId: string;
  status: string;
  failedStage?: string;
  error?: string;
  period: Period;
  lookbackDays: number;
  /** Store opened and migrated, plus the whole run (what `ramp-recon run` spends after start-up). */
  wallMs: number;
  /** From the process's start (its time origin) to the first stage's start: loading, config, store, run row. */
  startupMs?: number;
  /** process.resourceUsage().maxRSS of this process, in kB. */
  maxRssKb: number;
  /** CPU this process spent over wallMs (user + system), and the part of it V8's garbage collector took, in ms. */
  cpu: { ms: number; gcMs: number };
  /** The run's stages as recorded in run.stages, in the order they ran: wall time, status, peak RSS (kB) at their end. */
  stages: Array<{ name: string; ms: number; status: string; maxRssKb?: number }>;
  /** Open breaks after the run, by rule code (the bench's world should look like a sane account). */
  breaks: Record<string, number>;
  exchange?: { stageMs: Record<string, number>; fills: number; requests: number };
  /** What the report stage wrote: the mailed workbook's bytes, the detail folder's gzip CSVs (bytes, rows). */
  report?: { workbookBytes: number; detailBytes: number; detailRows: number };
}

export interface BatchChildResult {
  batchId: string;
  /** succeeded: every account's run succeeded. */
  status: string;
  period: Period;
  lookbackDays: number;
  /** Store opened and migrated, plus the whole batch (every account's run and the group workbook). */
  wallMs: number;
  /** process.resourceUsage().maxRSS of this process, in kB. */
  maxRssKb: number;
  /** Each account's run, in config order (no runId: it never started, `error` says why). */
  runs: Array<{
    account: string;
    runId?: string;
    status: string;
    failedStage?: string;
    error?: string;
    /** From the run row's start to its finish. */
    wallMs?: number;
    openBreaks?: number;
    /** Open breaks by rule code. */
    breaks?: Record<string, number>;
    stages: RecordedStage[];
  }>;
  /** The group workbook: its bytes and the digest's verdict. */
  report?: { workbookBytes: number; verdict: string };
  reportError?: string;
}

const input = JSON.parse(process.argv[2]!) as PipelineChildInput;
setClockOffset(input.clockOffsetMs);
// Everything else is loaded after the clock is set.
const { loadGroup } = await import('../src/config/load.js');
const { createLogger } = await import('../src/log/logger.js');
const { openMigratedStore } = await import('../src/cli/context.js');
const { runPipeline } = await import('../src/pipeline/run.js');
const { runBatch } = await import('../src/pipeline/batch.js');
const { loadStages } = await import('../src/pipeline/load-stages.js');
const { getRun } = await import('../src/store/runs/runs.js');
const { yesterday } = await import('../src/util/dates.js');

const group = loadGroup({ env: input.env, configPath: input.configPath });
const config = group.accounts[0]!.config;
const logger = createLogger({ level: config.logLevel, secrets: group.secrets });
const nightly = input.mode === 'nightly';
const period = nightly ? yesterday(new Date()) : input.period!;
// Both runs sync the configured look-back, as `run` and `schedule` do.
const lookbackDays = config.partner.lookbackDays;

const real = await loadStages();
let exchange: ExchangeFigures | undefined;
// The process's peak RSS when each stage ends, by the name runPipeline records it under: which stage sets the peak.
const rssAfter: Record<string, number> = {};
function noting<A extends unknown[], R>(
  fn: (...args: A) => Promise<R>,
  name: (...args: A) => string,
): (...args: A) => Promise<R> {
  return async (...args) => {
    const result = await fn(...args);
    rssAfter[name(...args)] = process.resourceUsage().maxRSS;
    return result;
  };
}
let report: PipelineChildResult['report'];
const keepReport: Stages['writeReport'] = async (ctx, runId) => {
  const written = await real.writeReport(ctx, runId);
  // (a build before the detail folder has none: its workbook held every record)
  const files = (written as Partial<Awaited<ReturnType<typeof writeReport>>>).detail?.files ?? [];
  report = {
    workbookBytes: (await stat(written.path)).size,
    detailBytes: files.reduce((n, f) => n + f.bytes, 0),
    detailRows: files.reduce((n, f) => n + f.rows, 0),
  };
  return written;
};
// Each source's stage as runPipeline records it, noting the peak RSS at its end; the exchange's figures kept.
let firstStageAt: number | undefined;
const syncNoting: Stages['syncSources'] = (ctx, request, stage) =>
  real.syncSources(ctx, request, async (name, fn, detail) => {
    firstStageAt ??= performance.now();
    const result = await stage(name, fn, detail);
    rssAfter[name] = process.resourceUsage().maxRSS;
    if (name === 'sync.exchange') exchange = (result as { figures: ExchangeFigures }).figures;
    return result;
  });
const stages: Stages = {
  ...real,
  syncSources: syncNoting,
  reconcilePeriod: noting(real.reconcilePeriod, () => 'reconcile'),
  writeReport: noting(keepReport, () => 'report'),
};

// GC pauses from here on (the collector's time, summed over every collection, young and old).
let gcMs = 0;
new PerformanceObserver((list) => {
  for (const e of list.getEntries()) gcMs += e.duration;
}).observe({ entryTypes: ['gc'] });
const cpu0 = process.cpuUsage();
const t0 = performance.now();
const store = await openMigratedStore(config, logger);
let out: PipelineChildResult | BatchChildResult;
try {
  out = input.batch ? await batchFigures(store) : await runFigures(store);
} finally {
  await store.close();
}
process.send!(out, () => process.exit(0));

function countBy(values: string[]): Record<string, number> {
  const out: Record<string, number> = {};
  for (const v of values) out[v] = (out[v] ?? 0) + 1;
  return out;
}

/** The run's stages as run.stages recorded them, in the order they ran. */
function recordedStages(row: RunRow | undefined): RecordedStage[] {
  const recorded = (row?.stages ?? {}) as Record<string, { startedAt: string; finishedAt: string; status: string }>;
  return Object.entries(recorded)
    .sort(([, x], [, y]) => Date.parse(x.startedAt) - Date.parse(y.startedAt))
    .map(([name, s]) => ({ name, ms: Date.parse(s.finishedAt) - Date.parse(s.startedAt), status: s.status }));
}

async function runFigures(store: Store): Promise<PipelineChildResult> {
  const result = await runPipeline(
    { store, config, logger, stages },
    { period, trigger: nightly ? 'schedule' : 'cli', email: false },
  );
  const wallMs = performance.now() - t0;
  const used = process.cpuUsage(cpu0);
  const cpu = { ms: (used.user + used.system) / 1000, gcMs };
  const row = await getRun(store.db, result.runId);
  return {
    runId: result.runId,
    status: result.status,
    ...(result.failedStage ? { failedStage: result.failedStage, error: result.error } : {}),
    period,
    lookbackDays,
    wallMs,
    ...(firstStageAt === undefined ? {} : { startupMs: firstStageAt }),
    maxRssKb: process.resourceUsage().maxRSS,
    cpu,
    stages: recordedStages(row).map((s) => ({ ...s, maxRssKb: rssAfter[s.name] })),
    breaks: countBy(result.summary.breaks.map((b) => b.code)),
    ...(report ? { report } : {}),
    ...(exchange
      ? { exchange: { stageMs: exchange.stageMs, fills: exchange.counts.fills, requests: exchange.counts.requests } }
      : {}),
  };
}

/** `run` of a multi-account config: runBatch with the real stages, then each account's run row and the group workbook. */
async function batchFigures(store: Store): Promise<BatchChildResult> {
  const batch = await runBatch({ store, group, logger }, group.accounts, {
    period,
    trigger: nightly ? 'schedule' : 'cli',
    email: false,
  });
  const wallMs = performance.now() - t0;
  const maxRssKb = process.resourceUsage().maxRSS;
  const runs: BatchChildResult['runs'] = [];
  for (const { account, result, error } of batch.runs) {
    if (!result) {
      runs.push({ account, status: 'not run', ...(error ? { error } : {}), stages: [] });
      continue;
    }
    const row = await getRun(store.db, result.runId);
    runs.push({
      account,
      runId: result.runId,
      status: result.status,
      ...(result.failedStage ? { failedStage: result.failedStage, error: result.error } : {}),
      ...(row?.finished_at ? { wallMs: new Date(row.finished_at).getTime() - new Date(row.started_at).getTime() } : {}),
      openBreaks: result.openBreaks,
      breaks: countBy(result.summary.breaks.map((b) => b.code)),
      stages: recordedStages(row),
    });
  }
  return {
    batchId: batch.batchId,
    status: batch.status,
    period,
    lookbackDays,
    wallMs,
    maxRssKb,
    runs,
    ...(batch.report
      ? { report: { workbookBytes: (await stat(batch.report.path)).size, verdict: batch.report.digest.verdict } }
      : {}),
    ...(batch.reportError ? { reportError: batch.reportError } : {}),
  };
}
