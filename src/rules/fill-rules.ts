/** Exchange order and fill rules: fills against their order, fee rates, symbol increments and sizes (E_FILL_*,
 * E_FEE_RATE, E_SYMBOL_RULES).
 */
import { Decimal, ZERO, decimalText } from '../decimal/decimal.js';
import type { Verdict } from './types.js';
import type { ExchangeOrderAgg, FeeRates, FeeSchedule, Fill, SymbolRules } from '../domain/index.js';
import type { Failure } from './types.js';
import { diff, isMultiple, unitOfScale } from './util.js';

export function checkFillQty(o: ExchangeOrderAgg): Verdict {
  if (!o.found) return 'n/a'; // an orphan: E_FILL_ORPHAN reports it
  const cum = o.cumQty ?? ZERO;
  if (o.fillQty.eq(cum)) return [];
  // An order of the period with cumQty > 0 and no stored fill at all: its fills never arrived.
  const check =
    o.fillCount === 0
      ? 'no fill stored for an order with cumQty > 0 (sum of fills 0)'
      : `sum of ${o.fillCount} fill quantities != cumQty`;
  return [{ check, expected: cum, actual: o.fillQty, difference: diff(o.fillQty, cum) }];
}

export function checkFillAvgPx(o: ExchangeOrderAgg, symbol: SymbolRules | undefined): Verdict {
  if (!o.found || o.avgPx === null || o.fillQty.isZero()) return 'n/a';
  if (!symbol?.priceIncrement || symbol.priceIncrement.isZero()) return 'skipped';
  const vwap = o.fillNotional.div(o.fillQty);
  const tolerance = symbol.priceIncrement.div(2);
  if (vwap.minus(o.avgPx).abs().lte(tolerance)) return [];
  // The decision uses the exact quotient; the reported figures are rounded to 6 decimals beyond
  // the increment, since a 60-digit quotient would only be noise on the Breaks sheet.
  const shown = vwap.toDecimalPlaces(symbol.priceIncrement.decimalPlaces() + 6);
  return [
    {
      check: `VWAP of fills != avgPx beyond half a price increment (${decimalText(tolerance)})`,
      expected: o.avgPx,
      actual: shown,
      difference: diff(shown, o.avgPx),
    },
  ];
}

/**
 * A fill whose order is not stored. Its money at stake is its notional in the symbol's counter currency (known from the
 * symbol rules, else none), from the business's side: a BUY paid it out (minus), a SELL received it (plus).
 */
export function checkFillOrphan(f: Fill, counterCurrency?: string | null): Verdict {
  if (f.orderFound) return [];
  const notional = f.qty.times(f.price);
  const side = f.side.toUpperCase();
  const signed = side === 'BUY' ? notional.neg() : side === 'SELL' ? notional : null;
  // No amount to compare: expected/actual stay empty (an order id in `expected` would read as an amount).
  return [
    {
      check: `order ${f.exOrdId} of the fill is not stored`,
      expected: null,
      actual: null,
      difference: null,
      currency: null,
      note: f.orderNotFound ? 'GET /orders/{id} answered 404' : 'not yet looked up',
      ...(signed && counterCurrency && { stake: { value: signed, currency: counterCurrency } }),
    },
  ];
}

/** Rates of a fill's day: the latest snapshot fetched by the end of that UTC day, else the earliest. */
export function ratesForDay(schedule: FeeSchedule, at: Date): FeeRates | undefined {
  const endOfDay = Date.UTC(at.getUTCFullYear(), at.getUTCMonth(), at.getUTCDate() + 1);
  let best: FeeRates | undefined;
  let earliest: FeeRates | undefined;
  for (const s of schedule) {
    const t = s.fetchedAt.getTime();
    if (!earliest || t < earliest.fetchedAt.getTime()) earliest = s;
    if (t <= endOfDay && (!best || t >= best.fetchedAt.getTime())) best = s;
  }
  return best ?? earliest;
}

const HALF_UNITS = new Map<number, Decimal>();
/** Half a unit of a scale (0.005 for 2), cached: it is asked once per fill. */
function halfUnit(scale: number): Decimal {
  let v = HALF_UNITS.get(scale);
  if (!v) HALF_UNITS.set(scale, (v = unitOfScale(scale).div(2)));
  return v;
}

export interface FeeRateConfig {
  feeCurrency: 'counter' | 'base';
  /** tolerances.exchangeFee; null: half a unit of the fee currency's scale. */
  tolerance: Decimal | null;
}

export function feeCurrencyOf(
  f: Fill,
  symbol: SymbolRules | undefined,
  feeCurrency: 'counter' | 'base',
): string | null {
  if (symbol) return feeCurrency === 'counter' ? symbol.counterCurrency : symbol.baseCurrency;
  const [base, counter] = f.symbol.split('-');
  return (feeCurrency === 'counter' ? counter : base) ?? null;
}

