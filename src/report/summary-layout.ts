/** The Summary sheet's columns, what it is built from, and the rows its sections are written with. */
import type { Decimal } from '../decimal/decimal.js';
import { ZERO } from '../decimal/decimal.js';
import type { Cell, Row, SheetSpec } from './cells.js';
import type { OpenBreakCounts, ReportedBreak } from '../domain/index.js';
import type {
  BalanceRec,
  BalanceRollRec,
  Changes,
  FeeDayRec,
  RunInfo,
  StageInfo,
  Totals,
  WebhookStats,
} from '../domain/index.js';
import type { ClosedPeriodChanges } from '../domain/evidence.js';
import type { Precision } from './precision.js';
import type { UsdRates } from './usd-rates.js';
import type { Headline, RunFailure } from './summary.js';
import { SHEET } from './sheets.js';

export const summarySpec: SheetSpec = {
  name: SHEET.summary,
  layout: 'report',
  // A4 landscape at the scale that fits its columns one page wide (cells.ts printScale), narrow margins and columns
  // narrow enough that the scale stays readable; its first page ends after the first-page blocks
  // (summary-sheet.ts SUMMARY_FIRST_PAGE).
  print: { paperSize: 9, margins: { left: 0.4, right: 0.4, top: 0.5, bottom: 0.5, header: 0.3, footer: 0.3 } },
  columns: [
    { header: 'Item', kind: 'text', width: 34 },
    // wide enough for a UTC date-time with milliseconds (Excel shows ### when a date does not fit)
    { header: 'Value', kind: 'text', width: 24 },
    // wide enough for an amount of 15 significant digits with separators (the balance table's columns)
    { header: '', kind: 'text', width: 22 },
    { header: '', kind: 'text', width: 22 },
    { header: '', kind: 'text', width: 22 },
    { header: '', kind: 'text', width: 22 },
    // wide enough for a record's name ("order " and a UUID) in the largest breaks; longer notes run on beyond it
    { header: '', kind: 'text', width: 44 },
  ],
};
export const SUMMARY_COLUMNS = summarySpec.columns.length;

/** The run's detail folder and its files (null on the detail workbook's own Summary: the files are beside it). */
export interface SummaryDetail {
  dir: string;
  files: ReadonlyArray<{ sheet: string; path: string; rows: number; bytes: number }> | null;
}

export interface SummaryInput {
  run: RunInfo;
  openBreaks: ReportedBreak[];
  /** openBreakCounts(openBreaks), computed once by the report stage and stored with the workbook. */
  counts: OpenBreakCounts;
  changes: Changes;
  totals: Totals;
  assumptions: Array<[string, string]>;
  precision: Precision;
  /** The run's "now" (its start): ages are measured from it. */
  now: Date;
  /** When the workbook is written (wall clock; default `now`). */
  writtenAt?: Date;
  webhooks?: WebhookStats;
  /** The run's balance_roll rows (balanceRollOfRun) and the latest snapshot, for the balance table. */
  balanceRolls?: BalanceRollRec[];
  latestBalances?: BalanceRec[];
  /** USD values of the closings, the fees and the grand total (usdRatesOf). */
  rates?: UsdRates;
  /** Fees per day and currency (feeDays). */
  feeDays?: FeeDayRec[];
  /** exchange.feeCurrency: which currency of a symbol its fill fees are in. */
  feeCurrency?: 'counter' | 'base';
  /** Where every record of the period is: the run's detail folder. */
  detail?: SummaryDetail;
  /** What the database holds for the period (storedCounts): shown for a failed run that did not count it itself. */
  storedCounts?: Record<string, number>;
  /** The account's signed closes with their prior-period adjustments (closedPeriodChanges). */
  closedPeriods?: ClosedPeriodChanges[];
}

/** The input with what several sections derive from it, worked out once. */
export interface SummaryFacts extends SummaryInput {
  head: Headline;
  failure: RunFailure | null;
  /** The run's stages in the order they ran. */
  stages: Array<[string, StageInfo]>;
}

/** One section of the Summary: its rows, none when it has nothing to say for this run. */
export type SummarySection = (facts: SummaryFacts) => Row[];

export const blank = (): Row => ({ cells: [] });
export const section = (title: string): Row => ({
  cells: [title, null, null, null, null, null, null],
  tone: 'section',
});
/** A table's header row: its titles after the first right-aligned, as the figures under them are. */
export const header = (...titles: string[]): Row => ({ cells: titles, tone: 'bold', alignRight: true });
export const pair = (label: string, value: Cell, ...rest: Cell[]): Row => ({ cells: [label, value, ...rest] });
/** A line of explanation under a table. */
export const muted = (text: string): Row => ({ cells: [text], tone: 'muted' });

/** Empty cells so a toned row is filled across the whole width. */
export function pad(n: number): Cell[] {
  return Array.from({ length: n }, () => null);
}

/**
 * "2026-11-23 03:26:54": a time as text that fits the Summary's narrower columns (a date cell of that width shows ###).
 */
export function utcText(at: Date | string | null | undefined): string | null {
  if (!at) return null;
  return new Date(at).toISOString().slice(0, 19).replace('T', ' ');
}

export function sumOf(values: Array<Decimal | null | undefined>): Decimal {
  return values.reduce<Decimal>((a, v) => (v ? a.plus(v) : a), ZERO);
}

/**
 * Marks on each table header the columns whose figures below are text (up to the next blank or section row): their
 * title stands left like the text under it, the others right over their numbers.
 */
export function withTextColumns(rows: Row[]): Row[] {
  rows.forEach((row, at) => {
    if (!row.alignRight) return;
    const kinds: Array<'text' | 'figure' | undefined> = [];
    for (let r = at + 1; r < rows.length && rows[r]!.cells.length && rows[r]!.tone !== 'section'; r++) {
      if (rows[r]!.alignRight) break;
      rows[r]!.cells.forEach((c, i) => {
        if (c === null || c === undefined || c === '') return;
        kinds[i] = typeof c === 'string' && kinds[i] !== 'figure' ? 'text' : 'figure';
      });
    }
    const titles: Record<number, 'left' | 'indent'> = {};
    kinds.forEach((k, i) => {
      // indented where the cells under it are: after a figure column
      if (k === 'text' && i > 0) titles[i] = kinds[i - 1] === 'figure' ? 'indent' : 'left';
    });
    if (Object.keys(titles).length) row.textTitles = titles;
  });
  return rows;
}
