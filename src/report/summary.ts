/** The Summary sheet: headline, open breaks by severity, totals, rule results, changes and requests. */
import { API_LABEL } from '../http/errors.js';
import { endpointSeconds, requestTotals, roundSeconds, sortedRequests, type RequestTotals, type RunRequests } from '../http/meter.js';
import { addDays } from '../util/dates.js';
import { amount, day, type Cell, type Row, type SheetSpec, type Tone } from './cells.js';
import { SEVERITY_RANK, type OpenBreakCounts, type PeriodSplit, type ReportedBreak } from '../domain/index.js';
import type { BreakRef, Changes, RuleResult, RunInfo, Totals, WebhookStats } from './model.js';
import type { Precision } from './precision.js';
import { SHEET } from './sheets.js';

export const summarySpec: SheetSpec = {
  name: SHEET.summary,
  layout: 'report',
  columns: [
    { header: 'Item', kind: 'text', width: 34 },
    // wide enough for a UTC date-time with milliseconds (Excel shows ### when a date does not fit)
    { header: 'Value', kind: 'text', width: 24 },
    { header: '', kind: 'text', width: 20 },
    { header: '', kind: 'text', width: 20 },
    { header: '', kind: 'text', width: 20 },
    { header: '', kind: 'text', width: 20 },
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
  return { high: counts.severity.high.total, medium: counts.severity.medium.total, low: counts.severity.low.total, total: counts.total };
}

/** "12 of this period, 5 carried over": the two counts, worded the same in the workbook and the e-mail. */
export function periodSplitText(s: PeriodSplit): string {
  return `${s.inPeriod} of this period, ${s.carriedOver} carried over`;
}

/** What a reader is told "carried over" means, wherever the two counts appear. */
export const CARRIED_OVER_MEANING =
  'of this period: the break\'s record belongs to the period reported (docs/rules.md "This period or carried over"); carried over: still open from other days or earlier runs';

/**
 * What this run says about a rule that has open breaks, so that a count and a rule status never
 * read as a contradiction: a rule not checked in this run keeps the breaks earlier runs left open.
 */
export function ruleStatusNote(results: readonly RuleResult[], code: string): string {
  const r = results.find((x) => x.code === code);
  if (!r) return 'not run in this run: its open breaks are as earlier runs left them';
  if (r.status === 'not_checked') return `not checked in this run${r.reason ? ` (${r.reason})` : ''}: its open breaks are as earlier runs left them`;
  if (r.status === 'passed') return `passed in this run (${r.checked ?? 0} checked)`;
  return `${r.breaks ?? 0} found in this run (${r.checked ?? 0} checked)`;
}

/** "2026-11-01" for one day, "2026-11-01 to 2026-11-07" (both inclusive) for longer periods. */
export function periodLabel(from: string, to: string): string {
  const last = addDays(to, -1);
  return last === from ? from : `${from} to ${last}`;
}

export interface Headline {
  reconciled: boolean;
  text: string;
  detail: string;
}

/**
 * The first line finance reads: reconciled (green) or how many breaks are open by severity (red).
 * A failed run or a run without reconciliation results is never "reconciled".
 */
export function headline(run: Pick<RunInfo, 'periodFrom' | 'periodTo' | 'status' | 'failedStage' | 'ruleResults'>, counts: OpenBreakCounts): Headline {
  const period = periodLabel(run.periodFrom, run.periodTo);
  const open = severityTotals(counts);
  const notChecked = run.ruleResults.filter((r) => r.status === 'not_checked').length;
  const nc = notChecked ? `; ${notChecked} rule${notChecked === 1 ? '' : 's'} not checked (see Rules)` : '';
  if (run.status === 'failed')
    return { reconciled: false, text: `NOT RECONCILED: the run failed${run.failedStage ? ` at ${run.failedStage}` : ''}`, detail: `Period ${period}; ${open.total} open breaks (${periodSplitText(counts)})` };
  if (open.total > 0)
    return {
      reconciled: false,
      text: `NOT RECONCILED: ${open.total} open break${open.total === 1 ? '' : 's'} (${open.high} high, ${open.medium} medium, ${open.low} low)`,
      detail: `Period ${period}: ${periodSplitText(counts)}${nc}`,
    };
  if (run.ruleResults.length === 0)
    return { reconciled: false, text: 'NOT RECONCILED: no reconciliation results for this run', detail: `Period ${period}; run reconcile first` };
  return { reconciled: true, text: `RECONCILED: ${period}, no open breaks`, detail: `Period ${period}${nc}` };
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

export interface SummaryInput {
  run: RunInfo;
  openBreaks: ReportedBreak[];
  /** openBreakCounts(openBreaks), computed once by the report stage and stored with the workbook. */
  counts: OpenBreakCounts;
  changes: Changes;
  totals: Totals;
  assumptions: Array<[string, string]>;
  precision: Precision;
  now: Date;
  webhooks?: WebhookStats;
}

/** Changes listed by name on the Summary; beyond that the Breaks sheet has them all. */
export const CHANGES_LISTED = 50;

const blank = (): Row => ({ cells: [] });
const section = (title: string): Row => ({ cells: [title, null, null, null, null, null, null], tone: 'section' });
const header = (...titles: string[]): Row => ({ cells: titles, tone: 'bold' });
const pair = (label: string, value: Cell, ...rest: Cell[]): Row => ({ cells: [label, value, ...rest] });

export function summaryRows(input: SummaryInput): Row[] {
  const { run, counts, changes, totals, precision } = input;
  const head = headline(run, counts);
  const rows: Row[] = [];
  rows.push({ cells: [head.text, ...pad(SUMMARY_COLUMNS - 1)], tone: head.reconciled ? 'ok' : 'bad' });
  rows.push({ cells: [head.detail] });
  rows.push(blank());

  rows.push(section('Run'));
  rows.push(pair('Period from', day(run.periodFrom)));
  rows.push(pair('Period to (exclusive)', day(run.periodTo)));
  rows.push(pair('Run id', run.id));
  // The workbook is written inside the run, before delivery: 'running' there means "reconciled, being reported".
  rows.push(pair('Status', run.status === 'running' ? 'reconciled (report written during the run)' : run.status, run.error ? `${run.failedStage ?? ''} ${run.error}`.trim() : null));
  rows.push(pair('Started (UTC)', run.startedAt));
  rows.push(pair('Finished (UTC)', run.finishedAt));
  rows.push(pair('Report written (UTC)', input.now));
  rows.push(pair('Ruleset version', run.rulesetVersion));
  rows.push(pair('Config hash', run.configHash));
  for (const [stage, info] of Object.entries(run.stages)) {
    rows.push(pair(`Stage ${stage}`, info.status ?? null, info.ms !== undefined ? `${(info.ms / 1000).toFixed(1)} s` : null, info.error ?? null));
  }
  rows.push(blank());

  rows.push(section('Open breaks'));
  rows.push(header('Severity', 'Open', 'Of this period', 'Carried over'));
  for (const sev of ['high', 'medium', 'low'] as const) {
    const c = counts.severity[sev];
    rows.push({ cells: [sev, c.total, c.inPeriod, c.carriedOver], cellTones: c.total ? { 0: sev } : undefined });
  }
  rows.push({ cells: ['total', counts.total, counts.inPeriod, counts.carriedOver], tone: 'bold' });
  rows.push({ cells: [CARRIED_OVER_MEANING], tone: 'muted' });
  rows.push(blank());

  rows.push(section('Open breaks by rule'));
  rows.push(header('Rule', 'Severity', 'Open', 'Of this period', 'Carried over', '', 'In this run'));
  for (const r of counts.rules) rows.push({ cells: [r.code, r.severity, r.total, r.inPeriod, r.carriedOver, null, ruleStatusNote(run.ruleResults, r.code)] });
  if (!counts.rules.length) rows.push({ cells: ['(none)'], tone: 'muted' });
  rows.push(blank());

  rows.push(section('Counts (records of the period)'));
  for (const [key, label] of COUNT_LABELS) rows.push(pair(label, run.counts[key] ?? null));
  for (const [key, value] of Object.entries(run.counts)) if (!COUNT_LABELS.some(([k]) => k === key)) rows.push(pair(key, value));
  if (input.webhooks) {
    const w = input.webhooks;
    rows.push(pair('Webhook events received', w.events));
    rows.push(pair('Webhook duplicates acknowledged', w.duplicates));
    rows.push({
      cells: ['Webhook events with schema drift', w.drifted, w.driftFields.length ? `extra fields: ${w.driftFields.join(', ')}` : null],
      cellTones: w.drifted ? { 1: 'medium' } : undefined,
    });
  }
  rows.push(blank());

  rows.push(...requestRows(run.requests));
  rows.push(blank());

  rows.push(section('Totals: partner orders by input currency'));
  rows.push(header('Currency', 'Orders', 'Volume', 'Fees', 'Amount USD', 'Fees USD'));
  for (const t of totals.partner) {
    const dp = precision.partner(t.currency);
    rows.push({ cells: [t.currency, t.orders, amount(t.volume, dp), amount(t.fees, dp), amount(t.amountUsd, 2), amount(t.feesUsd, 2)] });
  }
  if (!totals.partner.length) rows.push({ cells: ['(none)'], tone: 'muted' });
  rows.push(blank());

  rows.push(section('Totals: exchange fills by symbol'));
  rows.push(header('Symbol', 'Fills', 'Quantity', 'Notional', 'Fees'));
  for (const t of totals.fills) {
    const p = precision.symbol(t.symbol);
    rows.push({ cells: [t.symbol, t.fills, amount(t.qty, p.qty), amount(t.notional, p.counter), amount(t.fees, p.counter)] });
  }
  if (!totals.fills.length) rows.push({ cells: ['(none)'], tone: 'muted' });
  rows.push(blank());

  rows.push(section('Totals: deposits and withdrawals by currency'));
  rows.push(header('Currency', 'Deposits', 'Deposited', 'Withdrawals', 'Withdrawn', 'Withdrawal fees'));
  const currencies = [...new Set([...totals.deposits.map((d) => d.currency), ...totals.withdrawals.map((w) => w.currency)])].sort();
  for (const c of currencies) {
    const d = totals.deposits.find((x) => x.currency === c);
    const w = totals.withdrawals.find((x) => x.currency === c);
    const dp = precision.exchange(c);
    rows.push({ cells: [c, d?.count ?? 0, amount(d?.amount, dp), w?.count ?? 0, amount(w?.amount, dp), amount(w?.fee, dp)] });
  }
  if (!currencies.length) rows.push({ cells: ['(none)'], tone: 'muted' });
  rows.push(blank());

  rows.push(section('Rules'));
  rows.push(header('Rule', 'Severity', 'Status', 'Checked', 'Found in this run', '', 'Check / why not checked'));
  const rules = [...run.ruleResults].sort((a, b) => a.code.localeCompare(b.code));
  for (const r of rules) {
    const status = r.status === 'not_checked' ? 'not checked' : r.status;
    const tone: Tone = r.status === 'passed' ? 'ok' : r.status === 'breaks' ? 'bad' : 'muted';
    rows.push({
      cells: [r.code, r.severity, status, r.checked, r.breaks, null, r.status === 'not_checked' && r.reason ? `${r.description} (not checked: ${r.reason})` : r.description],
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
      rows.push({ cells: [change, b.code, b.key, b.severity, null, null, b.message], tone: change === 'resolved' ? 'muted' : undefined });
    if (listed.length > CHANGES_LISTED) rows.push({ cells: [`... and ${listed.length - CHANGES_LISTED} more (all open ones are on the Breaks sheet)`], tone: 'muted' });
  }
  rows.push(blank());

  rows.push(section('How to read this workbook'));
  rows.push(pair('Red rows', 'a record with an open break; the "Open breaks" column names the rules'));
  rows.push(pair('Orange italic amount', 'more significant digits than Excel keeps (15): written as exact text, never rounded; the "Amounts kept as text" column names them'));
  rows.push(pair('Times and days', 'UTC; the period "to" day is exclusive'));
  rows.push(pair('Amounts', "shown at each currency's precision (partner currencies, exchange symbol scales; else 2 fiat / 8 crypto), widened when a value has more decimals"));
  rows.push(pair('Sheets over 1,048,576 rows', 'continue on a sheet of the same name with (2), (3)...'));
  return rows;
}

/**
 * "API requests": per API and endpoint, attempts (retries included), retries, the rate limit of
 * its class of call and the time those requests take at it; the times add up (requestTotals).
 */
function requestRows(requests: RunRequests): Row[] {
  const rows: Row[] = [section('API requests'), header('API', 'Endpoint', 'Requests', 'Retries', 'Rate limit (/s)', 'Time at that rate (s)')];
  const totals = requestTotals(requests);
  const total = (api: string, t: RequestTotals): Row => ({ cells: [api, 'total', t.requests, t.retries, null, roundSeconds(t.seconds)], tone: 'bold' });
  for (const [api, endpoints] of sortedRequests(requests)) {
    for (const [endpoint, e] of endpoints) rows.push({ cells: [API_LABEL[api], endpoint, e.requests, e.retries, e.perSecond, roundSeconds(endpointSeconds(e))] });
    const t = totals.apis[api];
    if (t) rows.push(total(API_LABEL[api], t));
  }
  if (totals.all.requests === 0) rows.push({ cells: ['(no API requests recorded for this run)'], tone: 'muted' });
  else rows.push(total('All APIs', totals.all));
  return rows;
}

/** Empty cells so a toned row is filled across the whole width. */
function pad(n: number): Cell[] {
  return Array.from({ length: n }, () => null);
}

function sortRefs(refs: BreakRef[]): BreakRef[] {
  return [...refs].sort((a, b) => (SEVERITY_RANK[a.severity] ?? 9) - (SEVERITY_RANK[b.severity] ?? 9) || a.code.localeCompare(b.code) || a.key.localeCompare(b.key));
}
