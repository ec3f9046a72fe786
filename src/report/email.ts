/** The report e-mail (subject, text, html) built from the run, the counts and the digest stored with its workbook:
 * pure, no I/O.
 */
import { plural } from '../util/words.js';
import type { OpenBreakCounts, PeriodSplit } from '../domain/index.js';
import { ruleTitle } from '../rules/describe.js';
import type { DigestBreak, DigestFailure, ReportDigest, RunInfo } from '../domain/index.js';
import {
  CARRIED_OVER_MEANING,
  COUNT_LABELS,
  EXPLAINED_MEANING,
  FAILED_RUN_KEPT,
  failedRunNextStep,
  LAST_KNOWN_MEANING,
  PARTIAL_MEANING,
  periodLabel,
  ruleStatusNote,
  STAKE_MEANING,
  STORED_COUNTS_MEANING,
} from './summary.js';
import { LATE_MEANING, lateLine, lateSentence } from './late-data.js';
import { CLOSED_CHANGES_TITLE } from './summary-closed-periods.js';
import { stakeLines } from './money-at-stake.js';
import { usdFigureText } from './usd-rates.js';
import { Decimal } from '../decimal/decimal.js';

export interface MessageInput {
  run: Pick<
    RunInfo,
    'id' | 'account' | 'periodFrom' | 'periodTo' | 'status' | 'failedStage' | 'ruleResults' | 'counts'
  >;
  /** The counts the attached workbook shows (openBreakCounts, stored with it): the message never counts again. */
  counts: OpenBreakCounts;
  /** The banner, status and breaks in words of the attached workbook (run.report_digest, buildDigest). */
  digest: ReportDigest;
  attachmentName: string;
  /** Set when the workbook does not go with the message: why, and where it is. */
  notAttached?: { reason: string; path: string; host: string };
  /** The machine the reports are on, named on the "Where the files are" line. */
  host?: string;
  /** The workbook's path on that machine, named on the same line. */
  workbookPath?: string;
}

export interface Message {
  subject: string;
  text: string;
  html: string;
}

const bySeverity = (c: OpenBreakCounts, part: keyof PeriodSplit) =>
  `high ${c.severity.high[part]}, medium ${c.severity.medium[part]}, low ${c.severity.low[part]}`;

/**
 * "ramp-recon 2026-11-21: 17 open breaks (12 this period, 5 carried over)", with ", 3 explained"
 * (", all explained"); "ramp-recon 2026-11-21: reconciled, no open breaks"; a failed run's says so
 * first: "ramp-recon 2026-11-21: FAILED in sync.exchange, not reconciled (last known: 17 open breaks)".
 */
export function messageSubject(digest: ReportDigest, counts: OpenBreakCounts): string {
  return `${subjectOfRun(digest, counts)}${closedSubjectSuffix(digest)}`;
}

/** The subject's words for closed periods changed since sign-off (docs/closing.md): they stay until reopened. */
export const CLOSED_CHANGED_WORDS = 'closed period changed since sign-off';

function closedSubjectSuffix(digest: Pick<ReportDigest, 'closedPeriods'>): string {
  const n = digest.closedPeriods?.length ?? 0;
  return n ? ` - ${n > 1 ? `${n} closed periods changed since sign-off` : CLOSED_CHANGED_WORDS}` : '';
}

function subjectOfRun(digest: ReportDigest, counts: OpenBreakCounts): string {
  // ", run failed": a digest stored before failures said their stage (no `failure`)
  const failed = digest.headline.status.startsWith('failed') ? ', run failed' : '';
  const period = `ramp-recon ${digest.period}${digest.partial ? ' (partial)' : ''}`;
  const open = plural(counts.total, 'open break');
  if (digest.failure) {
    const lastKnown = digest.failure.judged ? '' : 'last known: ';
    return `${period}: FAILED in ${digest.failure.stage}, not reconciled (${lastKnown}${open})`;
  }
  if (counts.total === 0)
    return digest.headline.tone === 'ok'
      ? `${period}: reconciled, no open breaks`
      : `${period}: not reconciled, 0 open breaks${failed || ' (no reconciliation results)'}`;
  const explained = counts.explained
    ? counts.explained === counts.total
      ? ', all explained'
      : `, ${counts.explained} explained`
    : '';
  return `${period}: ${open} (${counts.inPeriod} this period, ${counts.carriedOver} carried over)${explained}${failed}`;
}

/** A break's USD impact in words: "USD -12.50", or why it has none ("no money", "no USD figure"). */
function impactWords(b: DigestBreak): string {
  if (b.usdImpact !== null) return `USD ${usdFigureText(new Decimal(b.usdImpact))}`;
  if (b.noImpact === 'no money') return 'no money';
  return b.noImpact === 'no figure' ? 'no USD figure' : 'no USD impact';
}

