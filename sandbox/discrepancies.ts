/** Simulator: plants one case of every rule code and lists the breaks it expects. */
import { Decimal } from '../src/decimal/decimal.js';
import { MAKER_RATE, TAKER_RATE, unit } from './catalog.js';
import { fillFee, refreshAggregates } from './generate/exchange.js';
import { makePartnerOrder, usdTwin } from './generate/partner.js';
import type { DepositRecord, FillRecord, PartnerOrderRecord } from './model.js';
import { createRng, uuidFrom, type Rng } from './prng.js';
import { DAY_MS, HOUR_MS } from './time.js';
import type { OrderRow, World } from './world.js';

/** Every rule code of the catalog that the sandbox plants (S_* come from faults). */
export const RULE_CODES = [
  'P_FEE_USD',
  'P_AMOUNT_USD',
  'P_PARTNER_FEE_RATE',
  'P_FEE_BOUNDS',
  'P_PRECISION',
  'P_STATE',
  'P_STALE',
  'P_WEBHOOK_GAP',
  'X_DEPOSIT_MISSING',
  'X_DEPOSIT_AMOUNT',
  'E_FILL_QTY',
  'E_ORDER_STATUS',
  'E_FILL_AVGPX',
  'E_FILL_ORPHAN',
  'E_FEE_RATE',
  'E_SYMBOL_RULES',
  'E_FILL_ORDER_MISMATCH',
  'E_BALANCE_ROLL',
  'E_BALANCE_SANITY',
  'E_STALE',
  'E_WITHDRAWAL_BENEFICIARY',
] as const;

/** Undo actions by code: fixDiscrepancy(code) corrects the planted case(s). */
export type Fixes = Map<string, Array<() => void>>;

/**
 * Plants one case of every rule code inside the generated days (never today), each on its own
 * entity and changing only what its rule looks at, so each triggers exactly its own code.
 */
