/** Simulator: the generated world (its records, indexes and clock) and helpers to read it at a point in time. */
import { Decimal } from '../src/decimal/decimal.js';
import {
  OPENING_BALANCES,
  WITHDRAWAL_FEES,
  USD_RATES,
  PARTNER_CURRENCIES,
  SYMBOLS,
  type SymbolDef,
  type PartnerCurrencyDef,
} from './catalog.js';
import type {
  BalanceView,
  DepositRecord,
  DepositView,
  ExchangeOrderRecord,
  ExpectedBreak,
  FillRecord,
  PartnerOrderRecord,
  PartnerOrderView,
  PartnerOrderState,
  StateStep,
  WhitelistEntry,
  WithdrawalRecord,
  WithdrawalView,
} from './model.js';
import type { SandboxOptions } from './options.js';
import { FillStore } from './fills.js';
import { parseFx, pow10, rescale, toPlain } from './fixed.js';
import { DAY_MS, utcDayStart } from './time.js';

/** Internal bookkeeping on an exchange order: where its fills sit in the fills array. */
export interface OrderRow extends ExchangeOrderRecord {
  fillFrom: number;
  fillCount: number;
  /** Fills appended long after the order's own (a resting order filled later): their indices. */
  lateFills?: number[];
}

/** Whether the order has any fill (what /trades lists). */
export function hasFills(o: OrderRow): boolean {
  return o.fillCount > 0 || (o.lateFills?.length ?? 0) > 0;
}

/**
 * The simulated account: every generated record, the clock, and the running balances.
 * Records are appended in time order (ids increase with time), so lists are slices of
 * sorted arrays and balances roll forward with one pointer per flow kind.
 */
export class World {
  readonly now0: number;
  readonly wallStart = Date.now();
  readonly historyStart: number;
  readonly todayStart: number;
  /** Clock when not live, and the floor of the clock when live (advance moves it). */
  frozenClock: number;
  /** Activity exists up to this instant (inclusive). */
  generatedUntil: number;

  readonly symbols: SymbolDef[];
  readonly partnerCurrencies: PartnerCurrencyDef[];
  readonly addresses: Record<string, string> = {};
  whitelist: WhitelistEntry[] = [];

  readonly partnerOrders: PartnerOrderRecord[] = [];
  readonly partnerById = new Map<string, PartnerOrderRecord>();
  readonly exOrders: OrderRow[] = [];
  readonly exOrderById = new Map<string, OrderRow>();
  readonly fills: FillStore;
  readonly deposits: DepositRecord[] = [];
  readonly depositById = new Map<string, DepositRecord>();
  /** Deposits of partner orders whose time has not come yet (order completes later). */
  scheduled: DepositRecord[] = [];
  readonly withdrawals: WithdrawalRecord[] = [];
  readonly withdrawalById = new Map<string, WithdrawalRecord>();

  readonly seq = {
    exOrd: 11_234_560_000_000,
    exec: 52_880_000_000_000,
    trade: 7_700_000_000,
    deposit: 300_000,
    withdrawal: 90_000,
  };

  /** Opening balances; a fix that rewrites history adjusts these so the totals stay true. */
  readonly opening = new Map<string, Decimal>();
  /** Running balances in units of 10^-BAL_SCALE (BigInt: a million fills in about a second). */
  private readonly running = new Map<string, bigint>();
  private ptr = { fill: 0, deposit: 0, withdrawal: 0 };

  readonly expected: ExpectedBreak[] = [];
  /** Planted E_BALANCE_SANITY: added to balance_local of a currency. */
  readonly localOffset = new Map<string, Decimal>();
  /** Planted E_BALANCE_ROLL: a deposit credited between the first and second /accounts snapshot. */
  hiddenRoll?: { currency: string; amount: string; applied?: DepositRecord; firstAt?: number; fixed?: boolean };
  lastAccountsAt = 0;
  /** Option stateChanges: the deposit and withdrawal whose states change on the second /accounts (see state-changes.ts). */
  stateChanges?: { deposit: DepositRecord; withdrawal: WithdrawalRecord; accountsSeen: number };

