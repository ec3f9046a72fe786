/** Decimals and integers as both APIs send them (JSON string, JSON number kept exact), their zod schemas and how a bad
 * value is shown.
 */
import { z } from 'zod';
import { isLosslessNumber } from '../../decimal/json.js';
import { Decimal, InvalidDecimalError, isDecimalText } from '../../decimal/decimal.js';
import { NOTHING } from './zod-issues.js';
import { numericRangeIssue } from './storable.js';

/**
 * The exact text of a marked number (a JSON number that the exchange's fast parser, exchange/wire.ts,
 * turned into a string prefixed with \u0001), or null when the value is not one. The partner's
 * lossless parser hands numbers over as LosslessNumber: both forms are read here.
 */
export function markedNumber(v: unknown): string | null {
  return typeof v === 'string' && v.charCodeAt(0) === 1 ? v.slice(1) : null;
}

/** A wire value in an issue message: numbers as their digits, strings quoted and cut at 60 characters. */
export function showWireValue(value: unknown): string {
  const marked = markedNumber(value);
  const digits = marked ?? (isLosslessNumber(value) ? (value as { value: string }).value : null);
  if (digits !== null) return digits.length > 60 ? `${digits.slice(0, 60)}... (${digits.length} characters)` : digits;
  if (typeof value === 'string' && value.length > 60)
    return `${JSON.stringify(value.slice(0, 60))}... (${value.length} characters)`;
  if (typeof value === 'string') return JSON.stringify(value.length > 60 ? `${value.slice(0, 60)}...` : value);
  if (value === undefined) return NOTHING;
  try {
    return JSON.stringify(value) ?? String(value);
  } catch {
    return String(value);
  }
}

/** The text of a numeric wire value (marked or lossless number, trimmed string, safe integer), or null. */
export function wireNumberText(v: unknown): string | null {
  const marked = markedNumber(v);
  if (marked !== null) return marked;
  if (isLosslessNumber(v)) return (v as { value: string }).value;
  if (typeof v === 'string') return v.trim();
  if (typeof v === 'number' && Number.isSafeInteger(v)) return String(v);
  return null;
}

const PLAIN_DECIMAL = /^-?\d+(\.\d+)?$/;

/**
 * Canonical decimal text for Postgres numeric and for comparisons: plain text passes as is (the
 * common case, no Decimal built), exponent notation and other forms go through Decimal.
 */
export function canonicalDecimal(t: string): string | null {
  if (PLAIN_DECIMAL.test(t)) return t;
  if (!isDecimalText(t)) return null;
  return new Decimal(t).toString();
}

/** The value of decimalText, or null where the schema reports an issue (shared with the exchange's fills fast path). */
export function readDecimal(v: unknown): string | null {
  const t = wireNumberText(v);
  return t === null ? null : canonicalDecimal(t);
}

/**
 * readDecimal of a value its schema already accepted (wireDecimal: the partner's records keep their wire
 * values until the transform writes them to numeric); throws on anything else.
 */
export function requireDecimal(v: unknown): string {
  const c = readDecimal(v);
  if (c === null) throw new InvalidDecimalError(v);
  return c;
}

/** A decimal amount or price: "12.50", 12.50, "9.0E-4" -> its plain decimal text (exchange records). */
export const decimalText = z.unknown().transform((v, ctx) => {
  const c = readDecimal(v);
  if (c === null) {
    ctx.addIssue({ code: 'custom', message: `must be a decimal number (got ${showWireValue(v)})` });
    return z.NEVER;
  }
  const range = numericRangeIssue(c);
  if (range !== null) {
    ctx.addIssue({ code: 'custom', message: `${range} (got ${showWireValue(v)})` });
    return z.NEVER;
  }
  return c;
});

/** A decimal that readDecimal accepts and numeric can hold (the fills fast path's check). */
export function readStorableDecimal(v: unknown): string | null {
  const c = readDecimal(v);
  return c === null || numericRangeIssue(c) !== null ? null : c;
}

/** The text of a decimal as wireDecimal reads it: a decimal string, LosslessNumber or safe integer; else null. */
export function wireDecimalText(v: unknown): string | null {
  if (typeof v === 'string') return isDecimalText(v) ? v : null;
  if (isLosslessNumber(v)) {
    const t = (v as { value: string }).value;
    return isDecimalText(t) ? t : null;
  }
  return typeof v === 'number' && Number.isSafeInteger(v) ? String(v) : null;
}

/** Whether wireDecimal accepts the value: a decimal (wireDecimalText) that numeric can hold (the fast paths' check). */
export function isStorableWireDecimal(v: unknown): boolean {
  const t = wireDecimalText(v);
  return t !== null && numericRangeIssue(t) === null;
}

/**
 * A decimal as the wire sends it: "12.50", 12.50 (LosslessNumber) or "5.4E-4", kept as is (partner
 * records: the transform writes it to numeric).
 */
export const wireDecimal = z.unknown().superRefine((v, ctx) => {
  const t = wireDecimalText(v);
  if (t === null) {
    ctx.addIssue({ code: 'custom', message: `must be a decimal number (got ${showWireValue(v)})` });
    return;
  }
  const range = numericRangeIssue(t);
  if (range !== null) ctx.addIssue({ code: 'custom', message: `${range} (got ${showWireValue(v)})` });
});

/** A non-negative integer such as a precision: LosslessNumber, a plain integer string or a safe integer; kept as is. */
export const wireInteger = z.custom<unknown>(
  (v) =>
    (isLosslessNumber(v) && /^\d+$/.test((v as { value: string }).value)) ||
    (typeof v === 'string' && /^\d+$/.test(v)) ||
    (typeof v === 'number' && Number.isSafeInteger(v) && v >= 0),
  { error: (issue) => `must be a non-negative integer (got ${showWireValue(issue.input)})` },
);
