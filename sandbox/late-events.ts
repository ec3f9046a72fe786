/**
 * Simulator: the past changing after a client read it, as the real services do it (the
 * `lateEvents` option and `POST /_sandbox/late?event=`). Each case is planted at start on a record
 * `ageDays` old and held back; releasing it changes that record now, whatever its age.
 */
import { Decimal } from '../src/decimal/decimal.js';
import { unit } from './catalog.js';
import { usdTwin } from './generate/partner.js';
import type { DepositRecord, ExpectedBreak, PartnerOrderRecord, PartnerOrderState, StateStep } from './model.js';
import { createRng } from './prng.js';
import { DAY_MS, HOUR_MS, msText } from './time.js';
import type { OrderRow, World } from './world.js';

/**
 * The late events the sandbox can release, each once:
 * - `publish-fill`: the last fill of a FILLED order, withheld by /fills, is published now with a new
 *   (higher) execId and its old timestamp: the order's E_FILL_QTY break is resolved by it;
 * - `list-deposit`: the deposit of a paid partner order, credited at its time but missing from
 *   /deposits, is listed now: the order's X_DEPOSIT_MISSING is resolved;
 * - `complete-order`: a partner order PENDING since it was created completes now, its partner fee
 *   at 1.25% instead of the contract's rate: P_STALE resolves, P_PARTNER_FEE_RATE opens;
 * - `confirm-deposit`: a deposit UNCONFIRMED for days turns COMPLETED now (credited now): E_STALE resolves;
 * - `reject-deposit`: the UNCONFIRMED deposit that settled a paid partner order is REJECTED now:
 *   E_STALE resolves, the order's X_DEPOSIT_MISSING opens;
 * - `refund-withdrawal`: a withdrawal PENDING for days is REFUNDED now (amount + fee credited back
 *   now): E_STALE resolves.
 */
export const LATE_EVENTS = [
  'publish-fill',
  'list-deposit',
  'complete-order',
  'confirm-deposit',
  'reject-deposit',
  'refund-withdrawal',
] as const;
export type LateEvent = (typeof LATE_EVENTS)[number];

/** The partner fee rate an order that completes late is charged (the contract's is `partnerFeeRate`). */
export const LATE_PARTNER_FEE_RATE = '0.0125';

/** What a release changed: the record, and the breaks it opens and resolves (also in expectedBreaks()). */
export interface LateRelease {
  event: LateEvent;
  /** The record the event changed: an exOrdId, depositId, orderId or withdrawalId. */
  record: string;
  opened: ExpectedBreak[];
  resolved: ExpectedBreak[];
}

/** The held cases, one per event, and the releases done. */
export type LateCases = Map<LateEvent, () => LateRelease>;

/** Staleness the sandbox plants for: the config's default (staleAfterHours, 24). */
const STALE_MS = 24 * HOUR_MS;

/**
 * Plants one held case per late event on records created `ageDays` before the sandbox's `now`
 * (never on a record a planted discrepancy uses), and returns how to release each. Their
 * breaks while held are listed by expectedBreaks() (with `case` = the event, and `dueAt` when a
 * staleness is not due yet).
 */
