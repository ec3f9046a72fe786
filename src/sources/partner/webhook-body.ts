/** What a webhook body must be before it is stored: exact UTF-8, text Postgres can hold, numbers within numeric, real
 * dates, ids within the index limit; and its canonical hash.
 */
import { createHash } from 'node:crypto';
import { Decimal } from '../../decimal/decimal.js';
import { isLosslessNumber, parseJsonLossless, type LosslessNumber } from '../../decimal/json.js';
import { EVENT_DECIMAL_FIELDS } from './schemas.js';
import { requireTimestampKey } from './transform.js';

/**
 * Longest eventId / orderId kept, in UTF-8 bytes: they are btree keys (Postgres refuses index rows over ~2,700 bytes).
 */
export const MAX_ID_BYTES = 512;
/** Postgres numeric: at most 131,072 digits before the decimal point and 16,383 after. */
const NUMERIC_MAX_INT_DIGITS = 131_072;
const NUMERIC_MAX_SCALE = 16_383;
const ID_FIELDS = ['eventId', 'orderId'] as const;
const TIMESTAMP_FIELDS = ['createdAt', 'orderStateUpdatedAt'] as const;
const DATE_TIME = /^(\d{4})-(\d{2})-(\d{2})[Tt ](\d{2}):(\d{2}):(\d{2})(?:\.\d{1,9})?(?:[Zz]|([+-])(\d{2}):?(\d{2}))$/;

const utf8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

/**
 * The deepest nesting of arrays and objects a body may have. An order event is flat (depth 1); the limit leaves room
 * for extra fields the partner may add, and bounds every walk after it (parsers, storable checks, canonical hash,
 * serialisation), which recurse once per level: a body nested 5,000 deep overflowed the stack (issue 43).
 */
export const MAX_BODY_DEPTH = 64;

/**
 * Whether JSON text nests arrays and objects deeper than `limit`, read without parsing (one pass, no recursion, strings
 * skipped); stops at the first level over it. Text that is not JSON gets an answer too: its brackets outside strings
 * are counted, which bounds whatever a parser would build from it.
 */
export function nestedDeeperThan(text: string, limit: number): boolean {
  let depth = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 34) {
      // A string: skip to its closing quote (a backslash escapes the character after it).
      for (i++; i < text.length; i++) {
        const d = text.charCodeAt(i);
        if (d === 92) i++;
        else if (d === 34) break;
      }
    } else if (c === 91 || c === 123) {
      if (++depth > limit) return true;
    } else if (c === 93 || c === 125) depth--;
  }
  return false;
}

/**
 * Why an event is dated too far ahead of the receiver's clock to be believed, or null. A sender's clock may run a
 * little fast (`maxSkewSeconds`); an event from further ahead is forged or from a broken clock, and applying it would
 * pin its order's state for good (a stored state only moves to a later orderStateUpdatedAt).
 */
export function datedAheadReason(
  event: { createdAt: string; orderStateUpdatedAt: string },
  now: Date,
  maxSkewSeconds: number,
): string | null {
  for (const field of ['orderStateUpdatedAt', 'createdAt'] as const) {
    // A key is "YYYY-MM-DDTHH:MM:SS.fffffffffZ" in UTC: milliseconds are precision enough for a skew in seconds.
    const key = requireTimestampKey(event[field]);
    const ahead = Date.parse(`${key.slice(0, 23)}Z`) - now.getTime();
    if (ahead > maxSkewSeconds * 1000)
      return (
        `${field} ${showValue(event[field])} is ${Math.floor(ahead / 1000)} s ahead of the receiver's clock ` +
        `(${now.toISOString()}), more than the ${maxSkewSeconds} s allowed (webhooks.maxClockSkewSeconds): ` +
        `quarantined, never applied; polling keeps the order's state`
      );
  }
  return null;
}

/** The body as text, or null when its bytes are not valid UTF-8 (never rewritten to U+FFFD). */
export function decodeUtf8(bytes: Uint8Array): string | null {
  try {
    return utf8.decode(bytes);
  } catch {
    return null;
  }
}

/** A value for a reason: JSON-quoted (NUL and lone surrogates escaped), long ones cut with their length. */
export function showValue(value: unknown): string {
  const text =
    typeof value === 'string'
      ? value
      : isLosslessNumber(value)
        ? (value as LosslessNumber).value
        : (JSON.stringify(value) ?? String(value));
  const cut = text.length > 60 ? `${text.slice(0, 40)}… (${text.length} characters)` : text;
  return JSON.stringify(cut);
}

/**
 * The first reason Postgres would refuse this parsed body, in words naming the field and the
 * value; null when every part of it can be stored (jsonb raw, text columns, numeric, timestamptz).
 */
