/** Zod schemas of the Exchange API and the per-record validation of a page. */
import { z } from 'zod';
import { isLosslessNumber } from '../../decimal/json.js';
import { Decimal, isDecimalText } from '../../decimal/decimal.js';
import {
  decimalText,
  markedNumber,
  readStorableDecimal,
  showWireValue,
  wireNumberText,
} from '../common/wire-decimal.js';
import {
  BIGINT_MAX,
  fitsBigint,
  MAX_KEY_LENGTH,
  mayHoldUnstorableText,
  printable,
  unstorableText,
} from '../common/storable.js';
import { formatZodIssues } from '../common/zod-issues.js';

/**
 * Zod schemas of the Exchange API (docs/apis.md "Exchange API"). The wire sends decimals and int64 ids as JSON
 * strings or JSON numbers, quantities sometimes in exponent notation ("5.4044E-4"); the lossless
 * parser hands numbers over as LosslessNumber, so no digit is lost before these schemas turn
 * them into plain decimal text (amounts, exact, ready for numeric) and canonical digit strings (ids). Unknown extra
 * fields are
 * accepted: the caller stores the raw record whole. Messages name the value; the issue path
 * names the field (formatZodIssues).
 */

const DIGITS = /^\d{1,30}$/;

/**
 * The field readers below (and readDecimal in common/wire-decimal.ts) are the whole
 * logic of the decimal, int64Id and epochMs schemas: each returns the field's value, or null where
 * the schema reports an issue. The zod transforms and the fills fast path (fastFill) share them,
 * so both give the same value for the same input.
 */
function readInt64Id(v: unknown): string | null {
  const t = wireNumberText(v);
  if (t !== null && DIGITS.test(t)) {
    const id = t.length > 1 ? t.replace(/^0+(?=\d)/, '') : t;
    // The ids are bigint columns: 20 digits would fail the whole page in the database.
    return fitsBigint(id) ? id : null;
  }
  if (t === null || t.length > 100 || !isDecimalText(t)) return null;
  const d = new Decimal(t);
  if (!d.isInteger() || d.isNegative() || d.e > 18) return null;
  const id = d.toFixed(0);
  return fitsBigint(id) ? id : null;
}

function readEpochMs(v: unknown): number | null {
  const t = wireNumberText(v);
  // 1e14 ms is the year 5138: anything beyond is a unit mistake (micro/nanoseconds), not a date.
  if (t !== null && /^\d{1,14}$/.test(t)) return Number(t);
  const d = t !== null && isDecimalText(t) ? new Decimal(t) : null;
  if (!d || !d.isInteger() || d.isNegative() || d.greaterThan(1e14)) return null;
  return d.toNumber();
}

/** An int64 id ("123", 123, even "1.23E2"): canonical digits, never a JS number. */
export const int64Id = z.unknown().transform((v, ctx) => {
  const id = readInt64Id(v);
  if (id === null) {
    const t = wireNumberText(v);
    // Digits, or an integer in another form ("1e200000"), that readInt64Id refused: too large.
    const tooLarge =
      t !== null &&
      (/^\d+$/.test(t) ||
        (t.length <= 100 && isDecimalText(t) && new Decimal(t).isInteger() && !new Decimal(t).isNegative()));
    ctx.addIssue({
      code: 'custom',
      message: tooLarge
        ? `is beyond the largest id the database holds (bigint, at most ${BIGINT_MAX}) (got ${showWireValue(v)})`
        : `must be a non-negative integer id (got ${showWireValue(v)})`,
    });
    return z.NEVER;
  }
  return id;
});

/** TimestampEpoch: integer milliseconds since 1970. */
export const epochMs = z.unknown().transform((v, ctx) => {
  const ms = readEpochMs(v);
  if (ms === null) {
    ctx.addIssue({ code: 'custom', message: `must be epoch milliseconds (got ${showWireValue(v)})` });
    return z.NEVER;
  }
  return ms;
});

/** A small integer such as a scale. */
export const smallInt = z.unknown().transform((v, ctx) => {
  const t = wireNumberText(v);
  const d = t !== null && isDecimalText(t) ? new Decimal(t) : null;
  if (!d || !d.isInteger() || d.abs().greaterThan(1_000_000)) {
    ctx.addIssue({ code: 'custom', message: `must be an integer (got ${showWireValue(v)})` });
    return z.NEVER;
  }
  return d.toNumber();
});

