/** The rule engine: runs each rule family over a batch of domain records into a RuleTally. */
import type { Decimal } from '../decimal/decimal.js';
import { balanceRollBreaks, checkBalanceSanity, rollForward, type DayFlows, type RollFigures } from './balance-roll.js';
import { checkDepositAmount, checkDepositMissing, settleDeposits } from './cross-rules.js';
import { decimalText } from '../decimal/decimal.js';
import {
  checkFeeRate,
  checkFillAvgPx,
  checkFillOrphan,
  checkFillQty,
  checkFillSymbolRules,
  checkOrderSize,
  feeTolerance,
  ratesForDay,
  TAKER_ONLY_ORDER_TYPES,
} from './fill-rules.js';
import {
  checkAmountUsd,
  checkFeeBounds,
  checkFeeUsd,
  checkPartnerFeeRate,
  checkPrecision,
  checkStale,
  checkState,
  checkWebhookGap,
  WEBHOOK_RETRY_MS,
} from './partner-rules.js';
import { checkBeneficiary, checkDepositStale, checkWithdrawalStale } from './payment-rules.js';
import { checkOrderStatus, ORDER_STATUS_SUSPECTS } from './order-status-rules.js';
import { coverageBreaks, quarantineBreaks, unsyncedDayBreaks, type StreamReach } from './sync-rules.js';
import type { RuleTally } from './tally.js';
import type { FillPrefilter, OrderPrefilter } from '../domain/index.js';

export type { FillPrefilter, OrderPrefilter } from '../domain/index.js';
import type {
  BalanceSnapshot,
  CoverageRow,
  Deposit,
  ExchangeOrderAgg,
  FeeRates,
  FeeSchedule,
  Fill,
  PartnerCurrency,
  PartnerOrder,
  QuarantinedRecord,
  SymbolRules,
  WebhookEventLite,
  Withdrawal,
} from '../domain/index.js';

/**
 * Runs the rules of each family over a batch of domain records into a RuleTally. Pure: the
 * I/O layer (src/stages/reconcile.ts) loads batches and calls these; tests call them with factories.
 */
export interface EngineConfig {
  now: Date;
  usdTolerance: Decimal;
  partnerFeeRate: Decimal | null;
  webhooksEnabled: boolean;
  staleAfterHours: { partnerOrder: number; deposit: number; withdrawal: number };
  feeCurrency: 'counter' | 'base';
  exchangeFeeTolerance: Decimal | null;
  balanceTolerance: Decimal;
  balanceLocalTolerance: Decimal;
}

/** Reference data available to this run; null: no snapshot stored. */
export interface ReferenceData {
  currencies: ReadonlyMap<string, PartnerCurrency> | null;
  symbols: ReadonlyMap<string, SymbolRules> | null;
  fees: FeeSchedule | null;
  whitelist: ReadonlySet<string> | null;
  /** Balance snapshots of exchange.account, oldest first (all of them: used for counting). */
  balanceSnapshotCount: number;
}

/** Marks rules whose inputs are missing as "not checked", with the reason. Call first. */
export function markNotChecked(tally: RuleTally, cfg: EngineConfig, ref: ReferenceData): void {
  if (!cfg.partnerFeeRate) tally.notChecked('P_PARTNER_FEE_RATE', 'partner.feeRate not configured');
  else if (!ref.currencies) tally.notChecked('P_PARTNER_FEE_RATE', 'no partner currencies snapshot');
  if (!ref.currencies) tally.notChecked('P_PRECISION', 'no partner currencies snapshot');
  if (!cfg.webhooksEnabled) tally.notChecked('P_WEBHOOK_GAP', 'webhooks not configured');
  if (!ref.symbols) {
    tally.notChecked('E_FILL_AVGPX', 'no exchange symbols snapshot');
    tally.notChecked('E_SYMBOL_RULES', 'no exchange symbols snapshot');
  }
  if (!ref.fees || ref.fees.length === 0) tally.notChecked('E_FEE_RATE', 'no exchange fees snapshot');
  if (ref.balanceSnapshotCount < 2)
    tally.notChecked(
      'E_BALANCE_ROLL',
      `${ref.balanceSnapshotCount === 0 ? 'no balance snapshot' : 'only one balance snapshot'}: the first snapshot only opens the series`,
    );
  if (ref.balanceSnapshotCount === 0) tally.notChecked('E_BALANCE_SANITY', 'no balance snapshot');
  if (!ref.whitelist) tally.notChecked('E_WITHDRAWAL_BENEFICIARY', 'no exchange whitelist snapshot');
}