export function unstorableReason(parsed: unknown): string | null {
  const found = walk(parsed, '');
  if (found) return found;
  if (!parsed || typeof parsed !== 'object' || Array.isArray(parsed)) return null;
  const record = parsed as Record<string, unknown>;
  for (const field of ID_FIELDS) {
    const v = record[field];
    if (typeof v === 'string' && Buffer.byteLength(v, 'utf8') > MAX_ID_BYTES)
      return `${field}: ${Buffer.byteLength(v, 'utf8')} bytes, longer than the ${MAX_ID_BYTES} an id may have (got ${showValue(v)})`;
  }
  for (const field of TIMESTAMP_FIELDS) {
    const v = record[field];
    if (typeof v === 'string') {
      const why = invalidDateTime(v);
      if (why) return `${field}: ${why} (got ${showValue(v)})`;
    }
  }
  for (const field of EVENT_DECIMAL_FIELDS) {
    const v = record[field];
    if (typeof v === 'string' && v.trim() !== '') {
      const why = numericOutOfRange(v.trim());
      if (why) return `${field}: ${why} (got ${showValue(v)})`;
    }
  }
  return null;
}

/**
 * Every key and value of the body: text without NUL or lone surrogates, numbers within numeric (jsonb stores them as
 * numeric).
 */
function walk(value: unknown, path: string): string | null {
  if (typeof value === 'string') return badText(value, path || 'body');
  if (isLosslessNumber(value)) {
    const why = numericOutOfRange((value as LosslessNumber).value);
    return why ? `${path || 'body'}: ${why} (got ${showValue(value)})` : null;
  }
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) {
      const r = walk(value[i], `${path}[${i}]`);
      if (r) return r;
    }
    return null;
  }
  if (value && typeof value === 'object') {
    for (const [k, v] of Object.entries(value)) {
      const where = path ? `${path}.${k}` : k;
      const keyWhy = badText(k, `key ${JSON.stringify(where)}`);
      if (keyWhy) return keyWhy;
      const r = walk(v, where);
      if (r) return r;
    }
  }
  return null;
}

const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

/** True when the string has no lone UTF-16 surrogate (String.prototype.isWellFormed, without es2024 typings). */
export function isWellFormed(text: string): boolean {
  return !LONE_SURROGATE.test(text);
}

function badText(text: string, where: string): string | null {
  if (text.includes('\u0000'))
    return `${where}: contains the NUL character \\u0000, which Postgres text cannot hold (got ${showValue(text)})`;
  if (!isWellFormed(text))
    return `${where}: contains a lone UTF-16 surrogate, which is not a character (got ${showValue(text)})`;
  return null;
}

/**
 * Why a decimal text is outside Postgres numeric, or null (also null for text that is not a number: the schema judges
 * that).
 */
export function numericOutOfRange(text: string): string | null {
  let d: Decimal;
  try {
    d = new Decimal(text);
  } catch {
    return null;
  }
  if (!d.isFinite()) return 'is not a finite number';
  if (d.isZero()) return null;
  if (d.e >= NUMERIC_MAX_INT_DIGITS)
    return `has ${d.e + 1} digits before the decimal point, more than the ${NUMERIC_MAX_INT_DIGITS} Postgres numeric holds`;
  if (d.decimalPlaces() > NUMERIC_MAX_SCALE)
    return `has ${d.decimalPlaces()} decimal places, more than the ${NUMERIC_MAX_SCALE} Postgres numeric holds`;
  return null;
}

/** Why a wire date-time is not a real instant Postgres can hold (2026-02-30, year 0000, 25:00), or null. */
export function invalidDateTime(text: string): string | null {
  const m = DATE_TIME.exec(text.trim());
  if (!m) return 'not an ISO 8601 date-time';
  const [year, month, day, hour, minute, second] = m.slice(1, 7).map(Number) as [
    number,
    number,
    number,
    number,
    number,
    number,
  ];
  if (year < 1) return 'year 0000 does not exist (the year before 0001 is 1 BC)';
  if (month < 1 || month > 12) return `month ${m[2]} does not exist`;
  const days = new Date(Date.UTC(year, month, 0)).getUTCDate();
  if (day < 1 || day > days) return `${m[1]}-${m[2]} has no day ${m[3]} (it has ${days} days)`;
  if (hour > 23 || minute > 59 || second > 59) return `${m[4]}:${m[5]}:${m[6]} is not a time of day`;
  if (m[7] && (Number(m[8]) > 15 || Number(m[9]) > 59)) return `offset ${m[7]}${m[8]}:${m[9]} is not a UTC offset`;
  return null;
}

/**
 * sha256 of the body's canonical JSON: keys sorted, no spacing, numbers as sent. Two deliveries
 * of one event differ only in spacing or key order; anything else is another body.
 */
export function canonicalHash(parsed: unknown): string {
  return createHash('sha256').update(canonical(parsed)).digest('hex');
}

/** canonicalHash of a JSON text (a stored jsonb read back as text). */
export function canonicalHashOfText(text: string): string {
  return canonicalHash(parseJsonLossless(text));
}

function canonical(value: unknown): string {
  if (isLosslessNumber(value)) return (value as LosslessNumber).value;
  if (Array.isArray(value)) return `[${value.map(canonical).join(',')}]`;
  if (value && typeof value === 'object') {
    const keys = Object.keys(value).sort();
    return `{${keys.map((k) => `${JSON.stringify(k)}:${canonical((value as Record<string, unknown>)[k])}`).join(',')}}`;
  }
  return JSON.stringify(value) ?? 'null';
}
