/** The Summary sheet: headline, open breaks by severity, totals, rule results, changes and requests. */
import { plural } from '../util/words.js';
import { basename } from 'node:path';
import { API_LABEL } from '../http/errors.js';
import {
  endpointSeconds,
  requestTotals,
  roundSeconds,
  sortedRequests,
  type RequestTotals,
  type RunRequests,
} from '../http/meter.js';
import { addDays, isPartial } from '../util/dates.js';
import { Decimal, ZERO } from '../decimal/decimal.js';
import { amount, day, type Cell, type Row, type SheetSpec, type Tone } from './cells.js';
import {
  lateCounts,
  SEVERITY_RANK,
  sortLate,
  type OpenBreakCounts,
  type PeriodSplit,
  type ReportedBreak,
} from '../domain/index.js';
import { ruleTitle } from '../rules/describe.js';
import { LATE_MEANING, lateSentence } from './late-data.js';
import type {
  BalanceRec,
  BalanceRollRec,
  BreakRef,
  Changes,
  FeeDayRec,
  RollFigures,
  StoredRuleResult,
  RunInfo,
  StageInfo,
  Totals,
  WebhookStats,
} from '../domain/index.js';
import type { Precision } from './precision.js';
import { shownUsd, type UsdRates } from './usd-rates.js';
import { moneyAtStake, type UsdSplit } from './money-at-stake.js';
import { SHEET } from './sheets.js';

export const summarySpec: SheetSpec = {
  name: SHEET.summary,
  layout: 'report',
  columns: [
    { header: 'Item', kind: 'text', width: 34 },
    // wide enough for a UTC date-time with milliseconds (Excel shows ### when a date does not fit)
    { header: 'Value', kind: 'text', width: 24 },
    // wide enough for an amount of 15 significant digits with separators (the balance table's columns)
    { header: '', kind: 'text', width: 22 },
    { header: '', kind: 'text', width: 22 },
    { header: '', kind: 'text', width: 22 },
    { header: '', kind: 'text', width: 22 },
    { header: '', kind: 'text', width: 60 },
  ],
};
export const SUMMARY_COLUMNS = summarySpec.columns.length;

export interface SeverityCounts {
  high: number;
  medium: number;
  low: number;
  total: number;
}

/** The severity figures of the run's open-break counts (all open breaks, of this period or carried over). */
export function severityTotals(counts: OpenBreakCounts): SeverityCounts {
  return {
    high: counts.severity.high.total,
    medium: counts.severity.medium.total,
    low: counts.severity.low.total,
    total: counts.total,
  };
}

/** "12 of this period, 5 carried over": the two counts, worded the same in the workbook and the e-mail. */
export function periodSplitText(s: PeriodSplit): string {
  return `${s.inPeriod} of this period, ${s.carriedOver} carried over`;
}

/** What a reader is told "carried over" means, wherever the two counts appear. */
/** What "explained" means, next to the counts. */
export const EXPLAINED_MEANING =
  'explained: still open, acknowledged by a person with a reason (ramp-recon breaks ack, or the Breaks sheet returned with "Explained?" = yes); counted in Open too';

export const CARRIED_OVER_MEANING =
  'of this period: the break\'s record belongs to the period reported (docs/rules.md "This period or carried over"); carried over: still open from other days or earlier runs';

/**
 * What this run says about a rule that has open breaks, so that a count and a rule status never
 * read as a contradiction: a rule not checked in this run keeps the breaks earlier runs left open.
 */
export function ruleStatusNote(results: readonly StoredRuleResult[], code: string): string {
  const r = results.find((x) => x.code === code);
  if (!r) return 'not run in this run: its open breaks are as earlier runs left them';
  if (r.status === 'not_checked')
    return `not checked in this run${r.reason ? ` (${r.reason})` : ''}: its open breaks are as earlier runs left them`;
  if (r.status === 'passed') return `passed in this run (${r.checked ?? 0} checked)`;
  return `${r.breaks ?? 0} found in this run (${r.checked ?? 0} checked)`;
}

/**
 * The one way a period is named wherever a reader sees it (Summary, file name, e-mail): "2026-11-01"
 * for one day, "2026-11-01 to 2026-11-07" (both days inclusive) for longer periods. `toExclusive` is
 * the stored, command-line end of the period (the day after the last).
 */
export function periodLabel(from: string, toExclusive: string): string {
  const last = addDays(toExclusive, -1);
  return last <= from ? from : `${from} to ${last}`;
}

/** A run whose period was not over when it started (the period includes that UTC day): its records were still arriving. */
export function partialRun(run: { periodFrom: string; periodTo: string; startedAt: Date }): boolean {
  return isPartial({ from: run.periodFrom, to: run.periodTo }, run.startedAt);
}

/** What the Summary, the e-mail and the CLI say of a partial period. */
export const PARTIAL_MEANING =
  'partial: the period was not over when the run started (it includes that UTC day); its records were still arriving';

/**
 * `ramp-recon_2026-11-21_<runId>.xlsx`, `ramp-recon_2026-11-18_to_2026-11-21_<runId>.xlsx`: the period label, no
 * spaces.
 */
export function reportFileNameOf(run: { periodFrom: string; periodTo: string; id: string }): string {
  return `ramp-recon_${periodLabel(run.periodFrom, run.periodTo).replace(' to ', '_to_')}_${run.id}.xlsx`;
}

/** ok: green, nothing open; explained: amber, every open break explained; bad: red, unexplained breaks or a failure. */
export type HeadlineTone = 'ok' | 'explained' | 'bad';

export interface Headline {
  /** true for green and amber (no unexplained open break, no failure). */
  reconciled: boolean;
  tone: HeadlineTone;
  /** The banner. */
  text: string;
  detail: string;
  /** The Summary's "Status" line: the banner's verdict in lower case, so the two never disagree. */
  status: string;
}

