/** The report e-mail (subject, text, html) built from the run and its open breaks: pure, no I/O. */
import type { RunInfo } from './model.js';
import { COUNT_LABELS, headline, periodLabel, type SeverityCounts } from './summary.js';

export interface MessageInput {
  run: Pick<RunInfo, 'id' | 'periodFrom' | 'periodTo' | 'status' | 'failedStage' | 'ruleResults' | 'counts'>;
  open: SeverityCounts;
  /** Open breaks per rule code, most first. */
  byRule: Array<{ code: string; count: number }>;
  attachmentName: string;
}

export interface Message {
  subject: string;
  text: string;
  html: string;
}

/** Subject with the period and the open-break count; bodies with the headline figures only (the workbook has the rest). */
export function buildMessage(input: MessageInput): Message {
  const { run, open } = input;
  const period = periodLabel(run.periodFrom, run.periodTo);
  const head = headline(run, open);
  const subject = `ramp-recon ${period}: ${head.reconciled ? 'reconciled, 0 open breaks' : `${open.total} open break${open.total === 1 ? '' : 's'}${open.high ? ` (${open.high} high)` : ''}`}${run.status === 'failed' ? ', run failed' : ''}`;

  const counts = COUNT_LABELS.filter(([k]) => run.counts[k] !== undefined).map(([k, label]) => [label, String(run.counts[k])] as const);
  const notChecked = run.ruleResults.filter((r) => r.status === 'not_checked').map((r) => `${r.code}${r.reason ? ` (${r.reason})` : ''}`);
  const lines = [
    head.text,
    head.detail,
    '',
    `Open breaks: ${open.total} (high ${open.high}, medium ${open.medium}, low ${open.low})`,
    ...input.byRule.slice(0, 10).map((r) => `  ${r.code}: ${r.count}`),
    '',
    ...counts.map(([label, value]) => `${label}: ${value}`),
    ...(notChecked.length ? ['', `Not checked: ${notChecked.join('; ')}`] : []),
    '',
    `Run ${run.id}. The workbook ${input.attachmentName} is attached; its Summary sheet has the totals, rules and assumptions.`,
  ];
  const text = `${lines.join('\n')}\n`;

  const colour = head.reconciled ? '#006100' : '#9C0006';
  const background = head.reconciled ? '#C6EFCE' : '#FFC7CE';
  const html = [
    '<!doctype html><html><body style="font-family:Arial,Helvetica,sans-serif;font-size:14px">',
    `<p style="font-size:18px;font-weight:bold;color:${colour};background:${background};padding:8px">${esc(head.text)}</p>`,
    `<p>${esc(head.detail)}</p>`,
    '<table cellpadding="4" style="border-collapse:collapse">',
    row('Open breaks', `${open.total}`, true),
    row('high', `${open.high}`),
    row('medium', `${open.medium}`),
    row('low', `${open.low}`),
    ...input.byRule.slice(0, 10).map((r) => row(r.code, `${r.count}`)),
    ...counts.map(([label, value]) => row(label, value)),
    '</table>',
    notChecked.length ? `<p>Not checked: ${esc(notChecked.join('; '))}</p>` : '',
    `<p style="color:#555">Run ${esc(run.id)}. The workbook <b>${esc(input.attachmentName)}</b> is attached; its Summary sheet has the totals, rules and assumptions.</p>`,
    '</body></html>',
  ].join('\n');
  return { subject, text, html };
}

function row(label: string, value: string, bold = false): string {
  const style = bold ? ' style="font-weight:bold"' : '';
  return `<tr${style}><td>${esc(label)}</td><td style="text-align:right">${esc(value)}</td></tr>`;
}

function esc(s: string): string {
  return s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');
}
