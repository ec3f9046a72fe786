/** The Exchange API as a Source: its client, the steps of a sync (each timed), its result, its reach. */
import { listCursors } from '../../store/sync/cursors.js';
import { exchangeEntitiesInQuarantine } from '../../store/sync/exchange-records.js';
import { refreshPlannerStatistics } from '../../store/db/statistics.js';
import { createProgress } from '../../util/progress.js';
import { isAbort, SyncAbortedError } from '../common/abort.js';
import type { Source, SourceEnv, SyncRequest, SyncResult, SyncStep } from '../source.js';
import { exchangeClientFromConfig, type ExchangeClient } from './client.js';
import type { ExchangeSync, StreamCoverage, SyncCounters } from './sync-common.js';
import { backfillFills, syncFills } from './sync-fills.js';
import { syncOrderLookups, syncOrders, topUpFills } from './sync-orders.js';
import { syncPayments } from './sync-payments.js';
import { syncSnapshots } from './sync-snapshots.js';
import { EXCHANGE_STREAM_CURSORS, exchangeStreamReach } from './streams.js';

/** What an exchange sync counted. */
export interface ExchangeFigures {
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
  /** Wall time per step: snapshots, backfill, payments, fills, orders, statistics (ANALYZE), ordersById. */
  stageMs: Record<string, number>;
  /** This process's CPU time per step (user + system), beside stageMs: what the client side costs. */
  stageCpuMs: Record<string, number>;
  startedAt: string;
  finishedAt: string;
  ms: number;
}

/** One exchange sync: the steps' shared state, what the snapshots step found, and the figures kept for the result. */
interface ExchangeRun extends ExchangeSync {
  /** Symbols known from /symbols (the order listings split a full one-millisecond window by them). */
  symbols: string[];
  balanceSnapshotId: string | null;
  requestsBefore: { requests: number; retries: number };
  stageMs: Record<string, number>;
  stageCpuMs: Record<string, number>;
}

/**
 * Pulls the exchange account's whole history into the store, from the cursors up to now (docs/operations.md "What a
 * sync asks the APIs"): snapshots first (their fetch time bounds the flows a later roll-forward needs), then payments
 * (at once, so that a state change they show belongs to the pair this snapshot closes), fills, orders of every
 * status, trades, and orders referenced by fills. Each page is stored with its cursor in one transaction, so an
 * interrupted sync resumes where it stopped and a re-run changes nothing. The signal stops it between pages
 * (SyncAbortedError).
 */
export const exchangeSource: Source<ExchangeClient, ExchangeRun, ExchangeFigures> = {
  name: 'exchange',
  streams: Object.keys(EXCHANGE_STREAM_CURSORS),
  connect: (env) => exchangeClientFromConfig(env.config, env.logger, { meter: env.meter }),
  open: openSync,
  plan: (_sync, request) => planSteps(request),
  finish: finishSync,
  failed: (sync, error) => {
    sync.progress.stop(error);
    return !(error instanceof SyncAbortedError) && isAbort(error, sync.signal) ? new SyncAbortedError(error) : error;
  },
  reach: (db, account) => exchangeStreamReach(db, account),
};

async function openSync(env: SourceEnv, client: ExchangeClient, request: SyncRequest): Promise<ExchangeRun> {
  const startedAt = new Date();
  const progress = createProgress({ logger: env.logger, label: 'exchange sync', mode: env.progressMode });
  const sync: ExchangeRun = {
    ...env,
    client,
    progress,
    nowMs: Math.max(env.now.getTime(), 0),
    startedAt,
    historyStartMs: Date.parse(`${env.config.exchange.historyStart}T00:00:00Z`),
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
    openQuarantine: await exchangeEntitiesInQuarantine(env.db, env.account),
    symbols: [],
    balanceSnapshotId: null,
    requestsBefore: client.http.stats(),
    stageMs: {},
    stageCpuMs: {},
  };
  env.logger.info(
    { runId: env.runId, upTo: new Date(sync.nowMs).toISOString(), backfill: request.backfill },
    'exchange sync started',
  );
  return sync;
}

/** The steps in their order; the backfill only when asked. */
function planSteps(request: SyncRequest): Array<SyncStep<ExchangeRun>> {
  const backfill = request.backfill;
  return [
    timed('snapshots', async (sync) => {
      const snapshots = await syncSnapshots(sync, sync.config);
      sync.symbols = snapshots.symbols;
      sync.balanceSnapshotId = snapshots.balanceSnapshotId;
    }),
    ...(backfill
      ? [
          timed('backfill', async (sync) => {
            const range = { from: backfill.from.getTime(), to: backfill.to.getTime() };
            await backfillFills(sync, range);
            await syncOrders(sync, sync.symbols, range);
            await syncPayments(sync, range);
          }),
        ]
      : []),
    // Payments right after the balance snapshot: a state change the payments read sees is placed in
    // the pair this snapshot closes (observed_at is the sync's start), so the time between the two
    // is kept to the few reference requests (sync-payments.ts syncPayments, docs/rules.md E_BALANCE_ROLL).
    timed('payments', (sync) => syncPayments(sync)),
    timed('fills', (sync) => syncFills(sync)),
    timed('orders', (sync) => syncOrders(sync, sync.symbols)),
    // The lookups below join every stored fill with its order: planned on the statistics of what was just stored.
    timed('statistics', (sync) => refreshPlannerStatistics(sync.db, sync.account)),
    timed('ordersById', (sync) => syncOrderLookups(sync, sync.symbols)),
    timed('fillsTopUp', (sync) => topUpFills(sync)),
  ];
}

/** A step whose wall and CPU time go into the result's stageMs and stageCpuMs, also when it fails. */
function timed(name: string, run: (sync: ExchangeRun) => Promise<unknown>): SyncStep<ExchangeRun> {
  return {
    name,
    run: async (sync) => {
      const t = performance.now();
      const cpu = process.cpuUsage();
      try {
        await run(sync);
      } finally {
        const used = process.cpuUsage(cpu);
        sync.stageMs[name] = (sync.stageMs[name] ?? 0) + Math.round(performance.now() - t);
        sync.stageCpuMs[name] = (sync.stageCpuMs[name] ?? 0) + Math.round((used.user + used.system) / 1000);
      }
    },
  };
}

async function finishSync(sync: ExchangeRun): Promise<SyncResult<ExchangeFigures>> {
  const finishedAt = new Date();
  const stats = sync.client.http.stats();
  const figures: ExchangeFigures = {
    counts: {
      ...sync.counters,
      requests: stats.requests - sync.requestsBefore.requests,
      retries: stats.retries - sync.requestsBefore.retries,
    },
    cursors: Object.fromEntries(
      Object.entries(await listCursors(sync.db, sync.account))
        .filter(([k]) => k.startsWith('exchange.'))
        .map(([k, v]) => [k.slice('exchange.'.length), v]),
    ),
    coverage: sync.coverage,
    settled: Object.values(sync.coverage).every((c) => c.settled),
    balanceSnapshotId: sync.balanceSnapshotId,
    stageMs: sync.stageMs,
    stageCpuMs: sync.stageCpuMs,
    startedAt: sync.startedAt.toISOString(),
    finishedAt: finishedAt.toISOString(),
    ms: finishedAt.getTime() - sync.startedAt.getTime(),
  };
  sync.progress.stop();
  sync.logger.info({ counts: figures.counts, settled: figures.settled, ms: figures.ms }, 'exchange sync finished');
  const { counts, settled, balanceSnapshotId } = figures;
  return { source: 'exchange', recorded: { counts, settled, balanceSnapshotId }, figures };
}