/** The workbook tone of a headline's banner row (amber is the 'medium' fill). */
export const HEADLINE_ROW_TONE: Record<HeadlineTone, Tone> = { ok: 'ok', explained: 'medium', bad: 'bad' };

/** A run that failed in a stage other than deliver, as its workbook and e-mail say it. */
export interface RunFailure {
  stage: string;
  error: string | null;
  /** The run's reconcile recorded its results before the failure; if not, the open breaks are as last known. */
  judged: boolean;
}

/**
 * The failure the workbook reports, or null: a run that only failed to send its e-mail (failed at deliver) is judged
 * by its breaks, not reported as a failure.
 */
export function runFailure(
  run: Pick<RunInfo, 'status' | 'failedStage' | 'ruleResults'> & { error?: string | null },
): RunFailure | null {
  if (run.status !== 'failed' || run.failedStage === 'deliver') return null;
  return { stage: run.failedStage ?? 'run', error: run.error ?? null, judged: run.ruleResults.length > 0 };
}

/** What the workbook and the e-mail of a run that failed before its reconcile say of the open breaks they show. */
export const LAST_KNOWN_MEANING =
  'as last known: left open by earlier runs, not judged by this run (it failed before its reconcile)';

/** What a failed run kept, said under its banner and in its e-mail. */
export const FAILED_RUN_KEPT = 'what each stage committed before the failure is kept; the next run resumes from it';

/** Over the counts of a run that failed before its reconcile counted the period. */
export const STORED_COUNTS_MEANING = 'records the database holds for the period; this run did not count them';

/**
 * What to do about a failed run: see it with `runs`, fix the cause, run the period again (`--account` for an account
 * of a multi-account config).
 */
export function failedRunNextStep(run: Pick<RunInfo, 'account' | 'periodFrom' | 'periodTo'>): string {
  const account = run.account && run.account !== 'default' ? ` --account ${run.account}` : '';
  return (
    "`ramp-recon runs` shows the run's stages and its error; fix the cause the error names, then run the period " +
    `again: \`ramp-recon run --from ${run.periodFrom} --to ${run.periodTo}${account}\``
  );
}

/**
 * The first line finance reads, and the Status line derived from it: green "RECONCILED" with no
 * open break; amber "RECONCILED WITH EXPLANATIONS" when every open break is explained; red "NOT
 * RECONCILED" with an unexplained open break or no reconciliation results; red "FAILED in <stage>"
 * for a failed run, its open breaks as last known unless it judged them first. A run that only
 * failed to send its e-mail (failed at deliver) is judged by its breaks, its status says so.
 */
export function headline(
  run: Pick<RunInfo, 'periodFrom' | 'periodTo' | 'status' | 'failedStage' | 'ruleResults'> & { error?: string | null },
  counts: OpenBreakCounts,
): Headline {
  const period = periodLabel(run.periodFrom, run.periodTo);
  const open = severityTotals(counts);
  const explained = counts.explained ?? 0;
  const notChecked = run.ruleResults.filter((r) => r.status === 'not_checked').length;
  const nc = notChecked ? `; ${plural(notChecked, 'rule')} not checked (see Rules)` : '';
  const breaks = (n: number) => plural(n, 'open break');
  const failed = run.status === 'failed';
  const error = run.error ? `: ${run.error}` : '';
  const failure = runFailure(run);
  if (failure)
    return {
      reconciled: false,
      tone: 'bad',
      text: `FAILED in ${failure.stage}: ${period} not reconciled`,
      detail: `Period ${period}; ${failure.judged ? '' : 'open breaks as last known (not judged by this run): '}${breaks(open.total)} (${periodSplitText(counts)})`,
      status: `failed in ${failure.stage}${error}`,
    };
  const mail = failed ? `; e-mail not sent (failed at deliver${error})` : '';
  if (open.total > 0 && explained < open.total)
    return {
      reconciled: false,
      tone: 'bad',
      text: `NOT RECONCILED: ${breaks(open.total)} (${open.high} high, ${open.medium} medium, ${open.low} low${explained ? `; ${explained} explained` : ''})`,
      detail: `Period ${period}: ${periodSplitText(counts)}${nc}`,
      status: `not reconciled: ${breaks(open.total)} (${open.total - explained} unexplained, ${explained} explained)${mail}`,
    };
  if (open.total > 0)
    return {
      reconciled: true,
      tone: 'explained',
      text: `RECONCILED WITH EXPLANATIONS: ${breaks(open.total)}, all explained`,
      detail: `Period ${period}: ${periodSplitText(counts)}${nc}`,
      status: `reconciled with explanations: ${breaks(open.total)}, all explained${mail}`,
    };
  if (run.ruleResults.length === 0)
    return {
      reconciled: false,
      tone: 'bad',
      text: 'NOT RECONCILED: no reconciliation results for this run',
      detail: `Period ${period}; run reconcile first`,
      status: `not reconciled: no reconciliation results${mail}`,
    };
  return {
    reconciled: true,
    tone: 'ok',
    text: `RECONCILED: ${period}, no open breaks`,
    detail: `Period ${period}${nc}`,
    status: `reconciled: no open breaks${mail}`,
  };
}

/** Under the banner of a failed run: the stage, why, what was kept, what the open breaks are, what to do. */
function failureRows(run: RunInfo, failure: RunFailure): Row[] {
  return [
    { cells: ['Run failed in stage', failure.stage], tone: 'bold', cellTones: { 1: 'break' } },
    { cells: ['Why', failure.error ?? '(no error recorded)'] },
    { cells: ['What was kept', FAILED_RUN_KEPT] },
    ...(failure.judged ? [] : [{ cells: ['Open breaks', LAST_KNOWN_MEANING] }]),
    { cells: ['What to do', failedRunNextStep(run)] },
  ];
}

