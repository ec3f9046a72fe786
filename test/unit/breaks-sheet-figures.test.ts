/**
 * Issue 45 point 3: the Breaks sheet's figures read with their unit, never as 0 when they are not, never as ###. A
 * workbook of awkward figures is written and read back with exceljs: number formats and column widths.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import ExcelJS from 'exceljs';
import { afterAll, describe, expect, it } from 'vitest';
import { breakRow, breaksSpec, figureDecimals } from '../../src/report/breaks-sheet.js';
import { Precision } from '../../src/report/precision.js';
import { UsdRates } from '../../src/report/usd-rates.js';
import { writeWorkbook } from '../../src/report/write-workbook.js';
import { Decimal } from '../../src/decimal/decimal.js';
import type { ReportedBreak } from '../../src/domain/index.js';
import { makeBreak } from '../helpers/report-factories.js';
import { checkBreaksFigures, rendered } from '../helpers/number-format.js';

const dir = mkdtempSync(join(tmpdir(), 'rr-breaks-figures-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const NOW = new Date('2026-11-03T00:00:00Z');
const precision = Precision.empty();
const rates = new UsdRates({
  balances: [
    { currency: 'BTC', rate: new Decimal('65000'), fetchedAt: NOW },
    { currency: 'ETH', rate: new Decimal('2000'), fetchedAt: NOW },
  ],
});

const balance = (over: Partial<ReportedBreak>) =>
  makeBreak({ code: 'E_BALANCE_ROLL', entity: 'balance', severity: 'high', currency: 'BTC', ...over });

/** One break per awkward figure the issue names, and a few more. */
const BREAKS: Record<string, ReportedBreak> = {
  subCent: makeBreak({ key: 'o-sub-cent', expected: '1.2300', actual: '1.2297', difference: '-0.0003' }),
  hours: makeBreak({
    code: 'E_STALE',
    key: 'dep-1',
    entity: 'deposit',
    severity: 'low',
    currency: 'BTC',
    unit: 'hours',
    expected: '24',
    actual: '50.85',
    difference: '26.85',
  }),
  // 1e-19 under an 18-decimal format read 0.000000000000000000
  tiny: balance({ key: 'ETH', currency: 'ETH', expected: '1.0000000000000000001', actual: '1', difference: '-1e-19' }),
  // 20-character exact values sat in 18-wide columns
  long: balance({
    key: 'BTC',
    expected: '12010364.602440000000000001',
    actual: '12010364.60244',
    difference: '-0.000000000000000001',
  }),
  // beyond the 30 decimals a fixed format can show
  beyond: balance({ key: 'XYZ', currency: 'XYZ', expected: '0', actual: '1e-35', difference: '1e-35' }),
  // more significant digits than Excel keeps
  huge: balance({
    key: 'DOGE',
    currency: 'DOGE',
    expected: '1234567890123456.5',
    actual: '0',
    difference: '-1234567890123456.5',
  }),
  text: makeBreak({
    code: 'P_WEBHOOK_GAP',
    key: 'o-text',
    severity: 'low',
    unit: 'text',
    currency: null,
    expected: 'COMPLETED',
    actual: 'FAILED',
    difference: null,
  }),
};

async function sheetOf(breaks: ReportedBreak[], name: string): Promise<ExcelJS.Worksheet> {
  const path = join(dir, `${name}.xlsx`);
  const rows = breaks.map((b) => breakRow(b, { now: NOW, precision, usd: rates }));
  await writeWorkbook(path, [{ spec: breaksSpec, rows }]);
  const wb = new ExcelJS.Workbook();
  await wb.xlsx.readFile(path);
  return wb.getWorksheet('Breaks')!;
}

describe('Breaks sheet figures', () => {
  it('renders every figure non-zero when it is not, with its unit, in a column as wide as it shows', async () => {
    const ws = await sheetOf(Object.values(BREAKS), 'awkward');
    const checked = checkBreaksFigures(ws);
    const at = (key: string, header: string) => {
      const row = Object.keys(BREAKS).indexOf(key) + 2;
      return checked.find((c) => c.row === row && c.header === header)?.text;
    };
    expect(at('subCent', 'Difference')).toBe('-0.0003 USD');
    expect(at('subCent', 'Expected')).toBe('1.2300 USD');
    // hours are hours, not money
    expect([at('hours', 'Expected'), at('hours', 'Actual'), at('hours', 'Difference')]).toEqual([
      '24.00 h',
      '50.85 h',
      '26.85 h',
    ]);
    expect(at('tiny', 'Difference')).toBe('-0.0000000000000000001 ETH');
    expect(at('long', 'Difference')).toBe('-0.000000000000000001 BTC');
    expect(at('long', 'Expected')).toBe('12,010,364.60244000 BTC');
    expect(at('beyond', 'Actual')).toBe('1E-35 XYZ');
    expect(at('huge', 'Expected')).toBe('1,234,567,890,123,460.00000000 DOGE');
    // the USD impact of 1e-19 ETH at 2000 USD/ETH: 2e-16, to its first significant digit
    expect(at('tiny', 'USD impact')).toBe('-0.0000000000000002');
    expect(checked.length).toBeGreaterThan(20);
  });

  it('shows the exact values a number cell cannot hold in a visible column, hidden when no figure needs it', async () => {
    const ws = await sheetOf(Object.values(BREAKS), 'exact');
    const headers = (ws.getRow(1).values as unknown[]).slice(1).map(String);
    const exact = ws.getColumn(headers.indexOf('Exact values') + 1);
    expect(exact.hidden).toBe(false);
    const row = ws.getRow(Object.keys(BREAKS).indexOf('long') + 2);
    expect(row.getCell(headers.indexOf('Exact values') + 1).value).toBe('Expected = 12010364.602440000000000001');

    const plain = await sheetOf([BREAKS.subCent!, BREAKS.hours!, BREAKS.text!], 'plain');
    const plainHeaders = (plain.getRow(1).values as unknown[]).slice(1).map(String);
    expect(plain.getColumn(plainHeaders.indexOf('Exact values') + 1).hidden).toBe(true);
    checkBreaksFigures(plain);
  });

  it('gives each figure its own decimals, the row sharing them where Excel holds the digits', () => {
    expect(figureDecimals(BREAKS.subCent!, precision)).toEqual([4, 4, 4]);
    expect(figureDecimals(BREAKS.hours!, precision)).toEqual([2, 2, 2]);
    // the currency's 8 decimals at least; 1 has 14 decimals Excel holds, not the 19 of the difference
    expect(figureDecimals(BREAKS.long!, precision)).toEqual([8, 8, 18]);
    expect(figureDecimals(BREAKS.tiny!, precision)).toEqual([14, 14, 19]);
  });

  it('renders the formats the workbook writes as Excel does', () => {
    expect(rendered(-1234.5, '#,##0.00" USD";[Red]-#,##0.00" USD"')).toBe('-1,234.50 USD');
    expect(rendered(1.5e-35, '0.0E+00" BTC";[Red]-0.0E+00" BTC"')).toBe('1.5E-35 BTC');
    expect(rendered(3, '#,##0')).toBe('3');
  });
});
