/**
 * A number cell read back from a workbook, rendered as Excel shows it under the formats the product writes
 * (`#,##0.00" BTC";[Red]-#,##0.00" BTC"`, `0.0E+00" h"`, `#,##0`), and checks that a reader sees every figure of the
 * Breaks sheet: never 0 for a value that is not, never ### for a column too narrow. Independent of the product's own
 * width measure: each character counts one digit width, a capital letter 1.3.
 */
import ExcelJS from 'exceljs';
import { expect } from 'vitest';

/** The text Excel shows for `value` under `numFmt` (the subset of format codes the product writes). */
export function rendered(value: number, numFmt: string | undefined): string {
  if (!numFmt || numFmt === 'General') return String(value);
  const sections = numFmt.split(';');
  const section = (value < 0 && sections[1] !== undefined ? sections[1] : sections[0])!.replace(/\[[^\]]*\]/g, '');
  const literal = [...section.matchAll(/"([^"]*)"/g)].map((m) => m[1]).join('');
  const code = section.replace(/"[^"]*"/g, '');
  const sign = value < 0 ? (sections[1] !== undefined ? (/^-/.test(code) ? '-' : '') : '-') : '';
  const body = code.replace(/^-/, '');
  const decimals = (/\.(0+)/.exec(body)?.[1] ?? '').length;
  const abs = Math.abs(value);
  if (/E\+/i.test(body)) {
    const [mantissa, exponent] = abs.toExponential(decimals).split('e');
    const e = Number(exponent);
    return `${sign}${mantissa}E${e < 0 ? '-' : '+'}${String(Math.abs(e)).padStart(2, '0')}${literal}`;
  }
  const [digits, fraction] = abs.toFixed(decimals).split('.');
  const whole = body.includes(',') ? digits!.replace(/\B(?=(\d{3})+(?!\d))/g, ',') : digits;
  return `${sign}${whole}${fraction ? `.${fraction}` : ''}${literal}`;
}

/** Digit widths a text takes, erring wide: capitals 1.3, everything else 1. */
export function shownWidth(text: string): number {
  return [...text].reduce((w, ch) => w + (/[A-Z]/.test(ch) ? 1.3 : 1), 0);
}

/** True when the text shows a digit other than 0. */
export const showsNonZero = (text: string) => /[1-9]/.test(text);

const FIGURES = ['Expected', 'Actual', 'Difference', 'USD impact'];

/**
 * On every row of a Breaks sheet: each figure that is a number renders non-zero when its exact value (from "Amounts as
 * reported", or the number itself) is not zero, carries its unit, and fits its column; the exact values that a number
 * cannot show are in a visible "Exact values" column whose words fit it. Returns the figures checked.
 */
export function checkBreaksFigures(ws: ExcelJS.Worksheet): Array<{ row: number; header: string; text: string }> {
  const headers = (ws.getRow(1).values as unknown[]).slice(1).map((v) => String(v ?? ''));
  const col = (name: string) => headers.indexOf(name) + 1;
  const checked: Array<{ row: number; header: string; text: string }> = [];
  for (let r = 2; r <= ws.rowCount; r++) {
    const row = ws.getRow(r);
    const reported = String(row.getCell(col('Amounts as reported')).value ?? '').split(' | ');
    const unit = String(row.getCell(col('Unit')).value ?? '');
    FIGURES.forEach((header, i) => {
      const cell = row.getCell(col(header));
      if (typeof cell.value !== 'number') return;
      const text = rendered(cell.value, cell.numFmt);
      const where = `${header} of row ${r} (${String(cell.value)} as ${cell.numFmt})`;
      const exact = i < 3 ? (reported[i] ?? '').trim() : String(cell.value);
      if (exact !== '' && Number(exact) !== 0) expect(showsNonZero(text), `${where} reads "${text}"`).toBe(true);
      if (i < 3 && unit !== 'number') expect(text, where).toMatch(new RegExp(` ${unit === 'hours' ? 'h' : unit}$`));
      expect(ws.getColumn(col(header)).width ?? 0, `${where}: "${text}" fits`).toBeGreaterThanOrEqual(shownWidth(text));
      checked.push({ row: r, header, text });
    });
    const exact = row.getCell(col('Exact values')).value;
    if (typeof exact === 'string' && exact !== '') {
      const column = ws.getColumn(col('Exact values'));
      expect(column.hidden, `Exact values of row ${r} shown`).toBe(false);
      for (const word of exact.split(' '))
        expect(column.width ?? 0, `Exact values of row ${r}: "${word}" fits`).toBeGreaterThanOrEqual(shownWidth(word));
    }
  }
  return checked;
}