/** The run's stages in the order they ran: by seq (recordStage), then by start time, then by name. */
export function stagesInRunOrder(stages: Record<string, StageInfo>): Array<[string, StageInfo]> {
  const big = Number.MAX_SAFE_INTEGER;
  return Object.entries(stages).sort(
    ([an, a], [bn, b]) =>
      (a.seq ?? big) - (b.seq ?? big) || (a.startedAt ?? '').localeCompare(b.startedAt ?? '') || an.localeCompare(bn),
  );
}

/**
 * When the run finished: its finishedAt; while the workbook is written inside the run (before
 * delivery), the time its reconcile stage finished, labelled so.
 */
export function finishedTime(run: Pick<RunInfo, 'finishedAt' | 'stages'>): {
  label: string;
  at: Date | null;
  note: string | null;
} {
  if (run.finishedAt) return { label: 'Finished (UTC)', at: run.finishedAt, note: null };
  const reconcile = run.stages.reconcile?.finishedAt;
  if (reconcile)
    return {
      label: 'Reconcile finished (UTC)',
      at: new Date(reconcile),
      note: 'written inside the run: report and e-mail came after this',
    };
  return { label: 'Finished (UTC)', at: null, note: 'not finished when this workbook was written' };
}

/**
 * One currency's roll-forward over the whole period (the run's snapshot pairs chained): the figures of a
 * pair's roll, the residual being the sum of the pairs' residuals when they chain.
 */
export type BalanceTotal = Pick<
  RollFigures,
  | 'currency'
  | 'opening'
  | 'deposits'
  | 'withdrawals'
  | 'bought'
  | 'sold'
  | 'fees'
  | 'expectedClosing'
  | 'actualClosing'
  | 'residual'
> & { openingAt: Date | null; closingAt: Date | null; pairs: number };

/**
 * Per currency over the run's balance_roll rows: the opening of its first pair, each flow kind
 * summed over the pairs, the expected closing from those, the actual closing of its last pair and
 * the residual between the two.
 */
export function balanceTotals(rolls: readonly BalanceRollRec[]): BalanceTotal[] {
  const byCurrency = new Map<string, BalanceRollRec[]>();
  for (const r of rolls) byCurrency.set(r.currency, [...(byCurrency.get(r.currency) ?? []), r]);
  const time = (d: Date | null) => d?.getTime() ?? 0;
  return [...byCurrency.keys()].sort().map((currency) => {
    const pairs = byCurrency
      .get(currency)!
      .sort((a, b) => time(a.openingAt) - time(b.openingAt) || time(a.closingAt) - time(b.closingAt));
    const first = pairs[0]!;
    const last = pairs[pairs.length - 1]!;
    const sum = (k: 'deposits' | 'withdrawals' | 'bought' | 'sold' | 'fees') =>
      pairs.reduce((a, p) => a.plus(p[k] ?? ZERO), ZERO);
    const flows = {
      deposits: sum('deposits'),
      withdrawals: sum('withdrawals'),
      bought: sum('bought'),
      sold: sum('sold'),
      fees: sum('fees'),
    };
    const opening = first.opening ?? ZERO;
    const expectedClosing = opening
      .plus(flows.deposits)
      .minus(flows.withdrawals)
      .plus(flows.bought)
      .minus(flows.sold)
      .minus(flows.fees);
    const actualClosing = last.actualClosing ?? ZERO;
    return {
      currency,
      opening,
      ...flows,
      expectedClosing,
      actualClosing,
      residual: actualClosing.minus(expectedClosing),
      openingAt: first.openingAt,
      closingAt: last.closingAt,
      pairs: pairs.length,
    };
  });
}

/** Sums USD values, and names the currencies that could not be valued (no rate). */
export function usdSum(
  items: Array<{ currency: string; value: Decimal | null | undefined }>,
  rates: UsdRates,
): { usd: Decimal; unvalued: string[] } {
  let usd = ZERO;
  const unvalued = new Set<string>();
  for (const i of items) {
    if (!i.value) continue;
    const v = rates.usd(i.value, i.currency);
    if (v === null) {
      if (!i.value.isZero()) unvalued.add(i.currency);
    } else usd = usd.plus(v);
  }
  return { usd, unvalued: [...unvalued].sort() };
}

/**
 * The currency a fill's fee is charged in: the symbol's counter currency, or its base with exchange.feeCurrency = base.
 */
export function feeCurrencyOf(
  symbol: string,
  precision: Precision,
  feeCurrency: 'counter' | 'base',
): { code: string; dp: number } {
  const p = precision.symbol(symbol);
  const code = (feeCurrency === 'base' ? p.base : p.counterCode) ?? '?';
  return { code, dp: feeCurrency === 'base' ? p.qty : p.counter };
}

/**
 * Partner fees (per input currency) and fill fees (per fee currency) of each day, merged into one row per day and
 * currency.
 */
export function feeDays(
  partner: ReadonlyArray<{ day: string; currency: string; fee: Decimal; feeUsd: Decimal }>,
  fills: ReadonlyArray<{ day: string; symbol: string; fee: Decimal }>,
  precision: Precision,
  feeCurrency: 'counter' | 'base',
): FeeDayRec[] {
  const rows = new Map<string, FeeDayRec>();
  const at = (day: string, currency: string) => {
    const k = `${day} ${currency}`;
    let r = rows.get(k);
    if (!r) rows.set(k, (r = { day, currency, partnerFee: null, partnerFeeUsd: null, exchangeFee: null }));
    return r;
  };
  for (const p of partner) {
    const r = at(p.day, p.currency);
    r.partnerFee = (r.partnerFee ?? ZERO).plus(p.fee);
    r.partnerFeeUsd = (r.partnerFeeUsd ?? ZERO).plus(p.feeUsd);
  }
  for (const f of fills) {
    const r = at(f.day, feeCurrencyOf(f.symbol, precision, feeCurrency).code);
    r.exchangeFee = (r.exchangeFee ?? ZERO).plus(f.fee);
  }
  return [...rows.values()].sort((a, b) => a.day.localeCompare(b.day) || a.currency.localeCompare(b.currency));
}

