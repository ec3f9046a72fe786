/** The report e-mail (subject, text, html) built from the run and its open breaks: pure, no I/O. */
import type { OpenBreakCounts, PeriodSplit } from '../domain/index.js';
import type { RunInfo } from './model.js';
import { CARRIED_OVER_MEANING, COUNT_LABELS, headline, periodLabel, periodSplitText, ruleStatusNote, severityTotals } from './summary.js';

export interface MessageInput {
  run: Pick<RunInfo, 'id' | 'periodFrom' | 'periodTo' | 'status' | 'failedStage' | 'ruleResults' | 'counts'>;
  /** The counts the attached workbook shows (openBreakCounts, stored with it): the message never counts again. */
  counts: OpenBreakCounts;
  attachmentName: string;
}

export interface Message {
  subject: string;
  text: string;
  html: string;
}

const bySeverity = (c: OpenBreakCounts, part: keyof PeriodSplit) => `high ${c.severity.high[part]}, medium ${c.severity.medium[part]}, low ${c.severity.low[part]}`;

/**
 * Subject with the period, the open-break count and the two counts (of this period, carried over);
 * bodies with the headline figures and every rule that has an open break, with what this run says
 * about it (the workbook has the rest).
 */
export function buildMessage(input: MessageInput): Message {
  const { run, counts } = input;
  const period = periodLabel(run.periodFrom, run.periodTo);
  const open = severityTotals(counts);
  const head = headline(run, counts);
  const subject = `ramp-recon ${period}: ${
    head.reconciled ? 'reconciled, 0 open breaks' : `${open.total} open break${open.total === 1 ? '' : 's'}${open.high ? ` (${open.high} high)` : ''}: ${periodSplitText(counts)}`
  }${run.status === 'failed' ? ', run failed' : ''}`;

  const figures = COUNT_LABELS.filter(([k]) => run.counts[k] !== undefined).map(([k, label]) => [label, String(run.counts[k])] as const);
  const notChecked = run.ruleResults.filter((r) => r.status === 'not_checked').map((r) => `${r.code}${r.reason ? ` (${r.reason})` : ''}`);
  const rules = counts.rules.map((r) => ({ ...r, note: ruleStatusNote(run.ruleResults, r.code) }));
  const lines = [
    head.text,
    head.detail,
    '',
    `Open breaks: ${counts.total} (${bySeverity(counts, 'total')})`,
    `  of this period: ${counts.inPeriod} (${bySeverity(counts, 'inPeriod')})`,
    `  carried over: ${counts.carriedOver} (${bySeverity(counts, 'carriedOver')})`,
    `  (${CARRIED_OVER_MEANING})`,
    ...(rules.length ? ['', 'Open breaks by rule (of this period / carried over; in this run):', ...rules.map((r) => `  ${r.code}: ${r.total} (${r.inPeriod} / ${r.carriedOver}; ${r.note})`)] : []),
    '',
    ...figures.map(([label, value]) => `${label}: ${value}`),
    ...(notChecked.length ? ['', `Not checked in this run: ${notChecked.join('; ')}`] : []),
    '',
    `Run ${run.id}. The workbook ${input.attachmentName} is attached; its Summary sheet has the totals, rules and assumptions, its Breaks sheet every open break ("This period?" tells them apart).`,
  ];
  const text = `${lines.join('\n')}\n`;

  const colour = head.reconciled ? '#006100' : '#9C0006';
  const background = head.reconciled ? '#C6EFCE' : '#FFC7CE';
  const html = [
    '<!doctype html><html><body style="font-family:Arial,Helvetica,sans-serif;font-size:14px">',
    `<p style="font-size:18px;font-weight:bold;color:${colour};background:${background};padding:8px">${esc(head.text)}</p>`,
    `<p>${esc(head.detail)}</p>`,
    '<table cellpadding="4" style="border-collapse:collapse">',
    row(['Open breaks', 'Open', 'Of this period', 'Carried over'], true),
    ...(['high', 'medium', 'low'] as const).map((sev) => row([sev, ...splitCells(counts.severity[sev])])),
    row(['total', ...splitCells(counts)], true),
    '</table>',
    `<p style="color:#555">${esc(CARRIED_OVER_MEANING)}</p>`,
    ...(rules.length
      ? [
          '<table cellpadding="4" style="border-collapse:collapse">',
          row(['Rule', 'Open', 'Of this period', 'Carried over', 'In this run'], true),
          ...rules.map((r) => row([r.code, ...splitCells(r), r.note])),
          '</table>',
        ]
      : []),
    '<table cellpadding="4" style="border-collapse:collapse">',
    ...figures.map(([label, value]) => row([label, value])),
    '</table>',
    notChecked.length ? `<p>Not checked in this run: ${esc(notChecked.join('; '))}</p>` : '',
    `<p style="color:#555">Run ${esc(run.id)}. The workbook <b>${esc(input.attachmentName)}</b> is attached; its Summary sheet has the totals, rules and assumptions, its Breaks sheet every open break ("This period?" tells them apart).</p>`,
    '</body></html>',
  ].join('\n');
  return { subject, text, html };
}

const splitCells = (s: PeriodSplit) => [String(s.total), String(s.inPeriod), String(s.carriedOver)];

/** One table row: the first cell a label, the others right-aligned figures (the last one text when it is a note). */
function row(cells: string[], bold = false): string {
  const style = bold ? ' style="font-weight:bold"' : '';
  const td = (c: string, i: number) => (i === 0 || !/^\d+$/.test(c) ? `<td>${esc(c)}</td>` : `<td style="text-align:right">${esc(c)}</td>`);
  return `<tr${style}>${cells.map(td).join('')}</tr>`;
}

function esc(s: string): string {
  return s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');
}
