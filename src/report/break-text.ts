/** A break's detail in words: exact values, ISO times, each failing check on a line of its own. (What a break says,
 * its title, sentence and amount at stake, comes from its rule: src/rules/describe.ts.)
 */
import { Decimal } from '../decimal/decimal.js';

function isLossless(v: unknown): v is { value: string } {
  return typeof v === 'object' && v !== null && 'isLosslessNumber' in v;
}

/**
 * One value in words: exact numbers (LosslessNumber, bigint), ISO times, lists joined, objects as "name: value, ...".
 */
export function valueText(v: unknown): string {
  if (v === null || v === undefined) return '';
  if (isLossless(v)) return String(v.value);
  if (typeof v === 'bigint') return v.toString();
  if (v instanceof Date) return v.toISOString();
  if (Decimal.isDecimal(v)) return (v as Decimal).toFixed();
  if (Array.isArray(v))
    return v
      .map((x) =>
        x && typeof x === 'object' && !isLossless(x) && !Array.isArray(x) ? `(${fieldsText(x)})` : valueText(x),
      )
      .join(', ');
  if (typeof v === 'object') return fieldsText(v as object);
  return String(v);
}

/** Fields of a rule's failing check in reading order (jsonb stores keys in its own order). */
const FIELD_ORDER = ['check', 'expected', 'actual', 'difference', 'currency', 'note'];

function fieldsText(o: object): string {
  const rank = (k: string) => (FIELD_ORDER.includes(k) ? FIELD_ORDER.indexOf(k) : FIELD_ORDER.length);
  return Object.entries(o)
    .sort(([a], [b]) => rank(a) - rank(b))
    .filter(([, v]) => v !== null && v !== undefined)
    .map(([k, v]) => `${k}: ${valueText(v)}`)
    .join('; ');
}

/**
 * A break's detail as readable lines instead of JSON: each failing check on its own line
 * ("check 1: check: ...; expected: ...; actual: ..."), then the other fields as "name: value".
 * Numbers read through the lossless parser print their exact text.
 */
export function detailText(detail: unknown): string {
  if (detail === null || detail === undefined) return '';
  if (typeof detail === 'string') return detail;
  if (typeof detail !== 'object' || isLossless(detail) || detail instanceof Date) return valueText(detail);
  if (Array.isArray(detail)) return detail.map((d) => valueText(d)).join('\n');
  const lines: string[] = [];
  for (const [k, v] of Object.entries(detail)) {
    if (v === null || v === undefined) continue;
    if (k === 'checks' && Array.isArray(v)) {
      v.forEach((c, i) => lines.push(`check ${i + 1}: ${valueText(c)}`));
      continue;
    }
    lines.push(`${k}: ${valueText(v)}`);
  }
  return lines.join('\n');
}