const text = z
  .string({ error: (issue) => `must be a string (got ${showWireValue(issue.input)})` })
  .refine((v) => markedNumber(v) === null, {
    error: (issue) => `must be a string (got the number ${showWireValue(issue.input)})`,
  });
const nonEmpty = text.min(1, { error: (issue) => `must not be empty (got ${showWireValue(issue.input)})` });
/** A key of its table (symbol, currency): within the index limit. */
const keyText = nonEmpty.max(MAX_KEY_LENGTH, {
  error: (issue) =>
    `is longer than ${MAX_KEY_LENGTH} characters, the longest key stored (got ${showWireValue(issue.input)})`,
});
/** Optional on the wire; null is treated like absent. */
const opt = <T extends z.ZodTypeAny>(schema: T) =>
  schema.nullish().transform((v) => (v === undefined ? null : v) as z.output<T> | null);
/** Ids that the contract types as string but that could arrive as numbers. */
const idText = z.unknown().transform((v, ctx) => {
  const marked = markedNumber(v);
  const id =
    marked !== null && marked.length > 0
      ? marked
      : typeof v === 'string' && v.length > 0
        ? v
        : isLosslessNumber(v)
          ? (v as { value: string }).value
          : null;
  if (id === null) {
    ctx.addIssue({ code: 'custom', message: `must be a non-empty id (got ${showWireValue(v)})` });
    return z.NEVER;
  }
  if (id.length > MAX_KEY_LENGTH) {
    ctx.addIssue({
      code: 'custom',
      message: `is longer than ${MAX_KEY_LENGTH} characters, the longest id stored (got ${showWireValue(v)})`,
    });
    return z.NEVER;
  }
  return id;
});
const oneOf = <const T extends readonly [string, ...string[]]>(values: T) =>
  z.enum(values, { error: (issue) => `must be one of ${values.join(', ')} (got ${showWireValue(issue.input)})` });

export const SIDES = ['BUY', 'SELL'] as const;
export const ORD_TYPES = ['MARKET', 'LIMIT', 'STOP', 'STOPLIMIT'] as const;
export const ORD_STATUSES = ['OPEN', 'REJECTED', 'CANCELED', 'FILLED', 'PART_FILLED', 'EXPIRED', 'PENDING'] as const;
/** Orders that can still change: re-fetched by id on later runs. */
export const ORDER_NON_FINAL = ['OPEN', 'PART_FILLED', 'PENDING'] as const;
export const DEPOSIT_STATES = ['REJECTED', 'UNCONFIRMED', 'COMPLETED'] as const;
export const DEPOSIT_NON_FINAL = ['UNCONFIRMED'] as const;
export const WITHDRAWAL_STATES = ['REJECTED', 'PENDING', 'REFUNDED', 'FAILED', 'COMPLETED'] as const;
export const WITHDRAWAL_NON_FINAL = ['PENDING'] as const;

export const fillSchema = z.object({
  exOrdId: int64Id,
  tradeId: int64Id,
  execId: int64Id,
  side: oneOf(SIDES),
  symbol: keyText,
  price: decimalText,
  qty: decimalText,
  fee: decimalText,
  timestamp: epochMs,
});
export type Fill = z.output<typeof fillSchema>;

/**
 * fillSchema without zod, for the hot path (1000 records a page): the same field readers and
 * the same checks as the schema, so a record it accepts gets exactly the schema's value. It
 * returns null as soon as any field would be an issue; the caller then runs the schema itself,
 * which reports the issues (messages, quarantine) as always.
 */
export function fastFill(raw: unknown): Fill | null {
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) return null;
  const r = raw as Record<string, unknown>;
  const exOrdId = readInt64Id(r.exOrdId);
  if (exOrdId === null) return null;
  const tradeId = readInt64Id(r.tradeId);
  if (tradeId === null) return null;
  const execId = readInt64Id(r.execId);
  if (execId === null) return null;
  const side = r.side;
  if (side !== 'BUY' && side !== 'SELL') return null;
  const symbol = r.symbol;
  // nonEmpty: a string, not a number kept as marked text, at least one character.
  if (
    typeof symbol !== 'string' ||
    symbol.length === 0 ||
    symbol.length > MAX_KEY_LENGTH ||
    markedNumber(symbol) !== null
  )
    return null;
  const price = readStorableDecimal(r.price);
  if (price === null) return null;
  const qty = readStorableDecimal(r.qty);
  if (qty === null) return null;
  const fee = readStorableDecimal(r.fee);
  if (fee === null) return null;
  const timestamp = readEpochMs(r.timestamp);
  if (timestamp === null) return null;
  return { exOrdId, tradeId, execId, side, symbol, price, qty, fee, timestamp };
}

