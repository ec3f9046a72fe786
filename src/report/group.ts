/** The group report of a batch, pure: each account's state, the group verdict, the Group summary sheet's rows and the
 * group e-mail. An account that failed or never ran is never counted as reconciled.
 */
import { plural } from '../util/words.js';
import { Decimal } from '../decimal/decimal.js';
import type { OpenBreakCounts, ReportDigest } from '../domain/index.js';
import { amount, type Row, type SheetSpec } from './cells.js';
import { PARTIAL_MEANING, periodLabel } from './summary.js';
import { esc } from './email.js';

/** reconciled: no unexplained open break; breaks: some; failed: its run failed; not run: it never finished a run. */
export type AccountState = 'reconciled' | 'breaks' | 'failed' | 'not run';

/** One account of the batch as the group report shows it (from batch_account and its run's stored digest). */
export interface GroupAccount {
  account: string;
  state: AccountState;
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
  attachmentName: string;
  /** 1 for the first report of the batch; 2 and more for an amended one. */
  version: number;
  /** What changed since the previous report ("initech: running -> succeeded"); empty for the first. */
  changes: string[];
  accounts: Array<{
    account: string;
    state: AccountState;
    status: string;
    openBreaks: number | null;
    unexplained: number | null;
    moneyAtStake: string | null;
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

/** An account's status in words: the line of the Group summary and of the e-mail. */
export function accountStatusText(a: GroupAccount): string {
  const c = a.counts;
  switch (a.state) {
    case 'failed':
      return `FAILED${a.failedStage ? ` in ${a.failedStage}` : ''}${a.error ? `: ${a.error}` : ''}`;
    case 'not run':
      return `NOT RUN${a.error ? `: ${a.error}` : ': no finished run in this batch'}`;
    case 'breaks':
      return `not reconciled: ${plural(c!.total, 'open break')} (${c!.total - (c!.explained ?? 0)} unexplained)`;
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
    attachmentName: input.attachmentName,
    version: input.version ?? 1,
    changes: input.changes ?? [],
    accounts: input.accounts.map((a) => ({
      account: a.account,
      state: a.state,
      status: accountStatusText(a),
      openBreaks: a.counts && a.state !== 'failed' ? a.counts.total : null,
      unexplained: a.counts && a.state !== 'failed' ? a.counts.total - (a.counts.explained ?? 0) : null,
      moneyAtStake: a.state === 'failed' ? null : (a.digest?.figures?.moneyAtStake.total ?? null),
      closingUsd: a.state === 'failed' ? null : (a.digest?.figures?.closingUsd ?? null),
      runId: a.runId,
      reportPath: a.reportPath,
    })),
    writtenAt: input.now.toISOString(),
  };
}

export const GROUP_SUMMARY = 'Group summary';

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
    { header: 'Money at stake (USD)', kind: 'text', width: 20 },
    { header: 'Closing balances (USD)', kind: 'text', width: 22 },
    { header: 'Run', kind: 'text', width: 26 },
    { header: 'Workbook', kind: 'text', width: 60 },
  ],
};

const COLUMNS = groupSummarySpec.columns.length;
const pad = (cells: Row['cells']): Row['cells'] => [...cells, ...Array<null>(COLUMNS - cells.length).fill(null)];
const usd = (text: string | null | undefined) => (text == null ? null : amount(new Decimal(text), 2));

/**
 * The Group summary: the verdict, the period, then one line per account (a failed or not-run one in red with its
 * error, blank figures: never counted clean), the group's totals over the accounts that reconciled, and what each
 * figure means.
 */
