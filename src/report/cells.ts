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

export type Tone = 'break' | 'high' | 'medium' | 'low' | 'ok' | 'bad' | 'section' | 'bold' | 'muted';

export interface Row {
  cells: Cell[];
  /** Whole-row emphasis: 'break' is the red fill on rows that carry an open break. */
  tone?: Tone;
  /** Per-cell emphasis (e.g. the severity cell of a break). */
  cellTones?: Record<number, Tone>;
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
  /** Column indexes (0-based) that get data bars over the whole data range. */
  dataBars?: number[];
  /** Printed landscape, scaled to one page wide (as many pages tall as needed). */
  fitToWidth?: boolean;
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
  const trimmed = text.trim();
  if (/^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$/.test(trimmed)) return amount(new Decimal(trimmed), dp);
  return text;
}

export function isAmount(cell: Cell): cell is AmountCell {
  return typeof cell === 'object' && cell !== null && !(cell instanceof Date) && cell.kind === 'amount';
}

export function isDay(cell: Cell): cell is DayCell {
  return typeof cell === 'object' && cell !== null && !(cell instanceof Date) && cell.kind === 'day';
}

/** Decimals to show: the currency's precision, widened so a value's own digits are never hidden. */
export function displayDecimals(value: Decimal, dp: number): number {
  return Math.max(0, dp, value.decimalPlaces());
}

/** `#,##0.00` style format with `dp` decimals; negatives in red so differences stand out. */
export function numberFormat(dp: number): string {
  const body = dp > 0 ? `#,##0.${'0'.repeat(dp)}` : '#,##0';
  return `${body};[Red]-${body}`;
}

export type ExcelAmount = { type: 'number'; value: number; numFmt: string } | { type: 'text'; text: string; reason: string };

/**
 * How an amount goes into Excel: as a number when Excel holds it exactly (at most 15
 * significant digits and at most 30 decimals to show), else as its full decimal text,
 * which the writer marks. Any decimal of <= 15 significant digits survives the trip
 * through a double, so Number(text) is exact here.
 */
export function excelAmount(cell: AmountCell): ExcelAmount {
  const { value } = cell;
  const text = value.toFixed();
  const digits = value.isZero() ? 1 : value.sd(false);
  const dp = displayDecimals(value, cell.dp);
  if (digits > EXCEL_DIGITS) return { type: 'text', text, reason: `${digits} significant digits` };
  if (dp > EXCEL_MAX_DECIMALS) return { type: 'text', text, reason: `${dp} decimals` };
  const n = Number(text);
  return { type: 'number', value: Object.is(n, -0) ? 0 : n, numFmt: numberFormat(dp) };
}

export const DATETIME_FORMAT = 'yyyy-mm-dd hh:mm:ss';
export const DATETIME_MS_FORMAT = 'yyyy-mm-dd hh:mm:ss.000';
export const DAY_FORMAT = 'yyyy-mm-dd';
export const INT_FORMAT = '#,##0';

/** A UTC day as a Date at midnight UTC (exceljs turns Dates into serials on UTC). */
export function dayDate(dayText: string): Date {
  return new Date(`${dayText}T00:00:00.000Z`);
}

/** Width in characters a cell needs to be read without widening the column. */
export function displayWidth(cell: Cell): number {
  if (cell === null || cell === undefined) return 0;
  if (typeof cell === 'string') return Math.max(...cell.split('\n').map((l) => l.length));
  if (typeof cell === 'number') return Math.abs(cell) >= 1000 ? String(Math.trunc(cell)).length * 1.35 + 1 : String(cell).length + 1;
  if (typeof cell === 'boolean') return 5;
  if (cell instanceof Date) return cell.getUTCMilliseconds() ? 23 : 19;
  if (isDay(cell)) return 10;
  if (isLink(cell)) return cell.text.length + 1;
  const ex = excelAmount(cell);
  if (ex.type === 'text') return ex.text.length + 1;
  const intDigits = cell.value.abs().trunc().toFixed().length;
  const dp = displayDecimals(cell.value, cell.dp);
  // thousands separators, sign, point
  return intDigits + Math.floor((intDigits - 1) / 3) + (dp ? dp + 1 : 0) + 2;
}

export const MIN_WIDTH = 6;
export const MAX_WIDTH = 60;

export function fitWidth(header: string, seen: number, minimum = 0): number {
  // +2 for the autofilter button on the header
  const want = Math.max(header.length + 3, seen + 1, minimum, MIN_WIDTH);
  return Math.min(MAX_WIDTH, Math.ceil(want));
}