export function plantLateEvents(w: World, ageDays: number): LateCases {
  if (!(ageDays >= 1) || ageDays > w.opts.days)
    throw new Error(`sandbox: lateEventsAgeDays must be between 1 and --days (${w.opts.days}), got ${ageDays}`);
  const rng = createRng(w.opts.seed, 'late-events');
  const cases: LateCases = new Map();
  const planted = new Set(w.expected.map((b) => b.key));
  const from = w.todayStart - ageDays * DAY_MS;
  const onDay = (t: number) => t >= from && t < from + DAY_MS;
  const expect = (b: ExpectedBreak): ExpectedBreak => {
    w.expected.push(b);
    return b;
  };
  const unexpect = (b: ExpectedBreak): ExpectedBreak => {
    const i = w.expected.indexOf(b);
    if (i >= 0) w.expected.splice(i, 1);
    return b;
  };
  const staleFrom = (t: number): Pick<ExpectedBreak, 'dueAt'> =>
    t + STALE_MS > w.now0 ? { dueAt: new Date(t + STALE_MS).toISOString() } : {};
  // Every flow up to now applied first: a held record changed later moves the balance only then.
  w.balances();
  const byTx = new Map(w.deposits.filter((d) => d.txHash !== undefined).map((d) => [d.txHash!, d]));
  const usable = (o: PartnerOrderRecord) =>
    onDay(o.createdAtMs) && !planted.has(o.orderId) && !o.undeliveredStates && !o.hashWhileNotCompleted;
  const final = (o: PartnerOrderRecord) => o.timeline[o.timeline.length - 1]!;
  const paidOrders = w.partnerOrders.filter(
    (o) =>
      usable(o) &&
      o.paidToUs &&
      final(o).state === 'COMPLETED' &&
      byTx.get(o.txHash)?.timeline.length === 1 &&
      !planted.has(byTx.get(o.txHash)!.depositId),
  );
  const take = <T>(list: T[]): T | undefined =>
    list.length ? list.splice(Math.floor(rng.next() * list.length), 1)[0] : undefined;

  // publish-fill: a FILLED order whose remaining fills still average within half an increment of
  // its avgPx, so only E_FILL_QTY tells the fill is missing.
  const order = take(
    w.exOrders.filter(
      (o) =>
        onDay(o.timestamp) &&
        o.ordStatus === 'FILLED' &&
        o.fillCount >= 2 &&
        !o.hidden &&
        !o.lateFills?.length &&
        !planted.has(o.exOrdId) &&
        !ownFillPlanted(w, o, planted) &&
        avgHolds(w, o),
    ),
  );
  if (order) {
    const index = order.fillFrom + order.fillCount - 1;
    w.fills.withheld.add(index);
    const held = expect({ code: 'E_FILL_QTY', key: order.exOrdId, case: 'publish-fill' });
    cases.set('publish-fill', () => {
      // Published as a copy with a new execId at its old time (the original stays unserved); the
      // trade moved the balance back then.
      w.fills.republish(index, w.seq.exec++);
      return { event: 'publish-fill', record: order.exOrdId, opened: [], resolved: [unexpect(held)] };
    });
  }

  // list-deposit: a paid order's deposit, credited at its time, listed late.
  const late = take(paidOrders);
  if (late) {
    const d = byTx.get(late.txHash)!;
    d.unlisted = true;
    const held = expect({ code: 'X_DEPOSIT_MISSING', key: late.orderId, case: 'list-deposit' });
    cases.set('list-deposit', () => {
      d.unlisted = false;
      return { event: 'list-deposit', record: d.depositId, opened: [], resolved: [unexpect(held)] };
    });
  }

  // reject-deposit: a paid order's deposit stuck UNCONFIRMED (it settles the order: X_DEPOSIT_MISSING
  // holds), never credited, REJECTED when released.
  const settled = take(paidOrders);
  if (settled) {
    const d = byTx.get(settled.txHash)!;
    unCredit(w, d);
    d.timeline = [{ state: 'UNCONFIRMED', atMs: d.timestamp }];
    const stale = expect({ code: 'E_STALE', key: d.depositId, case: 'reject-deposit', ...staleFrom(d.timestamp) });
    cases.set('reject-deposit', () => {
      d.timeline.push({ state: 'REJECTED', atMs: Math.max(w.clock(), d.timestamp) });
      const missing = expect({ code: 'X_DEPOSIT_MISSING', key: settled.orderId, case: 'reject-deposit' });
      return { event: 'reject-deposit', record: d.depositId, opened: [missing], resolved: [unexpect(stale)] };
    });
  }

  // complete-order: PENDING since its creation, completed when released at another partner fee.
  const pending = take(
    w.partnerOrders.filter(
      (o) =>
        usable(o) &&
        !o.paidToUs &&
        final(o).state === 'COMPLETED' &&
        new Decimal(o.inputAmount).gt(0) &&
        o.amountUsd !== undefined,
    ),
  );
  if (pending) {
    const completion = pending.timeline.slice(1);
    pending.timeline = [pending.timeline[0]!];
    const stale = expect({
      code: 'P_STALE',
      key: pending.orderId,
      case: 'complete-order',
      ...staleFrom(pending.createdAtMs),
    });
    cases.set('complete-order', () => {
      const at = Math.max(w.clock(), pending.createdAtMs + 1);
      const steps: StateStep<PartnerOrderState>[] = completion.map((s, i) => ({ ...msText(at + i), state: s.state }));
      pending.timeline.push(...steps);
      const precision = w.partnerCurrencies.find((c) => c.code === pending.inputCurrency)!.precision;
      pending.partnerFee = new Decimal(pending.inputAmount)
        .times(LATE_PARTNER_FEE_RATE)
        .toDecimalPlaces(precision, Decimal.ROUND_HALF_UP)
        .toFixed(precision);
      pending.partnerFeeUsd =
        pending.inputCurrency === 'USD'
          ? pending.partnerFee
          : usdTwin(pending.partnerFee, pending.amountUsd!, pending.inputAmount);
      const rate = expect({ code: 'P_PARTNER_FEE_RATE', key: pending.orderId, case: 'complete-order' });
      return { event: 'complete-order', record: pending.orderId, opened: [rate], resolved: [unexpect(stale)] };
    });
  }

  // confirm-deposit: UNCONFIRMED for days (never credited), COMPLETED and credited when released.
  {
    const ts = from + rng.int(HOUR_MS, 20 * HOUR_MS);
    const d: DepositRecord = {
      depositId: `D${w.seq.deposit++}`,
      amount: '0.02345600',
      currency: 'BTC',
      address: w.addresses.BTC!,
      txHash: rng.hex(64),
      timestamp: ts,
      timeline: [{ state: 'UNCONFIRMED', atMs: ts }],
    };
    w.addDeposit(d);
    const stale = expect({ code: 'E_STALE', key: d.depositId, case: 'confirm-deposit', ...staleFrom(ts) });
    cases.set('confirm-deposit', () => {
      w.balances();
      d.timeline.push({ state: 'COMPLETED', atMs: Math.max(w.clock(), ts) });
      w.add(d.currency, new Decimal(d.amount));
      return { event: 'confirm-deposit', record: d.depositId, opened: [], resolved: [unexpect(stale)] };
    });
  }

  // refund-withdrawal: PENDING for days (debited when created), REFUNDED and credited back when released.
  const wd = take(w.withdrawals.filter((x) => onDay(x.timestamp) && !planted.has(x.withdrawalId)));
  if (wd) {
    wd.timeline = [{ state: 'PENDING', atMs: wd.timestamp }];
    const stale = expect({
      code: 'E_STALE',
      key: wd.withdrawalId,
      case: 'refund-withdrawal',
      ...staleFrom(wd.timestamp),
    });
    cases.set('refund-withdrawal', () => {
      w.balances();
      wd.timeline.push({ state: 'REFUNDED', atMs: Math.max(w.clock(), wd.timestamp) });
      w.add(wd.currency, new Decimal(wd.amount).plus(wd.fee));
      return { event: 'refund-withdrawal', record: wd.withdrawalId, opened: [], resolved: [unexpect(stale)] };
    });
  }
  const missing = LATE_EVENTS.filter((e) => !cases.has(e));
  if (missing.length)
    throw new Error(
      `sandbox: no record of the day ${new Date(from).toISOString().slice(0, 10)} fits late event(s) ${missing.join(', ')}: raise --orders-per-day / --exchange-orders-per-day or pick another lateEventsAgeDays`,
    );
  return cases;
}

