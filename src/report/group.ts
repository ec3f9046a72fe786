/** The group report of a batch, pure: each account's state, the group verdict and the Group summary sheet's rows (the
 * e-mail is group-mail.ts). An account that failed or never ran is never counted as reconciled, nor in the totals.
 */
import { plural } from '../util/words.js';
import { Decimal } from '../decimal/decimal.js';
import type { MoneyAtStakeFigures, OpenBreakCounts, ReportDigest } from '../domain/index.js';
import { STAKE_MEANING } from './summary.js';
import { shownUsd } from './usd-rates.js';
import { amount, type Row, type SheetSpec } from './cells.js';
import { PARTIAL_MEANING, periodLabel } from './summary.js';
import {
  accountColour,
  colourLegend,
  colourTone,
  unexplainedHigh,
  worstColour,
  type AccountColour,
} from './group-colours.js';
import { groupTotals, type GroupTotals } from './group-totals.js';
import { groupTopBreaks, type GroupBreak } from './group-top-breaks.js';

/** reconciled: no unexplained open break; breaks: some; failed: its run failed; not run: it never finished a run. */
export type AccountState = 'reconciled' | 'breaks' | 'failed' | 'not run';

/** One account of the batch as the group report shows it (from batch_account and its run's stored digest). */
export interface GroupAccount {
  account: string;
  state: AccountState;
  /** Its batch_account status: a 'not run' account may be still running (a report at the deadline) or not started. */
  status: 'pending' | 'running' | 'succeeded' | 'failed';
  runId: string | null;
  /** The failing stage and error of a failed account; why a not-run account did not run. */
  failedStage: string | null;
  error: string | null;
  /** Its run's open-break counts (the workbook's), null without a reconciled run. */
  counts: OpenBreakCounts | null;
  digest: ReportDigest | null;
  /** The account's own workbook. */
  reportPath: string | null;
}

/** The group e-mail's content, stored with the group workbook (batch.report_digest). */
export interface GroupDigest {
  batchId: string;
  period: string;
  partial: boolean;
  verdict: string;
  tone: 'ok' | 'bad';
  /** The verdict line's colour: the worst account's (group-colours.ts). */
  colour: AccountColour;
  /** The sums over the accounts whose run completed, and the accounts left out of them. */
  totals: GroupTotals;
  attachmentName: string;
  /** The open breaks to look at first over every account that ran (absent in digests written before). */
  topBreaks?: GroupBreak[];
  /** 1 for the first report of the batch; 2 and more for an amended one. */
  version: number;
  /** What changed since the previous report ("initech: running -> succeeded"); empty for the first. */
  changes: string[];
  /** The accounts with a signed close changed since sign-off (docs/closing.md; absent in digests written before). */
  closedPeriodsChanged?: string[];
  /** Each changed close in words: "acme: 2026-11-01 to 2026-11-30 (close c1, signed by alice): 4 changes". */
  closedPeriodLines?: string[];
  accounts: Array<{
    account: string;
    state: AccountState;
    colour: AccountColour;
    status: string;
    openBreaks: number | null;
    unexplained: number | null;
    moneyAtStake: string | null;
    /** The account's money at stake as its own Summary shows it (absent in digests written before). */
    stake?: MoneyAtStakeFigures | null;
    closingUsd: string | null;
    runId: string | null;
    reportPath: string | null;
  }>;
  writtenAt: string;
}

/** An account's state from its batch outcome and its run's counts. */
export function accountState(
  status: 'pending' | 'running' | 'succeeded' | 'failed',
  counts: OpenBreakCounts | null,
): AccountState {
  if (status === 'failed') return 'failed';
  if (status !== 'succeeded' || !counts) return 'not run';
  return counts.total - (counts.explained ?? 0) > 0 ? 'breaks' : 'reconciled';
}

/**
 * "3 of 4 accounts reconciled, 1 failed"; "2 of 4 accounts reconciled, 1 with open breaks, 1 not run"; "all 2 accounts
 * reconciled".
 */
export function groupVerdict(accounts: readonly Pick<GroupAccount, 'state'>[]): { text: string; tone: 'ok' | 'bad' } {
  const n = (s: AccountState) => accounts.filter((a) => a.state === s).length;
  const total = accounts.length;
  const ok = n('reconciled');
  if (ok === total) return { text: `all ${plural(total, 'account')} reconciled`, tone: 'ok' };
  const rest = [
    n('breaks') ? `${n('breaks')} with open breaks` : '',
    n('failed') ? `${n('failed')} failed` : '',
    n('not run') ? `${n('not run')} not run` : '',
  ].filter(Boolean);
  return { text: `${ok} of ${plural(total, 'account')} reconciled, ${rest.join(', ')}`, tone: 'bad' };
}