/** tolerances.exchangeFee, else half a unit of the fee currency's scale (8 when unknown). */
export function feeTolerance(symbol: SymbolRules | undefined, cfg: FeeRateConfig): Decimal {
  const scale = (cfg.feeCurrency === 'counter' ? symbol?.counterScale : symbol?.baseScale) ?? 8;
  return cfg.tolerance ?? halfUnit(scale);
}

/**
 * Order types whose fills took liquidity: a MARKET or STOP order executes against the book, so
 * only the taker rate applies. Any other type (LIMIT, STOPLIMIT: the listings carry no post-only
 * flag), an unknown type and an orphan fill may carry either rate. The SQL prefilter reads this list.
 */
export const TAKER_ONLY_ORDER_TYPES: readonly string[] = ['MARKET', 'STOP'];

export function takesLiquidity(ordType: string | null): boolean {
  return ordType !== null && TAKER_ONLY_ORDER_TYPES.includes(ordType);
}

export function checkFeeRate(f: Fill, rates: FeeRates, symbol: SymbolRules | undefined, cfg: FeeRateConfig): Verdict {
  const basis = cfg.feeCurrency === 'counter' ? f.qty.times(f.price) : f.qty;
  const tolerance = feeTolerance(symbol, cfg);
  // Taker first: most fills take liquidity, and a pass skips the second product (a million fills).
  const taker = basis.times(rates.takerRate);
  if (f.fee.minus(taker).abs().lte(tolerance)) return [];
  const takerOnly = takesLiquidity(f.ordType);
  const maker = basis.times(rates.makerRate);
  if (!takerOnly && f.fee.minus(maker).abs().lte(tolerance)) return [];
  const of = cfg.feeCurrency === 'counter' ? 'qty x price' : 'qty';
  return [
    {
      check: takerOnly
        ? `fee != ${of} x taker rate (${decimalText(rates.takerRate)}): a ${f.ordType} order takes liquidity`
        : `fee != ${of} x maker (${decimalText(rates.makerRate)}) or taker (${decimalText(rates.takerRate)}) rate`,
      expected: taker,
      actual: f.fee,
      difference: diff(f.fee, taker),
      currency: feeCurrencyOf(f, symbol, cfg.feeCurrency),
      note: takerOnly
        ? `maker expectation ${decimalText(maker)} does not apply, tolerance ${decimalText(tolerance)}`
        : `maker expectation ${decimalText(maker)}, tolerance ${decimalText(tolerance)}`,
    },
  ];
}

export function checkFillSymbolRules(f: Fill, symbol: SymbolRules | undefined): Verdict {
  if (!symbol) return 'skipped';
  const failures: Failure[] = [];
  // Market orders report a price of "0.0": nothing to check.
  const price = f.price.isZero()
    ? null
    : offStep(f.price, symbol.priceIncrement, 'price not a multiple of the price increment', symbol.counterCurrency);
  if (price) failures.push({ ...price, unit: 'price' });
  const qty = offStep(f.qty, symbol.lotSize, 'qty not a multiple of the lot size', symbol.baseCurrency);
  if (qty) failures.push(qty);
  return failures;
}

/** The failure of a figure that is not a whole number of its step (none without a step): its nearest multiple. */
function offStep(value: Decimal, step: Decimal | null, check: string, currency: string | null): Failure | null {
  if (!step || step.isZero() || isMultiple(value, step)) return null;
  const expected = value.toNearest(step, Decimal.ROUND_HALF_UP);
  return {
    check: `${check} ${decimalText(step)}`,
    expected,
    actual: value,
    difference: diff(value, expected),
    currency,
  };
}

/** Order quantity = cumQty + leavesQty within min/max order size (never a single partial fill). */
export function checkOrderSize(o: ExchangeOrderAgg, symbol: SymbolRules | undefined): Verdict {
  if (!o.found) return 'n/a';
  if (!symbol) return 'skipped';
  const qty = (o.cumQty ?? ZERO).plus(o.leavesQty ?? ZERO);
  if (symbol.minOrderSize && qty.lt(symbol.minOrderSize))
    return [
      {
        check: 'order quantity below the minimum order size',
        expected: symbol.minOrderSize,
        actual: qty,
        difference: diff(qty, symbol.minOrderSize),
        currency: symbol.baseCurrency,
        entity: 'exchangeOrder',
      },
    ];
  if (symbol.maxOrderSize && !symbol.maxOrderSize.isZero() && qty.gt(symbol.maxOrderSize))
    return [
      {
        check: 'order quantity above the maximum order size',
        expected: symbol.maxOrderSize,
        actual: qty,
        difference: diff(qty, symbol.maxOrderSize),
        currency: symbol.baseCurrency,
        entity: 'exchangeOrder',
      },
    ];
  return [];
}