  constructor(readonly opts: SandboxOptions) {
    this.now0 = (opts.now ?? new Date()).getTime();
    this.todayStart = utcDayStart(this.now0);
    this.historyStart = this.todayStart - opts.days * DAY_MS;
    this.frozenClock = this.now0;
    this.generatedUntil = this.historyStart - 1;
    this.symbols = SYMBOLS.filter((s) => opts.symbols.includes(s.symbol));
    this.fills = new FillStore(this.symbols);
    const codes = new Set([...opts.fiatCurrencies, ...opts.cryptoCurrencies]);
    this.partnerCurrencies = PARTNER_CURRENCIES.filter((c) => codes.has(c.code));
    for (const [c, v] of Object.entries(OPENING_BALANCES)) this.opening.set(c, new Decimal(v));
  }

  /** How far elapse() has moved the clock ahead of `now` plus the wall time since start. */
  private shiftMs = 0;

  /** The sandbox's current time: frozen at `now` unless live (then it follows the wall clock). */
  clock(): number {
    if (!this.opts.live) return this.frozenClock;
    return Math.max(this.frozenClock, this.now0 + this.shiftMs + (Date.now() - this.wallStart));
  }

  /** Moves the clock `ms` ahead (elapse): frozen or live, the time jumps and then runs on as before. */
  shiftClock(ms: number): void {
    this.frozenClock = this.clock() + ms;
    this.shiftMs += ms;
  }

  // ---- partner orders --------------------------------------------------------------------

  addPartnerOrder(o: PartnerOrderRecord): void {
    const list = this.partnerOrders;
    // Orders arrive in time order; an order inserted by a test "in the past" is placed by key.
    if (list.length === 0 || list[list.length - 1]!.createdAtMs <= o.createdAtMs) list.push(o);
    else
      list.splice(
        upperBound(list, o.createdAtMs, (x) => x.createdAtMs),
        0,
        o,
      );
    this.partnerById.set(o.orderId, o);
  }

  partnerStep(o: PartnerOrderRecord, at: number): StateStep<PartnerOrderState> {
    let step = o.timeline[0]!;
    for (const s of o.timeline) if (s.atMs <= at) step = s;
    return step;
  }

  partnerView(o: PartnerOrderRecord, at = this.clock()): PartnerOrderView {
    const step = this.partnerStep(o, at);
    return partnerViewAt(o, step);
  }

  // ---- exchange ------------------------------------------------------------------------

  symbol(code: string): SymbolDef | undefined {
    return this.symbols.find((s) => s.symbol === code);
  }

  fillsOf(o: OrderRow): FillRecord[] {
    const out: FillRecord[] = [];
    for (let i = o.fillFrom; i < o.fillFrom + o.fillCount; i++) out.push(this.fills.at(i));
    for (const i of o.lateFills ?? []) out.push(this.fills.at(i));
    return out;
  }

  addDeposit(d: DepositRecord): void {
    const list = this.deposits;
    if (list.length === 0 || list[list.length - 1]!.timestamp <= d.timestamp) list.push(d);
    else {
      const at = upperBound(list, d.timestamp, (x) => x.timestamp);
      list.splice(at, 0, d);
      // A deposit inserted before the balance pointer is already "in the past": credit it now
      // unless it is flagged as already counted.
      if (at < this.ptr.deposit) {
        this.ptr.deposit++;
        if (!d.hidden && !d.preCredited) this.creditDeposit(d);
      }
    }
    this.depositById.set(d.depositId, d);
  }

  removeDeposit(d: DepositRecord): void {
    const at = this.deposits.indexOf(d);
    if (at < 0) return;
    this.deposits.splice(at, 1);
    if (at < this.ptr.deposit) this.ptr.deposit--;
    this.depositById.delete(d.depositId);
  }

