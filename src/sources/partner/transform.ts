/** Pure mapping of validated Partner API records to the rows the store writes, and wire timestamp keys. */
import { toDecimal } from '../../decimal/decimal.js';
import { stringifyJsonLossless } from '../../decimal/json.js';
import type { NewPartnerCurrency, NewPartnerOrder, NewPartnerQuote } from '../../store/db/schema.js';
import { requireDecimal } from '../common/wire-decimal.js';
import { calendarIssue } from '../common/storable.js';
import { ISO_TIMESTAMP, type Currency, type OrderEvent, type PartnerOrder, type Quote } from './schemas.js';

/**
 * Fixed-width UTC form of a wire timestamp, 'YYYY-MM-DDTHH:MM:SS.fffffffffZ' (9 fraction digits),
 * so that plain text comparison orders timestamps correctly to the nanosecond. The raw text does
 * not ('...06.9Z' > '...06.894070237Z' is right only by luck; offsets break it), and timestamptz
 * keeps only microseconds. Null when the text is not an ISO date-time.
 */
export function timestampKey(text: string): string | null {
  const m = ISO_TIMESTAMP.exec(text.trim());
  if (!m) return null;
  const [, day, time, fraction = '', zone = 'Z'] = m;
  // A UTC time of a real calendar day is its own key: no Date round trip (every order has two timestamps).
  if ((zone === 'Z' || zone === 'z') && calendarIssue(day!, time!) === null)
    return `${day}T${time}.${fraction.padEnd(9, '0')}Z`;
  const offset = zone.toUpperCase() === 'Z' ? 'Z' : zone.includes(':') ? zone : `${zone.slice(0, 3)}:${zone.slice(3)}`;
  const seconds = new Date(`${day}T${time}${offset}`);
  if (Number.isNaN(seconds.getTime())) return null;
  return `${seconds.toISOString().slice(0, 19)}.${fraction.padEnd(9, '0')}Z`;
}

/** Like timestampKey for values already validated by the schema. */
export function requireTimestampKey(text: string): string {
  const key = timestampKey(text);
  if (key === null) throw new Error(`not an ISO date-time: ${JSON.stringify(text)}`);
  return key;
}

/** Compares two wire timestamps to the nanosecond (negative, 0, positive). */
export function compareTimestamps(a: string, b: string): number {
  const ka = requireTimestampKey(a);
  const kb = requireTimestampKey(b);
  return ka < kb ? -1 : ka > kb ? 1 : 0;
}

/**
 * Decimal text for a numeric column, by the sources' one canonicaliser (common/wire-decimal.ts): plain
 * decimals go as sent (numeric keeps its scale, "10.50" stays "10.50"), exponent forms through Decimal.
 */
function numericOrNull(value: unknown): string | null {
  return value === null || value === undefined ? null : requireDecimal(value);
}

function textOrNull(value: string | null | undefined): string | null {
  return value === null || value === undefined ? null : value;
}

/**
 * Order (polled) or order event (webhook) to a partner_order row (before the store's account and bookkeeping columns);
 * `rawText`: the record as received, serialized once by the caller (stringifyJsonLossless), which also keys and
 * quarantines by it.
 * Timestamps go to timestamptz
 * as their fixed-width UTC text (Postgres keeps microseconds from it; a JS Date would keep only
 * milliseconds), and to the _text columns exactly as sent.
 */
export function orderToRow(order: PartnerOrder | OrderEvent, rawText: string): NewPartnerOrder {
  const createdKey = requireTimestampKey(order.createdAt);
  const updatedKey = requireTimestampKey(order.orderStateUpdatedAt);
  return {
    order_id: order.orderId,
    external_reference: textOrNull(order.externalReference),
    sub_partner_id: textOrNull(order.subPartnerId),
    order_type: order.orderType,
    created_at: createdKey,
    created_at_text: order.createdAt,
    order_state: order.orderState,
    order_state_updated_at: updatedKey,
    order_state_updated_at_text: order.orderStateUpdatedAt,
    order_state_updated_key: updatedKey,
    payment_method: textOrNull(order.paymentMethod),
    input_currency: order.inputCurrency,
    input_amount: requireDecimal(order.inputAmount),
    output_currency: order.outputCurrency,
    output_amount: numericOrNull(order.outputAmount),
    amount_usd: numericOrNull(order.amountUsd),
    processing_fee: numericOrNull(order.processingFee),
    processing_fee_usd: numericOrNull(order.processingFeeUsd),
    partner_fee: numericOrNull(order.partnerFee),
    partner_fee_usd: numericOrNull(order.partnerFeeUsd),
    network_fee: numericOrNull(order.networkFee),
    network_fee_usd: numericOrNull(order.networkFeeUsd),
    user_id: textOrNull(order.userId),
    target_wallet_address: textOrNull(order.targetWalletAddress),
    transaction_hash: textOrNull(order.transactionHash) || null,
    raw: rawText,
  };
}

/** The currencies body is an array of Currency, or (as in the contract's sample) of arrays of them. */
export function flattenCurrencies(body: unknown): unknown[] | null {
  if (!Array.isArray(body)) return null;
  return body.flatMap((item) => (Array.isArray(item) ? item : [item]));
}

export function currencyToRow(c: Currency): NewPartnerCurrency {
  return {
    code: c.code,
    type: c.type,
    name: textOrNull(c.name),
    // A precision is a small integer (decimals of a currency); safe as a JS number.
    precision: Number(toDecimal(c.precision).toString()),
    min_buy_amount: numericOrNull(c.minBuyAmount),
    max_buy_amount: numericOrNull(c.maxBuyAmount),
    network: textOrNull(c.network),
  };
}

export function quoteToRow(q: Quote, raw: unknown, requested: { paymentMethod?: string | undefined }): NewPartnerQuote {
  return {
    quote_currency_code: q.quoteCurrencyCode,
    base_currency_code: q.baseCurrencyCode,
    payment_method: textOrNull(q.paymentMethod) ?? requested.paymentMethod ?? null,
    quote_currency_amount: requireDecimal(q.quoteCurrencyAmount),
    base_currency_amount: numericOrNull(q.baseCurrencyAmount),
    price: numericOrNull(q.price),
    processing_fee_amount: numericOrNull(q.processingFeeAmount),
    partner_fee_amount: numericOrNull(q.partnerFeeAmount),
    network_fee_amount: numericOrNull(q.networkFeeAmount),
    total_amount: numericOrNull(q.totalAmount),
    raw: stringifyJsonLossless(raw),
  };
}

/** Our deposit addresses are compared without a ":tag" suffix (docs/rules.md, cross-system rules). */
export function walletWithoutTag(address: string): string {
  const i = address.indexOf(':');
  return i === -1 ? address : address.slice(0, i);
}