/**
 * The accounts that ran whose signed closes changed since sign-off, and each such close in words (both absent when
 * none): a reconciled account stays reconciled, but its line alone would hide that a signed-off period moved.
 */
function closedPeriodsChanged(accounts: readonly GroupAccount[]): {
  closedPeriodsChanged?: string[];
  closedPeriodLines?: string[];
} {
  const changed = accounts.filter((a) => a.state !== 'failed' && a.digest?.closedPeriods?.length);
  if (!changed.length) return {};
  return {
    closedPeriodsChanged: changed.map((a) => a.account),
    closedPeriodLines: changed.flatMap((a) => (a.digest?.closedPeriods ?? []).map((c) => `${a.account}: ${c.words}`)),
  };
}

/** An account's status in words: the line of the Group summary and of the e-mail. */
export function accountStatusText(a: Pick<GroupAccount, 'state' | 'counts' | 'failedStage' | 'error'>): string {
  const c = a.counts;
  switch (a.state) {
    case 'failed':
      return `FAILED${a.failedStage ? ` in ${a.failedStage}` : ''}${a.error ? `: ${a.error}` : ''}`;
    case 'not run':
      return `NOT RUN${a.error ? `: ${a.error}` : ': no finished run in this batch'}`;
    case 'breaks': {
      const high = unexplainedHigh(c);
      return `not reconciled: ${plural(c!.total, 'open break')} (${c!.total - (c!.explained ?? 0)} unexplained${high ? `, ${high} of high severity` : ''})`;
    }
    default:
      return c && c.total > 0 ? `reconciled: ${plural(c.total, 'open break')}, all explained` : 'reconciled';
  }
}

export function groupDigest(input: {
  batchId: string;
  periodFrom: string;
  periodTo: string;
  partial: boolean;
  accounts: readonly GroupAccount[];
  attachmentName: string;
  now: Date;
  version?: number;
  changes?: string[];
}): GroupDigest {
  const verdict = groupVerdict(input.accounts);
  return {
    batchId: input.batchId,
    period: periodLabel(input.periodFrom, input.periodTo),
    partial: input.partial,
    verdict: verdict.text,
    tone: verdict.tone,
    colour: worstColour(input.accounts),
    totals: groupTotals(input.accounts),
    topBreaks: groupTopBreaks(input.accounts.filter((a) => a.state !== 'failed')),
    attachmentName: input.attachmentName,
    version: input.version ?? 1,
    changes: input.changes ?? [],
    ...closedPeriodsChanged(input.accounts),
    accounts: input.accounts.map((a) => ({
      account: a.account,
      state: a.state,
      colour: accountColour(a),
      status: accountStatusText(a),
      openBreaks: a.counts && a.state !== 'failed' ? a.counts.total : null,
      unexplained: a.counts && a.state !== 'failed' ? a.counts.total - (a.counts.explained ?? 0) : null,
      moneyAtStake: a.state === 'failed' ? null : (a.digest?.figures?.moneyAtStake.total ?? null),
      stake: a.state === 'failed' ? null : (a.digest?.figures?.moneyAtStake ?? null),
      closingUsd: a.state === 'failed' ? null : (a.digest?.figures?.closingUsd ?? null),
      runId: a.runId,
      reportPath: a.reportPath,
    })),
    writtenAt: input.now.toISOString(),
  };
}

export const GROUP_SUMMARY = 'Group summary';

/** The Group summary's label of a changed close, and where its changes are listed. */
export const CLOSED_PERIOD_LABEL = 'Closed period changed since sign-off';
export const CLOSED_PERIOD_WHERE = "every change on the account's own Summary (prior-period adjustments)";

export const groupSummarySpec: SheetSpec = {
  name: GROUP_SUMMARY,
  layout: 'report',
  columns: [
    { header: 'Account', kind: 'text', width: 18 },
    { header: 'Status', kind: 'text', width: 44, wrap: true },
    { header: 'Open breaks', kind: 'text', width: 12 },
    { header: 'High', kind: 'text', width: 8 },
    { header: 'Medium', kind: 'text', width: 8 },
    { header: 'Low', kind: 'text', width: 8 },
    { header: 'Unexplained', kind: 'text', width: 12 },
    { header: 'Shortfalls (USD)', kind: 'text', width: 16 },
    { header: 'Surpluses (USD)', kind: 'text', width: 16 },
    { header: 'No USD figure', kind: 'text', width: 10 },
    { header: 'Closing balances (USD)', kind: 'text', width: 22 },
    { header: 'Run', kind: 'text', width: 26 },
    { header: 'Workbook', kind: 'text', width: 60 },
  ],
};

