import { Decimal } from '../../decimal/decimal.js';
import { MAKER_RATE, TAKER_RATE, USD_RATES, midPrice, unit, type SymbolDef } from '../catalog.js';
import type { FillRecord, OrdStatus } from '../model.js';
import type { Rng } from '../prng.js';
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

/**
 * One exchange order and its fills, all in the same millisecond (so an order is never visible
 * without its fills). Prices sit on the increment, quantities on the lot, order sizes inside
 * the symbol limits, fees at the maker or taker rate.
 */
export function makeExchangeOrder(w: World, rng: Rng, ts: number, ctx: ExchangeGenContext): void {
  const def: SymbolDef = rng.pick(w.symbols);
  const inc = unit(def.priceInc);
  const lot = unit(def.lot);
  const minLots = Math.max(1, Math.ceil(unit(def.minSize).div(lot).toNumber()));
  const maxLots = def.maxSize[0] > 0 ? Math.floor(unit(def.maxSize).div(lot).toNumber()) : Number.MAX_SAFE_INTEGER;
  const side = rng.chance(0.5) ? 'BUY' : 'SELL';
  const ordType = rng.chance(0.7) ? 'LIMIT' : 'MARKET';
  // Notional between ~20 and ~20,000 USD, log-uniform: small BTC quantities get exponent notation.
  const usd = 20 * Math.pow(10, rng.next() * 3);
  const baseQty = new Decimal(usd.toFixed(2)).div(USD_RATES[def.base]!);
  let lots = Math.max(minLots, Math.min(maxLots, Math.floor(baseQty.div(lot).toNumber())));
  const mid = midPrice(def);
  const p0 = Decimal.max(inc, mid.times(new Decimal(rng.next()).minus(0.5).times(0.01).plus(1)).toNearest(inc, H));

  let status: OrdStatus;
  const r = rng.next();
  if (ts >= ctx.liveFrom && rng.chance(0.1)) status = rng.chance(0.5) ? 'OPEN' : 'PART_FILLED';
  else if (r < 0.75) status = 'FILLED';
  else if (r < 0.87) status = 'CANCELED';
  else if (r < 0.92) status = 'REJECTED';
  else status = 'EXPIRED';
  if (ordType === 'MARKET' && (status === 'OPEN' || status === 'EXPIRED' || status === 'PART_FILLED')) status = 'FILLED';

  let filledLots = 0;
  if (status === 'FILLED') filledLots = lots;
  else if ((status === 'PART_FILLED' || (status === 'CANCELED' && rng.chance(0.5))) && lots >= 2) filledLots = rng.int(1, lots - 1);
  else if (status === 'PART_FILLED') status = 'OPEN';
  if (lots < minLots) lots = minLots;

  const exOrdId = String(w.seq.exOrd++);
  const order: OrderRow = {
    exOrdId,
    clOrdId: `c${rng.hex(14)}`,
    ordType,
    ordStatus: status,
    side,
    symbol: def.symbol,
    leavesQty: '0',
    cumQty: '0',
    timestamp: ts,
    fillFrom: w.fills.length,
    fillCount: 0,
  };
  // Market orders report a price of "0.0" (seen on the real API); limit orders their limit.
  order.price = ordType === 'MARKET' ? '0.0' : (side === 'BUY' ? p0.plus(inc.times(5)) : Decimal.max(inc, p0.minus(inc.times(5)))).toString();
  if (status === 'REJECTED') order.text = 'Insufficient balance';

  if (filledLots > 0) {
    const k = Math.min(filledLots, Math.max(1, 1 + rng.int(0, 2 * w.opts.fillsPerOrder - 2)));
    const cuts = new Set<number>();
    while (cuts.size < k - 1) cuts.add(rng.int(1, filledLots - 1));
    const bounds = [0, ...[...cuts].sort((a, b) => a - b), filledLots];
    for (let i = 1; i < bounds.length; i++) {
      const qty = lot.times(bounds[i]! - bounds[i - 1]!).toString();
      const price = Decimal.max(inc, p0.plus(inc.times(rng.int(-3, 3)))).toString();
      const rate = rng.chance(0.4) ? MAKER_RATE : TAKER_RATE;
      w.seq.trade += rng.int(1, 5);
      w.fills.push({
        exOrdId,
        // tradeId is not unique on the real API ("1" was seen); execId is the key.
        tradeId: rng.chance(0.01) ? '1' : String(w.seq.trade),
        execId: String(w.seq.exec++),
        side,
        symbol: def.symbol,
        price,
        qty,
        fee: fillFee(qty, price, rate, def.counterScale),
        timestamp: ts,
      });
      order.fillCount++;
    }
  }
  order.leavesQty = lot.times(lots).toString();
  order.cumQty = '0';
  refreshAggregates(w, order);
  if (status === 'FILLED' || status === 'REJECTED' || status === 'EXPIRED') {
    // FILLED and (by the contract) "other states" report zero open quantity, except
    // REJECTED whose leavesQty equals orderQty and EXPIRED which keeps what was open.
    if (status === 'FILLED') order.leavesQty = '0';
  }
  w.exOrders.push(order);
  w.exOrderById.set(exOrdId, order);
}