export const COUNT_LABELS: Array<[string, string]> = [
  ['partnerOrders', 'Partner orders (created in period)'],
  ['fills', 'Exchange fills'],
  ['exchangeOrders', 'Exchange orders'],
  ['deposits', 'Exchange deposits'],
  ['withdrawals', 'Exchange withdrawals'],
  ['balanceSnapshots', 'Balance snapshots'],
  ['quarantined', 'Quarantined records (unresolved)'],
];

/** The run's detail folder and its files (null on the detail workbook's own Summary: the files are beside it). */
export interface SummaryDetail {
  dir: string;
  files: ReadonlyArray<{ sheet: string; path: string; rows: number; bytes: number }> | null;
}

/** What the data sheets of the mailed workbook hold, and where the rest is: short lines, the Summary prints one page wide. */
export const DETAIL_MEANING = [
  'the data sheets here list the records open breaks point at, with those that explain them (an order with its fills,',
  'a partner order with its deposit); the folder above holds every record of the period, one gzip CSV per data sheet',
  '(`ramp-recon report <run id> --detail` also writes them there as a workbook)',
];

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
}

/** Changes listed by name on the Summary; beyond that the Breaks sheet has them all. */
export const CHANGES_LISTED = 50;

const blank = (): Row => ({ cells: [] });
const section = (title: string): Row => ({ cells: [title, null, null, null, null, null, null], tone: 'section' });
/** A table's header row: its titles after the first right-aligned, as the figures under them are. */
const header = (...titles: string[]): Row => ({ cells: titles, tone: 'bold', alignRight: true });
const pair = (label: string, value: Cell, ...rest: Cell[]): Row => ({ cells: [label, value, ...rest] });

/**
 * The money at stake's rows (money-at-stake.ts): shortfalls, surpluses, and the open breaks without a USD figure or
 * moving no money, each in total, this period and carried over.
 */
function stakeRows(openBreaks: readonly ReportedBreak[], rates: UsdRates): Row[] {
  const m = moneyAtStake(openBreaks, rates);
  // the exact sum, shown at two decimals (a smaller non-zero one to its first significant digit)
  const usd = (v: Decimal) => amount(v, shownUsd(v).dp);
  const money = (label: string, s: UsdSplit, tone?: Tone): Row => ({
    cells: [label, usd(s.total), usd(s.inPeriod), usd(s.carriedOver)],
    ...(tone && !s.total.isZero() ? { cellTones: { 1: tone } } : {}),
  });
  return [
    { cells: ['Money at stake (USD)', 'Total', 'This period', 'Carried over'], tone: 'bold', alignRight: true },
    money('Shortfalls: money missing or gone', m.shortfalls, 'high'),
    money('Surpluses: money extra', m.surpluses),
    {
      cells: [
        'Open breaks without a USD figure',
        m.noFigure.total,
        m.noFigure.inPeriod,
        m.noFigure.carriedOver,
        'they move money, but have no USD rate or no amount recorded: not in the sums above',
      ],
    },
    {
      cells: ['Open breaks that move no money', m.noMoney.total, m.noMoney.inPeriod, m.noMoney.carriedOver],
    },
    { cells: [STAKE_MEANING], tone: 'muted' },
  ];
}

export const STAKE_MEANING =
  "Each open break's USD impact as on the Breaks sheet, signed from our side: shortfalls (negative) and surpluses " +
  '(positive) are summed apart, never netted; "no money": ages, states, coverage, quarantine.';