export interface PartnerBatch {
  orders: readonly PartnerOrder[];
  /** Stored deposits by txHash, for the orders' hashes. */
  depositsByTx: ReadonlyMap<string, readonly Deposit[]>;
  /**
   * Every stored partner order carrying one of the orders' hashes, by txHash (the orders
   * themselves included): the claimants of each hash's deposits. Absent: the batch's own orders.
   */
  claimantsByTx?: ReadonlyMap<string, readonly PartnerOrder[]>;
  ourAddresses: ReadonlySet<string>;
}

/** Partner and cross-system rules over orders created in the period. */
export function checkPartnerBatch(tally: RuleTally, cfg: EngineConfig, ref: ReferenceData, batch: PartnerBatch): void {
  // Which order each deposit settles, once per hash (docs/rules.md X_DEPOSIT_MISSING).
  const settledByTx = new Map<string, Map<string, Deposit>>();
  // The batch's orders by hash, built once (a filter per order would cost batch size squared).
  const batchByTx = new Map<string, PartnerOrder[]>();
  for (const x of batch.orders)
    if (x.transactionHash) batchByTx.set(x.transactionHash, [...(batchByTx.get(x.transactionHash) ?? []), x]);
  const settledDeposit = (o: PartnerOrder): Deposit | undefined => {
    const tx = o.transactionHash;
    if (!tx) return undefined;
    let settled = settledByTx.get(tx);
    if (!settled) {
      // The stored claimants and this batch's orders of the hash, each once.
      const claimants = new Map(
        [...(batch.claimantsByTx?.get(tx) ?? []), ...(batchByTx.get(tx) ?? [])].map((x) => [x.orderId, x]),
      );
      settledByTx.set(
        tx,
        (settled = settleDeposits([...claimants.values()], batch.depositsByTx.get(tx) ?? [], batch.ourAddresses)),
      );
    }
    return settled.get(o.orderId);
  };
  for (const o of batch.orders) {
    tally.record('P_FEE_USD', o.orderId, checkFeeUsd(o, cfg), 'USD');
    tally.record('P_AMOUNT_USD', o.orderId, checkAmountUsd(o), 'USD');
    if (!tally.isNotChecked('P_PARTNER_FEE_RATE') && cfg.partnerFeeRate)
      tally.record(
        'P_PARTNER_FEE_RATE',
        o.orderId,
        checkPartnerFeeRate(o, cfg.partnerFeeRate, ref.currencies),
        o.inputCurrency,
      );
    tally.record('P_FEE_BOUNDS', o.orderId, checkFeeBounds(o), o.inputCurrency);
    if (ref.currencies) tally.record('P_PRECISION', o.orderId, checkPrecision(o, ref.currencies), o.inputCurrency);
    tally.record('P_STATE', o.orderId, checkState(o), null);
    const deposit = settledDeposit(o);
    tally.record('X_DEPOSIT_MISSING', o.orderId, checkDepositMissing(o, batch.ourAddresses, deposit), o.outputCurrency);
    tally.record('X_DEPOSIT_AMOUNT', o.orderId, checkDepositAmount(o, batch.ourAddresses, deposit), o.outputCurrency);
  }
}

/**
 * P_WEBHOOK_GAP over a batch of the orders to judge this run (settled, last state change past the
 * retry window, not judged before or with an open break: webhookGapCandidates), whatever their
 * creation day. Returns the ids it judged, for the lifecycle's scope (docs/rules.md).
 */
export function checkWebhookGaps(
  tally: RuleTally,
  cfg: EngineConfig,
  orders: readonly PartnerOrder[],
  eventsByOrder: ReadonlyMap<string, readonly WebhookEventLite[]>,
): string[] {
  const judged: string[] = [];
  for (const o of orders) {
    const verdict = checkWebhookGap(o, eventsByOrder.get(o.orderId) ?? [], cfg.now);
    tally.record('P_WEBHOOK_GAP', o.orderId, verdict, null);
    if (verdict !== 'n/a') judged.push(o.orderId);
  }
  return judged;
}

/** After the last batch: P_WEBHOOK_GAP that judged no order says "not checked", never "passed". */
export function finishWebhookGaps(tally: RuleTally, cfg: EngineConfig, judged: number): void {
  if (cfg.webhooksEnabled && judged === 0)
    tally.notChecked(
      'P_WEBHOOK_GAP',
      `no settled order whose last state change is past the ${WEBHOOK_RETRY_MS / 86_400_000}-day webhook retry window is left to judge`,
    );
}

/** P_STALE over every stored order still PENDING / WITHDRAWING. */
export function checkOpenOrders(tally: RuleTally, cfg: EngineConfig, orders: readonly PartnerOrder[]): void {
  tally.addChecked('P_STALE', 0);
  for (const o of orders)
    tally.record('P_STALE', o.orderId, checkStale(o, cfg.now, cfg.staleAfterHours.partnerOrder), null);
}

