/** The workbook's cell model, free of exceljs: amounts, days, tones and sheet specs. */
import { Decimal } from '../decimal/decimal.js';

/**
 * The workbook's cell model, free of exceljs: builders produce these, write-workbook.ts
 * turns them into exceljs cells. Keeping the decisions (number or text, which format)
 * here makes them testable without opening a workbook.
 */
export type Cell = null | string | number | boolean | Date | AmountCell | DayCell | LinkCell;

/** A decimal amount shown with at least `dp` decimals (the currency's precision). */
export interface AmountCell {
  kind: 'amount';
  value: Decimal;
  dp: number;
  /** Shown after the number by its format ("BTC", "h"), so a figure reads with its unit and still sums. */
  unit?: string;
}

/** A UTC calendar day (YYYY-MM-DD), written as an Excel date. */
export interface DayCell {
  kind: 'day';
  value: string;
}

/** Text that links to a row of another sheet of the workbook (1-based row number, header = 1). */
export interface LinkCell {
  kind: 'link';
  text: string;
  sheet: string;
  row: number;
}

export function link(text: string, target: { sheet: string; row: number } | null | undefined): LinkCell | string {
  return target ? { kind: 'link', text, sheet: target.sheet, row: target.row } : text;
}

export function isLink(cell: Cell): cell is LinkCell {
  return typeof cell === 'object' && cell !== null && !(cell instanceof Date) && cell.kind === 'link';
}

/** 'clean' is the green of a table cell (a reconciled account's line); 'ok' and 'bad' are the banners' green and red. */
export type Tone = 'break' | 'high' | 'medium' | 'low' | 'ok' | 'bad' | 'clean' | 'section' | 'bold' | 'muted';

export interface Row {
  cells: Cell[];
  /** Whole-row emphasis: 'break' is the red fill on rows that carry an open break. */
  tone?: Tone;
  /** Per-cell emphasis (e.g. the severity cell of a break). */
  cellTones?: Record<number, Tone>;
  /** The Summary's table headers: every cell but the first right-aligned, over the figures it names. */
  alignRight?: boolean;
  /** On such a header, the columns whose cells below are text: their title stands left, indented as they are. */
  textTitles?: Readonly<Record<number, 'left' | 'indent'>>;
  /** A manual page break under this row when printed (the Summary's first page ends here). */
  pageBreakAfter?: boolean;
}

export type ColumnKind = 'text' | 'id' | 'int' | 'amount' | 'datetime' | 'day';

export interface ColumnSpec {
  header: string;
  kind: ColumnKind;
  /** Minimum width in characters; the writer widens to fit the content it sees. */
  width?: number;
  /** A fill-in column: its cells are unlocked and light yellow, empty ones included. */
  editable?: boolean;
  /** Values offered by a drop-down (list data validation) on the column's cells. */
  choices?: string[];
  /** Hidden: kept for a machine (the workbook import), not for the reader. */
  hidden?: boolean;
  /** Long text wraps within `width` (the writer keeps the column at `width` instead of fitting it). */
  wrap?: boolean;
}

export interface SheetSpec {
  name: string;
  columns: ColumnSpec[];
  /** 'table': frozen header, autofilter, fitted widths. 'report': the Summary's free layout. */
  layout?: 'table' | 'report';
  /** Printed landscape, scaled to one page wide (as many pages tall as needed). */
  fitToWidth?: boolean;
  /** The paper and margins it prints on (default: the printer's paper, exceljs's margins). */
  print?: PrintSetup;
  /**
   * The "Exact values" column: 'shown' (the default), or 'when needed': hidden unless a row has an exact value its
   * number cannot show (the Breaks sheet keeps every exact figure in a hidden column of its own besides).
   */
  exactValues?: 'shown' | 'when needed';
  /** Widths fitted to every row, not to the first ones (a sheet built in memory, whose numbers must never show ###). */
  fitAllRows?: boolean;
}

/** Paper (the OOXML paperSize: 9 is A4, 1 is Letter) and margins in inches. */
export interface PrintSetup {
  paperSize: number;
  margins: { left: number; right: number; top: number; bottom: number; header: number; footer: number };
}

