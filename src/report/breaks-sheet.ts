/** The Breaks sheet: its columns (the workflow contract among them), its rows in words with links to the data sheets,
 * USD impact and the fill-in columns.
 */
import { Decimal } from '../decimal/decimal.js';
import {
  EXCEL_DIGITS,
  isDecimalText,
  link,
  rowPlace,
  type Cell,
  type Row,
  type SheetSpec,
  type Tone,
} from './cells.js';
import {
  amountsAsReported,
  breakId,
  RECORD_KINDS,
  SEVERITY_RANK,
  type Break,
  type DataSheet,
  type LateBreak,
  type ReportedBreak,
} from '../domain/index.js';
import { latePeriodMark } from './late-data.js';
import { detailText } from './break-text.js';
import { breakSentence, ruleTitle } from '../rules/describe.js';
import { unitWord } from '../rules/words.js';
import type { Precision } from './precision.js';
import { SHEET } from './sheets.js';
import { breakValuation, valuationText, type UsdRates, type Valuation } from './usd-rates.js';

const MS_PER_DAY = 86_400_000;

/** Open breaks as finance reads them: most severe first, then the oldest. */
export function sortBreaks<T extends Pick<Break, 'severity' | 'firstSeenAt' | 'code' | 'key'>>(breaks: T[]): T[] {
  return [...breaks].sort(
    (a, b) =>
      (SEVERITY_RANK[a.severity] ?? 9) - (SEVERITY_RANK[b.severity] ?? 9) ||
      a.firstSeenAt.getTime() - b.firstSeenAt.getTime() ||
      a.code.localeCompare(b.code) ||
      a.key.localeCompare(b.key),
  );
}

export function ageDays(firstSeenAt: Date, now: Date): number {
  return Math.max(0, Math.floor((now.getTime() - firstSeenAt.getTime()) / MS_PER_DAY));
}

/**
 * The Breaks sheet's headers. The workflow import finds its columns by these texts (the shared
 * contract: Rule code, Key, Amounts as reported, Status, Owner, Explanation, Explained?).
 */
export const BREAKS_HEADER = {
  severity: 'Severity',
  rule: 'Rule',
  code: 'Rule code',
  key: 'Key',
  sentence: 'What happened',
  unit: 'Unit',
  expected: 'Expected',
  actual: 'Actual',
  difference: 'Difference',
  usd: 'USD impact',
  valuation: 'USD valuation',
  inPeriod: 'This period?',
  closedPeriod: 'Closed period',
  age: 'Age (days)',
  firstSeen: 'First seen (UTC)',
  status: 'Status',
  owner: 'Owner',
  lastNote: 'Last note',
  explanation: 'Explanation',
  explained: 'Explained?',
  amounts: 'Amounts as reported',
  detail: 'Detail',
} as const;

/** Values of the "Explained?" drop-down. */
export const EXPLAINED_CHOICES = ['yes', 'no'];

const H = BREAKS_HEADER;

/**
 * Fifteen visible columns, so the sheet reads on screen and prints one page wide at a legible size: what a person
 * acts on (severity, code, key, what happened, the figures, USD impact, this period?, the closed period it lies in,
 * age) and the workflow with its
 * fill-in columns. Each figure shows its unit in its number format ("0.50 USD", "26.85 h"), so it still sums. The
 * rest stays in the file, hidden (Excel: select the columns around them, Unhide), for the workflow import and for
 * filters: the rule's name (the sentence says it), the unit (each figure shows it), first seen (age says it), the
 * stored status (Explained? says it), how the USD impact was valued (amount, rate, source and time), the exact figures
 * and the rule's detail. "Exact values" shows only when a figure has more digits than a number cell keeps. Rule codes
 * and keys fit their content (never cut); long texts wrap at a maximum width, numbers never (every row is measured).
 */
export const breaksSpec: SheetSpec = {
  name: SHEET.breaks,
  columns: [
    { header: H.severity, kind: 'text' },
    { header: H.rule, kind: 'text', width: 18, wrap: true, hidden: true },
    { header: H.code, kind: 'text' },
    { header: H.key, kind: 'id' },
    { header: H.sentence, kind: 'text', width: 40, wrap: true },
    { header: H.unit, kind: 'text', hidden: true },
    // text figures (states, hashes) wrap at 18; numbers widen the column as far as they need
    { header: H.expected, kind: 'amount', width: 18, wrap: true },
    { header: H.actual, kind: 'amount', width: 18, wrap: true },
    { header: H.difference, kind: 'amount', width: 18, wrap: true },
    { header: H.usd, kind: 'amount' },
    // how the impact was valued: the amount, the rate and where and when it was taken, or why there is none
    { header: H.valuation, kind: 'text', width: 40, wrap: true, hidden: true },
    // yes: the break's record belongs to the period reported; no: carried over (docs/rules.md "This period or carried
    // over");
    // "no: opened by late data of <day>": a break of an earlier day this run opened because its record changed late
    { header: H.inPeriod, kind: 'text' },
    // the close id of a signed-off period the break lies in (docs/closing.md): a change there is a prior-period
    // adjustment
    { header: H.closedPeriod, kind: 'text' },
    { header: H.age, kind: 'int' },
    { header: H.firstSeen, kind: 'datetime', hidden: true },
    { header: H.status, kind: 'text', hidden: true },
    { header: H.owner, kind: 'text', width: 12, editable: true },
    { header: H.lastNote, kind: 'text', width: 20, wrap: true },
    { header: H.explanation, kind: 'text', width: 24, wrap: true, editable: true },
    { header: H.explained, kind: 'text', editable: true, choices: EXPLAINED_CHOICES },
    { header: H.amounts, kind: 'text', hidden: true },
    { header: H.detail, kind: 'text', width: 40, wrap: true, hidden: true },
  ],
  fitToWidth: true,
  fitAllRows: true,
  // "Amounts as reported" holds the exact figures of this sheet (the import reads them back); "Exact values" shows
  // those a number cell cannot.
  exactValues: 'when needed',
};