/**
 * E_FILL_QTY, E_FILL_AVGPX, E_ORDER_STATUS and the order-size part of E_SYMBOL_RULES over orders with fills in the
 * period.
 */
export function checkExchangeOrders(tally: RuleTally, ref: ReferenceData, orders: readonly ExchangeOrderAgg[]): void {
  for (const o of orders) {
    const symbol = o.symbol ? ref.symbols?.get(o.symbol) : undefined;
    tally.record('E_FILL_QTY', o.exOrdId, checkFillQty(o), symbol?.baseCurrency ?? null);
    tally.record('E_ORDER_STATUS', o.exOrdId, checkOrderStatus(o), symbol?.baseCurrency ?? null);
    if (ref.symbols) {
      tally.record('E_FILL_AVGPX', o.exOrdId, checkFillAvgPx(o, symbol), symbol?.counterCurrency ?? null);
      tally.record('E_SYMBOL_RULES', o.exOrdId, checkOrderSize(o, symbol), symbol?.baseCurrency ?? null);
    }
  }
}

/** E_FILL_ORPHAN, E_FEE_RATE and the fill part of E_SYMBOL_RULES over fills in the period. */
export function checkFills(tally: RuleTally, cfg: EngineConfig, ref: ReferenceData, fills: readonly Fill[]): void {
  const ratesByDay = new Map<number, FeeRates>();
  for (const f of fills) {
    const symbol = ref.symbols?.get(f.symbol);
    tally.record('E_FILL_ORPHAN', f.execId, checkFillOrphan(f, symbol?.counterCurrency), null);
    if (ref.fees && ref.fees.length > 0) {
      const day = Math.floor(f.timestamp.getTime() / 86_400_000);
      let rates = ratesByDay.get(day);
      if (!rates) ratesByDay.set(day, (rates = ratesForDay(ref.fees, f.timestamp)!));
      tally.record(
        'E_FEE_RATE',
        f.execId,
        checkFeeRate(f, rates, symbol, { feeCurrency: cfg.feeCurrency, tolerance: cfg.exchangeFeeTolerance }),
        null,
      );
    }
    if (ref.symbols)
      tally.record('E_SYMBOL_RULES', f.execId, checkFillSymbolRules(f, symbol), symbol?.counterCurrency ?? null);
  }
}

export function fillPrefilter(cfg: EngineConfig, ref: ReferenceData, span: { from: Date; to: Date }): FillPrefilter {
  const feeCfg = { feeCurrency: cfg.feeCurrency, tolerance: cfg.exchangeFeeTolerance };
  const text = (d: Decimal | null) => (d === null ? null : decimalText(d));
  const symbols = [...(ref.symbols?.values() ?? [])].map((s) => ({
    symbol: s.symbol,
    priceIncrement: text(s.priceIncrement),
    lotSize: text(s.lotSize),
    feeTolerance: decimalText(feeTolerance(s, feeCfg)),
  }));
  let rates: FillPrefilter['rates'] = null;
  if (ref.fees && ref.fees.length > 0) {
    rates = [];
    for (let t = span.from.getTime(); t < span.to.getTime(); t += 86_400_000) {
      const r = ratesForDay(ref.fees, new Date(t))!;
      rates.push({
        day: new Date(t).toISOString().slice(0, 10),
        makerRate: decimalText(r.makerRate),
        takerRate: decimalText(r.takerRate),
      });
    }
  }
  return {
    symbols,
    rates,
    feeBasis: cfg.feeCurrency === 'counter' ? 'notional' : 'qty',
    takerOnlyTypes: TAKER_ONLY_ORDER_TYPES,
  };
}

/**
 * Fills the SQL prefilter left out: each passed E_FILL_ORPHAN, E_FEE_RATE (when checked) and
 * E_SYMBOL_RULES (when checked; its symbol is known, else it would have been loaded), so each
 * counts as checked exactly as checkFills would have counted it.
 */
export function addPassedFills(tally: RuleTally, ref: ReferenceData, n: number): void {
  tally.addChecked('E_FILL_ORPHAN', n);
  if (ref.fees && ref.fees.length > 0) tally.addChecked('E_FEE_RATE', n);
  if (ref.symbols) tally.addChecked('E_SYMBOL_RULES', n);
}