/**
 * A break in one line, code, record and impact first: "E_FEE_RATE fill 123: USD -12.50; high, 3 days old, this
 * period. Fill fee rate off by ...".
 */
export function breakLine(b: DigestBreak): string {
  const facts = [b.severity, `${plural(b.ageDays, 'day')} old`, b.inPeriod ? 'this period' : 'carried over'];
  if (b.explained) facts.push('explained');
  return `${b.code} ${b.record ?? b.key}: ${impactWords(b)}; ${facts.join(', ')}. ${b.sentence}`;
}

/** What "of this period" and "carried over" mean, without the docs reference the reader of a mail cannot open. */
const CARRIED_OVER_WORDS = CARRIED_OVER_MEANING.replace(/ \(docs\/[^)]*\)/, '');

/**
 * Subject with the period and the two counts (this period, carried over); the banner and status of
 * the workbook; every rule with an open break with its counts; the five oldest or largest open
 * breaks in words; a plain-text twin with the same numbers. Every figure comes from the counts and
 * the digest stored with the attachment.
 */
export function buildMessage(input: MessageInput): Message {
  const { run, counts, digest } = input;
  const subject = messageSubject(digest, counts);
  const head = digest.headline;

  const failure = digest.failure ?? null;
  // A run that failed before counting the period: what the database holds for it (stored with the workbook).
  const recordCounts = failure?.stored ?? run.counts;
  const figures = COUNT_LABELS.filter(([k]) => recordCounts[k] !== undefined).map(
    ([k, label]) => [label, String(recordCounts[k])] as const,
  );
  const failureLines = failure ? failureSentences(run, failure) : [];
  const lastKnown = failure && !failure.judged ? ' as last known' : '';
  const notChecked = run.ruleResults
    .filter((r) => r.status === 'not_checked')
    .map((r) => `${r.code}${r.reason ? ` (${r.reason})` : ''}`);
  const rules = counts.rules.map((r) => ({ ...r, note: ruleStatusNote(run.ruleResults, r.code) }));
  const top = digest.topBreaks;
  const closed = digest.closedPeriods ?? [];
  const late = digest.late && digest.late.total > 0 ? digest.late : null;
  const lateMore = late ? late.total - late.breaks.length : 0;
  const lateList = late
    ? [...late.breaks.map(lateLine), ...(lateMore > 0 ? [`... and ${lateMore} more (see the workbook's Summary)`] : [])]
    : [];
  const stake = digest.figures ? stakeLines(digest.figures.moneyAtStake) : [];
  const topTitle = topBreaksTitle(top.length, lastKnown);
  const where = whereLine(input);
  // The verdict, the money at stake and the breaks to look at first, then the counts: the mail reads alone.
  const lines = [
    head.text,
    head.detail,
    ...(failureLines.length ? ['', ...failureLines] : []),
    ...(digest.partial ? [`Period ${digest.period}: ${PARTIAL_MEANING}`] : []),
    ...(input.notAttached ? ['', notAttachedSentence(input.attachmentName, input.notAttached)] : []),
    `Status: ${head.status}`,
    ...(closed.length ? ['', `${CLOSED_CHANGES_TITLE}:`, ...closed.map((c) => `  ${c.words}`)] : []),
    ...(stake.length ? ['', `Money at stake${lastKnown}:`, ...stake.map((l) => `  ${l}`), `  (${STAKE_MEANING})`] : []),
    ...(top.length ? ['', topTitle, ...top.map((b, i) => `  ${i + 1}. ${breakLine(b)}`)] : []),
    '',
    `Open breaks${lastKnown}: ${counts.total} (${bySeverity(counts, 'total')})`,
    `  of this period: ${counts.inPeriod} (${bySeverity(counts, 'inPeriod')})`,
    `  carried over: ${counts.carriedOver} (${bySeverity(counts, 'carriedOver')})`,
    `  explained: ${counts.explained ?? 0}`,
    `  (${CARRIED_OVER_WORDS})`,
    ...(rules.length
      ? [
          '',
          'Open breaks by rule (of this period / carried over; in this run):',
          ...rules.map((r) => {
            const explained = r.explained ? ` ${r.explained} explained;` : '';
            const figures = `${r.inPeriod} / ${r.carriedOver};${explained} ${r.note}`;
            return `  ${r.code}: ${r.total} (${figures}) ${ruleTitle(r.code)}`;
          }),
        ]
      : []),
    ...(late ? ['', `${lateSentence(late)}:`, ...lateList.map((l) => `  ${l}`), `  (${LATE_MEANING})`] : []),
    '',
    ...(failure?.stored ? [`Counts (${STORED_COUNTS_MEANING}):`] : []),
    ...figures.map(([label, value]) => `${label}: ${value}`),
    ...(notChecked.length ? ['', `Not checked in this run: ${notChecked.join('; ')}`] : []),
    '',
    `Run ${run.id}, period ${digest.period}. ${workbookSentence(input)}`,
    where,
  ];
  const text = `${lines.join('\n')}\n`;

  const [colour, background] =
    head.tone === 'ok'
      ? ['#006100', '#C6EFCE']
      : head.tone === 'explained'
        ? ['#7F4F00', '#FFEB9C']
        : ['#9C0006', '#FFC7CE'];
  const table = '<table cellpadding="4" style="border-collapse:collapse">';
  const html = [
    '<!doctype html><html><body style="font-family:Arial,Helvetica,sans-serif;font-size:14px">',
    `<p style="font-size:18px;font-weight:bold;color:${colour};background:${background};padding:8px">` +
      `${esc(head.text)}</p>`,
    `<p>${esc(head.detail)}</p>`,
    ...failureLines.map((l, i) => `<p${i === 0 ? ' style="font-weight:bold"' : ''}>${esc(l)}</p>`),
    digest.partial ? `<p style="color:#7F4F00">Period ${esc(digest.period)}: ${esc(PARTIAL_MEANING)}</p>` : '',
    input.notAttached
      ? `<p style="font-weight:bold;color:#7F4F00;background:#FFEB9C;padding:8px">${esc(notAttachedSentence(input.attachmentName, input.notAttached))}</p>`
      : '',
    `<p>Status: ${esc(head.status)}</p>`,
    ...(closed.length
      ? [
          `<p><b>${esc(CLOSED_CHANGES_TITLE)}:</b></p>`,
          '<ul>',
          ...closed.map((c) => `<li>${esc(c.words)}</li>`),
          '</ul>',
        ]
      : []),
    ...(stake.length
      ? [
          `<p><b>Money at stake${esc(lastKnown)}:</b></p>`,
          '<ul>',
          ...stake.map((l) => `<li>${esc(l)}</li>`),
          '</ul>',
          `<p style="color:#555">${esc(STAKE_MEANING)}</p>`,
        ]
      : []),
    ...(top.length
      ? [`<p><b>${esc(topTitle)}</b></p>`, '<ol>', ...top.map((b) => `<li>${esc(breakLine(b))}</li>`), '</ol>']
      : []),
    table,
    row([`Open breaks${lastKnown}`, 'Open', 'Of this period', 'Carried over'], true),
    ...(['high', 'medium', 'low'] as const).map((sev) => row([sev, ...splitCells(counts.severity[sev])])),
    row(['total', ...splitCells(counts)], true),
    row(['explained', String(counts.explained ?? 0)]),
    '</table>',
    `<p style="color:#555">${esc(CARRIED_OVER_WORDS)}; ${esc(EXPLAINED_MEANING)}</p>`,
    ...(rules.length
      ? [
          table,
          row(['Rule', 'Open', 'Of this period', 'Carried over', 'Explained', 'Rule name', 'In this run'], true),
          ...rules.map((r) => row([r.code, ...splitCells(r), String(r.explained ?? 0), ruleTitle(r.code), r.note])),
          '</table>',
        ]
      : []),
    ...(late
      ? [
          `<p><b>${esc(lateSentence(late))}:</b></p>`,
          '<ul>',
          ...lateList.map((l) => `<li>${esc(l)}</li>`),
          '</ul>',
          `<p style="color:#555">${esc(LATE_MEANING)}</p>`,
        ]
      : []),
    failure?.stored ? `<p>Counts (${esc(STORED_COUNTS_MEANING)}):</p>` : '',
    table,
    ...figures.map(([label, value]) => row([label, value])),
    '</table>',
    notChecked.length ? `<p>Not checked in this run: ${esc(notChecked.join('; '))}</p>` : '',
    `<p style="color:#555">Run ${esc(run.id)}, period ${esc(digest.period)}. ${esc(workbookSentence(input))}</p>`,
    `<p style="color:#555">${esc(where)}</p>`,
    '</body></html>',
  ].join('\n');
  return { subject, text, html };
}