export type { DataSheet } from '../domain/index.js';

/**
 * The data sheet whose key column holds the break's key: the sheet of the record kind its key names
 * (src/domain/record-kinds.ts). null: no data sheet lists the kind (a quarantined record); a key the sheet has no
 * row for (a cursor check on Coverage) gets no link.
 */
export function dataSheetOf(b: Pick<Break, 'entity'>): DataSheet | null {
  return RECORD_KINDS[b.entity]?.sheet ?? null;
}

/** Data sheet names, by DataSheet. */
export const DATA_SHEET_NAME: Readonly<Record<DataSheet, string>> = {
  partnerOrders: SHEET.partnerOrders,
  ordersVsFills: SHEET.ordersVsFills,
  fills: SHEET.fills,
  deposits: SHEET.deposits,
  withdrawals: SHEET.withdrawals,
  balances: SHEET.balances,
  coverage: SHEET.coverage,
};

/** The keys of the breaks per data sheet they can link to: what the positions are asked for. */
export function keysBySheet(breaks: Iterable<Pick<Break, 'entity' | 'key'>>): Map<DataSheet, string[]> {
  const sets = new Map<DataSheet, Set<string>>();
  for (const b of breaks) {
    const sheet = dataSheetOf(b);
    if (!sheet) continue;
    let set = sets.get(sheet);
    if (!set) sets.set(sheet, (set = new Set()));
    set.add(b.key);
  }
  return new Map([...sets].map(([sheet, set]) => [sheet, [...set]]));
}

/** The 1-based data position of each key among `keys` in sheet order (its first occurrence). */
export function positionsIn(keys: Iterable<string | null | undefined>): Map<string, number> {
  const map = new Map<string, number>();
  let n = 0;
  for (const key of keys) {
    n += 1;
    if (key != null && !map.has(key)) map.set(key, n);
  }
  return map;
}

/**
 * Where each break's key has its row: data positions (1-based, header excluded) per data sheet,
 * turned into a sheet part and row by the same split at maxRowsPerSheet as the writer's.
 */
export class BreakLinks {
  constructor(
    private readonly positions: ReadonlyMap<DataSheet, ReadonlyMap<string, number>>,
    private readonly maxRowsPerSheet?: number,
  ) {}

  targetOf(b: Pick<Break, 'entity' | 'key'>): { sheet: string; row: number } | null {
    const sheet = dataSheetOf(b);
    const n = sheet ? this.positions.get(sheet)?.get(b.key) : undefined;
    return sheet && n ? rowPlace(DATA_SHEET_NAME[sheet], n, this.maxRowsPerSheet) : null;
  }
}

export interface BreakRowContext {
  now: Date;
  /** Breaks this run opened or reopened on late data, by breakId: marked in "This period?". */
  late?: ReadonlyMap<string, LateBreak>;
  precision: Precision;
  /** USD rates for the impact column; absent: no impact. */
  usd?: UsdRates | null;
  /** Where keys have their rows; absent: keys are plain text. */
  links?: BreakLinks | null;
  /** Breaks inside a signed close's period, by breakId: the close id (breaksOnClosedPeriods). */
  closedPeriods?: ReadonlyMap<string, string>;
}

const DETAIL_MAX = 1000;
/** Decimals of ages in hours (rules report them to the hundredth). */
const HOURS_DP = 2;

/**
 * Decimals of a break's three figures, each at least its currency's scale (ages to the hundredth) and its own decimals
 * as its number cell holds them (Excel keeps 15 significant digits; the rest is in "Exact values"), so a figure that is
 * not zero never shows as 0 (-0.0003 never as -0.00, 1e-19 never as 0.000000000000000000). The row shares the most
 * any figure needs, so they line up, except where a figure would show digits Excel does not hold.
 */
