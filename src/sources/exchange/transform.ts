/** Pure mapping of validated Exchange API records to the rows the store writes. */
import { Decimal, decimalText } from '../../decimal/decimal.js';
import { stringifyMarked } from './wire.js';
import type {
  NewBalance,
  NewExchangeDeposit,
  NewExchangeFeeRate,
  NewExchangeFill,
  NewExchangeOrder,
  NewExchangeSymbol,
  NewExchangeTicker,
  NewExchangeWhitelistEntry,
  NewExchangeWithdrawal,
} from '../../store/db/schema.js';
import type {
  Balance,
  Deposit,
  Fees,
  Fill,
  Order,
  SymbolStatus,
  Ticker,
  Validated,
  WhitelistEntry,
  Withdrawal,
} from './schemas.js';

/**
 * Pure mapping from validated wire records to the rows the store writes (typed from its schema). Amounts
 * leave here as plain decimal text (never a JS number; numeric takes it exactly), ids as digit strings, times as ISO
 * text, and the record as received as JSON text with every digit intact.
 */

// Schemas already hand amounts over as canonical plain decimal text.
const dec = (d: string): string => d;
const decOrNull = (d: string | null): string | null => d;
const iso = (ms: number): string => new Date(ms).toISOString();
const isoOrNull = (ms: number | null): string | null => (ms === null ? null : iso(ms));

/** The record as JSON text with the wire's numbers as numbers (marked numbers or LosslessNumbers: wire.ts). */
export function rawText(raw: unknown): string {
  return stringifyMarked(raw);
}

/** `{ raw: false }` when the store takes the raw record from the page text (the fast path). */
export function toFillRow({ value: f, raw, index }: Validated<Fill>, options?: { raw?: boolean }): NewExchangeFill {
  // An object, not a boolean: Array#map's index must never switch the raw record off.
  const withRaw = typeof options !== 'object' || options.raw !== false;
  return {
    page_index: index + 1,
    exec_id: f.execId,
    ex_ord_id: f.exOrdId,
    trade_id: f.tradeId,
    side: f.side,
    symbol: f.symbol,
    price: dec(f.price),
    qty: dec(f.qty),
    fee: dec(f.fee),
    timestamp: iso(f.timestamp),
    raw: withRaw ? rawText(raw) : '',
  };
}

export function toOrderRow({ value: o, raw }: Validated<Order>): NewExchangeOrder {
  return {
    ex_ord_id: o.exOrdId,
    cl_ord_id: o.clOrdId,
    ord_type: o.ordType,
    ord_status: o.ordStatus,
    side: o.side,
    price: decOrNull(o.price),
    text: o.text,
    symbol: o.symbol,
    last_shares: decOrNull(o.lastShares),
    last_px: decOrNull(o.lastPx),
    leaves_qty: decOrNull(o.leavesQty),
    cum_qty: decOrNull(o.cumQty),
    avg_px: decOrNull(o.avgPx),
    timestamp: isoOrNull(o.timestamp),
    raw: rawText(raw),
  };
}

export function toDepositRow({ value: d, raw }: Validated<Deposit>): NewExchangeDeposit {
  return {
    deposit_id: d.depositId,
    amount: dec(d.amount),
    currency: d.currency,
    address: d.address,
    tx_hash: d.txHash,
    state: d.state,
    timestamp: isoOrNull(d.timestamp),
    raw: rawText(raw),
  };
}

export function toWithdrawalRow({ value: w, raw }: Validated<Withdrawal>): NewExchangeWithdrawal {
  return {
    withdrawal_id: w.withdrawalId,
    amount: dec(w.amount),
    fee: decOrNull(w.fee),
    currency: w.currency,
    beneficiary: w.beneficiary,
    state: w.state,
    timestamp: isoOrNull(w.timestamp),
    raw: rawText(raw),
  };
}

export function toBalanceRow({ value: b }: Validated<Balance>): NewBalance {
  return {
    currency: b.currency,
    balance: dec(b.balance),
    available: dec(b.available),
    balance_local: dec(b.balance_local),
    available_local: dec(b.available_local),
    rate: dec(b.rate),
  };
}

export function toFeeRateRow(f: Fees): NewExchangeFeeRate {
  return { maker_rate: dec(f.makerRate), taker_rate: dec(f.takerRate), volume_in_usd: decOrNull(f.volumeInUSD) };
}

/** units x 10^-scale, exact (e.g. 1 and scale 2 -> 0.01). */
export function scaled(units: string | null, scale: number | null): string | null {
  if (units === null) return null;
  return decimalText(new Decimal(units).times(new Decimal(10).pow(-(scale ?? 0))));
}

/**
 * /symbols is an object whose key naming is unspecified: the symbol is named base-counter, the
 * form fills and orders use, when both currencies are given, else by its key.
 */
export function toSymbolRow(key: string, s: SymbolStatus): NewExchangeSymbol {
  const max = scaled(s.max_order_size, s.max_order_size_scale);
  return {
    symbol: s.base_currency && s.counter_currency ? `${s.base_currency}-${s.counter_currency}` : key,
    base_currency: s.base_currency,
    base_currency_scale: s.base_currency_scale,
    counter_currency: s.counter_currency,
    counter_currency_scale: s.counter_currency_scale,
    price_increment: scaled(s.min_price_increment, s.min_price_increment_scale),
    lot_size: scaled(s.lot_size, s.lot_size_scale),
    min_order_size: scaled(s.min_order_size, s.min_order_size_scale),
    // Stored as given: 0 means "no limit" (docs/rules.md), which the rule applies.
    max_order_size: max,
    status: s.status,
  };
}

export function toWhitelistRow(w: WhitelistEntry): NewExchangeWhitelistEntry {
  return { whitelist_id: w.whitelistId, name: w.name, currency: w.currency };
}

export function toTickerRow(t: Ticker): NewExchangeTicker {
  return {
    symbol: t.symbol,
    price_24h: decOrNull(t.price_24h),
    volume_24h: decOrNull(t.volume_24h),
    last_trade_price: decOrNull(t.last_trade_price),
  };
}

/** UTC day (YYYY-MM-DD) of an ISO time, for coverage rows. */
export function utcDay(isoTime: string): string {
  return isoTime.slice(0, 10);
}