export function summaryRows(input: SummaryInput): Row[] {
  const { run, counts, changes, totals, precision } = input;
  const head = headline(run, counts);
  const rows: Row[] = [];
  rows.push({ cells: [head.text, ...pad(SUMMARY_COLUMNS - 1)], tone: HEADLINE_ROW_TONE[head.tone] });
  rows.push({ cells: [head.detail] });
  const failure = runFailure(run);
  if (failure) rows.push(...failureRows(run, failure));
  if (partialRun(run)) rows.push({ cells: ['Partial period', PARTIAL_MEANING], cellTones: { 1: 'medium' } });
  if (input.rates) rows.push(...stakeRows(input.openBreaks, input.rates));
  if (input.detail) {
    if (input.detail.files === null)
      // the detail workbook's own Summary
      rows.push({
        cells: ['Every record of the period', `on the data sheets here, and as gzip CSV in ${input.detail.dir}`],
      });
    else {
      rows.push({ cells: ['Every record of the period', input.detail.dir] });
      for (const line of DETAIL_MEANING) rows.push({ cells: [line], tone: 'muted' });
    }
  }
  rows.push(blank());

  const explainedOf = (sev: string) =>
    input.openBreaks.filter((b) => b.severity === sev && b.workflow?.status === 'explained').length;
  rows.push(section(failure && !failure.judged ? `Open breaks (${LAST_KNOWN_MEANING})` : 'Open breaks'));
  rows.push(header('Severity', 'Open', 'Of this period', 'Carried over', 'Explained'));
  for (const sev of ['high', 'medium', 'low'] as const) {
    const c = counts.severity[sev];
    rows.push({
      cells: [sev, c.total, c.inPeriod, c.carriedOver, explainedOf(sev)],
      cellTones: c.total ? { 0: sev } : undefined,
    });
  }
  rows.push({
    cells: ['total', counts.total, counts.inPeriod, counts.carriedOver, counts.explained ?? 0],
    tone: 'bold',
  });
  rows.push({ cells: [CARRIED_OVER_MEANING], tone: 'muted' });
  rows.push({ cells: [EXPLAINED_MEANING], tone: 'muted' });
  rows.push(blank());

  rows.push(...lateRows(run.lateBreaks ?? []), blank());

  rows.push(section('Open breaks by rule'));
  rows.push(header('Rule', 'Severity', 'Open', 'Of this period', 'Carried over', 'Explained', 'In this run'));
  for (const r of counts.rules)
    rows.push({
      cells: [
        r.code,
        r.severity,
        r.total,
        r.inPeriod,
        r.carriedOver,
        r.explained ?? 0,
        ruleStatusNote(run.ruleResults, r.code),
      ],
    });
  if (!counts.rules.length) rows.push({ cells: ['(none)'], tone: 'muted' });
  rows.push(blank());

  // The first screen ends with the balance table; the run's details follow it.
  if (input.balanceRolls || input.latestBalances)
    rows.push(
      ...balanceTableRows(input.balanceRolls ?? [], input.latestBalances ?? [], precision, input.rates),
      blank(),
    );

  rows.push(section('Run'));
  rows.push(
    pair(
      'Period',
      periodLabel(run.periodFrom, run.periodTo),
      run.periodTo > addDays(run.periodFrom, 1) ? 'both days included' : 'one UTC day',
    ),
  );
  rows.push(pair('Run id', run.id));
  rows.push({
    cells: ['Status', head.status],
    cellTones: { 1: head.tone === 'ok' ? 'ok' : head.tone === 'explained' ? 'medium' : 'break' },
  });
  rows.push(pair('Started (UTC)', run.startedAt));
  const finished = finishedTime(run);
  rows.push(pair(finished.label, finished.at ?? finished.note, finished.at ? finished.note : null));
  rows.push(pair('Report written (UTC)', input.writtenAt ?? input.now));
  rows.push(pair('Ruleset version', run.rulesetVersion));
  rows.push(pair('Config hash', run.configHash));
  const stages = stagesInRunOrder(run.stages);
  if (stages.length) {
    rows.push(header('Stage (in run order)', 'Status', 'Time (s)', 'Started (UTC)', '', '', 'Error'));
    for (const [stage, info] of stages)
      rows.push({
        cells: [
          stage,
          info.status ?? null,
          info.ms !== undefined ? roundSeconds(info.ms / 1000) : null,
          utcText(info.startedAt),
          null,
          null,
          info.error ?? null,
        ],
      });
  }
  rows.push(blank());

  if (input.detail?.files) {
    rows.push(section('Detail (every record of the period)'));
    rows.push(header('File', 'Rows', 'Bytes'));
    for (const f of input.detail.files) rows.push({ cells: [basename(f.path), f.rows, f.bytes] });
    rows.push(blank());
  }

  // A run that failed before its reconcile counted nothing: what the database holds for the period stands there.
  const stored = failure && !failure.judged ? input.storedCounts : undefined;
  const recordCounts = stored ?? run.counts;
  rows.push(section(stored ? `Counts (${STORED_COUNTS_MEANING})` : 'Counts (records of the period)'));
  for (const [key, label] of COUNT_LABELS) rows.push(pair(label, recordCounts[key] ?? null));
  for (const [key, value] of Object.entries(recordCounts))
    if (!COUNT_LABELS.some(([k]) => k === key)) rows.push(pair(key, value));
  if (input.webhooks) {
    const w = input.webhooks;
    rows.push(pair('Webhook events received', w.events));
    rows.push(pair('Webhook duplicates acknowledged', w.duplicates));
    rows.push({
      cells: [
        'Webhook conflicts (an eventId repeated with another body)',
        w.conflicts,
        w.conflicts ? 'kept in webhook_event_conflict; the first body stays the stored event' : null,
      ],
      cellTones: w.conflicts ? { 1: 'medium' } : undefined,
    });
    rows.push({
      cells: [
        'Webhook events with schema drift',
        w.drifted,
        w.driftFields.length ? `extra fields: ${w.driftFields.join(', ')}` : null,
      ],
      cellTones: w.drifted ? { 1: 'medium' } : undefined,
    });
  }
  rows.push(blank());

  rows.push(...requestRows(run.requests));
  rows.push(...syncTimeRows(stages));
  rows.push(blank());

  rows.push(section('Totals: partner orders by input currency'));
  rows.push(
    header(
      'Input currency',
      'Orders',
      'Volume',
      'Fees',
      'Amount USD',
      'Fees USD',
      'Volume and fees are in the input currency',
    ),
  );
  for (const t of totals.partner) {
    const dp = precision.partner(t.currency);
    rows.push({
      cells: [
        t.currency,
        t.orders,
        amount(t.volume, dp),
        amount(t.fees, dp),
        amount(t.amountUsd, 2),
        amount(t.feesUsd, 2),
      ],
    });
  }
  if (totals.partner.length)
    rows.push({
      cells: [
        'all (USD)',
        totals.partner.reduce((a, t) => a + t.orders, 0),
        null,
        null,
        amount(sumOf(totals.partner.map((t) => t.amountUsd)), 2),
        amount(sumOf(totals.partner.map((t) => t.feesUsd)), 2),
      ],
      tone: 'bold',
    });
  else rows.push({ cells: ['(none)'], tone: 'muted' });
  rows.push(blank());

  const feeCurrency = input.feeCurrency ?? 'counter';
  rows.push(section('Totals: exchange fills by symbol'));
  rows.push(header('Symbol', 'Fills', 'Quantity', 'Notional', 'Fees', 'Fee currency', 'Currencies'));
  for (const t of totals.fills) {
    const p = precision.symbol(t.symbol);
    const fee = feeCurrencyOf(t.symbol, precision, feeCurrency);
    rows.push({
      cells: [
        t.symbol,
        t.fills,
        amount(t.qty, p.qty),
        amount(t.notional, p.counter),
        amount(t.fees, fee.dp),
        fee.code,
        `quantity in ${p.base ?? '?'}, notional in ${p.counterCode ?? '?'}, fees in ${fee.code}`,
      ],
    });
  }
  if (!totals.fills.length) rows.push({ cells: ['(none)'], tone: 'muted' });
  rows.push(blank());

  rows.push(section('Totals: deposits and withdrawals by currency'));
  rows.push(
    header(
      'Currency',
      'Deposits',
      'Deposited',
      'Withdrawals',
      'Withdrawn',
      'Withdrawal fees',
      'Amounts are in the currency of the row',
    ),
  );
  const currencies = [
    ...new Set([...totals.deposits.map((d) => d.currency), ...totals.withdrawals.map((w) => w.currency)]),
  ].sort();
  for (const c of currencies) {
    const d = totals.deposits.find((x) => x.currency === c);
    const w = totals.withdrawals.find((x) => x.currency === c);
    const dp = precision.exchange(c);
    rows.push({
      cells: [c, d?.count ?? 0, amount(d?.amount, dp), w?.count ?? 0, amount(w?.amount, dp), amount(w?.fee, dp)],
    });
  }
  if (!currencies.length) rows.push({ cells: ['(none)'], tone: 'muted' });
  rows.push(blank());

  if (input.feeDays) rows.push(...feeDayRows(input.feeDays, precision, input.rates), blank());

  rows.push(section('Rules'));
  rows.push(header('Rule', 'Severity', 'Status', 'Checked', 'Found in this run', '', 'Check / why not checked'));
  const rules = [...run.ruleResults].sort((a, b) => a.code.localeCompare(b.code));
  for (const r of rules) {
    const status = r.status === 'not_checked' ? 'not checked' : r.status;
    const tone: Tone = r.status === 'passed' ? 'ok' : r.status === 'breaks' ? 'bad' : 'muted';
    rows.push({
      cells: [
        r.code,
        r.severity,
        status,
        r.checked,
        r.breaks,
        null,
        r.status === 'not_checked' && r.reason ? `${r.description} (not checked: ${r.reason})` : r.description,
      ],
      cellTones: { 2: tone === 'ok' || tone === 'bad' ? (tone === 'ok' ? 'ok' : 'break') : 'muted' },
    });
  }
  if (!rules.length) rows.push({ cells: ['(no rule results recorded)'], tone: 'muted' });
  rows.push(blank());

  rows.push(section('Assumptions in force'));
  for (const [k, v] of input.assumptions) rows.push(pair(k, v));
  rows.push(blank());

  rows.push(section('Compared with the previous run of this period'));
  if (changes.previous) {
    rows.push(pair('Previous run', changes.previous.id, changes.previous.status));
    rows.push(pair('Previous run started (UTC)', changes.previous.startedAt));
  } else {
    rows.push(pair('Previous run', '(none: first run of this period)'));
  }
  rows.push(pair('New breaks', changes.opened.length));
  rows.push(pair('Reopened breaks', changes.reopened.length));
  rows.push(pair('Resolved breaks', changes.resolved.length));
  rows.push(pair('Still open', changes.stillOpen));
  const listed: Array<[string, BreakRef]> = [
    ...sortRefs(changes.opened).map((b): [string, BreakRef] => ['new', b]),
    ...sortRefs(changes.reopened).map((b): [string, BreakRef] => ['reopened', b]),
    ...sortRefs(changes.resolved).map((b): [string, BreakRef] => ['resolved', b]),
  ];
  if (listed.length) {
    rows.push(header('Change', 'Rule', 'Key', 'Severity', '', '', 'Message'));
    for (const [change, b] of listed.slice(0, CHANGES_LISTED))
      rows.push({
        cells: [change, b.code, b.key, b.severity, null, null, b.message],
        tone: change === 'resolved' ? 'muted' : undefined,
      });
    if (listed.length > CHANGES_LISTED)
      rows.push({
        cells: [`... and ${listed.length - CHANGES_LISTED} more (all open ones are on the Breaks sheet)`],
        tone: 'muted',
      });
  }
  rows.push(blank());

  rows.push(section('How to read this workbook'));
  rows.push(
    pair(
      'Banner',
      'green: no open break; amber: open breaks, every one explained; red: unexplained open breaks or a failed run',
    ),
  );
  rows.push(
    pair(
      'Red rows (data sheets)',
      'a record with an open break; the "Open breaks" column names the rules; on the Breaks sheet, the Key links to that row',
    ),
  );
  rows.push(
    pair(
      'Exact values',
      'every amount is a number you can sum; where it has more digits than Excel keeps (15) or than its format shows, the last column "Exact values" (here: a cell note) holds the exact text',
    ),
  );
  rows.push(pair('Times and days', 'UTC; the period names its first and last day, both included'));
  rows.push(
    pair(
      'Amounts',
      "formatted at each currency's precision (partner currencies, exchange symbol scales; else 2 fiat / 8 crypto), the same on every row",
    ),
  );
  rows.push(
    pair(
      'Breaks sheet',
      'fill in Owner, Explanation and Explained? (yes/no) and return the file: `ramp-recon breaks import <file>` ' +
        'records them',
    ),
  );
  rows.push(pair('Sheets over 1,048,576 rows', 'continue on a sheet of the same name with (2), (3)...'));
  return withTextColumns(rows);
}

