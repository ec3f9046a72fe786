import { Decimal } from '../../src/decimal/decimal.js';
import type { Sandbox } from '../../sandbox/index.js';
import { timeKey } from '../../sandbox/time.js';

/**
 * A small, independent implementation of docs/rules.md over the sandbox's records, with exact
 * Decimal arithmetic: the oracle the consistency test compares expectedBreaks() with.
 */
export interface Found {
  code: string;
  key: string;
}

const HOUR = 3_600_000;
const unit = (n: number, scale: number): Decimal => new Decimal(n).times(new Decimal(10).pow(-scale));
const stripTag = (a: string): string => a.split(':')[0]!;

export interface Snapshot {
  fetchedAt: number;
  balances: Map<string, Decimal>;
}

export function reconcile(sb: Sandbox, opts: { feeRate: string; webhooks: boolean; snapshots?: Snapshot[] }): Found[] {
  const found: Found[] = [];
  const add = (code: string, key: string): void => {
    if (!found.some((f) => f.code === code && f.key === key)) found.push({ code, key });
  };
  const now = sb.data.clock();
  const currencies = new Map(sb.data.currencies().map((c) => [c.code, c]));
  const deposits = sb.data.deposits();
  const ours = new Set(deposits.map((d) => stripTag(d.address)));

  // ---- partner ----
  const records = new Map(sb.data.partnerOrderRecords().map((r) => [r.orderId, r]));
  // X_DEPOSIT_MISSING: a REJECTED deposit settles nothing; one deposit settles at most one order,
  // the orders of a hash claiming in order of creation (then orderId).
  const claimed = new Set<string>();
  const settled = new Map<string, (typeof deposits)[number]>();
  const paidToUs = (o: ReturnType<typeof sb.data.partnerOrders>[number]): boolean =>
    o.orderType === 'BUY' &&
    o.orderState === 'COMPLETED' &&
    !!o.transactionHash &&
    ours.has(stripTag(o.targetWalletAddress));
  const claimants = sb.data
    .partnerOrders()
    .filter(paidToUs)
    .sort((a, b) =>
      timeKey(a.createdAt) < timeKey(b.createdAt)
        ? -1
        : timeKey(a.createdAt) > timeKey(b.createdAt)
          ? 1
          : a.orderId < b.orderId
            ? -1
            : 1,
    );
  for (const o of claimants) {
    const open = deposits.filter(
      (x) => x.txHash === o.transactionHash && x.state !== 'REJECTED' && !claimed.has(x.depositId),
    );
    const d =
      open.find((x) => x.currency === o.outputCurrency && new Decimal(x.amount).eq(o.outputAmount)) ??
      open.sort((a, b) => (a.depositId < b.depositId ? -1 : 1))[0];
    if (d) {
      claimed.add(d.depositId);
      settled.set(o.orderId, d);
    }
  }
  for (const o of sb.data.partnerOrders()) {
    const input = new Decimal(o.inputAmount);
    const fees = [
      ['processingFee', o.processingFee, o.processingFeeUsd],
      ['partnerFee', o.partnerFee, o.partnerFeeUsd],
      ['networkFee', o.networkFee, o.networkFeeUsd],
    ] as const;
    if (o.amountUsd !== undefined && !input.isZero()) {
      for (const [, fee, usd] of fees) {
        if (o.inputCurrency === 'USD') {
          if (!new Decimal(usd).eq(new Decimal(fee).toDecimalPlaces(2, Decimal.ROUND_HALF_UP)))
            add('P_FEE_USD', o.orderId);
        } else {
          const expected = new Decimal(fee).times(o.amountUsd).div(input);
          if (new Decimal(usd).minus(expected).abs().gt('0.01')) add('P_FEE_USD', o.orderId);
        }
      }
    }
    if (
      o.inputCurrency === 'USD'
        ? o.amountUsd === undefined || !new Decimal(o.amountUsd).eq(input)
        : o.amountUsd === undefined
    )
      add('P_AMOUNT_USD', o.orderId);
    const inCur = currencies.get(o.inputCurrency);
    const outCur = currencies.get(o.outputCurrency);
    if (inCur) {
      const expected = input.times(opts.feeRate).toDecimalPlaces(inCur.precision, Decimal.ROUND_HALF_UP);
      if (!new Decimal(o.partnerFee).eq(expected)) add('P_PARTNER_FEE_RATE', o.orderId);
    }
    const feeSum = fees.reduce((s, [, f]) => s.plus(f), new Decimal(0));
    if (fees.some(([, f]) => new Decimal(f).isNeg()) || !feeSum.lt(input)) add('P_FEE_BOUNDS', o.orderId);
    if (inCur && outCur) {
      const bad =
        [o.inputAmount, ...fees.map(([, f]) => f)].some((v) => new Decimal(v).decimalPlaces() > inCur.precision) ||
        new Decimal(o.outputAmount).decimalPlaces() > outCur.precision;
      const range =
        o.orderType === 'BUY' &&
        inCur.type === 'FIAT' &&
        ((inCur.minBuyAmount && input.lt(inCur.minBuyAmount)) || (inCur.maxBuyAmount && input.gt(inCur.maxBuyAmount)));
      if (bad || range) add('P_PRECISION', o.orderId);
    }
    const hasHash = o.transactionHash !== undefined && o.transactionHash !== '';
    const rec = records.get(o.orderId)!;
    if ((o.orderState === 'COMPLETED') !== hasHash || timeKey(o.orderStateUpdatedAt) < timeKey(o.createdAt))
      add('P_STATE', o.orderId);
    const updatedMs = rec.timeline.find((s) => s.at === o.orderStateUpdatedAt)!.atMs;
    if ((o.orderState === 'PENDING' || o.orderState === 'WITHDRAWING') && now - updatedMs > 24 * HOUR)
      add('P_STALE', o.orderId);
    if (opts.webhooks && (o.orderState === 'COMPLETED' || o.orderState === 'FAILED') && updatedMs < now - 72 * HOUR) {
      const events = rec.timeline.filter((s) => s.atMs <= now && !rec.undeliveredStates?.includes(s.state));
      const latest = [...events].sort((a, b) => (timeKey(a.at) < timeKey(b.at) ? -1 : 1)).pop();
      if (!events.some((e) => e.state === o.orderState) || latest?.state !== o.orderState)
        add('P_WEBHOOK_GAP', o.orderId);
    }
    if (paidToUs(o)) {
      const d = settled.get(o.orderId);
      if (!d) add('X_DEPOSIT_MISSING', o.orderId);
      else if (!new Decimal(d.amount).eq(o.outputAmount) || d.currency !== o.outputCurrency)
        add('X_DEPOSIT_AMOUNT', o.orderId);
    }
  }

  // ---- exchange ----
  const symbols = new Map(sb.data.symbols().map((s) => [s.symbol, s]));
  const orders = new Map(sb.data.exchangeOrders().map((o) => [o.exOrdId, o]));
  const fills = sb.data.fills();
  const byOrder = new Map<string, (typeof fills)[number][]>();
  for (const f of fills) byOrder.set(f.exOrdId, [...(byOrder.get(f.exOrdId) ?? []), f]);
  const { makerRate, takerRate } = sb.data.fees();
  for (const f of fills) {
    const def = symbols.get(f.symbol)!;
    const order = orders.get(f.exOrdId);
    if (!order) add('E_FILL_ORPHAN', f.execId);
    else if (order.side !== f.side || order.symbol !== f.symbol) add('E_FILL_ORDER_MISMATCH', f.execId);
    const notional = new Decimal(f.qty).times(f.price);
    const tol = new Decimal(10).pow(-def.counterScale).div(2);
    // A MARKET or STOP order took liquidity: the taker rate alone applies.
    const ordType = orders.get(f.exOrdId)?.ordType as string | undefined;
    const okMaker =
      ordType !== 'MARKET' && ordType !== 'STOP' && new Decimal(f.fee).minus(notional.times(makerRate)).abs().lte(tol);
    const okTaker = new Decimal(f.fee).minus(notional.times(takerRate)).abs().lte(tol);
    if (!okMaker && !okTaker) add('E_FEE_RATE', f.execId);
    const price = new Decimal(f.price);
    if (
      (!price.isZero() && !price.mod(unit(...def.priceInc)).isZero()) ||
      !new Decimal(f.qty).mod(unit(...def.lot)).isZero()
    )
      add('E_SYMBOL_RULES', f.execId);
  }
  // Every order with a fill, and every order with cumQty > 0 even without one (its fills never arrived).
  for (const o of orders.values())
    if (!byOrder.has(o.exOrdId) && new Decimal(o.cumQty ?? '0').gt(0)) byOrder.set(o.exOrdId, []);
  for (const [exOrdId, list] of byOrder) {
    const o = orders.get(exOrdId);
    if (!o) continue;
    const def = symbols.get(o.symbol)!;
    const qty = list.reduce((s, f) => s.plus(f.qty), new Decimal(0));
    if (!qty.eq(o.cumQty ?? '0')) add('E_FILL_QTY', exOrdId);
    // The contract's leavesQty: REJECTED never executed; FILLED has nothing left open.
    if (o.ordStatus === 'REJECTED' && (!new Decimal(o.cumQty ?? '0').isZero() || !qty.isZero()))
      add('E_ORDER_STATUS', exOrdId);
    if (o.ordStatus === 'FILLED' && !new Decimal(o.leavesQty ?? '0').isZero()) add('E_ORDER_STATUS', exOrdId);
    if (o.avgPx !== undefined && !qty.isZero()) {
      const vwap = list.reduce((s, f) => s.plus(new Decimal(f.qty).times(f.price)), new Decimal(0)).div(qty);
      if (
        vwap
          .minus(o.avgPx)
          .abs()
          .gt(unit(...def.priceInc).div(2))
      )
        add('E_FILL_AVGPX', exOrdId);
    }
    const size = new Decimal(o.cumQty).plus(o.leavesQty);
    if (size.lt(unit(...def.minSize)) || (def.maxSize[0] > 0 && size.gt(unit(...def.maxSize))))
      add('E_SYMBOL_RULES', exOrdId);
  }
  for (const d of deposits) if (d.state === 'UNCONFIRMED' && now - d.timestamp > 24 * HOUR) add('E_STALE', d.depositId);
  const withdrawals = sb.data.withdrawals();
  for (const w of withdrawals)
    if (w.state === 'PENDING' && now - w.timestamp > 24 * HOUR) add('E_STALE', w.withdrawalId);
  const whitelist = new Set(sb.data.whitelist().map((e) => e.whitelistId));
  for (const w of withdrawals) if (!whitelist.has(w.beneficiary)) add('E_WITHDRAWAL_BENEFICIARY', w.withdrawalId);
  for (const b of sb.data.balances()) {
    if (
      new Decimal(b.available).gt(b.balance) ||
      new Decimal(b.balance_local).minus(new Decimal(b.balance).times(b.rate)).abs().gt('0.01')
    )
      add('E_BALANCE_SANITY', b.currency);
  }
  // E_BALANCE_ROLL over consecutive snapshot pairs, flows in (s1, s2].
  const snaps = opts.snapshots ?? [];
  for (let i = 1; i < snaps.length; i++) {
    const s1 = snaps[i - 1]!;
    const s2 = snaps[i]!;
    const flows = flowsBetween(sb, s1.fetchedAt, s2.fetchedAt);
    for (const c of new Set([...s1.balances.keys(), ...s2.balances.keys()])) {
      const expected = (s1.balances.get(c) ?? new Decimal(0)).plus(flows.get(c) ?? 0);
      if (!(s2.balances.get(c) ?? new Decimal(0)).eq(expected)) add('E_BALANCE_ROLL', c);
    }
  }
  return found;
}

