/** Simulator: generates exchange orders, fills and fees. */
import { Decimal } from '../../src/decimal/decimal.js';
import { MAKER_RATE, TAKER_RATE, USD_RATES, midPrice, unit, type SymbolDef } from '../catalog.js';
import type { FillRecord, OrdStatus } from '../model.js';
import { div, parseFx, round, toPlain, type Fx } from '../fixed.js';
import { flat, type Rng } from '../prng.js';
import type { OrderRow, World } from '../world.js';

const H = Decimal.ROUND_HALF_UP;

/** Fill fee: notional x rate rounded half-up to the counter scale (within half a unit of it). */
export function fillFee(qty: string, price: string, rate: string, counterScale: number): string {
  return new Decimal(qty).times(price).times(rate).toDecimalPlaces(counterScale, H).toString();
}

/** avgPx as the exchange reports it: the VWAP rounded to the price increment (within half of it). */
export function avgPxOf(fills: readonly FillRecord[], inc: Decimal): { cumQty: Decimal; avgPx?: Decimal } {
  let qty = new Decimal(0);
  let value = new Decimal(0);
  for (const f of fills) {
    qty = qty.plus(f.qty);
    value = value.plus(new Decimal(f.qty).times(f.price));
  }
  if (qty.isZero()) return { cumQty: qty };
  return { cumQty: qty, avgPx: value.div(qty).toNearest(inc, H) };
}

/** Recomputes cumQty / avgPx / last fill fields from the order's fills (after a fill changed). */
export function refreshAggregates(w: World, o: OrderRow): void {
  const def = w.symbol(o.symbol)!;
  const fills = w.fillsOf(o);
  const orderQty = new Decimal(o.cumQty).plus(o.leavesQty);
  const { cumQty, avgPx } = avgPxOf(fills, unit(def.priceInc));
  o.cumQty = cumQty.toString();
  o.leavesQty = orderQty.minus(cumQty).toString();
  if (avgPx) o.avgPx = avgPx.toString();
  const last = fills[fills.length - 1];
  if (last) {
    o.lastShares = last.qty;
    o.lastPx = last.price;
  }
}

export interface ExchangeGenContext {
  /** Orders at or after this instant may still be live (OPEN / PART_FILLED). */
  liveFrom: number;
}

interface SymbolInts {
  lotValue: number;
  minLots: number;
  maxLots: number;
  midTicks: number;
  rates: [Fx, Fx];
}

const cache = new WeakMap<SymbolDef, SymbolInts>();
function ints(def: SymbolDef): SymbolInts {
  let c = cache.get(def);
  if (!c) {
    const lot = unit(def.lot);
    c = {
      lotValue: lot.toNumber(),
      minLots: Math.max(1, unit(def.minSize).div(lot).ceil().toNumber()),
      maxLots: def.maxSize[0] > 0 ? unit(def.maxSize).div(lot).floor().toNumber() : Number.MAX_SAFE_INTEGER,
      midTicks: midPrice(def).div(unit(def.priceInc)).toNumber(),
      rates: [parseFx(MAKER_RATE), parseFx(TAKER_RATE)],
    };
    cache.set(def, c);
  }
  return c;
}

/** Fee in units of the counter scale: lots x ticks x rate, rounded half-up (integers only). */
export function feeUnits(def: SymbolDef, lots: number, ticks: number, rate: Fx): number {
  const shift = def.lot[1] + def.priceInc[1] + rate.s - def.counterScale;
  const product = lots * def.lot[0] * ticks * def.priceInc[0] * Number(rate.v);
  if (shift >= 0 && shift <= 15 && Number.isSafeInteger(product)) {
    // Exact integer arithmetic in doubles while the product stays below 2^53.
    const p = 10 ** shift;
    let q = Math.floor(product / p);
    let r = product - q * p;
    if (r < 0) {
      q -= 1;
      r += p;
    } else if (r >= p) {
      q += 1;
      r -= p;
    }
    return 2 * r >= p ? q + 1 : q;
  }
  const raw: Fx = {
    v: BigInt(lots) * BigInt(def.lot[0]) * BigInt(ticks) * BigInt(def.priceInc[0]) * rate.v,
    s: def.lot[1] + def.priceInc[1] + rate.s,
  };
  return Number(round(raw, def.counterScale).v);
}

/**
 * One exchange order and its fills, all in the same millisecond (so an order is never visible
 * without its fills). Prices sit on the increment, quantities on the lot, order sizes inside
 * the symbol limits, fees at the taker rate (MARKET) or either rate (LIMIT). Integer arithmetic throughout: quantities
 * in lots, prices in increments.
 */
