/** Lossless JSON: parse and serialize without turning numbers into JS doubles. */
import { parse, stringify, isLosslessNumber, LosslessNumber } from 'lossless-json';

export { isLosslessNumber, LosslessNumber };

export class InvalidJsonError extends Error {
  readonly code = 'INVALID_JSON';
  constructor(
    message: string,
    readonly text: string,
  ) {
    super(message);
    this.name = 'InvalidJsonError';
  }
}

/**
 * Parses an API body without ever turning a number into a JS double: every JSON number
 * becomes a LosslessNumber carrying its exact text (ids near 2^63, 18-decimal amounts).
 * The native parser reads the text first, with each number in value position turned into a marked
 * string (a partner page, whose amounts are strings or numbers record by record, about four times
 * faster than the lossless parser); the lossless parser reads what that path cannot vouch for.
 */
export function parseJsonLossless(text: string): unknown {
  const native = nativeWhenExact(text);
  if (native !== NOT_EXACT) return native;
  try {
    return parse(text);
  } catch (err) {
    throw new InvalidJsonError(`invalid JSON: ${(err as Error).message}`, text);
  }
}

const NOT_EXACT: unique symbol = Symbol('not exact');
/** An object member's key: a closing quote (not escaped: even backslashes before it), then a colon. */
const MEMBER_KEY = /(?<!\\)(?:\\\\)*"\s*:/g;

/**
 * A JSON number (exactly JSON's grammar: no leading zero) where a value stands: after a colon, a comma or a
 * bracket, before a comma or a closing bracket. A match inside a string is harmless: the quote inserted before the
 * mark ends that string and leaves the mark's escape outside any string, which JSON.parse always refuses.
 */
export const VALUE_NUMBER = /([:,[]\s*)(-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?)(?=\s*[,\]}])/g;

/**
 * The lossless parser's value, read by JSON.parse: numbers in value position marked first (VALUE_NUMBER), then each
 * marked string turned into a LosslessNumber. Kept only when it is the lossless parser's value: the text holds no
 * mark of its own, JSON.parse took the marked text, no number was left unmarked (a bare number as the whole text),
 * and no object repeats a key (the lossless parser refuses a repeat with another value; JSON.parse keeps the last
 * silently), which the count of member keys in the text against the parsed objects' tells. A text that is not JSON
 * is left to the lossless parser, whose message names the position.
 */
function nativeWhenExact(text: string): unknown {
  if (text.includes('\\u0001')) return NOT_EXACT;
  let value: unknown;
  try {
    value = JSON.parse(text.replace(VALUE_NUMBER, `$1"\\u0001$2"`));
  } catch {
    return NOT_EXACT;
  }
  const keys = keysUnlessNumber(value, true);
  if (keys === null) return NOT_EXACT;
  MEMBER_KEY.lastIndex = 0;
  let inText = 0;
  while (MEMBER_KEY.exec(text)) inText++;
  return inText === keys ? value : NOT_EXACT;
}

/** Serializes a value parsed by parseJsonLossless back to JSON text, digits intact. */
export function stringifyJsonLossless(value: unknown): string {
  const text = stringify(value, (_key, v) => (typeof v === 'bigint' ? new LosslessNumber(v.toString()) : v));
  if (text === undefined) throw new TypeError('value cannot be serialized to JSON');
  return text;
}

/** Whether a value holds a LosslessNumber (or a bigint) anywhere: then only stringifyJsonLossless writes its digits. */
function holdsExactNumber(value: unknown): boolean {
  if (typeof value === 'bigint') return true;
  if (value === null || typeof value !== 'object') return false;
  if (isLosslessNumber(value)) return true;
  if (Array.isArray(value)) {
    for (const v of value) if (holdsExactNumber(v)) return true;
    return false;
  }
  // Parsed JSON: plain objects, whose enumerable properties are all their own.
  for (const k in value) if (holdsExactNumber((value as Record<string, unknown>)[k])) return true;
  return false;
}

/**
 * stringifyJsonLossless for a value parsed by parseJsonLossless, the same text: the native JSON.stringify where the
 * value holds no LosslessNumber (parsed JSON then holds only what JSON.stringify writes the same way, several times
 * faster: a partner listing serializes every record it receives), the lossless stringifier otherwise.
 */
export function stringifyParsedJson(value: unknown): string {
  if (holdsExactNumber(value)) return stringifyJsonLossless(value);
  const text = JSON.stringify(value);
  if (text === undefined) throw new TypeError('value cannot be serialized to JSON');
  return text;
}

/**
 * A number read back through the lossless parser (jsonb columns such as run.counts, run.stages,
 * run.requests: numbers arrive as LosslessNumber objects carrying their exact text) as a JS number,
 * for counts and timings that fit a double; null when absent, empty or not a finite number.
 */
export function jsonNumber(value: unknown): number | null {
  if (value === null || value === undefined || value === '') return null;
  const n = Number(
    isLosslessNumber(value) ? (value as LosslessNumber).value : typeof value === 'object' ? String(value) : value,
  );
  return Number.isFinite(n) ? n : null;
}

/**
 * The number of object members in a value parsed by JSON.parse, or null when it holds a JS number anywhere (a JSON
 * number turned into a double, its digits possibly lost). `unmark`: also turn every marked number (a string starting
 * with \u0001, VALUE_NUMBER) into a LosslessNumber, in place. A "__proto__" member JSON.parse made is an own property,
 * so the assignment writes the member, not the prototype.
 */
export function keysUnlessNumber(value: unknown, unmark = false): number | null {
  let keys = 0;
  const stack: unknown[] = [value];
  // One container's member (an array's item or an object's value): walked, or a marked number turned back.
  const visit = (members: Record<string, unknown>, k: string | number) => {
    const item = members[k];
    if (typeof item !== 'string') stack.push(item);
    else if (unmark && item.charCodeAt(0) === 1) members[k] = new LosslessNumber(item.slice(1));
  };
  while (stack.length) {
    const v = stack.pop();
    if (typeof v === 'number') return null;
    if (v === null || typeof v !== 'object') continue;
    if (Array.isArray(v)) for (let i = 0; i < v.length; i++) visit(v as unknown as Record<string, unknown>, i);
    else
      for (const k in v) {
        keys++;
        visit(v as Record<string, unknown>, k);
      }
  }
  return keys;
}
