/** The cell model's decisions: amounts as numbers at the currency's format with the exact text beside them, and column widths. */
import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { Decimal } from '../../src/decimal/decimal.js';
import {
  amount,
  day,
  digitsOf,
  displayWidth,
  excelAmount,
  fitWidth,
  numberFormat,
  textWidth,
  type Cell,
} from '../../src/report/cells.js';
import { csvField, csvFileName, csvLine, csvText } from '../../src/report/csv.js';

const ex = (value: string, dp: number) => excelAmount({ kind: 'amount', value: new Decimal(value), dp });

describe('excelAmount', () => {
  it('counts digits and decimals on the text as Decimal does (sd(false), decimalPlaces())', () => {
    const decimal = fc
      .tuple(
        fc.boolean(),
        fc.stringMatching(/^[0-9]{1,25}$/),
        fc.stringMatching(/^[0-9]{0,25}$/),
        fc.integer({ min: -40, max: 40 }),
      )
      .map(
        ([negative, int, fraction, exp]) =>
          new Decimal(`${negative ? '-' : ''}${int}${fraction ? `.${fraction}` : ''}e${exp}`),
      );
    fc.assert(
      fc.property(decimal, (v) => {
        expect(digitsOf(v.toFixed())).toEqual({
          significant: v.isZero() ? 1 : v.sd(false),
          decimals: v.decimalPlaces(),
        });
      }),
      { numRuns: 5000 },
    );
    expect(digitsOf('1200')).toEqual({ significant: 2, decimals: 0 });
    expect(digitsOf('-100.05')).toEqual({ significant: 5, decimals: 2 });
    expect(digitsOf('0.0012')).toEqual({ significant: 2, decimals: 4 });
  });

  it('writes an amount Excel holds exactly as a number at its currency precision, without exact text', () => {
    expect(ex('1234.5', 2)).toEqual({ value: 1234.5, numFmt: numberFormat(2), exact: null });
    // 15 significant digits exactly: the double holds it to the last digit
    expect(ex('1234567.12345678', 8)).toEqual({ value: 1234567.12345678, numFmt: numberFormat(8), exact: null });
    expect(ex('-0', 2)).toEqual({ value: 0, numFmt: numberFormat(2), exact: null });
    expect(ex('-12', 0)).toEqual({ value: -12, numFmt: numberFormat(0), exact: null });
  });

  it('keeps the currency format whatever the value: more decimals go to the exact text, never widen the format', () => {
    expect(ex('0.123', 2)).toEqual({ value: 0.123, numFmt: numberFormat(2), exact: '0.123' });
    // a column of one currency gets one format on every row
    const formats = ['1', '1.5', '1.25', '1.125', '0.000001'].map((v) => ex(v, 2).numFmt);
    expect(new Set(formats)).toEqual(new Set([numberFormat(2)]));
    // trailing zeros are not "more decimals"
    expect(ex('1.50000', 2).exact).toBeNull();
  });

  it('writes an amount of more than 15 significant digits as the number rounded to 15, with the exact text', () => {
    expect(ex('1.234567890123456789', 18)).toEqual({
      value: 1.23456789012346,
      numFmt: numberFormat(18),
      exact: '1.234567890123456789',
    });
    expect(ex('1234567.123456789012345678', 8)).toEqual({
      value: 1234567.12345679,
      numFmt: numberFormat(8),
      exact: '1234567.123456789012345678',
    });
    // integers too: 20 digits is a number Excel rounds, so the exact text is kept
    expect(ex('12345678901234567890', 0)).toEqual({
      value: 12345678901234600000,
      numFmt: numberFormat(0),
      exact: '12345678901234567890',
    });
    expect(ex('-0.00000000000000000123456789012345678', 18).value).toBe(-1.23456789012346e-18);
  });

  it('caps the format at the 30 decimals Excel accepts', () => {
    expect(numberFormat(40)).toBe(numberFormat(30));
    expect(ex('0.1', 40)).toMatchObject({ numFmt: numberFormat(30), exact: null });
  });

  it('formats with thousands separators, the decimals, negatives in red', () => {
    expect(numberFormat(2)).toBe('#,##0.00;[Red]-#,##0.00');
    expect(numberFormat(0)).toBe('#,##0;[Red]-#,##0');
  });
});

