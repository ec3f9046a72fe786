/** Fast lossless reading of Exchange API bodies: JSON numbers kept as their exact text before the native parser. */
/**
 * Fast lossless reading of Exchange API bodies. A fills page is 1000 records; the generic
 * lossless-json parser costs more per page than the whole database write. Instead every JSON
 * number is turned into a marked string before the native JSON.parse, so its exact text
 * survives (ids near 2^63, 18-decimal amounts, "5.4044E-4") and schemas still tell a JSON
 * number from a JSON string. Raw records are written back with the numbers unmarked, so the
 * stored raw JSON keeps the wire's types and digits. markedNumber (common/wire-decimal.ts) reads
 * a marked number back.
 */

import { parseJsonLossless, parseMarked, stringifyParsedJson } from '../../decimal/json.js';

// A JSON string (unrolled loop, escapes included) or a JSON number outside strings.
const TOKEN = /"[^"\\]*(?:\\.[^"\\]*)*"|-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?/g;
const MARKED = /"\\u0001([^"]*)"/g;

/**
 * JSON.parse keeping every number's text as a marked string. Throws on text that is not JSON. Pages are marked by
 * markJsonNumbers first (decimal/json.ts parseMarked: one pass; a fills page about twice as fast as the tokenizing path); its value is kept when
 * JSON.parse took it and no number is left unmarked, else the text is tokenized string by string. An object that
 * repeats a key keeps the last value, as JSON.parse does.
 */
export function parseJsonMarked(text: string): unknown {
  const parsed = parseMarked(text);
  return parsed === null ? parseJsonTokenized(text) : parsed.value;
}

/**
 * parseJsonMarked for a body whose repeated keys must be refused as the lossless parser refuses them (fills pages:
 * a fill naming its price twice is not guessed at). Where an object repeats a key, the lossless parser reads the
 * text instead: it refuses a repeat with another value (InvalidJsonError) and keeps one with the same value, numbers
 * then as LosslessNumbers, which every reader of a marked number also reads.
 */
export function parseJsonMarkedExact(text: string): unknown {
  const parsed = parseMarked(text);
  return parsed !== null && parsed.keys === parsed.textKeys ? parsed.value : parseJsonLossless(text);
}

/** parseJsonMarked's safe path: every string and number of the text visited once. */
export function parseJsonTokenized(text: string): unknown {
  return JSON.parse(text.replace(TOKEN, (m) => (m.charCodeAt(0) === 34 ? m : `"\\u0001${m}"`)));
}

/**
 * JSON text of a parsed record with its numbers written back as JSON numbers, digits intact: marked numbers
 * (parseJsonMarked) and LosslessNumbers (parseJsonLossless, which reads the fills pages), which JSON.stringify alone
 * would write as objects.
 */
export function stringifyMarked(value: unknown): string {
  return stringifyParsedJson(value).replace(MARKED, '$1');
}
