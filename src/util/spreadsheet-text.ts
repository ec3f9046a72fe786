/** Text bound for a spreadsheet (a CSV field, a cell): what makes it a formula, and how it is kept as text. */

/**
 * A text a spreadsheet would evaluate as a formula (its first character `=`, `+`, `-`, `@`, tab or carriage return)
 * with a leading `'` (OWASP's advice for CSV injection): the text is kept and never run. A number stays a number (a
 * negative amount is not prefixed). Every text a sender controls reaches a CSV through here
 * (and, in SQL, through store/report/csv-text.ts, which uses the same two expressions).
 */
export function neutralised(text: string): string {
  return FORMULA_START.test(text) && !PLAIN_NUMBER.test(text) ? `'${text}` : text;
}
export const FORMULA_START = /^[=+@\t\r-]/;
export const PLAIN_NUMBER = /^[+-]?([0-9]+\.?[0-9]*|\.[0-9]+)([eE][+-]?[0-9]+)?$/;