/** Whether one of the order's fills is a planted discrepancy's key. */
function ownFillPlanted(w: World, o: OrderRow, planted: ReadonlySet<string>): boolean {
  return w.fillsOf(o).some((f) => planted.has(f.execId));
}

/** avgPx still within half an increment of the VWAP once the order's last fill is withheld. */
function avgHolds(w: World, o: OrderRow): boolean {
  if (!o.avgPx) return false;
  const fills = w.fillsOf(o).slice(0, -1);
  let qty = new Decimal(0);
  let value = new Decimal(0);
  for (const f of fills) {
    qty = qty.plus(f.qty);
    value = value.plus(new Decimal(f.qty).times(f.price));
  }
  if (qty.isZero()) return false;
  const half = unit(w.symbol(o.symbol)!.priceInc).div(2);
  return value.div(qty).minus(o.avgPx).abs().lte(half);
}

/** A deposit generated COMPLETED was credited when the balances passed it: taken back, it becomes one that never was. */
function unCredit(w: World, d: DepositRecord): void {
  w.add(d.currency, new Decimal(d.amount).negated());
}

/** The release of one late event (each once); undefined when it was not planted or was released. */
export function releaseLateEvent(cases: LateCases, event: LateEvent): LateRelease | undefined {
  const release = cases.get(event);
  if (!release) return undefined;
  cases.delete(event);
  return release();
}

export function isLateEvent(name: string): name is LateEvent {
  return (LATE_EVENTS as readonly string[]).includes(name);
}