/**
 * Marks on each table header the columns whose figures below are text (up to the next blank or section row): their
 * title stands left like the text under it, the others right over their numbers.
 */
function withTextColumns(rows: Row[]): Row[] {
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

/**
 * "Earlier days changed by late data": the breaks of days before the period this run opened,
 * reopened or resolved because their records changed after those days were reconciled, with the
 * day of each record (docs/rules.md "What a run judges").
 */
function lateRows(late: NonNullable<RunInfo['lateBreaks']>): Row[] {
  const c = lateCounts(late);
  const rows: Row[] = [section('Earlier days changed by late data')];
  rows.push({
    cells: [lateSentence(c), null, null, null, null, null, null],
    cellTones: c.opened + c.reopened ? { 0: 'medium' } : undefined,
  });
  if (c.total) {
    rows.push(header('Day of the record', 'Change', 'Rule code', 'Key', 'Severity', '', 'Rule'));
    for (const b of sortLate(late).slice(0, CHANGES_LISTED))
      rows.push({
        cells: [day(b.day), b.event, b.code, b.key, b.severity, null, ruleTitle(b.code)],
        tone: b.event === 'resolved' ? 'muted' : undefined,
      });
    if (late.length > CHANGES_LISTED)
      rows.push({
        cells: [`... and ${late.length - CHANGES_LISTED} more (the open ones are marked on the Breaks sheet)`],
        tone: 'muted',
      });
  }
  rows.push({ cells: [LATE_MEANING], tone: 'muted' });
  return rows;
}

/**
 * "API requests": per API and endpoint, attempts (retries included), retries, the rate limit of
 * its class of call and the time those requests take at it; the times add up (requestTotals).
 */
function requestRows(requests: RunRequests): Row[] {
  const rows: Row[] = [
    section('API requests'),
    header('API', 'Endpoint', 'Requests', 'Retries', 'Rate limit (/s)', 'Time at that rate (s)'),
  ];
  const totals = requestTotals(requests);
  const total = (api: string, t: RequestTotals): Row => ({
    cells: [api, 'total', t.requests, t.retries, null, roundSeconds(t.seconds)],
    tone: 'bold',
  });
  for (const [api, endpoints] of sortedRequests(requests)) {
    for (const [endpoint, e] of endpoints)
      rows.push({
        cells: [API_LABEL[api], endpoint, e.requests, e.retries, e.perSecond, roundSeconds(endpointSeconds(e))],
      });
    const t = totals.apis[api];
    if (t) rows.push(total(API_LABEL[api], t));
  }
  if (totals.all.requests === 0) rows.push({ cells: ['(no API requests recorded for this run)'], tone: 'muted' });
  else rows.push(total('All APIs', totals.all));
  return rows;
}

/** "Sync": the time each sync stage took, beside the requests above. */
function syncTimeRows(stages: Array<[string, StageInfo]>): Row[] {
  const sync = stages.filter(([name]) => name.startsWith('sync'));
  if (!sync.length) return [];
  const rows: Row[] = [header('Sync stage', 'Time (s)', 'Status')];
  for (const [name, info] of sync)
    rows.push({ cells: [name, info.ms !== undefined ? roundSeconds(info.ms / 1000) : null, info.status ?? null] });
  rows.push({
    cells: ['All sync stages', roundSeconds(sync.reduce((a, [, i]) => a + (i.ms ?? 0), 0) / 1000)],
    tone: 'bold',
  });
  return rows;
}

/**
 * The balance table: one column per currency (six a block), rows opening, each flow, expected and actual closing,
 * residual and USD.
 */
function balanceTableRows(
  rolls: BalanceRollRec[],
  latest: BalanceRec[],
  precision: Precision,
  rates: UsdRates | undefined,
): Row[] {
  const rows: Row[] = [section('Balances per currency (roll-forward over the period)')];
  const table = balanceTotals(rolls);
  const usdOf = (value: Decimal | null, currency: string) => (rates ? rates.usd(value, currency) : null);
  if (!table.length) {
    rows.push({
      cells: ['(no roll-forward in this run: fewer than two balance snapshots; the latest snapshot follows)'],
      tone: 'muted',
    });
    const items = [...latest].sort((a, b) => a.currency.localeCompare(b.currency));
    rows.push(header('Currency', 'Balance', 'Balance USD', 'Snapshot (UTC)'));
    for (const b of items)
      rows.push({
        cells: [
          b.currency,
          amount(b.balance, precision.exchange(b.currency)),
          amount(usdOf(b.balance, b.currency), 2),
          b.fetchedAt,
        ],
      });
    if (!items.length) rows.push({ cells: ['(no balance snapshot)'], tone: 'muted' });
    if (rates && items.length) rows.push(...grandTotal(items, (b) => b.balance, rates));
    return rows;
  }
  const PER_BLOCK = SUMMARY_COLUMNS - 1;
  const lines: Array<[string, (t: BalanceTotal) => Cell]> = [
    ['Opening', (t) => amount(t.opening, precision.exchange(t.currency))],
    ['Deposits', (t) => amount(t.deposits, precision.exchange(t.currency))],
    ['Withdrawals (with fees)', (t) => amount(t.withdrawals, precision.exchange(t.currency))],
    ['Bought (fills)', (t) => amount(t.bought, precision.exchange(t.currency))],
    ['Sold (fills)', (t) => amount(t.sold, precision.exchange(t.currency))],
    ['Fees (fills)', (t) => amount(t.fees, precision.exchange(t.currency))],
    ['Expected closing', (t) => amount(t.expectedClosing, precision.exchange(t.currency))],
    ['Actual closing', (t) => amount(t.actualClosing, precision.exchange(t.currency))],
    ['Residual (actual - expected)', (t) => amount(t.residual, precision.exchange(t.currency))],
    ['Actual closing USD', (t) => amount(usdOf(t.actualClosing, t.currency), 2)],
    ['Opening snapshot (UTC)', (t) => utcText(t.openingAt)],
    ['Closing snapshot (UTC)', (t) => utcText(t.closingAt)],
  ];
  for (let i = 0; i < table.length; i += PER_BLOCK) {
    const block = table.slice(i, i + PER_BLOCK);
    rows.push(header('Currency', ...block.map((t) => t.currency)));
    for (const [label, cell] of lines)
      rows.push({
        cells: [label, ...block.map(cell)],
        cellTones: label.startsWith('Residual')
          ? Object.fromEntries(
              block.map((t, j) => [j + 1, t.residual.isZero() ? undefined : 'high']).filter(([, v]) => v),
            )
          : undefined,
        tone: label === 'Actual closing' ? 'bold' : undefined,
      });
  }
  rows.push({
    cells: [
      'expected closing = opening + deposits - withdrawals + bought - sold - fees; opening of the first snapshot ' +
        'pair, actual closing of the last',
    ],
    tone: 'muted',
  });
  if (rates) rows.push(...grandTotal(table, (t) => t.actualClosing, rates));
  return rows;
}

/**
 * The closing balances' USD total the balance table ends with: the roll-forward's actual closings, or without a
 * roll-forward the latest snapshot's balances; null without either.
 */
export function closingBalancesUsd(
  rolls: readonly BalanceRollRec[],
  latest: readonly BalanceRec[],
  rates: UsdRates,
): { usd: Decimal; unvalued: string[] } | null {
  const table = balanceTotals(rolls);
  if (table.length)
    return usdSum(
      table.map((t) => ({ currency: t.currency, value: t.actualClosing })),
      rates,
    );
  if (latest.length)
    return usdSum(
      latest.map((b) => ({ currency: b.currency, value: b.balance })),
      rates,
    );
  return null;
}

/** The USD total of each currency's closing figure, naming the currencies without a rate. */
function grandTotal<T extends { currency: string }>(items: T[], closing: (item: T) => Decimal, rates: UsdRates): Row[] {
  const sum = usdSum(
    items.map((item) => ({ currency: item.currency, value: closing(item) })),
    rates,
  );
  const rows: Row[] = [{ cells: ['Total closing USD (all currencies)', amount(sum.usd, 2)], tone: 'bold' }];
  if (sum.unvalued.length)
    rows.push({ cells: [`not included (no USD rate): ${sum.unvalued.join(', ')}`], tone: 'muted' });
  return rows;
}

/**
 * "Partner fees earned and exchange fees paid per day": one row per day and currency, a USD total per day and for the
 * period.
 */
function feeDayRows(days: FeeDayRec[], precision: Precision, rates: UsdRates | undefined): Row[] {
  const rows: Row[] = [
    section('Partner fees earned and exchange fees paid per day'),
    header(
      'Day',
      'Currency',
      'Partner fees earned',
      'Partner fees USD',
      'Exchange fees paid',
      'Exchange fees USD',
      'partner fee of COMPLETED orders (by creation day); fill fees (by fill day)',
    ),
  ];
  if (!days.length) return [...rows, { cells: ['(none)'], tone: 'muted' }];
  const exchangeUsd = (d: FeeDayRec) => (rates && d.exchangeFee ? rates.usd(d.exchangeFee, d.currency) : null);
  const total = (list: FeeDayRec[], label: string, dayCell: Cell): Row => {
    const unvalued = [
      ...new Set(
        list.filter((d) => d.exchangeFee && !d.exchangeFee.isZero() && exchangeUsd(d) === null).map((d) => d.currency),
      ),
    ];
    return {
      cells: [
        dayCell,
        label,
        null,
        amount(sumOf(list.map((d) => d.partnerFeeUsd)), 2),
        null,
        amount(sumOf(list.map(exchangeUsd)), 2),
        unvalued.length ? `exchange fees without a USD rate not included: ${unvalued.join(', ')}` : null,
      ],
      tone: 'bold',
    };
  };
  for (const d of [...new Set(days.map((x) => x.day))]) {
    const list = days.filter((x) => x.day === d);
    for (const x of list)
      rows.push({
        cells: [
          day(x.day),
          x.currency,
          amount(x.partnerFee, precision.partner(x.currency)),
          amount(x.partnerFeeUsd, 2),
          amount(x.exchangeFee, precision.exchange(x.currency)),
          amount(exchangeUsd(x), 2),
        ],
      });
    rows.push(total(list, 'day total USD', day(d)));
  }
  rows.push(total(days, 'period total USD', 'all days'));
  return rows;
}

/**
 * "2026-11-23 03:26:54": a time as text that fits the Summary's narrower columns (a date cell of that width shows ###).
 */
function utcText(at: Date | string | null | undefined): string | null {
  if (!at) return null;
  return new Date(at).toISOString().slice(0, 19).replace('T', ' ');
}

function sumOf(values: Array<Decimal | null | undefined>): Decimal {
  return values.reduce<Decimal>((a, v) => (v ? a.plus(v) : a), ZERO);
}

/** Empty cells so a toned row is filled across the whole width. */
function pad(n: number): Cell[] {
  return Array.from({ length: n }, () => null);
}

function sortRefs(refs: BreakRef[]): BreakRef[] {
  return [...refs].sort(
    (a, b) =>
      (SEVERITY_RANK[a.severity] ?? 9) - (SEVERITY_RANK[b.severity] ?? 9) ||
      a.code.localeCompare(b.code) ||
      a.key.localeCompare(b.key),
  );
}
