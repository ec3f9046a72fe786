/** The rule engine: runs the catalog's rules over each scan of records into a RuleTally. It knows no rule: each rule's
 * descriptor says what it requires (else "not checked"), which scans it checks and, with its SQL pre-filter, which of
 * the records left out it counts as passed. Pure: the I/O layer (src/stages/reconcile.ts) loads the records and calls
 * these; tests call them with factories.
 */
import { RULES, type RuleCode } from './catalog.js';
import { awaitsDeposit, settleDeposits } from './cross-rules.js';
import type { Found, Judgement, RecordChecks, RuleDef, SetChecks } from './define.js';
import { ratesForDay } from './fill-rules.js';
import type { EngineConfig, ReferenceData, RuleInputs } from './inputs.js';
import { WEBHOOK_RETRY_MS } from './partner-rules.js';
import { breaksOf, type RuleTally } from './tally.js';
import type { DayFlows, RollFigures } from './balance-roll.js';
import { rollForward } from './balance-roll.js';
import type {
  BalanceSnapshot,
  CoverageRow,
  Deposit,
  ExchangeOrderAgg,
  FeeRates,
  Fill,
  PartnerOrder,
  QuarantinedRecord,
  StreamReach,
  WebhookEventLite,
  Withdrawal,
} from '../domain/index.js';

export type { EngineConfig, ReferenceData } from './inputs.js';
export { fillPrefilter, orderPrefilter } from './prefilters.js';

type Rule = RuleDef<RuleCode>;

/** Marks every rule whose inputs are missing as "not checked", with the first missing one's reason. Call first. */
export function markNotChecked(tally: RuleTally, cfg: EngineConfig, ref: ReferenceData): void {
  for (const rule of RULES as readonly Rule[]) {
    const reason = unmet(rule, { cfg, ref });
    if (reason) tally.notChecked(rule.code, reason);
  }
}

/** The reason the rule cannot run on these inputs, or null. */
export function unmet(rule: Rule, x: RuleInputs): string | null {
  for (const requirement of rule.requires) {
    const reason = requirement(x);
    if (reason) return reason;
  }
  return null;
}

/**
 * The rules that check this scan of records and can run, in catalog order: not marked "not checked", their inputs
 * present (`x` null: the scan has no inputs to hand, the marks alone tell).
 */
function judging<S extends keyof RecordChecks | keyof SetChecks>(
  tally: RuleTally,
  scan: S,
  x: RuleInputs | null,
): Rule[] {
  return (RULES as readonly Rule[]).filter(
    (r) => r.check[scan] !== undefined && !tally.isNotChecked(r.code) && (x === null || unmet(r, x) === null),
  );
}

/** Each record through every rule checking its scan: the context once per record, then the rules in catalog order. */
function scanRecords<S extends keyof RecordChecks, R, X extends RuleInputs>(
  tally: RuleTally,
  inputs: RuleInputs,
  scan: S,
  records: Iterable<R>,
  key: (r: R) => string,
  context: (r: R) => X,
): void {
  const rules = judging(tally, scan, inputs);
  if (rules.length === 0) return;
  for (const r of records) {
    const x = context(r);
    for (const rule of rules) {
      const check = rule.check[scan] as unknown as (record: R, x: X) => Judgement;
      record(tally, rule.code, key(r), check(r, x));
    }
  }
}

function record(tally: RuleTally, code: RuleCode, key: string, j: Judgement): void {
  if (typeof j === 'string' || Array.isArray(j)) tally.record(code, key, j, null);
  else tally.record(code, key, j.verdict, j.currency);
}