export function plantDiscrepancies(w: World): Fixes {
  const rng = createRng(w.opts.seed, 'discrepancies');
  const fixes: Fixes = new Map();
  const used = new Set<string>();
  const plant = (code: string, key: string, fix: () => void, requires?: 'webhooks', realCase?: string): void => {
    w.expected.push({ code, key, ...(requires ? { requires } : {}), ...(realCase ? { case: realCase } : {}) });
    fixes.set(code, [...(fixes.get(code) ?? []), fix]);
    used.add(key);
  };
  // History before today, and at least a day old so no state is still moving.
  const settledBefore = Math.min(w.todayStart, w.now0 - 26 * HOUR_MS);
  // Random probes first (a million records make full filters costly), a full filter as fallback.
  const pickWhere = <T>(list: readonly T[], ok: (x: T) => boolean): T | undefined => {
    for (let tries = 0; tries < 4000 && list.length; tries++) {
      const x = list[Math.floor(rng.next() * list.length)]!;
      if (ok(x)) return x;
    }
    const c = list.filter(ok);
    return c.length ? pickOf(rng, c) : undefined;
  };
  const partner = (pred: (o: PartnerOrderRecord) => boolean, before = settledBefore): PartnerOrderRecord | undefined =>
    pickWhere(
      w.partnerOrders,
      (o) =>
        o.createdAtMs < before && o.timeline[o.timeline.length - 1]!.atMs < before && !used.has(o.orderId) && pred(o),
    );
  const last = (o: PartnerOrderRecord): string => o.timeline[o.timeline.length - 1]!.state;
  const fiatIn = (o: PartnerOrderRecord): boolean => ['EUR', 'GBP'].includes(o.inputCurrency);
  const byTx = new Map(w.deposits.filter((d) => d.txHash !== undefined).map((d) => [d.txHash!, d]));
  const depositOf = (o: PartnerOrderRecord): DepositRecord | undefined => byTx.get(o.txHash);

  // P_FEE_USD: one USD twin off by 0.50.
  let o = partner((x) => fiatIn(x));
  if (o) {
    const t = o;
    const before = t.processingFeeUsd;
    t.processingFeeUsd = new Decimal(before).plus('0.50').toFixed(2);
    plant('P_FEE_USD', t.orderId, () => (t.processingFeeUsd = before));
  }
  // P_AMOUNT_USD: a USD order whose amountUsd is not its inputAmount (fee twins depend on the fee only).
  o = partner((x) => x.inputCurrency === 'USD');
  if (o) {
    const t = o;
    const before = t.amountUsd;
    t.amountUsd = new Decimal(t.inputAmount).plus('1.00').toFixed(2);
    plant('P_AMOUNT_USD', t.orderId, () => (t.amountUsd = before));
  } else {
    // Without USD orders: a non-USD order missing amountUsd (P_FEE_USD skips such an order).
    o = partner((x) => x.inputCurrency !== 'USD');
    if (o) {
      const t = o;
      const before = t.amountUsd;
      t.amountUsd = undefined;
      plant('P_AMOUNT_USD', t.orderId, () => (t.amountUsd = before));
    }
  }
  // P_PARTNER_FEE_RATE: partnerFee one cent above the rate; its twin follows so P_FEE_USD holds.
  o = partner((x) => fiatIn(x));
  if (o) {
    const t = o;
    const before = { fee: t.partnerFee, usd: t.partnerFeeUsd };
    t.partnerFee = new Decimal(t.partnerFee).plus('0.01').toFixed(2);
    t.partnerFeeUsd = usdTwin(t.partnerFee, t.amountUsd!, t.inputAmount);
    plant('P_PARTNER_FEE_RATE', t.orderId, () => ((t.partnerFee = before.fee), (t.partnerFeeUsd = before.usd)));
  }
  // P_FEE_BOUNDS: a negative network fee (with a consistent negative twin).
  o = partner((x) => fiatIn(x));
  if (o) {
    const t = o;
    const before = { fee: t.networkFee, usd: t.networkFeeUsd };
    t.networkFee = '-0.50';
    t.networkFeeUsd = usdTwin(t.networkFee, t.amountUsd!, t.inputAmount);
    plant('P_FEE_BOUNDS', t.orderId, () => ((t.networkFee = before.fee), (t.networkFeeUsd = before.usd)));
  }
  // P_PRECISION: an output with one decimal more than its currency has, on an order not paid
  // to our wallets (no X_* effect).
  o = partner((x) => x.orderType === 'BUY' && !x.paidToUs);
  if (o) {
    const t = o;
    const before = t.outputAmount;
    const p = w.partnerCurrencies.find((c) => c.code === t.outputCurrency)!.precision + 1;
    t.outputAmount = new Decimal(before).plus(new Decimal(10).pow(-p)).toFixed(p);
    plant('P_PRECISION', t.orderId, () => (t.outputAmount = before));
  }
  // P_STATE: a FAILED order that carries a transaction hash.
  o = partner((x) => last(x) === 'FAILED');
  if (o) {
    const t = o;
    t.hashWhileNotCompleted = true;
    plant('P_STATE', t.orderId, () => (t.hashWhileNotCompleted = false));
  }
  // P_STALE: an order left PENDING for days (never paid to us, so no deposit is involved).
  o = partner((x) => !x.paidToUs && x.createdAtMs < w.now0 - 2 * DAY_MS);
  if (o) {
    const t = o;
    const before = t.timeline;
    t.timeline = [t.timeline[0]!];
    plant('P_STALE', t.orderId, () => (t.timeline = before));
  }
  // P_WEBHOOK_GAP: settled more than 3 days ago, its COMPLETED event never delivered.
  o = partner((x) => last(x) === 'COMPLETED' && !x.paidToUs, w.now0 - 3 * DAY_MS - 6 * HOUR_MS);
  if (o) {
    const t = o;
    t.undeliveredStates = ['COMPLETED'];
    plant('P_WEBHOOK_GAP', t.orderId, () => (t.undeliveredStates = undefined), 'webhooks');
  }
  // X_DEPOSIT_MISSING: the exchange never received the deposit of an order paid to us.
  o = partner((x) => x.paidToUs && depositOf(x) !== undefined);
  if (o) {
    const t = o;
    const d = depositOf(t)!;
    w.removeDeposit(d);
    byTx.delete(d.txHash!);
    // The deposit never moved the balance in this history; restoring it later rewrites history,
    // so the opening balance absorbs it (the served balances stay a consistent series).
    plant('X_DEPOSIT_MISSING', t.orderId, () => {
      w.balances();
      d.preCredited = true;
      w.opening.set(d.currency, w.opening.get(d.currency)!.minus(d.amount));
      w.addDeposit(d);
    });
  }
  // X_DEPOSIT_AMOUNT: the matched deposit credits 1% less than the order's output.
  o = partner((x) => x.paidToUs && depositOf(x) !== undefined);
  if (o) {
    const t = o;
    const d = depositOf(t)!;
    const before = d.amount;
    const places = Math.max(new Decimal(before).decimalPlaces(), 2);
    d.amount = new Decimal(before).times('0.99').toDecimalPlaces(places, Decimal.ROUND_DOWN).toString();
    plant('X_DEPOSIT_AMOUNT', t.orderId, () => {
      w.balances();
      w.opening.set(d.currency, w.opening.get(d.currency)!.plus(d.amount).minus(before));
      d.amount = before;
    });
  }

  // A fill belongs to one order: marking the order reserves its fills too.
  const orders = (pred: (x: OrderRow) => boolean): OrderRow | undefined =>
    pickWhere(
      w.exOrders,
      (x) => x.timestamp < settledBefore && !used.has(x.exOrdId) && !x.hidden && x.fillCount > 0 && pred(x),
    );
  const markOrder = (x: OrderRow): void => {
    used.add(x.exOrdId);
  };
  // E_FILL_QTY: cumQty one lot above the fills (leavesQty unchanged: size stays inside limits).
  let eo = orders((x) => x.ordStatus === 'FILLED');
  if (eo) {
    const t = eo;
    const before = t.cumQty;
    t.cumQty = new Decimal(before).plus(unit(w.symbol(t.symbol)!.lot)).toString();
    markOrder(t);
    plant('E_FILL_QTY', t.exOrdId, () => (t.cumQty = before));
  }
  // E_ORDER_STATUS: a FILLED order reported with one lot still open (leavesQty); its fills and cumQty
  // agree, and its size (cumQty + leavesQty) stays inside the symbol's limits.
  eo = orders((x) => {
    const s = w.symbol(x.symbol)!;
    const size = new Decimal(x.cumQty).plus(x.leavesQty).plus(unit(s.lot));
    return x.ordStatus === 'FILLED' && (s.maxSize[0] === 0 || size.lte(unit(s.maxSize)));
  });
  if (eo) {
    const t = eo;
    const before = t.leavesQty;
    t.leavesQty = new Decimal(before).plus(unit(w.symbol(t.symbol)!.lot)).toString();
    markOrder(t);
    plant('E_ORDER_STATUS', t.exOrdId, () => (t.leavesQty = before));
  }
  // E_FILL_AVGPX: avgPx three increments away from the VWAP (still on the increment).
  eo = orders(() => true);
  if (eo) {
    const t = eo;
    const before = t.avgPx;
    t.avgPx = new Decimal(before!).plus(unit(w.symbol(t.symbol)!.priceInc).times(3)).toString();
    markOrder(t);
    plant('E_FILL_AVGPX', t.exOrdId, () => (t.avgPx = before));
  }
  // E_FILL_ORPHAN: an order nobody can find (404, absent from lists); its fill stays, balance-consistent.
  eo = orders((x) => x.fillCount === 1);
  if (eo) {
    const t = eo;
    t.hidden = true;
    markOrder(t);
    plant('E_FILL_ORPHAN', w.fillsOf(t)[0]!.execId, () => (t.hidden = false));
  }
  // E_FILL_ORDER_MISMATCH: an order reported on the other side than its one fill. The fill moves the balances as it
  // is, and the order's quantities and prices stay, so nothing else fires.
  eo = orders((x) => x.fillCount === 1 && !x.lateFills?.length);
  if (eo) {
    const t = eo;
    const before = t.side;
    t.side = before === 'BUY' ? 'SELL' : 'BUY';
    markOrder(t);
    plant('E_FILL_ORDER_MISMATCH', w.fillsOf(t)[0]!.execId, () => (t.side = before));
  }
  const fillOf = (): { order: OrderRow; fill: FillRecord; index: number } | undefined => {
    const x = orders(() => true);
    if (!x) return undefined;
    markOrder(x);
    return { order: x, fill: w.fills.at(x.fillFrom), index: x.fillFrom };
  };
  // E_FEE_RATE: a fee 100 units of the counter scale above the taker fee.
  const fr = fillOf();
  if (fr) {
    const f = fr.fill;
    const def = w.symbol(f.symbol)!;
    const wrong = new Decimal(fillFee(f.qty, f.price, TAKER_RATE, def.counterScale))
      .plus(new Decimal(10).pow(-def.counterScale).times(100))
      .toString();
    w.fills.setOverride(fr.index, { fee: wrong });
    plant('E_FEE_RATE', f.execId, () => {
      w.balances();
      // History changes: the opening balance absorbs the difference so served balances stay.
      w.opening.set(def.counter, w.opening.get(def.counter)!.plus(new Decimal(f.fee).minus(wrong)));
      w.fills.clearOverride(fr.index);
    });
  }
  // E_SYMBOL_RULES: a fill half an increment off the grid; fee and avgPx follow so nothing else fires.
  const sr = fillOf();
  if (sr) {
    const f = sr.fill;
    const def = w.symbol(f.symbol)!;
    const inc = unit(def.priceInc);
    const price = new Decimal(f.price).plus(inc.div(2)).toString();
    const fee = fillFee(f.qty, price, TAKER_RATE, def.counterScale);
    w.fills.setOverride(sr.index, { price, fee });
    refreshAggregates(w, sr.order);
    plant('E_SYMBOL_RULES', f.execId, () => {
      w.balances();
      const sign = f.side === 'BUY' ? -1 : 1;
      const delta = new Decimal(f.price).minus(price).times(f.qty).times(sign).minus(new Decimal(f.fee).minus(fee));
      w.opening.set(def.counter, w.opening.get(def.counter)!.minus(delta));
      w.fills.clearOverride(sr.index);
      refreshAggregates(w, sr.order);
    });
  }
  // E_STALE: a deposit UNCONFIRMED for two days (UNCONFIRMED never moves the balance).
  {
    const ts = settledBefore - DAY_MS - rng.int(0, HOUR_MS);
    const currency = 'BTC';
    const d: DepositRecord = {
      depositId: `D${w.seq.deposit++}`,
      amount: '0.01500000',
      currency,
      address: w.addresses[currency]!,
      txHash: rng.hex(64),
      timestamp: ts,
      timeline: [{ state: 'UNCONFIRMED', atMs: ts }],
    };
    w.addDeposit(d);
    plant('E_STALE', d.depositId, () => d.timeline.push({ state: 'REJECTED', atMs: ts + 1 }));
  }
  // E_WITHDRAWAL_BENEFICIARY: a withdrawal to an id that is not on the whitelist.
  {
    const c = w.withdrawals.filter((x) => x.timestamp < settledBefore);
    if (c.length) {
      const wd = pickOf(rng, c);
      const before = wd.beneficiary;
      wd.beneficiary = uuidFrom(rng);
      plant('E_WITHDRAWAL_BENEFICIARY', wd.withdrawalId, () => (wd.beneficiary = before));
    }
  }
  // E_BALANCE_ROLL: a USDC deposit credited between the first and second /accounts snapshot,
  // invisible in /deposits until fixed (see Sandbox.onAccounts).
  w.hiddenRoll = { currency: 'USDC', amount: '1234.567890' };
  plant('E_BALANCE_ROLL', 'USDC', () => {
    const d = w.hiddenRoll?.applied;
    if (d) d.hidden = false;
    if (w.hiddenRoll) w.hiddenRoll.fixed = true;
  });
  // E_BALANCE_SANITY: balance_local of GBP five cents above balance x rate.
  w.localOffset.set('GBP', new Decimal('0.05'));
  plant('E_BALANCE_SANITY', 'GBP', () => w.localOffset.delete('GBP'));
  plantRealWorldCases(w, { rng, used, plant, partner, depositOf, orders, markOrder, settledBefore, pickWhere });
  return fixes;
}