  addWithdrawal(w: WithdrawalRecord): void {
    this.withdrawals.push(w);
    this.withdrawalById.set(w.withdrawalId, w);
  }

  depositState(d: DepositRecord, at = this.clock()): DepositView['state'] {
    let s = d.timeline[0]!.state;
    for (const step of d.timeline) if (step.atMs <= at) s = step.state;
    return s;
  }

  depositView(d: DepositRecord, at = this.clock()): DepositView {
    const v: DepositView = {
      depositId: d.depositId,
      amount: d.amount,
      currency: d.currency,
      address: d.address,
      state: this.depositState(d, at),
      timestamp: d.timestamp,
    };
    if (d.txHash !== undefined) v.txHash = d.txHash;
    return v;
  }

  withdrawalView(w: WithdrawalRecord, at = this.clock()): WithdrawalView {
    let s = w.timeline[0]!.state;
    for (const step of w.timeline) if (step.atMs <= at) s = step.state;
    return {
      withdrawalId: w.withdrawalId,
      amount: w.amount,
      fee: w.fee,
      currency: w.currency,
      beneficiary: w.beneficiary,
      state: s,
      timestamp: w.timestamp,
    };
  }

  // ---- balances ------------------------------------------------------------------------

  /**
   * Balances at the current clock: opening + every flow up to now (docs/apis.md "Balance flows").
   * Generated deposit and withdrawal states never change whether they move the balance
   * (UNCONFIRMED only ever becomes REJECTED, PENDING only COMPLETED), so a flow counts from its
   * timestamp; the stateChanges option's records move the balance again when their state
   * changes (state-changes.ts, through add()).
   */
  balances(): Map<string, Decimal> {
    this.applyFlows();
    const out = new Map<string, Decimal>();
    for (const [c, v] of this.running) out.set(c, new Decimal(toPlain({ v, s: BAL_SCALE })));
    return out;
  }

  private applyFlows(): void {
    if (this.running.size === 0) for (const [c, v] of this.opening) this.running.set(c, toScale(v.toString()));
    const clock = this.clock();
    const f = this.fills;
    // A fill published late moved the balance at its time already, as the fill it copies.
    for (; this.ptr.fill < f.length && f.timestamp[this.ptr.fill]! <= clock; this.ptr.fill++)
      if (!f.republished.has(this.ptr.fill)) this.applyFill(this.ptr.fill);
    for (
      ;
      this.ptr.deposit < this.deposits.length && this.deposits[this.ptr.deposit]!.timestamp <= clock;
      this.ptr.deposit++
    ) {
      const d = this.deposits[this.ptr.deposit]!;
      if (!d.hidden && !d.preCredited) this.creditDeposit(d);
    }
    for (
      ;
      this.ptr.withdrawal < this.withdrawals.length && this.withdrawals[this.ptr.withdrawal]!.timestamp <= clock;
      this.ptr.withdrawal++
    ) {
      const w = this.withdrawals[this.ptr.withdrawal]!;
      if (debits(w)) this.addScaled(w.currency, -(toScale(w.amount) + toScale(w.fee)));
    }
  }

  /** Applies a balance change that is not (yet) visible as a flow record. */
  add(currency: string, delta: Decimal): void {
    this.applyFlowsInit();
    this.addScaled(currency, toScale(delta.toString()));
  }

  private applyFlowsInit(): void {
    if (this.running.size === 0) for (const [c, v] of this.opening) this.running.set(c, toScale(v.toString()));
  }

  private addScaled(currency: string, delta: bigint): void {
    this.running.set(currency, (this.running.get(currency) ?? 0n) + delta);
  }

  private creditDeposit(d: DepositRecord): void {
    if (d.timeline.some((s) => s.state === 'COMPLETED')) this.addScaled(d.currency, toScale(d.amount));
  }