/** Each rule checking a whole set: its breaks, and the entities that passed. */
function scanSet<S extends keyof SetChecks>(
  tally: RuleTally,
  inputs: RuleInputs | null,
  scan: S,
  run: (check: SetChecks[S]) => Found,
): void {
  for (const rule of judging(tally, scan, inputs)) {
    const found = run(rule.check[scan] as SetChecks[S]);
    tally.addChecked(rule.code, found.passed);
    for (const b of breaksOf(rule.code, found.findings)) tally.add(b);
  }
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

/**
 * The rules of partner orders (partner and cross-system) over orders created in the period, or changed. Returns the
 * transaction hashes of the orders whose deposit a later run must judge (awaitsDeposit): the caller has them judged
 * again then, changed or not.
 */
export function checkPartnerBatch(
  tally: RuleTally,
  cfg: EngineConfig,
  ref: ReferenceData,
  batch: PartnerBatch,
): string[] {
  const settledDeposit = depositSettlement(batch);
  scanRecords(
    tally,
    { cfg, ref },
    'partnerOrder',
    batch.orders,
    (o) => o.orderId,
    (o) => ({ cfg, ref, ourAddresses: batch.ourAddresses, deposit: settledDeposit(o) }),
  );
  return batch.orders.flatMap((o) =>
    o.transactionHash && awaitsDeposit(o, batch.ourAddresses, settledDeposit(o), ref.depositsThrough)
      ? [o.transactionHash]
      : [],
  );
}

/** Which deposit settles each order, worked out once per hash (docs/rules.md X_DEPOSIT_MISSING). */
function depositSettlement(batch: PartnerBatch): (o: PartnerOrder) => Deposit | undefined {
  const settledByTx = new Map<string, Map<string, Deposit>>();
  // The batch's orders by hash, built once (a filter per order would cost batch size squared).
  const batchByTx = new Map<string, PartnerOrder[]>();
  for (const x of batch.orders)
    if (x.transactionHash) batchByTx.set(x.transactionHash, [...(batchByTx.get(x.transactionHash) ?? []), x]);
  return (o) => {
    const tx = o.transactionHash;
    if (!tx) return undefined;
    let settled = settledByTx.get(tx);
    if (!settled) {
      // The stored claimants and this batch's orders of the hash, each once.
      const claimants = new Map(
        [...(batch.claimantsByTx?.get(tx) ?? []), ...(batchByTx.get(tx) ?? [])].map((x) => [x.orderId, x]),
      );
      settled = settleDeposits([...claimants.values()], batch.depositsByTx.get(tx) ?? [], batch.ourAddresses);
      settledByTx.set(tx, settled);
    }
    return settled.get(o.orderId);
  };
}

/**
 * The rules of settled orders (P_WEBHOOK_GAP) over a batch of the orders to judge this run (settled, last state change
 * past the retry window, not judged before or with an open break: webhookGapCandidates), whatever their creation day.
 * Returns the ids judged, for the lifecycle's scope (docs/rules.md).
 */
export function checkWebhookGaps(
  tally: RuleTally,
  cfg: EngineConfig,
  ref: ReferenceData,
  orders: readonly PartnerOrder[],
  eventsByOrder: ReadonlyMap<string, readonly WebhookEventLite[]>,
): string[] {
  const judged = new Set<string>();
  for (const rule of judging(tally, 'settledPartnerOrder', { cfg, ref }))
    for (const o of orders) {
      const j = rule.check.settledPartnerOrder!(o, { cfg, ref, events: eventsByOrder.get(o.orderId) ?? [] });
      record(tally, rule.code, o.orderId, j);
      if ((typeof j === 'string' || Array.isArray(j) ? j : j.verdict) !== 'n/a') judged.add(o.orderId);
    }
  return [...judged];
}

/** After the last batch: a rule of settled orders that judged no order says "not checked", never "passed". */
export function finishWebhookGaps(tally: RuleTally, cfg: EngineConfig, ref: ReferenceData, judged: number): void {
  if (judged > 0) return;
  for (const rule of judging(tally, 'settledPartnerOrder', { cfg, ref }))
    tally.notChecked(
      rule.code,
      `no settled order whose last state change is past the ${WEBHOOK_RETRY_MS / 86_400_000}-day webhook retry window is left to judge`,
    );
}

/** The rules of open orders (P_STALE) over every stored order still PENDING / WITHDRAWING. */
export function checkOpenOrders(
  tally: RuleTally,
  cfg: EngineConfig,
  ref: ReferenceData,
  orders: readonly PartnerOrder[],
): void {
  const x = { cfg, ref };
  scanRecords(
    tally,
    x,
    'openPartnerOrder',
    orders,
    (o) => o.orderId,
    () => x,
  );
}

/** The order rules (E_FILL_QTY, E_FILL_AVGPX, E_ORDER_STATUS, E_SYMBOL_RULES's size) over orders in their scope. */
export function checkExchangeOrders(
  tally: RuleTally,
  cfg: EngineConfig,
  ref: ReferenceData,
  orders: readonly ExchangeOrderAgg[],
): void {
  scanRecords(
    tally,
    { cfg, ref },
    'exchangeOrder',
    orders,
    (o) => o.exOrdId,
    (o) => ({ cfg, ref, symbol: o.symbol ? ref.symbols?.get(o.symbol) : undefined }),
  );
}

/** The fill rules (E_FILL_ORPHAN, E_FEE_RATE, E_SYMBOL_RULES's grid) over fills in the period, or changed. */
export function checkFills(tally: RuleTally, cfg: EngineConfig, ref: ReferenceData, fills: readonly Fill[]): void {
  const ratesByDay = new Map<number, FeeRates>();
  const ratesOf = (at: Date): FeeRates | undefined => {
    if (!ref.fees || ref.fees.length === 0) return undefined;
    const day = Math.floor(at.getTime() / 86_400_000);
    let rates = ratesByDay.get(day);
    if (!rates) ratesByDay.set(day, (rates = ratesForDay(ref.fees, at)!));
    return rates;
  };
  scanRecords(
    tally,
    { cfg, ref },
    'fill',
    fills,
    (f) => f.execId,
    (f) => ({ cfg, ref, symbol: ref.symbols?.get(f.symbol), rates: ratesOf(f.timestamp) }),
  );
}

/**
 * Fills the SQL prefilter left out (fillPrefilter): each rule checking fills judged and passed each of them, so each
 * counts as checked exactly as checkFills would have counted it.
 */
export function addPassedFills(tally: RuleTally, cfg: EngineConfig, ref: ReferenceData, n: number): void {
  for (const rule of judging(tally, 'fill', { cfg, ref })) tally.addChecked(rule.code, n);
}

/**
 * Orders the SQL prefilter left out (orderPrefilter): each rule checking orders counts those it says it judged and
 * passed (`passed` by code), exactly as checkExchangeOrders would have counted them.
 */
export function addPassedOrders(
  tally: RuleTally,
  cfg: EngineConfig,
  ref: ReferenceData,
  passed: Readonly<Record<string, number>>,
): void {
  for (const rule of judging(tally, 'exchangeOrder', { cfg, ref })) tally.addChecked(rule.code, passed[rule.code] ?? 0);
}

export interface SnapshotPair {
  opening: BalanceSnapshot;
  closing: BalanceSnapshot;
  flows: readonly DayFlows[];
}

/** The balance rules: the roll-forward over the pairs to check (oldest first), the sanity of the latest snapshot. */
export function checkBalances(
  tally: RuleTally,
  cfg: EngineConfig,
  ref: ReferenceData,
  pairs: readonly SnapshotPair[],
  latest: BalanceSnapshot | null,
): RollFigures[][] {
  const figures = pairs.map((p) => rollForward(p.opening, p.closing, p.flows, cfg.balanceTolerance));
  const x = { cfg, ref };
  if (pairs.length > 0) scanSet(tally, x, 'snapshotPairs', (check) => check(figures, x));
  if (latest)
    scanRecords(
      tally,
      x,
      'balanceLine',
      latest.balances,
      (line) => line.currency,
      () => x,
    );
  return figures;
}

/** The payment rules: open deposits and withdrawals (E_STALE), withdrawals of the period (E_WITHDRAWAL_BENEFICIARY). */
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
  const x = { cfg, ref };
  scanRecords(
    tally,
    x,
    'openDeposit',
    input.openDeposits,
    (d) => d.depositId,
    () => x,
  );
  scanRecords(
    tally,
    x,
    'openWithdrawal',
    input.openWithdrawals,
    (w) => w.withdrawalId,
    () => x,
  );
  scanRecords(
    tally,
    x,
    'withdrawal',
    input.periodWithdrawals,
    (w) => w.withdrawalId,
    () => x,
  );
}

/**
 * The rules of days no sync covered (S_COVERAGE; no row to be unsettled): call after checkSync; a day whose row is
 * unsettled already has its break under the same key.
 */
export function checkUnsyncedDays(
  tally: RuleTally,
  now: Date,
  days: readonly string[],
  streams: readonly StreamReach[],
): void {
  scanSet(tally, null, 'unsyncedDays', (check) => check(days, now, streams));
}

/** The rules of stored coverage rows and cursor checks (S_COVERAGE) and of unresolved quarantine (S_QUARANTINE). */
export function checkSync(
  tally: RuleTally,
  coverage: readonly CoverageRow[],
  quarantined: readonly QuarantinedRecord[],
  coverageRowsTotal = coverage.length,
): void {
  scanSet(tally, null, 'coverage', (check) => check(coverage, coverageRowsTotal));
  scanSet(tally, null, 'quarantine', (check) => check(quarantined));
}