/**
 * OrderSummary. exOrdId is optional in the contract, but a stored order needs its key: a record
 * without one is quarantined. The rest follows the contract's required/optional columns.
 */
export const orderSchema = z.object({
  exOrdId: int64Id,
  clOrdId: opt(text),
  ordType: oneOf(ORD_TYPES),
  ordStatus: oneOf(ORD_STATUSES),
  side: oneOf(SIDES),
  price: opt(decimalText),
  text: opt(text),
  symbol: keyText,
  lastShares: opt(decimalText),
  lastPx: opt(decimalText),
  leavesQty: opt(decimalText),
  cumQty: opt(decimalText),
  avgPx: opt(decimalText),
  timestamp: opt(epochMs),
});
export type Order = z.output<typeof orderSchema>;

/** A value the fast paths cannot accept (the schema then reports it). */
const REFUSED = Symbol('refused');
const ORD_TYPE_SET: ReadonlySet<unknown> = new Set(ORD_TYPES);
const ORD_STATUS_SET: ReadonlySet<unknown> = new Set(ORD_STATUSES);
/** opt(text): a string that is not a marked number, null when absent. */
const optionalText = (v: unknown): string | null | typeof REFUSED =>
  v === null || v === undefined ? null : typeof v === 'string' && markedNumber(v) === null ? v : REFUSED;
/** opt(decimalText): readStorableDecimal (the schema's reader), null when absent. */
const optionalDecimal = (v: unknown): string | null | typeof REFUSED =>
  v === null || v === undefined ? null : (readStorableDecimal(v) ?? REFUSED);

/**
 * orderSchema without zod, for the listings' hot path (the status listings and trades bring 370,000 order records
 * in a first sync, where zod was half of their validation): the same field readers and checks as the schema, and
 * its value (every field of the shape, null where absent, unknown fields dropped). It returns null as soon as a
 * field would be an issue; the caller then runs the schema, which reports the issues as always.
 */
export function fastOrder(raw: unknown): Order | null {
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) return null;
  const r = raw as Record<string, unknown>;
  const exOrdId = readInt64Id(r.exOrdId);
  if (exOrdId === null) return null;
  if (!ORD_TYPE_SET.has(r.ordType) || !ORD_STATUS_SET.has(r.ordStatus)) return null;
  if (r.side !== 'BUY' && r.side !== 'SELL') return null;
  const symbol = r.symbol;
  if (typeof symbol !== 'string' || symbol.length === 0 || symbol.length > MAX_KEY_LENGTH) return null;
  if (markedNumber(symbol) !== null) return null;
  const clOrdId = optionalText(r.clOrdId);
  const text = optionalText(r.text);
  const price = optionalDecimal(r.price);
  const lastShares = optionalDecimal(r.lastShares);
  const lastPx = optionalDecimal(r.lastPx);
  const leavesQty = optionalDecimal(r.leavesQty);
  const cumQty = optionalDecimal(r.cumQty);
  const avgPx = optionalDecimal(r.avgPx);
  const timestamp = r.timestamp === null || r.timestamp === undefined ? null : readEpochMs(r.timestamp);
  if (timestamp === null && r.timestamp !== null && r.timestamp !== undefined) return null;
  if (
    clOrdId === REFUSED ||
    text === REFUSED ||
    price === REFUSED ||
    lastShares === REFUSED ||
    lastPx === REFUSED ||
    leavesQty === REFUSED ||
    cumQty === REFUSED ||
    avgPx === REFUSED
  )
    return null;
  return {
    exOrdId,
    clOrdId,
    ordType: r.ordType as Order['ordType'],
    ordStatus: r.ordStatus as Order['ordStatus'],
    side: r.side,
    price,
    text,
    symbol,
    lastShares,
    lastPx,
    leavesQty,
    cumQty,
    avgPx,
    timestamp,
  };
}

export const depositSchema = z.object({
  depositId: idText,
  amount: decimalText,
  currency: keyText,
  address: nonEmpty,
  txHash: opt(
    text.max(MAX_KEY_LENGTH, {
      error: (issue) =>
        `is longer than ${MAX_KEY_LENGTH} characters, the longest key stored (got ${showWireValue(issue.input)})`,
    }),
  ),
  state: oneOf(DEPOSIT_STATES),
  timestamp: opt(epochMs),
});
export type Deposit = z.output<typeof depositSchema>;