/** A failed run's message under its banner: what failed, what was kept, what the breaks are, what to do. */
export function failureSentences(
  run: Pick<RunInfo, 'id' | 'account' | 'periodFrom' | 'periodTo'>,
  failure: DigestFailure,
): string[] {
  return [
    `What failed: run ${run.id} failed in stage ${failure.stage}${failure.error ? `: ${failure.error}` : ''}`,
    `What was kept: ${FAILED_RUN_KEPT}.`,
    ...(failure.judged ? [] : [`Open breaks: ${LAST_KNOWN_MEANING}.`]),
    `What to do: ${failedRunNextStep(run)}.`,
  ];
}

/**
 * The short e-mail of a failed run whose workbook could not be written either (the database gone, the disk full):
 * what failed, why there is no workbook, what to do. Pure, like buildMessage; nothing is attached.
 */
export function failureNotice(input: {
  run: Pick<RunInfo, 'id' | 'account' | 'periodFrom' | 'periodTo'>;
  failure: Pick<DigestFailure, 'stage' | 'error'>;
  /** Why no workbook: the report's own error. */
  noWorkbook: string;
  host?: string;
}): Message {
  const { run, failure } = input;
  const period = periodLabel(run.periodFrom, run.periodTo);
  const subject = `ramp-recon ${period}: FAILED in ${failure.stage}, not reconciled (no workbook)`;
  const where = input.host ? ` on ${input.host}` : '';
  const lines = [
    `FAILED in ${failure.stage}: ${period} not reconciled`,
    '',
    ...failureSentences(run, { ...failure, judged: false, stored: null }).filter((l) => !l.startsWith('Open breaks')),
    '',
    `No workbook: the failure report could not be written either${where}: ${input.noWorkbook}`,
    'The open breaks and the counts are in the database once it is back (`ramp-recon breaks list`, `ramp-recon runs`).',
  ];
  const text = `${lines.join('\n')}\n`;
  const html = [
    '<!doctype html><html><body style="font-family:Arial,Helvetica,sans-serif;font-size:14px">',
    `<p style="font-size:18px;font-weight:bold;color:#9C0006;background:#FFC7CE;padding:8px">${esc(lines[0]!)}</p>`,
    ...lines
      .slice(1)
      .filter((l) => l !== '')
      .map((l) => `<p>${esc(l)}</p>`),
    '</body></html>',
  ].join('\n');
  return { subject, text, html };
}

