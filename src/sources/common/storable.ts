/** What the database can hold, checked at validation: numeric range, bigint ids, real calendar dates, text without NUL
 * or lone surrogates, keys within the index limit.
 */
import { Decimal, isDecimalText } from '../../decimal/decimal.js';
import { isLosslessNumber } from '../../decimal/json.js';

/**
 * Postgres numeric holds up to 131072 digits before the decimal point and 16383 after it; a
 * value beyond fails its whole statement with "value overflows numeric format". A record
 * carrying one is quarantined at validation instead, with the field and this reason.
 */
export const NUMERIC_MAX_INTEGER_DIGITS = 131_072;
export const NUMERIC_MAX_FRACTION_DIGITS = 16_383;

/** The largest bigint: an exchange id beyond it cannot be stored ("out of range for type bigint"). */
export const BIGINT_MAX = '9223372036854775807';

/**
 * The longest id or key accepted. Ids are unique keys and quarantine keys, and a btree entry
 * holds about 2700 bytes at most: 200 characters (800 bytes of UTF-8 at worst) stays well inside.
 */
export const MAX_KEY_LENGTH = 200;

const PLAIN = /^[+-]?(\d*)(?:\.(\d*))?$/;

/**
 * Why a decimal text cannot be stored in numeric, or null when it can. Plain text is counted as
 * written (a plain string is stored as sent, trailing zeros and all); other forms by their value.
 */
export function numericRangeIssue(text: string): string | null {
  const t = text.trim();
  // The common case, checked without a regex: plain text shorter than either limit fits.
  if (t.length <= NUMERIC_MAX_FRACTION_DIGITS && !t.includes('e') && !t.includes('E')) return null;
  let before: number;
  let after: number;
  const m = PLAIN.exec(t);
  if (m) {
    before = m[1]!.replace(/^0+/, '').length;
    after = (m[2] ?? '').length;
  } else {
    if (!isDecimalText(t)) return null;
    const d = new Decimal(t);
    if (d.isZero()) return null;
    before = d.e >= 0 ? d.e + 1 : 0;
    after = d.decimalPlaces();
  }
  if (before > NUMERIC_MAX_INTEGER_DIGITS)
    return `is too large for the database: ${before} digits before the decimal point, numeric holds at most ${NUMERIC_MAX_INTEGER_DIGITS}`;
  if (after > NUMERIC_MAX_FRACTION_DIGITS)
    return `has too many decimals for the database: ${after} digits after the decimal point, numeric holds at most ${NUMERIC_MAX_FRACTION_DIGITS}`;
  return null;
}

/** Whether canonical digits (no sign, no leading zeros) fit a Postgres bigint. */
export function fitsBigint(digits: string): boolean {
  return digits.length < BIGINT_MAX.length || (digits.length === BIGINT_MAX.length && digits <= BIGINT_MAX);
}

const DAYS_IN_MONTH = [31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];

/**
 * Why an ISO date ("YYYY-MM-DD") and time ("HH:MM:SS") are not a real moment the database can
 * hold, or null. JavaScript's Date rolls 2026-02-30 over to March 2 and Postgres refuses it, year
 * 0000 included: both are refused here with the reason.
 */
export function calendarIssue(day: string, time: string, zone?: string): string | null {
  // Fixed positions (ISO_TIMESTAMP's groups): twice per partner order, where split and map cost more than the check.
  const y = Number(day.slice(0, 4));
  const mo = Number(day.slice(5, 7));
  const d = Number(day.slice(8, 10));
  const h = Number(time.slice(0, 2));
  const mi = Number(time.slice(3, 5));
  const s = Number(time.slice(6, 8));
  if (y < 1) return `year ${day.slice(0, 4)} does not exist (the calendar starts at year 0001)`;
  if (mo < 1 || mo > 12) return `month ${day.slice(5, 7)} does not exist`;
  const leap = (y % 4 === 0 && y % 100 !== 0) || y % 400 === 0;
  const days = mo === 2 && leap ? 29 : DAYS_IN_MONTH[mo - 1]!;
  if (d < 1 || d > days)
    return `${day} is not a calendar date (month ${day.slice(5, 7)} of ${day.slice(0, 4)} has ${days} days)`;
  if (h > 23 || mi > 59 || s > 59) return `${time} is not a time of day`;
  if (zone && zone.toUpperCase() !== 'Z') {
    const zm = /^[+-](\d{2}):?(\d{2})$/.exec(zone);
    if (!zm || Number(zm[1]) > 15 || Number(zm[2]) > 59) return `${zone} is not a UTC offset`;
  }
  return null;
}

const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;
const LONE_SURROGATES = new RegExp(LONE_SURROGATE.source, 'g');

/** Why a string cannot be stored as text or inside jsonb (NUL, a lone surrogate), or null. */
export function textIssue(s: string): string | null {
  if (s.includes('\u0000')) return 'holds the character \\u0000, which the database cannot store';
  if (LONE_SURROGATE.test(s)) return 'holds a lone UTF-16 surrogate (not a character), which the database cannot store';
  return null;
}

/** Text of a field path or key for a reason (itself text: NUL and lone surrogates escaped). */
export function printable(s: string): string {
  // eslint-disable-next-line no-control-regex -- NUL is what is looked for: Postgres text cannot hold it
  return s.replace(/\u0000/g, '\\u0000').replace(LONE_SURROGATES, (c) => `\\u${c.charCodeAt(0).toString(16)}`);
}

/**
 * Whether JSON text (a page as received, a record as serialized) can hold a string the database refuses: JSON writes
 * NUL and a lone surrogate only as the escapes \u0000 and \udXXX (valid UTF-8 cannot carry a lone surrogate), so text
 * without such an escape never does, and the walk of unstorableText can be skipped. A match may be a false alarm (an
 * escaped backslash before "u0000"): the walk then decides.
 */
export function mayHoldUnstorableText(jsonText: string): boolean {
  return /\\u(?:0000|[dD][89a-fA-F])/.test(jsonText);
}

/** Marks a member whose key itself cannot be stored (its path carries the reason). */
const KEY_ISSUE: unique symbol = Symbol('key issue');

/**
 * The first string or key of a record that the database cannot store (textIssue), as
 * "path: reason", or null. The path names the field ("extra.note"). Walked with a stack of its own, in document order:
 * a record nested thousands deep must not overflow the call stack.
 */
export function unstorableText(value: unknown, path = ''): string | null {
  const stack: Array<{ value: unknown; path: string }> = [{ value, path }];
  while (stack.length) {
    const { value: v, path: here } = stack.pop()!;
    if (v === KEY_ISSUE) return here;
    if (typeof v === 'string') {
      const issue = textIssue(v);
      if (issue !== null) return `${here || '(record)'}: ${issue}`;
      continue;
    }
    if (v === null || typeof v !== 'object' || isLosslessNumber(v)) continue;
    const members: Array<{ value: unknown; path: string }> = [];
    if (Array.isArray(v))
      v.forEach((item, i) => members.push({ value: item, path: here ? `${here}.${i}` : String(i) }));
    else
      for (const [k, item] of Object.entries(v)) {
        const at = here ? `${here}.${printable(k)}` : printable(k);
        const keyIssue = textIssue(k);
        // A bad key is reported where its member would be: before the members after it, after those before it.
        members.push(
          keyIssue === null ? { value: item, path: at } : { value: KEY_ISSUE, path: `${at}: the key ${keyIssue}` },
        );
      }
    for (let i = members.length - 1; i >= 0; i--) stack.push(members[i]!);
  }
  return null;
}