/** A4 with exceljs's default margins: where a sheet's spec names no paper. */
export const DEFAULT_PRINT: PrintSetup = {
  paperSize: 9,
  margins: { left: 0.7, right: 0.7, top: 0.75, bottom: 0.75, header: 0.3, footer: 0.3 },
};

/** Landscape paper widths in inches, by OOXML paperSize (A4, Letter). */
const LANDSCAPE_WIDTH: Readonly<Record<number, number>> = { 9: 11.69, 1: 11 };

/**
 * The print scale (percent) at which columns of these widths fit the paper's landscape width: an explicit scale, not
 * "fit to one page wide", because Excel ignores manual page breaks under "fit to" and the Summary's first page ends in
 * one. A column of width w (characters of the default font) is 7w + 5 pixels at 96 dpi in Excel; LibreOffice prints
 * it about 7.4w (measured on its PDF export with Calibri's metrics, Carlito), so the scale allows 7.5w + 5.
 */
export function printScale(widths: readonly number[], print: PrintSetup): number {
  const paper = LANDSCAPE_WIDTH[print.paperSize] ?? LANDSCAPE_WIDTH[9]!;
  const printable = (paper - print.margins.left - print.margins.right) * 96;
  const needed = widths.reduce((sum, w) => sum + 7.5 * w + 5, 0);
  return Math.max(10, Math.min(100, Math.floor((printable / needed) * 100)));
}

/** Excel keeps 15 significant digits of a number; anything longer would be silently rounded. */
export const EXCEL_DIGITS = 15;
/** Excel number formats accept at most 30 decimals. */
export const EXCEL_MAX_DECIMALS = 30;
/** Rows per worksheet, header included (Excel's limit). */
export const EXCEL_MAX_ROWS = 1_048_576;

/** A sheet's n-th part: the sheet's own name, then "<name> (2)"... (worksheet names are limited to 31 characters). */
export function partName(name: string, part: number): string {
  return part === 1 ? name : `${name.slice(0, 26)} (${part})`;
}

/**
 * Where the n-th data row (1-based) of a sheet lands when each part holds `maxRows` rows
 * including its header: the part's name and the 1-based row on it.
 */
export function rowPlace(name: string, n: number, maxRows: number = EXCEL_MAX_ROWS): { sheet: string; row: number } {
  const perPart = maxRows - 1;
  return { sheet: partName(name, Math.floor((n - 1) / perPart) + 1), row: ((n - 1) % perPart) + 2 };
}

export function amount(value: Decimal | null | undefined, dp: number): AmountCell | null {
  return value === null || value === undefined ? null : { kind: 'amount', value, dp };
}

export function day(value: string | null | undefined): DayCell | null {
  return value ? { kind: 'day', value } : null;
}

/** Amount, or the text of a non-numeric expectation ('present', '') kept as it is. */
export function amountOrText(text: string | null | undefined, dp: number): Cell {
  if (text === null || text === undefined || text === '') return null;
  return isDecimalText(text) ? amount(new Decimal(text.trim()), dp) : text;
}

/** A figure's text that is a decimal number (the figures a rule stores as text: amounts, hours, or states). */
export function isDecimalText(text: string): boolean {
  return /^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$/.test(text.trim());
}

export function isAmount(cell: Cell): cell is AmountCell {
  return typeof cell === 'object' && cell !== null && !(cell instanceof Date) && cell.kind === 'amount';
}

export function isDay(cell: Cell): cell is DayCell {
  return typeof cell === 'object' && cell !== null && !(cell instanceof Date) && cell.kind === 'day';
}

/**
 * `#,##0.00` style format with `dp` decimals (at most 30, Excel's limit) and the unit after the number when given;
 * negatives in red so differences stand out.
 */
export function numberFormat(dp: number, unit?: string): string {
  const d = shownDecimals(dp);
  const key = `${d} ${unit ?? ''}`;
  let format = NUMBER_FORMATS.get(key);
  if (!format) NUMBER_FORMATS.set(key, (format = formatWith(d > 0 ? `#,##0.${'0'.repeat(d)}` : '#,##0', unit)));
  return format;
}

/**
 * A scientific format showing `significant` digits ("1.5E-35 BTC"): for a figure whose first digit lies beyond the 30
 * decimals a fixed format can show, which would read 0.
 */