export function figureDecimals(b: ReportedBreak, precision: Precision): number[] {
  const scale = scaleOf(b, precision);
  const values = [b.expected, b.actual, b.difference].map((f) =>
    b.unit !== 'text' && f && isDecimalText(f) ? new Decimal(f) : null,
  );
  const own = values.map((v) => Math.max(scale, v ? heldDecimals(v) : 0));
  const row = Math.max(...own);
  return values.map((v, i) => (v && !v.isZero() ? Math.max(own[i]!, Math.min(row, EXCEL_DIGITS - 1 - v.e)) : row));
}

/** Decimals of a figure as a number cell holds it: rounded to Excel's 15 significant digits. */
function heldDecimals(v: Decimal): number {
  return v.toSignificantDigits(EXCEL_DIGITS, Decimal.ROUND_HALF_UP).decimalPlaces();
}

/** The unit a figure's format shows after it: "h" for hours, the currency for amounts and prices, none for text. */
export function figureUnit(b: Pick<ReportedBreak, 'unit' | 'currency'>): string | undefined {
  if (b.unit === 'hours') return 'h';
  return b.unit === 'text' ? undefined : (b.currency ?? undefined);
}

/**
 * The decimals of a break's currency (partner currencies for a partner order's break, the exchange's otherwise): what
 * its sentence's figures are shown at; hours at the hundredth.
 */
export function scaleOf(
  b: Pick<ReportedBreak, 'unit' | 'currency' | 'entity'>,
  precision: Pick<Precision, 'partner' | 'exchange'>,
): number {
  return b.unit === 'hours' || b.unit === 'text' || !b.currency
    ? HOURS_DP
    : b.entity === 'partnerOrder'
      ? precision.partner(b.currency)
      : precision.exchange(b.currency);
}

function figureCell(text: string | null, b: ReportedBreak, dp: number): Cell {
  if (text === null || text === '') return null;
  // Text figures (states, hashes, timestamps) stay text; numbers only where the rule says they are.
  if (b.unit === 'text' || !isDecimalText(text)) return text;
  const unit = figureUnit(b);
  return { kind: 'amount', value: new Decimal(text.trim()), dp, ...(unit ? { unit } : {}) };
}

function lastNoteText(w: ReportedBreak['workflow']): string | null {
  if (!w.lastNote) return null;
  const by = [w.lastNoteBy, w.lastNoteAt ? w.lastNoteAt.toISOString().slice(0, 10) : null].filter(Boolean).join(', ');
  return by ? `${w.lastNote} (${by})` : w.lastNote;
}

function lateMark(b: ReportedBreak, late: BreakRowContext['late']): string {
  const l = late?.get(breakId(b.code, b.key));
  return l && l.event !== 'resolved' ? latePeriodMark(l) : 'no';
}

/** The USD impact: the figure, "no money" for a break that moves none, "no figure" for money without a USD figure. */
function impactCell(v: Valuation | null): Cell {
  if (!v) return null;
  if (v.kind === 'usd') return { kind: 'amount', value: v.usd, dp: v.dp };
  return v.kind;
}

export function breakRow(b: ReportedBreak, ctx: BreakRowContext): Row {
  const unit = unitWord(b);
  const [expectedDp, actualDp, differenceDp] = figureDecimals(b, ctx.precision);
  let detail: string | null = detailText(b.detail) || null;
  if (detail && detail.length > DETAIL_MAX) detail = `${detail.slice(0, DETAIL_MAX)}... (truncated)`;
  const valuation = ctx.usd ? breakValuation(b, ctx.usd) : null;
  const tone = (['high', 'medium', 'low'].includes(b.severity) ? b.severity : undefined) as Tone | undefined;
  const w = b.workflow;
  const explained = w.status === 'explained';
  return {
    cells: [
      b.severity,
      ruleTitle(b.code),
      b.code,
      link(b.key, ctx.links?.targetOf(b)),
      breakSentence(b, scaleOf(b, ctx.precision)),
      unit,
      figureCell(b.expected, b, expectedDp!),
      figureCell(b.actual, b, actualDp!),
      figureCell(b.difference, b, differenceDp!),
      impactCell(valuation),
      valuation ? valuationText(b, valuation) : null,
      b.inPeriod ? 'yes' : lateMark(b, ctx.late),
      ctx.closedPeriods?.get(breakId(b.code, b.key)) ?? null,
      ageDays(b.firstSeenAt, ctx.now),
      b.firstSeenAt,
      explained ? 'explained' : 'open',
      w.owner,
      lastNoteText(w),
      w.explanation,
      explained ? 'yes' : null,
      amountsAsReported(b),
      detail,
    ],
    // Colour says severity, on the severity cell only.
    cellTones: tone ? { 0: tone } : undefined,
  };
}

/** JSON of a value read through the lossless parser (LosslessNumber prints its exact text). */
export function jsonText(value: unknown): string {
  return JSON.stringify(value, (_k, v) => {
    if (v && typeof v === 'object' && 'isLosslessNumber' in v)
      return Number.isSafeInteger(Number(v.value)) ? Number(v.value) : String(v.value);
    if (typeof v === 'bigint') return v.toString();
    return v;
  });
}