describe('column widths', () => {
  it('counts capitals wider than digits: COMPLETED fits where nine digits would not', () => {
    expect(textWidth('COMPLETED')).toBeGreaterThan(9 * 1.15);
    expect(textWidth('000000000')).toBeLessThan(textWidth('COMPLETED'));
    expect(textWidth('WWW')).toBeGreaterThan(textWidth('AAA'));
    expect(textWidth('iii')).toBeLessThan(textWidth('aaa'));
    expect(fitWidth('State', displayWidth('COMPLETED'))).toBeGreaterThanOrEqual(Math.ceil(9 * 1.2) + 1);
  });

  it('measures an amount as its format writes it: separators, the format decimals, the sign', () => {
    // "1,234,567.89"
    expect(displayWidth(amount(new Decimal('1234567.89'), 2))).toBe(12);
    // "-1,234,567.89"
    expect(displayWidth(amount(new Decimal('-1234567.891'), 2))).toBe(13);
    // "0.00000000": the format's decimals, not the value's
    expect(displayWidth(amount(new Decimal('0'), 8))).toBe(10);
    // rounding carries into another integer digit: "1,000.00"
    expect(displayWidth(amount(new Decimal('999.999'), 2))).toBe(8);
    // 18 decimals of ETH: "1,234,567.123456789012345678"
    expect(displayWidth(amount(new Decimal('1234567.123456789012345678'), 18))).toBe(28);
  });

  it('measures integers with separators and every date-time at the one format', () => {
    expect(displayWidth(1234567)).toBe(9);
    expect(displayWidth(-12)).toBe(3);
    expect(displayWidth(new Date('2026-11-01T00:00:00Z'))).toBe('yyyy-mm-dd hh:mm:ss.000'.length);
    expect(displayWidth(new Date('2026-11-01T00:00:00.123Z'))).toBe('yyyy-mm-dd hh:mm:ss.000'.length);
  });

  it('fits a column to its widest value plus padding, its bold header plus the filter button, within bounds', () => {
    expect(fitWidth('Id', 30)).toBeGreaterThanOrEqual(31);
    expect(fitWidth('A header that is long', 1)).toBeGreaterThanOrEqual(
      Math.ceil(textWidth('A header that is long')) + 2,
    );
    expect(fitWidth('x', 500)).toBe(60);
    expect(fitWidth('x', 0)).toBe(6);
  });
});

describe('CSV text of cells (report --csv)', () => {
  it('quotes only what RFC 4180 requires, doubling quotes', () => {
    expect(csvField('plain')).toBe('plain');
    expect(csvField('a,b')).toBe('"a,b"');
    expect(csvField('say "hi"')).toBe('"say ""hi"""');
    expect(csvField('two\nlines')).toBe('"two\nlines"');
    expect(csvField('cr\r')).toBe('"cr\r"');
  });

  it('writes amounts as their exact decimal text, never rounded to 15 digits nor cut to the currency', () => {
    expect(csvText(amount(new Decimal('1234567.123456789012345678'), 8))).toBe('1234567.123456789012345678');
    expect(csvText(amount(new Decimal('-0.5'), 2))).toBe('-0.5');
    expect(csvText(amount(new Decimal('1e-20'), 8))).toBe('0.00000000000000000001');
  });

  it('writes date-times as ISO 8601 UTC, days as YYYY-MM-DD, links as their text, empty for null', () => {
    expect(csvText(new Date('2026-11-01T10:00:00Z'))).toBe('2026-11-01T10:00:00.000Z');
    expect(csvText(day('2026-11-01'))).toBe('2026-11-01');
    expect(csvText({ kind: 'link', text: 'ord-1', sheet: 'Partner orders', row: 2 } as unknown as Cell)).toBe('ord-1');
    expect(csvText(null)).toBe('');
    expect(csvText(12)).toBe('12');
    expect(csvText(true)).toBe('true');
  });

  it('writes a record of the sheet width with CRLF', () => {
    expect(csvLine(['a', null, amount(new Decimal('1.50'), 2)], 4)).toBe('a,,1.5,\r\n');
    expect(csvLine(['a', 'b', 'c'], 2)).toBe('a,b\r\n');
  });

  it('names files after their sheet', () => {
    expect(csvFileName('Breaks')).toBe('breaks.csv');
    expect(csvFileName('Partner daily')).toBe('partner-daily.csv');
    expect(csvFileName('Exchange orders vs fills')).toBe('exchange-orders-vs-fills.csv');
  });
});
