/** Simulator: JSON text written by hand to keep the wire's quirks (raw decimals, ids). */
import { Decimal } from '../src/decimal/decimal.js';
import { hash53 } from './prng.js';

/**
 * JSON text written by hand, because the wire quirks cannot come from JSON.stringify of JS
 * values: a decimal written as a raw JSON number keeps every digit ("1.234567890123456789"),
 * ids near 10^13 appear as bare numbers, and small quantities use exponent notation.
 */
export class Raw {
  constructor(readonly text: string) {}
}

export type Json = Raw | string | number | boolean | null | undefined | Json[] | { [key: string]: Json };

/** Object keys as written (quoted, with the colon): the same few dozen names on every record of every page. */
const writtenKeys = new Map<string, string>();

function writtenKey(key: string): string {
  let text = writtenKeys.get(key);
  if (text === undefined) {
    text = `${JSON.stringify(key)}:`;
    if (writtenKeys.size < 10_000) writtenKeys.set(key, text);
  }
  return text;
}

/** The value's JSON text: members whose value is undefined are left out, as JSON.stringify leaves them out. */
export function writeJson(value: Json): string {
  switch (typeof value) {
    case 'string':
      return JSON.stringify(value);
    case 'number':
      if (!Number.isSafeInteger(value)) throw new TypeError(`non-integer JS number ${value} on the wire: use Raw`);
      return String(value);
    case 'boolean':
      return value ? 'true' : 'false';
    case 'undefined':
      return 'null';
  }
  if (value === null) return 'null';
  if (value instanceof Raw) return value.text;
  // Strings built by concatenation: a page is written once per request, the sandbox's largest CPU cost.
  if (Array.isArray(value)) {
    let out = '[';
    for (let i = 0; i < value.length; i++) out += i === 0 ? writeJson(value[i]) : `,${writeJson(value[i])}`;
    return `${out}]`;
  }
  let out = '';
  for (const key in value) {
    const v = value[key];
    if (v !== undefined) out += (out === '' ? '{' : ',') + writtenKey(key) + writeJson(v);
  }
  return out === '' ? '{}' : `${out}}`;
}

/** How one record writes its decimals and ids: chosen from the record's id, so it is stable. */
export type Style = 'string' | 'number' | 'exponent';

export function styleOf(id: string, salt = 0): Style {
  const h = hash53(id, 7 + salt) % 10;
  if (h < 5) return 'string';
  if (h < 8) return 'number';
  return 'exponent';
}

/** "0.00054044" -> "5.4044E-4"; "0.0009" -> "9.0E-4" (the forms captured from the real API). */
export function exponentText(text: string): string {
  const neg = text.startsWith('-');
  const body = neg ? text.slice(1) : text;
  if (body.startsWith('0.')) {
    // String surgery for the hot path (small quantities on every fills page).
    const frac = body.slice(2);
    let k = 0;
    while (k < frac.length && frac.charCodeAt(k) === 48) k++;
    const digits = frac.slice(k).replace(/0+$/, '');
    if (digits.length > 0)
      return `${neg ? '-' : ''}${digits[0]}.${digits.length > 1 ? digits.slice(1) : '0'}E-${k + 1}`;
  }
  const d = new Decimal(text);
  const [mant, exp] = d.toExponential().split('e') as [string, string];
  const m = mant.includes('.') ? mant : `${mant}.0`;
  return `${m}E${exp.startsWith('+') ? exp.slice(1) : exp}`;
}

/** |x| < 0.001 and x != 0, from the text alone. */
export function isSmall(text: string): boolean {
  const body = text.startsWith('-') ? text.slice(1) : text;
  return body.startsWith('0.000') && /[1-9]/.test(body);
}

/** A decimal in the record's style; exponent notation only for small non-zero magnitudes. */
export function dec(text: string | undefined, style: Style): Json {
  if (text === undefined) return undefined;
  if (style === 'number') return new Raw(text);
  if (style === 'exponent' && isSmall(text)) return exponentText(text);
  return text;
}

/** An int64 id as a JSON string or a bare JSON number. */
export function id(text: string, style: Style): Json {
  return style === 'number' ? new Raw(text) : text;
}