export function scientificFormat(significant: number, unit?: string): string {
  const d = Math.max(0, Math.min(EXCEL_DIGITS, significant) - 1);
  return formatWith(d > 0 ? `0.${'0'.repeat(d)}E+00` : '0E+00', unit);
}

/** The decimals an amount's format shows: its dp, whole, between 0 and Excel's 30. */
function shownDecimals(dp: number): number {
  return Math.min(Math.max(0, Math.trunc(dp)), EXCEL_MAX_DECIMALS);
}

/** The format per decimals and unit, built once: every amount cell asks for one (a million rows, several a row). */
const NUMBER_FORMATS = new Map<string, string>();
function formatWith(body: string, unit?: string): string {
  // the unit as a literal of the format; a quote cannot end it early
  const shown = unit ? `${body}" ${unit.replace(/"/g, '')}"` : body;
  return `${shown};[Red]-${shown}`;
}

/** True when a fixed format would show the non-zero value as 0: its first significant digit is beyond 30 decimals. */
function beyondFixed(cell: AmountCell): boolean {
  return cell.dp > EXCEL_MAX_DECIMALS && !cell.value.isZero() && -cell.value.e > EXCEL_MAX_DECIMALS;
}

/**
 * An amount as Excel gets it: always a number, formatted at the currency's precision (the same
 * format for every row of that currency: never widened per value). `exact` is the full decimal
 * text when the cell cannot show the value as it is: more significant digits than Excel keeps (15:
 * the number is then rounded to 15) or more decimals than the format shows. The writer puts that
 * text in the sheet's "Exact values" column, so sums and pivots work and nothing is hidden.
 */
export interface ExcelAmount {
  value: number;
  numFmt: string;
  exact: string | null;
}

export function excelAmount(cell: AmountCell): ExcelAmount {
  const { value } = cell;
  const shown = shownDecimals(cell.dp);
  // The plain decimal text (decimal.js keeps no trailing zeros of a fraction): its digits are
  // counted on the string, which costs a fraction of Decimal's sd() and decimalPlaces() on the
  // several amounts of each of a million rows.
  const text = value.toFixed();
  const { significant, decimals } = digitsOf(text);
  // Any decimal of <= 15 significant digits survives the trip through a double, so Number(text) is
  // exact here; a longer one is rounded half-up to the 15 digits Excel would keep anyway.
  const n =
    significant > EXCEL_DIGITS
      ? Number(value.toSignificantDigits(EXCEL_DIGITS, Decimal.ROUND_HALF_UP).toFixed())
      : Number(text);
  const scientific = beyondFixed(cell);
  const exact = significant > EXCEL_DIGITS || (!scientific && decimals > shown) ? text : null;
  const numFmt = scientific ? scientificFormat(significant, cell.unit) : numberFormat(shown, cell.unit);
  return { value: Object.is(n, -0) ? 0 : n, numFmt, exact };
}

/**
 * Significant digits (as Decimal's sd(false): leading zeros and an integer's trailing zeros do not
 * count; zero has 1) and decimals of a plain decimal text such as Decimal's toFixed() writes
 * (`-1234.5`, `0.0012`, `1200`: no exponent, no trailing zeros after the point).
 */
export function digitsOf(text: string): { significant: number; decimals: number } {
  let first = -1;
  let last = -1;
  let point = -1;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 46 /* . */) point = i;
    else if (c > 48 && c <= 57 /* 1-9 */) {
      if (first < 0) first = i;
      last = i;
    }
  }
  const decimals = point < 0 ? 0 : text.length - point - 1;
  if (first < 0) return { significant: 1, decimals };
  return { significant: last - first + 1 - (point > first && point < last ? 1 : 0), decimals };
}

/**
 * The one date-time format: every datetime column shows milliseconds on every row (a format
 * chosen per value made a column switch between having them and not).
 */
export const DATETIME_FORMAT = 'yyyy-mm-dd hh:mm:ss.000';
export const DAY_FORMAT = 'yyyy-mm-dd';
export const INT_FORMAT = '#,##0';

/** A UTC day as a Date at midnight UTC (exceljs turns Dates into serials on UTC). */
export function dayDate(dayText: string): Date {
  return new Date(`${dayText}T00:00:00.000Z`);
}