/** Net balance movement per currency of every visible flow with from < t <= to (docs/apis.md "Balance flows"). */
export function flowsBetween(sb: Sandbox, from: number, to: number): Map<string, Decimal> {
  const m = new Map<string, Decimal>();
  const add = (c: string, d: Decimal): void => void m.set(c, (m.get(c) ?? new Decimal(0)).plus(d));
  const inside = (t: number): boolean => t > from && t <= to;
  for (const f of sb.data.fills()) {
    if (!inside(f.timestamp)) continue;
    const [base, counter] = f.symbol.split('-') as [string, string];
    const sign = f.side === 'BUY' ? 1 : -1;
    add(base, new Decimal(f.qty).times(sign));
    add(counter, new Decimal(f.qty).times(f.price).times(-sign).minus(f.fee));
  }
  for (const d of sb.data.deposits())
    if (inside(d.timestamp) && d.state === 'COMPLETED') add(d.currency, new Decimal(d.amount));
  for (const w of sb.data.withdrawals())
    if (inside(w.timestamp) && (w.state === 'PENDING' || w.state === 'COMPLETED'))
      add(w.currency, new Decimal(w.amount).plus(w.fee).neg());
  return m;
}

export async function snapshot(sb: Sandbox): Promise<Snapshot> {
  const fetchedAt = Date.now();
  const res = await fetch(`${sb.env.EXCHANGE_API_URL}/accounts`, {
    headers: { 'X-API-Token': sb.env.EXCHANGE_API_TOKEN! },
  });
  const text = await res.text();
  // Balances can be bare JSON numbers with more digits than a double: read them as text.
  const balances = new Map<string, Decimal>();
  for (const m of text.matchAll(/"currency":"([A-Z]+)","balance":"?([-0-9.Ee]+)"?/g))
    balances.set(m[1]!, new Decimal(m[2]!));
  return { fetchedAt, balances };
}

export const sortBreaks = (b: Array<{ code: string; key: string }>): string[] =>
  b.map((x) => `${x.code}:${x.key}`).sort();