/** withdrawalId is optional in the contract; without it a withdrawal cannot be keyed: quarantined. */
export const withdrawalSchema = z.object({
  withdrawalId: idText,
  amount: decimalText,
  fee: opt(decimalText),
  currency: keyText,
  beneficiary: nonEmpty,
  state: opt(oneOf(WITHDRAWAL_STATES)),
  timestamp: opt(epochMs),
});
export type Withdrawal = z.output<typeof withdrawalSchema>;

export const balanceSchema = z.object({
  currency: keyText,
  balance: decimalText,
  available: decimalText,
  balance_local: decimalText,
  available_local: decimalText,
  rate: decimalText,
});
export type Balance = z.output<typeof balanceSchema>;

export const feesSchema = z.object({
  makerRate: decimalText,
  takerRate: decimalText,
  volumeInUSD: opt(decimalText),
});
export type Fees = z.output<typeof feesSchema>;

export const symbolSchema = z.object({
  base_currency: opt(text),
  base_currency_scale: opt(smallInt),
  counter_currency: opt(text),
  counter_currency_scale: opt(smallInt),
  min_price_increment: opt(int64Id),
  min_price_increment_scale: opt(smallInt),
  min_order_size: opt(int64Id),
  min_order_size_scale: opt(smallInt),
  max_order_size: opt(int64Id),
  max_order_size_scale: opt(smallInt),
  lot_size: opt(int64Id),
  lot_size_scale: opt(smallInt),
  status: opt(text),
  id: opt(int64Id),
});
export type SymbolStatus = z.output<typeof symbolSchema>;

export const whitelistSchema = z.object({
  whitelistId: idText,
  name: opt(text),
  currency: opt(text),
});
export type WhitelistEntry = z.output<typeof whitelistSchema>;

export const tickerSchema = z.object({
  symbol: keyText,
  price_24h: opt(decimalText),
  volume_24h: opt(decimalText),
  last_trade_price: opt(decimalText),
});
export type Ticker = z.output<typeof tickerSchema>;

export interface Validated<T> {
  /** Position of the record in its page. */
  index: number;
  value: T;
  /** The record as received, digits intact (stored as raw). */
  raw: unknown;
}

export interface Rejected {
  index: number;
  raw: unknown;
  reason: string;
  /** The record's natural id when it could be read, for the quarantine key. */
  key: string | null;
}

export interface ValidatedPage<T> {
  valid: Validated<T>[];
  invalid: Rejected[];
}

/**
 * Validates each record on its own: one bad record never costs its neighbours. `fast`, when
 * given, is tried first: a value from it is taken as is, null sends the record to the schema
 * (it must accept only records the schema accepts, with the schema's value: see fastFill).
 */
export function validateRecords<T>(
  schema: z.ZodType<T, unknown>,
  records: unknown[],
  keyField: string,
  int64Key = false,
  fast?: (raw: unknown) => T | null,
  pageText?: string,
): ValidatedPage<T> {
  const valid: Validated<T>[] = [];
  const invalid: Rejected[] = [];
  const mayHoldBadText = pageText === undefined || mayHoldUnstorableText(pageText);
  records.forEach((raw, index) => {
    const textIssue = mayHoldBadText ? unstorableText(raw) : null;
    const quick = fast && textIssue === null ? fast(raw) : null;
    if (quick !== null) {
      valid.push({ index, value: quick, raw });
      return;
    }
    const parsed = schema.safeParse(raw);
    if (parsed.success && textIssue === null) valid.push({ index, value: parsed.data, raw });
    else {
      const reason = [parsed.success ? null : formatZodIssues(parsed.error), textIssue]
        .filter((r) => r !== null)
        .join('; ');
      invalid.push({ index, raw, reason: printable(reason), key: readKey(raw, keyField, int64Key) });
    }
  });
  return { valid, invalid };
}

function readKey(raw: unknown, field: string, int64Key: boolean): string | null {
  if (!raw || typeof raw !== 'object') return null;
  const v = (raw as Record<string, unknown>)[field];
  const t = wireNumberText(v);
  if (!t || t.length === 0 || t.length > MAX_KEY_LENGTH) return null;
  // Same canonical form as int64Id, so a later valid fetch resolves this entry.
  if (int64Key && isDecimalText(t)) {
    const d = new Decimal(t);
    // Never expanded beyond the key limit ("1e200000" stays as sent).
    if (d.isInteger() && !d.isNegative() && d.e < MAX_KEY_LENGTH) return d.toFixed(0);
  }
  // Stored as text, which cannot hold U+0000 or a lone surrogate.
  return printable(t);
}