interface PlantKit {
  rng: Rng;
  used: Set<string>;
  plant: (code: string, key: string, fix: () => void, requires?: 'webhooks', realCase?: string) => void;
  partner: (pred: (o: PartnerOrderRecord) => boolean) => PartnerOrderRecord | undefined;
  depositOf: (o: PartnerOrderRecord) => DepositRecord | undefined;
  orders: (pred: (x: OrderRow) => boolean) => OrderRow | undefined;
  markOrder: (x: OrderRow) => void;
  settledBefore: number;
  pickWhere: <T>(list: readonly T[], ok: (x: T) => boolean) => T | undefined;
}

/**
 * Cases seen on real accounts that the first catalog let through (issue 14), each a second
 * planting of its code, labelled with `case`: a MARKET fill charged the maker rate, a FILLED
 * order whose fills never arrive, a REJECTED deposit carrying a paid order's hash, and two
 * partner orders sharing one deposit's hash.
 */
function plantRealWorldCases(w: World, k: PlantKit): void {
  // E_FEE_RATE: a MARKET order took liquidity, yet its first fill is charged the maker rate
  // (within tolerance of the maker expectation, so only the order type tells it is wrong).
  const halfUnit = (scale: number): Decimal => new Decimal(10).pow(-scale).div(2);
  const makerFeeOf = (x: OrderRow): { fee: string; index: number } | undefined => {
    const f = w.fills.at(x.fillFrom);
    const def = w.symbol(f.symbol)!;
    const fee = fillFee(f.qty, f.price, MAKER_RATE, def.counterScale);
    return new Decimal(fee)
      .minus(fillFee(f.qty, f.price, TAKER_RATE, def.counterScale))
      .abs()
      .gt(halfUnit(def.counterScale))
      ? { fee, index: x.fillFrom }
      : undefined;
  };
  const mk = k.orders((x) => x.ordType === 'MARKET' && makerFeeOf(x) !== undefined);
  if (mk) {
    const { fee, index } = makerFeeOf(mk)!;
    const f = w.fills.at(index);
    const def = w.symbol(f.symbol)!;
    w.fills.setOverride(index, { fee });
    k.markOrder(mk);
    k.plant(
      'E_FEE_RATE',
      f.execId,
      () => {
        w.balances();
        w.opening.set(def.counter, w.opening.get(def.counter)!.plus(new Decimal(f.fee).minus(fee)));
        w.fills.clearOverride(index);
      },
      undefined,
      'market-fill-at-maker-rate',
    );
  }
  // E_FILL_QTY: a LIMIT order reported FILLED (cumQty = its size) whose fills never arrive: no
  // fill of it is ever listed. The balance never moved for it in this history, so it stays consistent.
  const nf = k.pickWhere(
    w.exOrders,
    (x) =>
      x.timestamp < k.settledBefore &&
      !k.used.has(x.exOrdId) &&
      !x.hidden &&
      x.ordType === 'LIMIT' &&
      x.ordStatus === 'CANCELED' &&
      x.fillCount === 0 &&
      !x.lateFills?.length &&
      new Decimal(x.leavesQty).gt(0),
  );
  if (nf) {
    const before = { ordStatus: nf.ordStatus, cumQty: nf.cumQty, leavesQty: nf.leavesQty, avgPx: nf.avgPx };
    nf.ordStatus = 'FILLED';
    nf.cumQty = nf.leavesQty;
    nf.leavesQty = '0';
    if (nf.price && nf.price !== '0.0') nf.avgPx = nf.price;
    k.markOrder(nf);
    k.plant('E_FILL_QTY', nf.exOrdId, () => Object.assign(nf, before), undefined, 'filled-order-without-fills');
  }
  // X_DEPOSIT_MISSING: the deposit carrying a paid order's hash to our address was REJECTED (never credited).
  const rj = k.partner((x) => x.paidToUs && k.depositOf(x) !== undefined);
  if (rj) {
    const d = k.depositOf(rj)!;
    const before = d.timeline;
    d.timeline = [{ state: 'REJECTED', atMs: d.timestamp }];
    k.plant(
      'X_DEPOSIT_MISSING',
      rj.orderId,
      () => {
        // History now credits it: the opening balance absorbs the credit so served balances stay.
        w.balances();
        w.opening.set(d.currency, w.opening.get(d.currency)!.minus(d.amount));
        d.timeline = before;
      },
      undefined,
      'rejected-deposit-on-order-hash',
    );
  }
  // X_DEPOSIT_MISSING: a later order reports the hash of an earlier one; the one deposit settles
  // the earlier order (docs/rules.md), the later is missing its deposit (its own stays unclaimed).
  const a = k.partner((x) => x.paidToUs && k.depositOf(x) !== undefined);
  const b = a && k.partner((x) => x.paidToUs && k.depositOf(x) !== undefined && x.createdAtMs !== a.createdAtMs);
  if (a && b) {
    const [first, second] = a.createdAtMs < b.createdAtMs ? [a, b] : [b, a];
    k.used.add(first.orderId);
    const before = second.txHash;
    second.txHash = first.txHash;
    k.plant('X_DEPOSIT_MISSING', second.orderId, () => (second.txHash = before), undefined, 'shared-deposit-hash');
  }
}

