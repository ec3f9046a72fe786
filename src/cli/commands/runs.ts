/** `ramp-recon runs`: the past runs of the account, newest first, as text or JSON. */
import { COMMAND_INFO } from './info.js';
import type { Command } from 'commander';
import { z } from 'zod';
import { ConfigError, EXIT } from '../../errors.js';
import type { Db } from '../../store/db/database.js';
import { recentRuns } from '../../store/runs/runs.js';
import { jsonNumber, stringifyJsonLossless } from '../../decimal/json.js';
import type { ApiName } from '../../http/errors.js';
import {
  endpointSeconds,
  parseRunRequests,
  requestTotals,
  roundSeconds,
  sortedRequests,
  type EndpointRequests,
  type RequestTotals,
} from '../../http/meter.js';
import { accountOption, action, createContext, openMigratedStore } from '../context.js';
import { recentBatches, type BatchInfo } from '../../store/runs/batches.js';
import { COUNT_LABELS, periodLabel } from '../../report/summary.js';

interface StageRecord {
  startedAt?: string;
  ms?: unknown;
  /** The order the stage was first recorded in (ties of startedAt). */
  seq?: unknown;
  status?: string;
  error?: string;
  detail?: { openBreaks?: unknown } & Record<string, unknown>;
}

export interface RunListing {
  runId: string;
  /** The account the run belongs to ("default" for a single-account config). */
  account: string;
  /** The batch it is an account's run of (multi-account configs); null otherwise. */
  batchId: string | null;
  command: string;
  trigger: string;
  period: { from: string; to: string } | null;
  status: string;
  startedAt: string;
  finishedAt: string | null;
  ms: number | null;
  stages: Record<string, { ms: number | null; status: string | null; error?: string; reason?: string }>;
  counts: Record<string, unknown>;
  /** run.requests: API -> endpoint -> attempts, retries, rate limit, and seconds at that rate. */
  requests: Partial<Record<ApiName, Record<string, EndpointRequests & { seconds: number }>>>;
  /** Per API and over all: requests, retries, seconds at the configured rates (summed). */
  requestTotals: { apis: Partial<Record<ApiName, RequestTotals>>; all: RequestTotals };
  openBreaks: number | null;
  failedStage: string | null;
  error: string | null;
  report: string | null;
  delivered: boolean;
  /**
   * delivered; failed (deliveryError says why; `deliver <runId>` retries); not requested (a sync or reconcile,
   * --no-email, no SMTP_URL); pending (a run still going).
   */
  delivery: 'delivered' | 'failed' | 'not requested' | 'pending';
  deliveryError: string | null;
}

/** What became of a run's e-mail, from its deliver stage: a run never meant to be e-mailed is not "not delivered". */
export function deliveryOf(
  r: Pick<RunListing, 'delivered' | 'deliveryError' | 'status' | 'command' | 'stages'>,
): RunListing['delivery'] {
  if (r.delivered) return 'delivered';
  const stage = r.stages.deliver?.status;
  if (r.deliveryError || stage === 'failed') return 'failed';
  if (stage === 'skipped' || r.command !== 'run') return 'not requested';
  return r.status === 'running' ? 'pending' : 'not requested';
}

const limitSchema = z.coerce.number().int().min(1).max(10_000);

export function register(program: Command): void {
  const runs = program
    .command('runs')
    .description(COMMAND_INFO['runs'].description)
    .option('--json', 'print a JSON array on stdout (several accounts: {"batches": [...], "runs": [...]})')
    .option('--limit <n>', 'how many runs (and batches) to list', '20');
  accountOption(runs, "list this account's runs only").action(
    action(async (opts: { json?: boolean; limit: string }, command: Command) => {
      const limit = limitSchema.safeParse(opts.limit);
      if (!limit.success)
        throw new ConfigError([`--limit: must be a whole number from 1 to 10000 (got ${JSON.stringify(opts.limit)})`]);
      const { config, logger, accounts } = createContext(command);
      const store = await openMigratedStore(config, logger);
      try {
        // Several accounts: their runs merged newest first, and the batches that ran them.
        const runs = (await Promise.all(accounts.map((a) => listRuns(store.db, a.name, limit.data))))
          .flat()
          .sort((a, b) => b.startedAt.localeCompare(a.startedAt) || b.runId.localeCompare(a.runId))
          .slice(0, limit.data);
        if (!config.multiAccount) {
          process.stdout.write(opts.json ? `${JSON.stringify(runs, null, 2)}\n` : formatRuns(runs));
          return EXIT.ok;
        }
        const only = accounts.length < config.accountNames.length;
        const batches = (await recentBatches(store.db, limit.data)).filter(
          (b) => !only || b.accounts.some((a) => accounts.some((c) => c.name === a.account)),
        );
        process.stdout.write(
          opts.json
            ? `${JSON.stringify({ batches: batches.map(batchListing), runs }, null, 2)}\n`
            : `${formatBatches(batches)}${formatRuns(runs, true)}`,
        );
        return EXIT.ok;
      } finally {
        await store.close();
      }
    }),
  );
}

