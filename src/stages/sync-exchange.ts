/** The exchange sync stage: builds the client and the progress from the stage context, runs the steps, returns the
 * result.
 */
import type { StageContext } from './context.js';
import { listCursors } from '../store/cursors.js';
import { refreshPlannerStatistics } from '../store/statistics.js';
import { createProgress } from '../util/progress.js';
import {
  backfillFills,
  exchangeClientFromConfig,
  syncFills,
  syncOrderLookups,
  syncOrders,
  syncPayments,
  syncSnapshots,
  type ExchangeClient,
  type StreamCoverage,
  type SyncCounters,
  type SyncEnv,
} from '../sources/exchange/index.js';
import { isAbort, SyncAbortedError } from '../sources/common/abort.js';
import { exchangeEntitiesInQuarantine } from '../store/exchange-records.js';

export { SyncAbortedError } from '../sources/common/abort.js';
export type { StreamCoverage } from '../sources/exchange/index.js';

export interface ExchangeSyncOptions {
  /** Also re-read this time range (fills by from/to and execId, the other streams by windows); no cursor moves. */
  backfill?: { from: Date; to: Date };
  /** Injected client (tests); by default one is built from ctx.config and closed at the end. */
  client?: ExchangeClient;
  /** Progress display; default: a bar on a terminal, log lines otherwise. */
  progress?: 'log' | 'off';
}

export interface ExchangeSyncResult {
  counts: SyncCounters & {
    /** HTTP attempts, retries included. */
    requests: number;
    retries: number;
  };
  /** Every exchange cursor after the sync, by name (fills.execId, orders.FILLED.time, ...). */
  cursors: Record<string, string>;
  /** Per stream: pages, rows, quarantined, settled, cursor. */
  coverage: Record<string, StreamCoverage>;
  /** false when some window or the fills walk could not be completed (S_COVERAGE). */
  settled: boolean;
  balanceSnapshotId: string | null;
  /** Wall time per stage: snapshots, backfill, payments, fills, orders, statistics (ANALYZE), ordersById. */
  stageMs: Record<string, number>;
  /** This process's CPU time per stage (user + system), beside stageMs: what the client side costs. */
  stageCpuMs: Record<string, number>;
  startedAt: string;
  finishedAt: string;
  ms: number;
}

/**
 * Pulls the exchange account's whole history into the store, from the cursors up to now
 * (docs/operations.md "What a sync asks the APIs"): snapshots first (their fetch time bounds the flows a later roll-forward
 * needs), then payments (at once, so that a state change they show belongs to the pair this
 * snapshot closes), fills, orders of every status, trades, and orders referenced by fills.
 * Each page is stored with its cursor in one transaction, so an interrupted sync resumes where
 * it stopped and a re-run changes nothing. ctx.signal stops it between pages (SyncAbortedError).
 */
export async function syncExchange(ctx: StageContext, options: ExchangeSyncOptions = {}): Promise<ExchangeSyncResult> {
  const logger = ctx.logger.child({ source: 'exchange' });
  const startedAt = new Date();
  const client = options.client ?? exchangeClientFromConfig(ctx.config, logger, { meter: ctx.meter });
  const account = ctx.config.account;
  const progress = createProgress({ logger, label: 'exchange sync', mode: options.progress });
  const env: SyncEnv = {
    db: ctx.store.db,
    account,
    runId: ctx.runId,
    client,
    logger,
    signal: ctx.signal,
    progress,
    nowMs: Math.max(ctx.now.getTime(), 0),
    startedAt,
    historyStartMs: Date.parse(`${ctx.config.exchange.historyStart}T00:00:00Z`),
    counters: {
      fills: 0,
      orders: 0,
      trades: 0,
      ordersById: 0,
      ordersNotFound: 0,
      deposits: 0,
      withdrawals: 0,
      balances: 0,
      quarantined: 0,
      pages: 0,
    },
    coverage: {},
    openQuarantine: await exchangeEntitiesInQuarantine(ctx.store.db, account),
    parallelWrites: ctx.store.kind === 'postgres',
  };
  const statsBefore = client.http.stats();
  logger.info(
    { runId: ctx.runId, upTo: new Date(env.nowMs).toISOString(), backfill: options.backfill },
    'exchange sync started',
  );
  try {
    const stageMs: Record<string, number> = {};
    const stageCpuMs: Record<string, number> = {};
    const timed = async <T>(stage: string, fn: () => Promise<T>): Promise<T> => {
      const t = performance.now();
      const cpu = process.cpuUsage();
      try {
        return await fn();
      } finally {
        const used = process.cpuUsage(cpu);
        stageMs[stage] = (stageMs[stage] ?? 0) + Math.round(performance.now() - t);
        stageCpuMs[stage] = (stageCpuMs[stage] ?? 0) + Math.round((used.user + used.system) / 1000);
      }
    };
    const snapshots = await timed('snapshots', () => syncSnapshots(env, ctx.config));
    if (options.backfill) {
      const range = { from: options.backfill.from.getTime(), to: options.backfill.to.getTime() };
      await timed('backfill', async () => {
        await backfillFills(env, range);
        await syncOrders(env, snapshots.symbols, range);
        await syncPayments(env, range);
      });
    }
    // Payments right after the balance snapshot: a state change the payments read sees is placed in
    // the pair this snapshot closes (observed_at is the sync's start), so the time between the two
    // is kept to the few reference requests (sync-payments.ts syncPayments, docs/rules.md E_BALANCE_ROLL).
    await timed('payments', () => syncPayments(env));
    await timed('fills', () => syncFills(env));
    await timed('orders', () => syncOrders(env, snapshots.symbols));
    // The lookups below join every stored fill with its order: planned on the statistics of what was just stored.
    await timed('statistics', () => refreshPlannerStatistics(ctx.store.db, ctx.config.account));
    await timed('ordersById', () => syncOrderLookups(env, snapshots.symbols));

    const finishedAt = new Date();
    const stats = client.http.stats();
    const result: ExchangeSyncResult = {
      counts: {
        ...env.counters,
        requests: stats.requests - statsBefore.requests,
        retries: stats.retries - statsBefore.retries,
      },
      cursors: Object.fromEntries(
        Object.entries(await listCursors(ctx.store.db, account))
          .filter(([k]) => k.startsWith('exchange.'))
          .map(([k, v]) => [k.slice('exchange.'.length), v]),
      ),
      coverage: env.coverage,
      settled: Object.values(env.coverage).every((c) => c.settled),
      balanceSnapshotId: snapshots.balanceSnapshotId,
      stageMs,
      stageCpuMs,
      startedAt: startedAt.toISOString(),
      finishedAt: finishedAt.toISOString(),
      ms: finishedAt.getTime() - startedAt.getTime(),
    };
    progress.stop();
    logger.info({ counts: result.counts, settled: result.settled, ms: result.ms }, 'exchange sync finished');
    return result;
  } catch (err) {
    progress.stop(err);
    if (!(err instanceof SyncAbortedError) && isAbort(err, ctx.signal)) throw new SyncAbortedError(err);
    throw err;
  } finally {
    if (!options.client) await client.close();
  }
}