/**
 * Width of a character in Excel's column unit (the width of a digit of the default font, Calibri
 * 11; LibreOffice's Carlito has the same metrics). Capitals are wider than digits ("COMPLETED" in
 * 9 digit widths was cut to "COMPLETEI"), M and W widest; a few letters and punctuation narrower.
 * Rounded up, so a column errs on the wide side.
 */
export function charWidth(ch: string): number {
  if (/[MW]/.test(ch)) return 1.75;
  if (/[IJ]/.test(ch)) return 0.65;
  if (/[A-Z]/.test(ch)) return 1.3;
  if (/[mw]/.test(ch)) return 1.6;
  if (/[fijlrt]/.test(ch)) return 0.7;
  if (/[ .,:;'!|]/.test(ch)) return 0.55;
  if (/[a-z0-9]/.test(ch)) return 1.05;
  const code = ch.codePointAt(0) ?? 0;
  // CJK, emoji and other wide scripts take about two digit widths
  if (code >= 0x2e80) return 2;
  return 1.1;
}

/** Display width of a text line in digit widths. */
export function textWidth(text: string): number {
  let w = 0;
  for (const ch of text) w += charWidth(ch);
  return w;
}

/** Characters of an integer part written with thousands separators and an optional sign. */
function groupedWidth(intDigits: number, negative: boolean): number {
  return intDigits + Math.floor((intDigits - 1) / 3) + (negative ? 1 : 0);
}

/**
 * Width (in digit widths) a cell needs to be read: text by its characters, numbers as their format
 * writes them (thousands separators, the format's decimals, the sign), dates as their one format.
 */
export function displayWidth(cell: Cell): number {
  if (cell === null || cell === undefined) return 0;
  if (typeof cell === 'string') return Math.max(...cell.split('\n').map(textWidth));
  if (typeof cell === 'number') {
    if (Number.isInteger(cell)) return groupedWidth(String(Math.abs(cell)).length, cell < 0);
    // General format: Excel shows at most about 11 characters of a fraction
    return Math.min(String(cell).length, 11);
  }
  if (typeof cell === 'boolean') return 5;
  if (cell instanceof Date) return DATETIME_FORMAT.length;
  if (isDay(cell)) return DAY_FORMAT.length;
  if (isLink(cell)) return textWidth(cell.text);
  if (isAmount(cell)) return amountWidth(cell);
  const other = cell as unknown as { text?: unknown };
  return typeof other.text === 'string' ? textWidth(other.text) : 0;
}

/** An amount's width as its format writes it: sign, digits with separators, decimals (or mantissa and exponent), unit. */
function amountWidth(cell: AmountCell): number {
  const negative = cell.value.isNegative() && !cell.value.isZero();
  const unit = cell.unit ? textWidth(` ${cell.unit}`) : 0;
  if (beyondFixed(cell)) {
    const significant = Math.min(EXCEL_DIGITS, cell.value.sd(false));
    // "-1.5E-35": sign, mantissa, "E-" and the exponent's digits (at least two)
    const exponent = Math.max(2, String(Math.abs(cell.value.e)).length);
    return (negative ? 1 : 0) + (significant > 1 ? significant + 1 : 1) + 2 + exponent + unit;
  }
  const dp = shownDecimals(cell.dp);
  // rounding to the format's decimals can carry into one more integer digit (999.999 -> 1,000.00)
  const intDigits = cell.value.abs().toDecimalPlaces(dp, Decimal.ROUND_HALF_UP).trunc().toFixed().length;
  return groupedWidth(intDigits, negative) + (dp ? dp + 1 : 0) + unit;
}

export const MIN_WIDTH = 6;
export const MAX_WIDTH = 60;
/** Cell padding Excel leaves on both sides, in digit widths. */
const PADDING = 1.5;
/** The autofilter button on a header cell. */
const FILTER_BUTTON = 2.5;
/** Header text is bold: a little wider than the same text in the regular face. */
export const BOLD = 1.08;

/** A table column's width: its header (bold, with the filter button), the widest value seen, the spec's minimum. */
export function fitWidth(header: string, seen: number, minimum = 0): number {
  const want = Math.max(textWidth(header) * BOLD + FILTER_BUTTON, seen + PADDING, minimum, MIN_WIDTH);
  return Math.min(MAX_WIDTH, Math.ceil(want));
}