export function makeExchangeOrder(w: World, rng: Rng, ts: number, ctx: ExchangeGenContext): void {
  const si = Math.floor(rng.next() * w.symbols.length);
  const def = w.symbols[si]!;
  const k = ints(def);
  const side = rng.chance(0.5) ? 'BUY' : 'SELL';
  const ordType = rng.chance(0.7) ? 'LIMIT' : 'MARKET';
  // Notional between ~20 and ~20,000 USD, log-uniform: small BTC quantities get exponent notation.
  const usd = 20 * Math.pow(10, rng.next() * 3);
  let lots = Math.max(k.minLots, Math.min(k.maxLots, Math.floor(usd / Number(USD_RATES[def.base]) / k.lotValue)));
  const p0 = Math.max(4, Math.round(k.midTicks * (1 + (rng.next() - 0.5) * 0.01)));

  let status: OrdStatus;
  const r = rng.next();
  if (ts >= ctx.liveFrom && rng.chance(0.1)) status = rng.chance(0.5) ? 'OPEN' : 'PART_FILLED';
  else if (r < 0.75) status = 'FILLED';
  else if (r < 0.87) status = 'CANCELED';
  else if (r < 0.92) status = 'REJECTED';
  else status = 'EXPIRED';
  if (ordType === 'MARKET' && (status === 'OPEN' || status === 'EXPIRED' || status === 'PART_FILLED'))
    status = 'FILLED';

  let filledLots = 0;
  if (status === 'FILLED') filledLots = lots;
  else if ((status === 'PART_FILLED' || (status === 'CANCELED' && rng.chance(0.5))) && lots >= 2)
    filledLots = rng.int(1, lots - 1);
  else if (status === 'PART_FILLED') status = 'OPEN';
  if (lots < k.minLots) lots = k.minLots;

  const exOrdNum = w.seq.exOrd++;
  const exOrdId = String(exOrdNum);
  const lotFx = (n: number): string => toPlain({ v: BigInt(n) * BigInt(def.lot[0]), s: def.lot[1] });
  const pxFx = (t: number): string => toPlain({ v: BigInt(t) * BigInt(def.priceInc[0]), s: def.priceInc[1] });
  const order: OrderRow = {
    exOrdId,
    clOrdId: flat(`c${rng.hex(14)}`),
    ordType,
    ordStatus: status,
    side,
    symbol: def.symbol,
    leavesQty: lotFx(lots - filledLots),
    cumQty: lotFx(filledLots),
    timestamp: ts,
    fillFrom: w.fills.length,
    fillCount: 0,
  };
  // Market orders report a price of "0.0" (seen on the real API); limit orders their limit.
  order.price = ordType === 'MARKET' ? '0.0' : pxFx(side === 'BUY' ? p0 + 5 : Math.max(1, p0 - 5));
  if (status === 'REJECTED') order.text = 'Insufficient balance';

  if (filledLots > 0) {
    const n = Math.min(filledLots, Math.max(1, 1 + rng.int(0, 2 * w.opts.fillsPerOrder - 2)));
    const cuts = new Set<number>();
    while (cuts.size < n - 1) cuts.add(rng.int(1, filledLots - 1));
    const bounds = [0, ...[...cuts].sort((a, b) => a - b), filledLots];
    let value = 0n;
    let lastLots = 0;
    let lastTicks = 0;
    for (let i = 1; i < bounds.length; i++) {
      const fl = bounds[i]! - bounds[i - 1]!;
      const ticks = Math.max(1, p0 + rng.int(-3, 3));
      // A MARKET order takes liquidity: the taker rate only (the draw stays, so seeds keep their data).
      const rate = rng.chance(0.4) && ordType !== 'MARKET' ? k.rates[0] : k.rates[1];
      w.seq.trade += rng.int(1, 5);
      w.fills.push({
        execId: w.seq.exec++,
        exOrdId: exOrdNum,
        // tradeId is not unique on the real API ("1" was seen); execId is the key.
        tradeId: rng.chance(0.01) ? 1 : w.seq.trade,
        timestamp: ts,
        lots: fl,
        ticks,
        feeUnits: feeUnits(def, fl, ticks, rate),
        symbol: si,
        side,
      });
      value += BigInt(fl) * BigInt(ticks);
      lastLots = fl;
      lastTicks = ticks;
      order.fillCount++;
    }
    // avgPx: the VWAP in increments, rounded half-up (within half an increment of the VWAP).
    const avgTicks = Number(div({ v: value, s: 0 }, { v: BigInt(filledLots), s: 0 }, 0).v);
    order.avgPx = pxFx(avgTicks);
    order.lastShares = lotFx(lastLots);
    order.lastPx = pxFx(lastTicks);
  }
  // REJECTED reports leavesQty = orderQty; FILLED zero; CANCELED/EXPIRED what was still open.
  w.exOrders.push(order);
  w.exOrderById.set(exOrdId, order);
}

/**
 * Fills what is left of a resting order (OPEN / PART_FILLED) now, at its limit price, as a maker:
 * an old order that fills days after it was placed, which the orders listings (windows by the
 * order's creation time) never show again. Returns the new fill's execId.
 */
export function fillRestingOrder(w: World, o: OrderRow): string {
  if (o.ordStatus !== 'OPEN' && o.ordStatus !== 'PART_FILLED')
    throw new Error(`sandbox: order ${o.exOrdId} is ${o.ordStatus}, not resting`);
  const def = w.symbol(o.symbol)!;
  const ts = Math.max(w.clock(), w.generatedUntil);
  const lots = new Decimal(o.leavesQty).div(unit(def.lot)).toNumber();
  // Resting orders are limit orders; the mid price stands in for one without a price.
  const price = o.price && o.price !== '0.0' ? new Decimal(o.price) : midPrice(def);
  const ticks = price.div(unit(def.priceInc)).toNumber();
  const execId = w.seq.exec++;
  const index = w.fills.push({
    execId,
    exOrdId: Number(o.exOrdId),
    tradeId: ++w.seq.trade,
    timestamp: ts,
    lots,
    ticks,
    feeUnits: feeUnits(def, lots, ticks, parseFx(MAKER_RATE)),
    symbol: w.symbols.indexOf(def),
    side: o.side,
  });
  (o.lateFills ??= []).push(index);
  o.ordStatus = 'FILLED';
  refreshAggregates(w, o);
  w.generatedUntil = ts;
  return String(execId);
}