  /** A fill's flows in integers: lots and increments scaled to BAL_SCALE (overrides parsed). */
  private applyFill(i: number): void {
    const f = this.fills;
    const def = f.def(i);
    const sign = f.side[i] === 0 ? 1n : -1n;
    const qty = BigInt(f.lots[i]!) * BigInt(def.lot[0]) * pow10(BAL_SCALE - def.lot[1]);
    const o = f.overrides.get(i);
    const price =
      o?.price !== undefined
        ? parseFx(o.price)
        : { v: BigInt(f.ticks[i]!) * BigInt(def.priceInc[0]), s: def.priceInc[1] };
    const notional = BigInt(f.lots[i]!) * BigInt(def.lot[0]) * price.v * pow10(BAL_SCALE - def.lot[1] - price.s);
    const fee = o?.fee !== undefined ? toScale(o.fee) : BigInt(f.feeUnits[i]!) * pow10(BAL_SCALE - def.counterScale);
    this.addScaled(def.base, sign * qty);
    this.addScaled(def.counter, -sign * notional - fee);
  }

  balanceViews(): BalanceView[] {
    const out: BalanceView[] = [];
    for (const [currency, balance] of this.balances()) {
      const rate = new Decimal(USD_RATES[currency] ?? '1');
      const local = balance.times(rate).toDecimalPlaces(2, Decimal.ROUND_HALF_UP);
      const offset = this.localOffset.get(currency) ?? new Decimal(0);
      out.push({
        currency,
        balance: balance.toString(),
        available: balance.toString(),
        balance_local: local.plus(offset).toFixed(2),
        available_local: local.toFixed(2),
        rate: rate.toString(),
      });
    }
    return out;
  }

  withdrawalFee(currency: string): string {
    return WITHDRAWAL_FEES[currency] ?? '0';
  }

  /** Every currency the account can hold (partner currencies and symbol legs included). */
  currencies(): string[] {
    return [...this.opening.keys()];
  }
}

/** Balances carry every digit of qty x price (up to 8 + 7 decimals) and 18-decimal ETH deposits. */
const BAL_SCALE = 30;
function toScale(text: string): bigint {
  return rescale(parseFx(text), BAL_SCALE);
}

export function debits(w: WithdrawalRecord): boolean {
  return w.timeline.every((s) => s.state === 'PENDING' || s.state === 'COMPLETED');
}

export function partnerViewAt(o: PartnerOrderRecord, step: StateStep<PartnerOrderState>): PartnerOrderView {
  const v: PartnerOrderView = {
    orderId: o.orderId,
    externalReference: o.externalReference,
    orderType: o.orderType,
    createdAt: o.createdAt,
    orderState: step.state,
    orderStateUpdatedAt: step.at,
    paymentMethod: o.paymentMethod,
    inputCurrency: o.inputCurrency,
    inputAmount: o.inputAmount,
    outputCurrency: o.outputCurrency,
    outputAmount: o.outputAmount,
    processingFee: o.processingFee,
    processingFeeUsd: o.processingFeeUsd,
    partnerFee: o.partnerFee,
    partnerFeeUsd: o.partnerFeeUsd,
    networkFee: o.networkFee,
    networkFeeUsd: o.networkFeeUsd,
    userId: o.userId,
    targetWalletAddress: o.targetWalletAddress,
  };
  if (o.subPartnerId !== undefined) v.subPartnerId = o.subPartnerId;
  if (o.amountUsd !== undefined) v.amountUsd = o.amountUsd;
  if (step.state === 'COMPLETED' || o.hashWhileNotCompleted) v.transactionHash = o.txHash;
  return v;
}

/** First index whose key is greater than `key` in a list sorted by key. */
export function upperBound<T, K>(list: readonly T[], key: K, keyOf: (x: T) => K): number {
  let lo = 0;
  let hi = list.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (keyOf(list[mid]!) <= key) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/** First index whose key is >= `key`. */
export function lowerBound<T, K>(list: readonly T[], key: K, keyOf: (x: T) => K): number {
  let lo = 0;
  let hi = list.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (keyOf(list[mid]!) < key) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}