const COLUMNS = groupSummarySpec.columns.length;
const pad = (cells: Row['cells']): Row['cells'] => [...cells, ...Array<null>(COLUMNS - cells.length).fill(null)];
const usd = (text: string | null | undefined) => (text == null ? null : amount(new Decimal(text), 2));
/** A money-at-stake figure as every USD figure: two decimals, a smaller non-zero one to its first significant digit. */
const stakeUsd = (text: string | null | undefined) => {
  if (text == null) return null;
  const exact = new Decimal(text);
  return amount(exact, shownUsd(exact).dp);
};
/** Shortfalls, surpluses and the breaks without a USD figure (blank for figures stored before they were told apart). */
const stakeCells = (f: MoneyAtStakeFigures | null | undefined): Row['cells'] => [
  stakeUsd(f?.shortfalls?.total),
  stakeUsd(f?.surpluses?.total),
  f?.noFigure?.total ?? null,
];

/**
 * The Group summary: the verdict (in its worst account's colour), the period, then one line per account in its colour
 * (a failed or not-run one with its error and blank figures: never counted clean), the Total line over the accounts
 * whose run completed, naming those left out, then the legend of the colours and what each figure means.
 */
export function groupSummaryRows(digest: GroupDigest, accounts: readonly GroupAccount[]): Row[] {
  const rows: Row[] = [
    { cells: pad([`${digest.verdict.toUpperCase()}`]), tone: colourTone(digest.colour) },
    { cells: [`Period ${digest.period}; batch ${digest.batchId}`] },
  ];
  if (digest.partial) rows.push({ cells: ['Partial period', PARTIAL_MEANING], cellTones: { 1: 'medium' } });
  if (digest.version > 1)
    rows.push({
      cells: [`Amended report (${digest.version})`, `changed since the previous report: ${digest.changes.join('; ')}`],
      cellTones: { 1: 'medium' },
    });
  for (const line of digest.closedPeriodLines ?? [])
    rows.push({ cells: [CLOSED_PERIOD_LABEL, `${line}; ${CLOSED_PERIOD_WHERE}`], cellTones: { 1: 'medium' } });
  rows.push({ cells: [] });
  rows.push({
    cells: groupSummarySpec.columns.map((c) => c.header),
    tone: 'bold',
    alignRight: true,
    textTitles: { 1: 'left', 11: 'left', 12: 'left' },
  });
  for (const a of accounts) rows.push(accountRow(a));
  rows.push(totalRow(digest.totals));
  rows.push({ cells: [] });
  rows.push(...legendRows());
  return rows;
}

function accountRow(a: GroupAccount): Row {
  const c = a.state === 'failed' ? null : a.counts;
  const figures = a.state === 'failed' ? undefined : a.digest?.figures;
  const tone = colourTone(accountColour(a));
  return {
    cells: [
      a.account,
      accountStatusText(a),
      c ? c.total : null,
      c ? c.severity.high.total : null,
      c ? c.severity.medium.total : null,
      c ? c.severity.low.total : null,
      c ? c.total - (c.explained ?? 0) : null,
      ...stakeCells(figures?.moneyAtStake),
      usd(figures?.closingUsd),
      a.runId,
      a.reportPath,
    ],
    cellTones: { 0: tone, 1: tone },
  };
}

/** The sums, behind the words that say which accounts they cover and which they leave out. */
function totalRow(t: GroupTotals): Row {
  return {
    cells: [
      'Total',
      t.label,
      t.openBreaks,
      t.high,
      t.medium,
      t.low,
      t.unexplained,
      ...stakeCells(t.stake),
      usd(t.closingUsd),
      null,
      null,
    ],
    tone: 'bold',
  };
}

/** The colours' legend, from the definition that colours the lines (group-colours.ts), then the figures' meanings. */
function legendRows(): Row[] {
  const rows: Row[] = [{ cells: ['Colours'], tone: 'bold' }];
  for (const l of colourLegend()) rows.push({ cells: [l.colour, l.means], cellTones: { 0: l.tone } });
  for (const note of [
    "The verdict line takes its worst account's colour. On the Breaks sheet the Severity cell says the break's " +
      'severity (high red, medium amber, low pale yellow); on the Balances sheet a line with an open break is pink, a non-zero residual red.',
    'Reconciled: the account ran and has no unexplained open break. A failed or not-run account stands with its ' +
      'error; its figures are blank and it is never counted as reconciled.',
    'Total: the sums over the accounts whose run completed; an account that failed, did not run or is still ' +
      'running is left out of every sum and named on the Total line.',
    `Money at stake, as on the account's own Summary: ${STAKE_MEANING} No USD figure: open breaks that move money ` +
      'without a USD rate or amount. Closing balances: every currency with a USD rate.',
    "Each account's own workbook (path above) has its Summary, Breaks, Balances and data sheets; the Breaks and " +
      'Balances sheets here list every account with an Account column.',
  ])
    rows.push({ cells: [note], tone: 'muted' });
  return rows;
}