const SHEETS_SENTENCE =
  'its Summary sheet has the balances, totals, rules and assumptions, its Breaks sheet every open break ' +
  '("This period?" tells them apart); its data sheets list the records the open breaks point at.';

/** "The 5 open breaks to look at first (...)": over the top breaks of both e-mails. */
export function topBreaksTitle(n: number, lastKnown = ''): string {
  const order = 'largest USD impact first, as on the Summary; then the oldest, unexplained first';
  return `The ${n === 1 ? 'open break' : `${n} open breaks`}${lastKnown} to look at first (${order}):`;
}

/** The closing sentence about the workbook: attached, or not (the box under the banner says why). */
function workbookSentence(input: MessageInput): string {
  return input.notAttached
    ? `The workbook ${input.attachmentName} is not attached (see above); ${SHEETS_SENTENCE}`
    : `The workbook ${input.attachmentName} is attached; ${SHEETS_SENTENCE}`;
}

/** The label of the one line of a message that names paths on the machine. */
export const WHERE_LABEL = 'Where the files are';

/**
 * The one line that names paths on the reports' machine: the workbook's, and the detail folder with every record of
 * the period ("Where the files are, on h1: the workbook /r/w.xlsx; every record of the period in /r/w_detail (one gzip
 * CSV per data sheet)").
 */
export function whereLine(
  input: Pick<MessageInput, 'attachmentName' | 'notAttached' | 'host' | 'workbookPath' | 'digest'>,
): string {
  const host = input.notAttached?.host ?? input.host;
  const workbook = input.notAttached?.path ?? input.workbookPath ?? input.attachmentName;
  const detail = input.digest.detailDir
    ? `; every record of the period in ${input.digest.detailDir} (one gzip CSV per data sheet)`
    : '';
  return `${WHERE_LABEL}${host ? `, on ${host}` : ''}: the workbook ${workbook}${detail}.`;
}

/** "The workbook X is not attached: <reason>." The "Where the files are" line says where it is. */
export function notAttachedSentence(name: string, why: { reason: string }): string {
  return (
    `The workbook ${name} is not attached: ${why.reason}. Everything in this message is taken from it; ` +
    'where it is: see the last line.'
  );
}

const splitCells = (s: PeriodSplit) => [String(s.total), String(s.inPeriod), String(s.carriedOver)];

/** One table row: the first cell a label, the others right-aligned figures (the last one text when it is a note). */
function row(cells: string[], bold = false): string {
  const style = bold ? ' style="font-weight:bold"' : '';
  const td = (c: string, i: number) =>
    i === 0 || !/^\d+$/.test(c) ? `<td>${esc(c)}</td>` : `<td style="text-align:right">${esc(c)}</td>`;
  return `<tr${style}>${cells.map(td).join('')}</tr>`;
}

export function esc(s: string): string {
  return s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');
}