export function groupSummaryRows(digest: GroupDigest, accounts: readonly GroupAccount[]): Row[] {
  const rows: Row[] = [
    { cells: pad([`${digest.verdict.toUpperCase()}`]), tone: digest.tone === 'ok' ? 'ok' : 'bad' },
    { cells: [`Period ${digest.period}; batch ${digest.batchId}`] },
  ];
  if (digest.partial) rows.push({ cells: ['Partial period', PARTIAL_MEANING], cellTones: { 1: 'medium' } });
  if (digest.version > 1)
    rows.push({
      cells: [`Amended report (${digest.version})`, `changed since the previous report: ${digest.changes.join('; ')}`],
      cellTones: { 1: 'medium' },
    });
  rows.push({ cells: [] });
  rows.push({
    cells: groupSummarySpec.columns.map((c) => c.header),
    tone: 'bold',
    alignRight: true,
    textTitles: { 1: 'left', 9: 'left', 10: 'left' },
  });
  let stake = new Decimal(0);
  let closing = new Decimal(0);
  for (const a of accounts) {
    const c = a.state === 'failed' ? null : a.counts;
    const figures = a.state === 'failed' ? undefined : a.digest?.figures;
    if (figures) {
      stake = stake.plus(figures.moneyAtStake.total);
      if (figures.closingUsd) closing = closing.plus(figures.closingUsd);
    }
    const bad = a.state === 'failed' || a.state === 'not run';
    rows.push({
      cells: [
        a.account,
        accountStatusText(a),
        c ? c.total : null,
        c ? c.severity.high.total : null,
        c ? c.severity.medium.total : null,
        c ? c.severity.low.total : null,
        c ? c.total - (c.explained ?? 0) : null,
        usd(figures?.moneyAtStake.total),
        usd(figures?.closingUsd),
        a.runId,
        a.reportPath,
      ],
      ...(bad ? { tone: 'break' as const, cellTones: { 1: 'high' as const } } : {}),
      ...(a.state === 'breaks' ? { cellTones: { 1: 'medium' as const } } : {}),
    });
  }
  rows.push({
    cells: ['Group', digest.verdict, null, null, null, null, null, amount(stake, 2), amount(closing, 2), null, null],
    tone: 'bold',
  });
  rows.push({ cells: [] });
  for (const note of [
    'Reconciled: the account ran and has no unexplained open break. A failed or not-run account stands in red with ' +
      'its error; its figures are blank and it is never counted as reconciled.',
    "Money at stake: the open breaks' USD impacts, shortfalls and surpluses alike, as on the account's own Summary; " +
      'closing balances: every currency with a USD rate.',
    "Each account's own workbook (path above) has its Summary, Breaks, Balances and data sheets; the Breaks and " +
      'Balances sheets here list every account with an Account column.',
  ])
    rows.push({ cells: [note], tone: 'muted' });
  return rows;
}

/** "ramp-recon group 2026-11-21: 3 of 4 accounts reconciled, 1 failed". */
export function groupSubject(digest: GroupDigest): string {
  const amended = digest.version > 1 ? ' (amended)' : '';
  return `ramp-recon group ${digest.period}${digest.partial ? ' (partial)' : ''}${amended}: ${digest.verdict}`;
}

/** The group e-mail: the verdict, one line per account (a failed one with its error), where the workbooks are. */
export function groupMessage(
  digest: GroupDigest,
  notAttached?: { reason: string; path: string; host: string },
): { subject: string; text: string; html: string } {
  const lines = digest.accounts.map(
    (a) =>
      `${a.account}: ${a.status}${a.moneyAtStake !== null ? `; money at stake USD ${a.moneyAtStake}` : ''}${a.runId ? ` (run ${a.runId})` : ''}`,
  );
  const workbook = notAttached
    ? `The group workbook ${digest.attachmentName} is not attached: ${notAttached.reason}. It is on ${notAttached.host} at ${notAttached.path}.`
    : `The group workbook ${digest.attachmentName} is attached: its Group summary has every account, its Breaks and Balances sheets every account's rows.`;
  const amended =
    digest.version > 1 ? `Amended report: changed since the previous report: ${digest.changes.join('; ')}` : '';
  const text = [
    digest.verdict.toUpperCase(),
    `Period ${digest.period}${digest.partial ? ` (${PARTIAL_MEANING})` : ''}; batch ${digest.batchId}`,
    ...(amended ? [amended] : []),
    '',
    ...lines,
    '',
    workbook,
    "Each account's own workbook is named in the Group summary.",
    '',
  ].join('\n');
  const [colour, background] = digest.tone === 'ok' ? ['#006100', '#C6EFCE'] : ['#9C0006', '#FFC7CE'];
  const html = [
    '<!doctype html><html><body style="font-family:Arial,Helvetica,sans-serif;font-size:14px">',
    `<p style="font-size:18px;font-weight:bold;color:${colour};background:${background};padding:8px">${esc(digest.verdict.toUpperCase())}</p>`,
    `<p>Period ${esc(digest.period)}${digest.partial ? ` (${esc(PARTIAL_MEANING)})` : ''}; batch ${esc(digest.batchId)}</p>`,
    amended ? `<p style="font-weight:bold;color:#7F4F00;background:#FFEB9C;padding:8px">${esc(amended)}</p>` : '',
    '<table cellpadding="4" style="border-collapse:collapse">',
    '<tr><th align="left">Account</th><th align="left">Status</th><th align="right">Money at stake (USD)</th><th align="left">Run</th></tr>',
    ...digest.accounts.map((a) => {
      const bad = a.state === 'failed' || a.state === 'not run';
      const style = bad ? ' style="color:#9C0006;background:#FFC7CE;font-weight:bold"' : '';
      return `<tr${style}><td>${esc(a.account)}</td><td>${esc(a.status)}</td><td align="right">${esc(a.moneyAtStake ?? '')}</td><td>${esc(a.runId ?? '')}</td></tr>`;
    }),
    '</table>',
    `<p>${esc(workbook)}</p>`,
    '</body></html>',
  ].join('\n');
  return { subject: groupSubject(digest), text, html };
}
