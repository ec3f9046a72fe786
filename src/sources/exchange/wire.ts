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

// A JSON string (unrolled loop, escapes included) or a JSON number outside strings.
const TOKEN = /"[^"\\]*(?:\\.[^"\\]*)*"|-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?/g;
const MARKED = /"\\u0001([^"]*)"/g;

/** JSON.parse keeping every number's text as a marked string. Throws on text that is not JSON. */
export function parseJsonMarked(text: string): unknown {
  return JSON.parse(text.replace(TOKEN, (m) => (m.charCodeAt(0) === 34 ? m : `"\\u0001${m}"`)));
}

/** JSON text of a parsed record with its numbers written back as JSON numbers, digits intact. */
export function stringifyMarked(value: unknown): string {
  return JSON.stringify(value).replace(MARKED, '$1');
}