/**
 * Option webhookGapDueInMs: a COMPLETED order, created a day before its completion, whose
 * completion is `dueInMs` after now - 3 days and whose COMPLETED webhook is never delivered. It
 * becomes a P_WEBHOOK_GAP break in the first reconcile after its retry window has passed, in
 * whichever period that runs, though the order belongs to a day three or four days back.
 */
export function plantDueWebhookGap(w: World, dueInMs: number): void {
  const rng = createRng(w.opts.seed, 'webhook-gap-due');
  const completedMs = w.now0 - 3 * DAY_MS + dueInMs;
  const createdMs = completedMs - DAY_MS;
  for (let attempt = 0; attempt < 200; attempt++) {
    const { order } = makePartnerOrder(w, rng, createdMs, {
      recentFrom: w.now0,
      compressEnd: createdMs + 3,
      external: true,
    });
    if (order.timeline[order.timeline.length - 1]!.state !== 'COMPLETED') continue;
    // Its state stays PENDING for the day, then changes once, at the planted time.
    order.timeline = [
      order.timeline[0]!,
      { state: 'COMPLETED', at: new Date(completedMs).toISOString(), atMs: completedMs },
    ];
    order.undeliveredStates = ['COMPLETED'];
    w.addPartnerOrder(order);
    w.expected.push({
      code: 'P_WEBHOOK_GAP',
      key: order.orderId,
      requires: 'webhooks',
      dueAt: new Date(completedMs + 3 * DAY_MS).toISOString(),
    });
    return;
  }
  throw new Error('sandbox: could not plant a due webhook gap');
}

