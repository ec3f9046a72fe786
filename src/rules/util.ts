/** Small helpers of the rules: timestamp texts to the nanosecond, decimal texts and differences, increments, address
 * tags.
 */
import { Decimal } from '../decimal/decimal.js';

const TS = /^(\d{4}-\d{2}-\d{2})[T ](\d{2}:\d{2}:\d{2})(?:\.(\d+))?(Z|[+-]\d{2}:?\d{2})?$/i;

/**
 * Nanoseconds since the epoch of an ISO timestamp text, exactly. Webhook times carry 9 fraction
 * digits, which neither Date nor plain text comparison handles ("...06.9Z" sorts after
 * "...06.894070237Z" as text). null when the text is not an ISO timestamp.
 */
export function timestampNanos(text: string): bigint | null {
  const m = TS.exec(text.trim());
  if (!m) return null;
  const zone = m[4] && m[4].toUpperCase() !== 'Z' ? m[4] : 'Z';
  const ms = Date.parse(`${m[1]}T${m[2]}${zone.length === 5 ? `${zone.slice(0, 3)}:${zone.slice(3)}` : zone}`);
  if (Number.isNaN(ms)) return null;
  const fraction = (m[3] ?? '').padEnd(9, '0').slice(0, 9);
  return BigInt(ms) * 1_000_000n + BigInt(fraction);
}

/** Compares two timestamp texts to the nanosecond; falls back to text order when unparseable. */
export function compareTimestampText(a: string, b: string): number {
  const na = timestampNanos(a);
  const nb = timestampNanos(b);
  if (na === null || nb === null) return a < b ? -1 : a > b ? 1 : 0;
  return na < nb ? -1 : na > nb ? 1 : 0;
}

/** actual - expected, or null when either side is missing. */
export function diff(actual: Decimal | null | undefined, expected: Decimal | null | undefined): Decimal | null {
  return actual == null || expected == null ? null : actual.minus(expected);
}

/** value is an integer multiple of step (step > 0). */
export function isMultiple(value: Decimal, step: Decimal): boolean {
  return value.mod(step).isZero();
}

export function unitOfScale(scale: number): Decimal {
  return new Decimal(10).pow(-scale);
}

/** The text after the first colon is a tag or memo: `addr:tag` and `addr` are the same wallet. */
export function stripTag(address: string): string {
  const i = address.indexOf(':');
  return i < 0 ? address : address.slice(0, i);
}

export const HOUR_MS = 3_600_000;

/** Hours between two instants, to 2 decimals (an age the report shows). */
export function hoursOf(ms: number): Decimal {
  return new Decimal(ms).div(HOUR_MS).toDecimalPlaces(2);
}
