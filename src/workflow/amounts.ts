/** A break's figures in words ("1.00 / 1.50 / 0.50 EUR"), and read back from a returned workbook's "Amounts as
 * reported" cell.
 */
import type { Amounts } from '../domain/index.js';

/**
 * The figures of an "Amounts as reported" cell (amountsAsReported in src/domain/break.ts); null when the text is not
 * four ` | `-separated parts.
 */
export function parseAmountsText(text: string): Amounts | null {
  // The cell may come back trimmed (a leading empty expected): split on the bars and their spaces.
  const parts = text.split(/\s*\|\s*/);
  if (parts.length !== 4) return null;
  const [expected, actual, difference, currency] = parts.map((p) => (p.trim() === '' ? null : p.trim()));
  return {
    expected: expected ?? null,
    actual: actual ?? null,
    difference: difference ?? null,
    currency: currency ?? null,
  };
}

/** "1.00 / 1.50 / 0.50 EUR": a break's figures for a sentence; '-' for a missing one. */
export function amountsWords(b: Amounts): string {
  const figures = [b.expected, b.actual, b.difference].map((v) => v ?? '-').join(' / ');
  return `${figures}${b.currency ? ` ${b.currency}` : ''}`;
}
