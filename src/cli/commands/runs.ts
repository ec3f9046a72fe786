import type { Command } from 'commander';
import { z } from 'zod';
import { ConfigError, EXIT } from '../../errors.js';
import type { Db } from '../../db/database.js';
import { isLosslessNumber, stringifyJsonLossless } from '../../decimal/json.js';
import { action, createContext, openMigratedStore } from '../context.js';

interface StageRecord {
  startedAt?: string;
  ms?: unknown;
  status?: string;
  error?: string;
  detail?: { openBreaks?: unknown } & Record<string, unknown>;
}

export interface RunListing {
  runId: string;
  command: string;
  trigger: string;
  period: { from: string; to: string } | null;
  status: string;
  startedAt: string;
  finishedAt: string | null;
  ms: number | null;
  stages: Record<string, { ms: number | null; status: string | null; error?: string; reason?: string }>;
  counts: Record<string, unknown>;
  openBreaks: number | null;
  failedStage: string | null;
  error: string | null;
  report: string | null;
  delivered: boolean;
  deliveryError: string | null;
}

const limitSchema = z.coerce.number().int().min(1).max(10_000);

export function register(program: Command): void {
  program
    .command('runs')
    .description('list past runs, newest first: period, status, stage timings, counts, open breaks, workbook, delivery')
    .option('--json', 'print a JSON array on stdout')
    .option('--limit <n>', 'how many runs to list', '20')
    .action(
      action(async (opts: { json?: boolean; limit: string }, command: Command) => {
        const limit = limitSchema.safeParse(opts.limit);
        if (!limit.success) throw new ConfigError([`--limit: must be a whole number from 1 to 10000 (got ${JSON.stringify(opts.limit)})`]);
        const { config, logger } = createContext(command);
        const store = await openMigratedStore(config, logger);
        try {
          const runs = await listRuns(store.db, config.account, limit.data);
          process.stdout.write(opts.json ? `${JSON.stringify(runs, null, 2)}\n` : formatRuns(runs));
          return EXIT.ok;
        } finally {
          await store.close();
        }
      }),
    );
}

export async function listRuns(db: Db, account: string, limit: number): Promise<RunListing[]> {
  const rows = await db.selectFrom('run').selectAll().where('account', '=', account).orderBy('started_at', 'desc').limit(limit).execute();
  return rows.map((r) => {
    const stages = (r.stages ?? {}) as Record<string, StageRecord>;
    const startedAt = new Date(r.started_at as unknown as string);
    const finishedAt = r.finished_at ? new Date(r.finished_at as unknown as string) : null;
    const openBreaks = numberOrNull(stages.reconcile?.detail?.openBreaks);
    return {
      runId: r.id,
      command: r.command,
      trigger: r.trigger,
      period: r.period_from && r.period_to ? { from: String(r.period_from).slice(0, 10), to: String(r.period_to).slice(0, 10) } : null,
      status: r.status,
      startedAt: startedAt.toISOString(),
      finishedAt: finishedAt?.toISOString() ?? null,
      ms: finishedAt ? finishedAt.getTime() - startedAt.getTime() : null,
      stages: Object.fromEntries(
        // jsonb keeps no key order: list stages in the order they ran.
        Object.entries(stages)
          .sort((a, b) => (a[1].startedAt ?? '').localeCompare(b[1].startedAt ?? ''))
          .map(([name, s]) => [
            name,
            {
              ms: numberOrNull(s.ms),
              status: s.status ?? null,
              ...(s.error ? { error: s.error } : {}),
              ...(s.status === 'skipped' && typeof s.detail?.reason === 'string' ? { reason: s.detail.reason } : {}),
            },
          ]),
      ),
      // jsonb comes back with LosslessNumber objects; plain JSON for the listing.
      counts: orderCounts(JSON.parse(stringifyJsonLossless(r.counts ?? {})) as Record<string, unknown>),
      openBreaks,
      failedStage: r.failed_stage,
      error: r.error,
      report: r.report_path,
      delivered: r.delivered === true,
      deliveryError: r.delivery_error,
    };
  });
}

export function formatRuns(runs: RunListing[]): string {
  if (runs.length === 0) return 'no runs yet: `ramp-recon run` starts one\n';
  const out: string[] = [];
  for (const r of runs) {
    const period = r.period ? `${r.period.from}..${r.period.to}` : '-';
    out.push(
      `${r.runId}  ${r.command.padEnd(9)} ${r.trigger.padEnd(8)} ${period.padEnd(22)} ${r.status.padEnd(9)} ${r.startedAt}  ${seconds(r.ms).padStart(7)}  breaks ${r.openBreaks ?? '-'}  ${r.delivered ? 'delivered' : 'not delivered'}`,
    );
    const stageText = Object.entries(r.stages)
      .map(([name, s]) => `${name} ${s.status === 'succeeded' ? seconds(s.ms) : `${s.status ?? '?'}${s.reason ? ` (${s.reason})` : ''}`}`)
      .join(', ');
    if (stageText) out.push(`    stages  ${stageText}`);
    const counts = Object.entries(r.counts)
      .map(([k, v]) => `${k} ${typeof v === 'object' ? JSON.stringify(v) : String(v)}`)
      .join(', ');
    if (counts) out.push(`    counts  ${counts}`);
    if (r.report) out.push(`    report  ${r.report}`);
    if (r.failedStage || r.error) out.push(`    failed  ${r.failedStage ?? ''}${r.error ? `: ${r.error}` : ''}`);
    if (r.deliveryError) out.push(`    e-mail  ${r.deliveryError}`);
  }
  return `${out.join('\n')}\n`;
}

/** jsonb keeps no key order: the JSON summary's order, then anything else. */
const COUNT_ORDER = ['partnerOrders', 'fills', 'exchangeOrders', 'deposits', 'withdrawals', 'balanceSnapshots', 'quarantined'];
function orderCounts(counts: Record<string, unknown>): Record<string, unknown> {
  const keys = Object.keys(counts).sort((a, b) => rank(a) - rank(b) || a.localeCompare(b));
  return Object.fromEntries(keys.map((k) => [k, counts[k]]));
}
function rank(key: string): number {
  const i = COUNT_ORDER.indexOf(key);
  return i === -1 ? COUNT_ORDER.length : i;
}

/** jsonb numbers arrive as LosslessNumber (exact text); counts and timings fit a double. */
function numberOrNull(value: unknown): number | null {
  if (value === null || value === undefined) return null;
  const n = Number(isLosslessNumber(value) ? value.toString() : value);
  return Number.isFinite(n) ? n : null;
}

function seconds(ms: number | null): string {
  return ms === null ? '-' : `${(ms / 1000).toFixed(1)}s`;
}