export async function listRuns(db: Db, account: string, limit: number): Promise<RunListing[]> {
  const rows = await recentRuns(db, account, limit);
  return rows
    .map((r): RunListing => {
      const stages = (r.stages ?? {}) as Record<string, StageRecord>;
      const startedAt = new Date(r.started_at as unknown as string);
      const finishedAt = r.finished_at ? new Date(r.finished_at as unknown as string) : null;
      const openBreaks = jsonNumber(stages.reconcile?.detail?.openBreaks);
      const requests = parseRunRequests(r.requests);
      return {
        runId: r.id,
        account: r.account,
        batchId: r.batch_id ?? null,
        command: r.command,
        trigger: r.trigger,
        period:
          r.period_from && r.period_to
            ? { from: String(r.period_from).slice(0, 10), to: String(r.period_to).slice(0, 10) }
            : null,
        status: r.status,
        startedAt: startedAt.toISOString(),
        finishedAt: finishedAt?.toISOString() ?? null,
        ms: finishedAt ? finishedAt.getTime() - startedAt.getTime() : null,
        stages: Object.fromEntries(
          // jsonb keeps no key order: list stages in the order they ran.
          Object.entries(stages)
            .sort(
              (a, b) =>
                (a[1].startedAt ?? '').localeCompare(b[1].startedAt ?? '') ||
                (jsonNumber(a[1].seq) ?? 0) - (jsonNumber(b[1].seq) ?? 0),
            )
            .map(([name, s]) => [
              name,
              {
                ms: jsonNumber(s.ms),
                status: s.status ?? null,
                ...(s.error ? { error: s.error } : {}),
                ...(s.status === 'skipped' && typeof s.detail?.reason === 'string' ? { reason: s.detail.reason } : {}),
              },
            ]),
        ),
        // jsonb comes back with LosslessNumber objects; plain JSON for the listing.
        counts: orderCounts(JSON.parse(stringifyJsonLossless(r.counts ?? {})) as Record<string, unknown>),
        requests: Object.fromEntries(
          sortedRequests(requests).map(([api, endpoints]) => [
            api,
            Object.fromEntries(
              endpoints.map(([name, e]) => [name, { ...e, seconds: roundSeconds(endpointSeconds(e)) }]),
            ),
          ]),
        ),
        requestTotals: roundTotals(requestTotals(requests)),
        openBreaks,
        failedStage: r.failed_stage,
        error: r.error,
        report: r.report_path,
        delivered: r.delivered === true,
        delivery: 'pending',
        deliveryError: r.delivery_error,
      };
    })
    .map((listing) => ({ ...listing, delivery: deliveryOf(listing) }));
}

export function formatRuns(runs: RunListing[], withAccount = false): string {
  if (runs.length === 0) return 'no runs yet: `ramp-recon run` starts one\n';
  const out: string[] = [];
  for (const r of runs) {
    // the period as the workbook and the e-mail name it (both days inclusive); --json keeps from / to (exclusive)
    const period = r.period ? periodLabel(r.period.from, r.period.to) : '-';
    out.push(
      `${r.runId}  ${withAccount ? `${r.account.padEnd(12)} ` : ''}${r.command.padEnd(9)} ${r.trigger.padEnd(8)} ${period.padEnd(24)} ${r.status.padEnd(9)} ${r.startedAt}  ${seconds(r.ms).padStart(7)}  breaks ${r.openBreaks ?? '-'}  ${r.delivery === 'failed' ? 'delivery failed' : r.delivery === 'not requested' ? 'no e-mail requested' : r.delivery}`,
    );
    const stageText = Object.entries(r.stages)
      .map(
        ([name, s]) =>
          `${name} ${s.status === 'succeeded' ? seconds(s.ms) : `${s.status ?? '?'}${s.reason ? ` (${s.reason})` : ''}`}`,
      )
      .join(', ');
    if (stageText) out.push(`    stages  ${stageText}`);
    const counts = Object.entries(r.counts)
      .map(([k, v]) => `${k} ${typeof v === 'object' ? JSON.stringify(v) : String(v)}`)
      .join(', ');
    if (counts) out.push(`    counts  ${counts}`);
    const requests = formatRequests(r);
    if (requests) out.push(`    requests  ${requests}`);
    if (r.report) out.push(`    report  ${r.report}`);
    if (r.failedStage || r.error) out.push(`    failed  ${r.failedStage ?? ''}${r.error ? `: ${r.error}` : ''}`);
    if (r.deliveryError) out.push(`    e-mail  ${r.deliveryError}`);
  }
  return `${out.join('\n')}\n`;
}

