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

export function writeJson(value: Json): string {
  if (value instanceof Raw) return value.text;
  if (value === null) return 'null';
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
  if (Array.isArray(value)) return `[${value.map(writeJson).join(',')}]`;
  const parts: string[] = [];
  for (const [k, v] of Object.entries(value)) if (v !== undefined) parts.push(`${JSON.stringify(k)}:${writeJson(v)}`);
  return `{${parts.join(',')}}`;
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