export function orderPrefilter(ref: ReferenceData): OrderPrefilter {
  const symbols = [...(ref.symbols?.values() ?? [])].flatMap((s) =>
    s.priceIncrement && !s.priceIncrement.isZero()
      ? [
          {
            symbol: s.symbol,
            halfIncrement: decimalText(s.priceIncrement.div(2)),
            minOrderSize: s.minOrderSize ? decimalText(s.minOrderSize) : null,
            maxOrderSize: s.maxOrderSize ? decimalText(s.maxOrderSize) : null,
          },
        ]
      : [],
  );
  // Orders a status rule could flag, whatever their symbol.
  return { symbols, suspects: ORDER_STATUS_SUSPECTS };
}

/**
 * Orders the SQL prefilter left out: each is stored, of a listed symbol, and passed E_FILL_QTY,
 * E_ORDER_STATUS, the order-size check and (`withAvgPx` of them, those with an avgPx and a non-zero fill qty)
 * E_FILL_AVGPX, so each counts as checked exactly as checkExchangeOrders would have counted it.
 */
export function addPassedOrders(tally: RuleTally, ref: ReferenceData, n: number, withAvgPx: number): void {
  tally.addChecked('E_FILL_QTY', n);
  tally.addChecked('E_ORDER_STATUS', n);
  if (ref.symbols) {
    tally.addChecked('E_FILL_AVGPX', withAvgPx);
    tally.addChecked('E_SYMBOL_RULES', n);
  }
}

export interface SnapshotPair {
  opening: BalanceSnapshot;
  closing: BalanceSnapshot;
  flows: readonly DayFlows[];
}

/** E_BALANCE_ROLL over the pairs to check (oldest first) and E_BALANCE_SANITY on the latest snapshot. */
export function checkBalances(
  tally: RuleTally,
  cfg: EngineConfig,
  pairs: readonly SnapshotPair[],
  latest: BalanceSnapshot | null,
): RollFigures[][] {
  const figures = pairs.map((p) => rollForward(p.opening, p.closing, p.flows, cfg.balanceTolerance));
  if (pairs.length > 0) {
    const breaks = balanceRollBreaks(figures, cfg.balanceTolerance);
    const currencies = new Set(figures.flat().map((f) => f.currency));
    tally.addChecked('E_BALANCE_ROLL', currencies.size - breaks.length);
    for (const b of breaks) tally.add(b);
  }
  if (latest)
    for (const line of latest.balances)
      tally.record(
        'E_BALANCE_SANITY',
        line.currency,
        checkBalanceSanity(line, cfg.balanceLocalTolerance),
        line.currency,
      );
  return figures;
}

/** E_STALE over every open deposit / withdrawal; E_WITHDRAWAL_BENEFICIARY over withdrawals in the period. */
export function checkPayments(
  tally: RuleTally,
  cfg: EngineConfig,
  ref: ReferenceData,
  input: {
    openDeposits: readonly Deposit[];
    openWithdrawals: readonly Withdrawal[];
    periodWithdrawals: readonly Withdrawal[];
  },
): void {
  tally.addChecked('E_STALE', 0);
  for (const d of input.openDeposits)
    tally.record('E_STALE', d.depositId, checkDepositStale(d, cfg.now, cfg.staleAfterHours.deposit), d.currency);
  for (const w of input.openWithdrawals)
    tally.record(
      'E_STALE',
      w.withdrawalId,
      checkWithdrawalStale(w, cfg.now, cfg.staleAfterHours.withdrawal),
      w.currency,
    );
  if (ref.whitelist)
    for (const w of input.periodWithdrawals)
      tally.record('E_WITHDRAWAL_BENEFICIARY', w.withdrawalId, checkBeneficiary(w, ref.whitelist), w.currency);
}

/**
 * S_COVERAGE for the days and streams of the period no sync covered (no row to be unsettled):
 * call after checkSync; a day whose row is unsettled already has its break under the same key.
 */
export function checkUnsyncedDays(
  tally: RuleTally,
  now: Date,
  days: readonly string[],
  streams: readonly StreamReach[],
): void {
  const { breaks, checked } = unsyncedDayBreaks(days, now, streams);
  tally.addChecked('S_COVERAGE', checked - breaks.length);
  for (const b of breaks) tally.add(b);
}

/** S_COVERAGE over stored coverage rows and cursor checks; S_QUARANTINE over unresolved quarantine. */
export function checkSync(
  tally: RuleTally,
  coverage: readonly CoverageRow[],
  quarantined: readonly QuarantinedRecord[],
  coverageRowsTotal = coverage.length,
): void {
  const cov = coverageBreaks(coverage);
  // checked = every coverage row looked at; each break adds its own 1.
  tally.addChecked('S_COVERAGE', Math.max(0, coverageRowsTotal - cov.length));
  for (const b of cov) tally.add(b);
  const q = quarantineBreaks(quarantined);
  tally.addChecked('S_QUARANTINE', 0);
  for (const b of q) tally.add(b);
}