/**
 * "partner 430 (1 retry) 5.9s at 10/s+100/s; exchange 1234 61.7s at 20/s; total 1664 67.6s": time at the configured
 * rates.
 */
export function formatRequests(r: Pick<RunListing, 'requests' | 'requestTotals'>): string {
  const apis = Object.entries(r.requestTotals.apis).map(([api, t]) => {
    const rates = [...new Set(Object.values(r.requests[api as ApiName] ?? {}).map((e) => e.perSecond))].sort(
      (a, b) => a - b,
    );
    return `${api} ${t.requests}${retries(t.retries)} ${duration(t.seconds)} at ${rates.map((p) => `${p}/s`).join('+')}`;
  });
  if (apis.length === 0) return '';
  const all = r.requestTotals.all;
  return `${apis.join('; ')}; total ${all.requests}${retries(all.retries)} ${duration(all.seconds)}`;
}

function retries(n: number): string {
  return n ? ` (${n} ${n === 1 ? 'retry' : 'retries'})` : '';
}

/** 5.9s, 23m05s, 4h21m: times at a rate limit run from seconds to hours. */
export function duration(seconds: number): string {
  if (seconds < 59.95) return `${seconds.toFixed(1)}s`;
  const s = Math.round(seconds);
  if (s < 3600) return `${Math.floor(s / 60)}m${String(s % 60).padStart(2, '0')}s`;
  return `${Math.floor(s / 3600)}h${String(Math.floor((s % 3600) / 60)).padStart(2, '0')}m`;
}

function roundTotals(t: ReturnType<typeof requestTotals>): RunListing['requestTotals'] {
  const round = (x: RequestTotals): RequestTotals => ({ ...x, seconds: roundSeconds(x.seconds) });
  return { apis: Object.fromEntries(Object.entries(t.apis).map(([api, x]) => [api, round(x)])), all: round(t.all) };
}

/** jsonb keeps no key order: the JSON summary's order, which the Summary sheet's counts follow, then anything else. */
const COUNT_ORDER = COUNT_LABELS.map(([key]) => key);
function orderCounts(counts: Record<string, unknown>): Record<string, unknown> {
  const keys = Object.keys(counts).sort((a, b) => rank(a) - rank(b) || a.localeCompare(b));
  return Object.fromEntries(keys.map((k) => [k, counts[k]]));
}
function rank(key: string): number {
  const i = COUNT_ORDER.indexOf(key);
  return i === -1 ? COUNT_ORDER.length : i;
}

function seconds(ms: number | null): string {
  return ms === null ? '-' : `${(ms / 1000).toFixed(1)}s`;
}

/** A batch as `runs --json` lists it: its period, outcome, group report and each account's run, worker and attempts. */
export function batchListing(b: BatchInfo): Record<string, unknown> {
  return {
    batchId: b.id,
    trigger: b.trigger,
    period: { from: b.periodFrom, to: b.periodTo },
    status: b.status,
    startedAt: b.startedAt.toISOString(),
    finishedAt: b.finishedAt?.toISOString() ?? null,
    report: b.reportPath,
    delivered: b.delivered,
    deliveryError: b.deliveryError,
    accounts: b.accounts.map((a) => ({
      account: a.account,
      status: a.status,
      runId: a.runId,
      failedStage: a.failedStage,
      error: a.error,
      worker: a.worker,
      attempts: a.attempts,
    })),
  };
}

export function formatBatches(batches: BatchInfo[]): string {
  if (batches.length === 0) return '';
  const out: string[] = [];
  for (const b of batches) {
    const verdict = (b.reportDigest as { verdict?: unknown } | null)?.verdict;
    out.push(
      `${b.id}  batch     ${b.trigger.padEnd(8)} ${periodLabel(b.periodFrom, b.periodTo).padEnd(24)} ${b.status.padEnd(9)} ${b.startedAt.toISOString()}  ${typeof verdict === 'string' ? verdict : ''}`,
    );
    for (const a of b.accounts)
      out.push(
        `    ${a.account.padEnd(12)} ${a.status.padEnd(9)} ${a.runId ?? '-'}${a.worker ? `  on ${a.worker}` : ''}${a.attempts > 1 ? `  ${a.attempts} attempts` : ''}${a.error ? `  ${a.failedStage ? `${a.failedStage}: ` : ''}${a.error}` : ''}`,
      );
    if (b.reportPath) out.push(`    group report  ${b.reportPath}`);
    if (b.deliveryError) out.push(`    e-mail  ${b.deliveryError}`);
  }
  return `${out.join('\n')}\n`;
}
