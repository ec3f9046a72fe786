/**
 * One `run` of the pipeline in a process of its own, so that its peak RSS is the run's alone
 * (not the bench's, not the sandbox's). Input as JSON in argv[2] (PipelineChildInput); the
 * result goes to the parent over IPC (PipelineChildResult), then the process exits.
 *
 * `first` is `ramp-recon run --from --to --no-email`; `nightly` is what the scheduler (or a plain
 * `ramp-recon run` from cron) fires: yesterday, without the e-mail.
 * Both open and migrate the store as the CLI does and call runPipeline with the real stages;
 * the exchange sync's own result is kept on the way for its per-stage figures.
 */
import { stat } from 'node:fs/promises';
import { setClockOffset } from './clock.js';
import type { writeReport } from '../src/stages/report.js';
import type { Period } from '../src/domain/period.js';
import type { Stages } from '../src/pipeline/load-stages.js';
import type { ExchangeSyncResult } from '../src/stages/sync-exchange.js';

export interface PipelineChildInput {
  mode: 'first' | 'nightly';
  /** The first run's period; the nightly run takes yesterday of its clock. */
  period?: Period;
  env: Record<string, string>;
  configPath: string;
  /** This process's clock runs this far from the real one: the sandbox's calendar. */
  clockOffsetMs: number;
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
  /** process.resourceUsage().maxRSS of this process, in kB. */
  maxRssKb: number;
  /** The run's stages as recorded in run.stages, in the order they ran: wall time, status, peak RSS (kB) at their end. */
  stages: Array<{ name: string; ms: number; status: string; maxRssKb?: number }>;
  /** Open breaks after the run, by rule code (the bench's world should look like a sane account). */
  breaks: Record<string, number>;
  exchange?: { stageMs: Record<string, number>; fills: number; requests: number };
  /** What the report stage wrote: the mailed workbook's bytes, the detail folder's gzip CSVs (bytes, rows). */
  report?: { workbookBytes: number; detailBytes: number; detailRows: number };
}

const input = JSON.parse(process.argv[2]!) as PipelineChildInput;
setClockOffset(input.clockOffsetMs);
// Everything else is loaded after the clock is set.
const { loadConfig, secretValues } = await import('../src/config/load.js');
const { createLogger } = await import('../src/log/logger.js');
const { openMigratedStore } = await import('../src/cli/context.js');
const { runPipeline } = await import('../src/pipeline/run.js');
const { loadStages } = await import('../src/pipeline/load-stages.js');
const { getRun } = await import('../src/store/runs.js');
const { yesterday } = await import('../src/util/dates.js');

const config = loadConfig({ env: input.env, configPath: input.configPath });
const logger = createLogger({ level: config.logLevel, secrets: secretValues(config) });
const nightly = input.mode === 'nightly';
const period = nightly ? yesterday(new Date()) : input.period!;
// Both runs sync the configured look-back, as `run` and `schedule` do.
const lookbackDays = config.partner.lookbackDays;

const real = await loadStages();
let exchange: ExchangeSyncResult | undefined;
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
const keepExchange: Stages['syncExchange'] = async (ctx, options) =>
  (exchange = (await real.syncExchange(ctx, options)) as ExchangeSyncResult);
const stages: Stages = {
  ...real,
  syncExchange: noting(keepExchange, () => 'sync.exchange'),
  syncPartner: noting(real.syncPartner, () => 'sync.partner'),
  reconcilePeriod: noting(real.reconcilePeriod, () => 'reconcile'),
  writeReport: noting(keepReport, () => 'report'),
};

const t0 = performance.now();
const store = await openMigratedStore(config, logger);
let out: PipelineChildResult;
try {
  const result = await runPipeline(
    { store, config, logger, stages },
    { period, trigger: nightly ? 'schedule' : 'cli', email: false },
  );
  const wallMs = performance.now() - t0;
  const row = await getRun(store.db, result.runId);
  const recorded = (row?.stages ?? {}) as Record<string, { startedAt: string; finishedAt: string; status: string }>;
  out = {
    runId: result.runId,
    status: result.status,
    ...(result.failedStage ? { failedStage: result.failedStage, error: result.error } : {}),
    period,
    lookbackDays,
    wallMs,
    maxRssKb: process.resourceUsage().maxRSS,
    stages: Object.entries(recorded)
      .sort(([, x], [, y]) => Date.parse(x.startedAt) - Date.parse(y.startedAt))
      .map(([name, s]) => ({
        name,
        ms: Date.parse(s.finishedAt) - Date.parse(s.startedAt),
        status: s.status,
        maxRssKb: rssAfter[name],
      })),
    breaks: countBy(result.summary.breaks.map((b) => b.code)),
    ...(report ? { report } : {}),
    ...(exchange
      ? { exchange: { stageMs: exchange.stageMs, fills: exchange.counts.fills, requests: exchange.counts.requests } }
      : {}),
  };
} finally {
  await store.close();
}
process.send!(out, () => process.exit(0));

function countBy(values: string[]): Record<string, number> {
  const out: Record<string, number> = {};
  for (const v of values) out[v] = (out[v] ?? 0) + 1;
  return out;
}