function pickOf<T>(rng: Rng, list: readonly T[]): T {
  return list[Math.floor(rng.next() * list.length)]!;
}

/**
 * Called on every GET /accounts. The planted E_BALANCE_ROLL deposit is credited on the second
 * snapshot, timestamped halfway between the two requests (so it falls strictly inside the
 * pair whichever end of its request a client stamps as fetched_at) and hidden from /deposits.
 */
export function onAccounts(w: World): void {
  // A live sandbox's clock is the clients' calendar (elapse() may have moved it ahead of the wall
  // clock); a frozen one stands still, and its clients stamp snapshots by the wall clock.
  const now = w.opts.live ? w.clock() : Date.now();
  const roll = w.hiddenRoll;
  if (roll && !roll.applied && !roll.fixed) {
    if (roll.firstAt === undefined) roll.firstAt = now;
    else {
      const ts = Math.floor((roll.firstAt + now) / 2);
      w.balances();
      const d: DepositRecord = {
        depositId: `D${w.seq.deposit++}`,
        amount: roll.amount,
        currency: roll.currency,
        address: w.addresses[roll.currency] ?? 'unknown',
        txHash: `0x${'7e'.repeat(32)}`,
        timestamp: ts,
        timeline: [{ state: 'COMPLETED', atMs: ts }],
        hidden: true,
        preCredited: true,
      };
      w.add(roll.currency, new Decimal(roll.amount));
      roll.applied = d;
      w.addDeposit(d);
    }
  }
  w.lastAccountsAt = Date.now();
}
