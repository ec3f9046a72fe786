/** What the phases of one reconcile share: its handles, the rules' inputs, the tally, the judgement and the clock. */
import type { StageContext } from './context.js';
import type { Period } from '../domain/period.js';
import type { Logger } from '../log/logger.js';
import { markNotChecked, type EngineConfig, type ReferenceData } from '../rules/engine.js';
import { RuleTally } from '../rules/tally.js';
import { openJudgement, type Judgement } from '../store/recon/changes.js';
import type { Db } from '../store/db/database.js';
import { balanceSnapshotHeaders } from '../store/recon/exchange-reads.js';
import { spanOf, type Span } from '../store/db/keyset.js';
import { feeSchedule, latestCurrencies, latestSymbols, latestWhitelist } from '../store/sync/snapshots.js';
import { refreshPlannerStatistics } from '../store/db/statistics.js';
import { toDecimal } from '../decimal/decimal.js';
import { sourcesReach } from '../sources/index.js';
import type { StreamReach } from '../domain/index.js';

/**
 * Rows per page of the period's orders and withdrawals: the rules drop a page as soon as they have checked it, so
 * reconcile reads bigger pages than the workbook (keyset.ts PAGE_SIZE).
 */
export const RECONCILE_PAGE_SIZE = 5_000;

export interface ReconcileRun {
  ctx: StageContext;
  period: Period;
  runId: string;
  db: Db;
  account: string;
  log: Logger;
  span: Span;
  cfg: EngineConfig;
  ref: ReferenceData;
  /** The latest symbols snapshot (the balance flows read its currencies). */
  symbolsSnapshotId: string | null;
  /** Every balance snapshot of exchange.account, oldest first. */
  headers: { id: string; fetchedAt: Date }[];
  tally: RuleTally;
  judgement: Judgement;
  /** The records of other days judged because they changed. */
  outsidePeriod: { partnerOrders: number; withdrawals: number; balancePairs: number };
  /** Partner orders created in the period. */
  partnerOrders: number;
  /** How far each source's streams were read when the reconcile opened (S_COVERAGE's unsynced days, the deposits'). */
  reach: readonly StreamReach[];
  clock: PhaseClock;
}

/** Config as the pure rules want it (documented defaults come from the zod schema). */
export function engineConfig(ctx: StageContext): EngineConfig {
  const c = ctx.config;
  return {
    now: ctx.now,
    usdTolerance: toDecimal(c.tolerances.usd),
    partnerFeeRate: c.partner.feeRate ? toDecimal(c.partner.feeRate) : null,
    webhooksEnabled: c.webhooks !== undefined,
    staleAfterHours: { ...c.staleAfterHours },
    feeCurrency: c.exchange.feeCurrency,
    exchangeFeeTolerance: c.tolerances.exchangeFee ? toDecimal(c.tolerances.exchangeFee) : null,
    balanceTolerance: toDecimal(c.tolerances.balance),
    balanceLocalTolerance: toDecimal(c.tolerances.balanceLocal),
  };
}

/**
 * Opens a reconcile: planner statistics, the judgement (read before any record: every change committed from here on
 * is the next run's to judge), the reference data, and the rules whose inputs are missing marked "not checked".
 */
export async function openReconcile(ctx: StageContext, period: Period): Promise<ReconcileRun> {
  const runId = ctx.runId;
  if (!runId) throw new Error('reconcilePeriod needs ctx.runId (create the run with createRun first)');
  const db = ctx.store.db;
  const account = ctx.config.account;
  const log = ctx.logger.child({ stage: 'reconcile', runId, period });
  const clock = new PhaseClock();
  // The period's scans are planned on the statistics of what the syncs stored.
  const analyzed = await refreshPlannerStatistics(db, account);
  if (analyzed.length) log.debug({ tables: analyzed }, 'planner statistics refreshed');
  const judgement = await openJudgement(db, account);
  if (judgement.reset) log.warn(judgement.reset);
  const [currencies, symbols, fees, whitelist, headers, reach] = await Promise.all([
    latestCurrencies(db, account),
    latestSymbols(db, account),
    feeSchedule(db, account),
    latestWhitelist(db, account),
    balanceSnapshotHeaders(db, account, ctx.config.exchange.account),
    sourcesReach(db, account, period),
  ]);
  const ref: ReferenceData = {
    currencies,
    symbols: symbols?.symbols ?? null,
    fees,
    whitelist,
    balanceSnapshotCount: headers.length,
    depositsThrough: depositsThrough(reach),
  };
  const cfg = engineConfig(ctx);
  const tally = new RuleTally();
  markNotChecked(tally, cfg, ref);
  return {
    ...{ ctx, period, runId, db, account, log, span: spanOf(period), cfg, ref, headers, tally, judgement, clock },
    symbolsSnapshotId: symbols?.snapshotId ?? null,
    outsidePeriod: { partnerOrders: 0, withdrawals: 0, balancePairs: 0 },
    partnerOrders: 0,
    reach,
  };
}

/** How far the exchange's deposits are read (epoch ms), as the deposits stream's reach says; null: never read. */
function depositsThrough(reach: readonly StreamReach[]): number | null {
  const deposits = reach.find((r) => r.source === 'exchange' && r.stream === 'deposits');
  return deposits?.kind === 'cursor' ? deposits.syncedTo : null;
}

/** Milliseconds per phase, for the run record and tuning. */
export class PhaseClock {
  readonly started = Date.now();
  readonly phases: Record<string, number> = {};
  private mark = Date.now();

  /** The phase that ends now began where the last one ended. */
  phase(name: string): void {
    const t = Date.now();
    this.phases[name] = t - this.mark;
    this.mark = t;
  }

  /** A phase that runs beside others: its own wall time. */
  async timed(name: string, fn: () => Promise<void>): Promise<void> {
    const t = Date.now();
    await fn();
    this.phases[name] = Date.now() - t;
  }

  /** The next phase begins now (after phases timed side by side). */
  restart(): void {
    this.mark = Date.now();
  }
}
