/** The group e-mail of a batch, pure, from the digest stored with the group workbook: the verdict, one line per account
 * (a failed one with its error), the totals naming the accounts they leave out, the breaks to look at first, and where
 * the workbooks are.
 */
import { CLOSED_PERIOD_LABEL, CLOSED_PERIOD_WHERE, type GroupDigest } from './group.js';
import { colourHtml, colourLegend, type AccountColour } from './group-colours.js';
import type { GroupTotals } from './group-totals.js';
import { PARTIAL_MEANING } from './summary.js';
import { breakLine, CLOSED_CHANGED_WORDS, esc, topBreaksTitle, WHERE_LABEL } from './email.js';
import type { GroupBreak } from './group-top-breaks.js';
import { stakePhrase, usdWords } from './money-at-stake.js';
import type { MoneyAtStakeFigures } from '../domain/index.js';

/**
 * "ramp-recon group 2026-11-21: 3 of 4 accounts reconciled, 1 failed", and " - closed period changed since sign-off
 * (acme)" while an account's signed close has prior-period adjustments.
 */
export function groupSubject(digest: GroupDigest): string {
  const amended = digest.version > 1 ? ' (amended)' : '';
  const closed = digest.closedPeriodsChanged?.length
    ? ` - ${CLOSED_CHANGED_WORDS} (${digest.closedPeriodsChanged.join(', ')})`
    : '';
  return `ramp-recon group ${digest.period}${digest.partial ? ' (partial)' : ''}${amended}: ${digest.verdict}${closed}`;
}

/** The money at stake of a line: the figures stored, else the absolute total of a digest written before them. */
function stakeOfLine(stake: MoneyAtStakeFigures | null | undefined, gross: string | null): string | null {
  if (stake) return `money at stake: ${stakePhrase(stake)}`;
  return gross !== null ? `money at stake ${usdWords(gross)} (shortfalls and surpluses alike)` : null;
}

/**
 * "Total of 2 of 3 accounts (initech failed: left out): 25 open breaks (20 unexplained); money at stake: shortfalls
 * USD -1,234.50, surpluses USD 0.00, 2 open breaks without a USD figure; closing balances USD 9,059.22".
 */
export function totalsLine(t: GroupTotals): string {
  if (t.openBreaks === null) return `${t.label}: no account to sum`;
  const parts = [`${t.openBreaks} open break${t.openBreaks === 1 ? '' : 's'} (${t.unexplained} unexplained)`];
  const stake = stakeOfLine(t.stake, t.moneyAtStake);
  if (stake) parts.push(stake);
  if (t.closingUsd !== null) parts.push(`closing balances ${usdWords(t.closingUsd)}`);
  return `${t.label}: ${parts.join('; ')}`;
}

const stakeSuffix = (stake: MoneyAtStakeFigures | null | undefined, gross: string | null) => {
  const words = stakeOfLine(stake, gross);
  return words ? `; ${words}` : '';
};
const shortfalls = (stake: MoneyAtStakeFigures | null | undefined) =>
  stake?.shortfalls ? usdWords(stake.shortfalls.total) : '';
const surpluses = (stake: MoneyAtStakeFigures | null | undefined) =>
  stake?.surpluses ? usdWords(stake.surpluses.total) : '';
const noFigure = (stake: MoneyAtStakeFigures | null | undefined) =>
  stake?.noFigure ? String(stake.noFigure.total) : '';

const style = (colour: AccountColour, bold = false) => {
  const c = colourHtml(colour);
  return `color:${c.color};background:${c.background}${bold ? ';font-weight:bold' : ''}`;
};

/** "acme: E_FEE_RATE fill 1: USD -12.50; high, ...": a group break, its account first. */
const groupBreakLine = (b: GroupBreak) => `${b.account}: ${breakLine(b)}`;

/**
 * The group e-mail, readable alone: the verdict, one line per account (its status and money at stake; a failed one
 * with its error), the Total line, the open breaks to look at first over every account, and, on one line at the end,
 * where the files are on the reports' machine.
 */
export function groupMessage(
  digest: GroupDigest,
  notAttached?: { reason: string; path: string; host: string },
  where?: { path: string; host: string },
): { subject: string; text: string; html: string } {
  const lines = digest.accounts.map(
    (a) => `${a.account}: ${a.status}${stakeSuffix(a.stake, a.moneyAtStake)}${a.runId ? ` (run ${a.runId})` : ''}`,
  );
  const total = totalsLine(digest.totals);
  const top = digest.topBreaks ?? [];
  const topTitle = topBreaksTitle(top.length).replace(' to look at first', ' to look at first, every account');
  const box = notAttached
    ? `The group workbook ${digest.attachmentName} is not attached: ${notAttached.reason}. Where it is: see the last line.`
    : '';
  const workbook = notAttached
    ? `The group workbook ${digest.attachmentName} is not attached (see above): its Group summary has every account, its Breaks and Balances sheets every account's rows.`
    : `The group workbook ${digest.attachmentName} is attached: its Group summary has every account, its Breaks and Balances sheets every account's rows.`;
  const place = notAttached ?? where;
  const whereText = `${WHERE_LABEL}${place ? `, on ${place.host}` : ''}: the group workbook ${place?.path ?? digest.attachmentName}; each account's own workbook is named on its line of the Group summary.`;
  const amended =
    digest.version > 1 ? `Amended report: changed since the previous report: ${digest.changes.join('; ')}` : '';
  const closed = (digest.closedPeriodLines ?? []).map((l) => `${CLOSED_PERIOD_LABEL}: ${l}`);
  const closedNote = closed.length ? [...closed, `(${CLOSED_PERIOD_WHERE})`] : [];
  const text = [
    digest.verdict.toUpperCase(),
    `Period ${digest.period}${digest.partial ? ` (${PARTIAL_MEANING})` : ''}; batch ${digest.batchId}`,
    ...(amended ? [amended] : []),
    ...closedNote,
    ...(box ? ['', box] : []),
    '',
    'Each account: its status; money at stake',
    ...lines,
    total,
    ...(top.length ? ['', topTitle, ...top.map((b, i) => `  ${i + 1}. ${groupBreakLine(b)}`)] : []),
    '',
    workbook,
    whereText,
    '',
  ].join('\n');
  const partial = digest.partial;
  const html = [
    '<!doctype html><html><body style="font-family:Arial,Helvetica,sans-serif;font-size:14px">',
    `<p style="font-size:18px;${style(digest.colour, true)};padding:8px">${esc(digest.verdict.toUpperCase())}</p>`,
    `<p>Period ${esc(digest.period)}${partial ? ` (${esc(PARTIAL_MEANING)})` : ''}; batch ${esc(digest.batchId)}</p>`,
    amended ? `<p style="font-weight:bold;color:#7F4F00;background:#FFEB9C;padding:8px">${esc(amended)}</p>` : '',
    closedNote.length
      ? `<p style="color:#7F4F00;background:#FFEB9C;padding:8px">${closedNote.map(esc).join('<br>')}</p>`
      : '',
    box ? `<p style="font-weight:bold;color:#7F4F00;background:#FFEB9C;padding:8px">${esc(box)}</p>` : '',
    '<table cellpadding="4" style="border-collapse:collapse">',
    '<tr><th align="left">Account</th><th align="left">Status</th><th align="right">Shortfalls</th><th align="right">Surpluses</th><th align="right">No USD figure</th><th align="left">Run</th></tr>',
    ...digest.accounts.map(
      (a) =>
        `<tr style="${style(a.colour, a.colour === 'red')}"><td>${esc(a.account)}</td><td>${esc(a.status)}</td><td align="right">${esc(shortfalls(a.stake))}</td><td align="right">${esc(surpluses(a.stake))}</td><td align="right">${esc(noFigure(a.stake))}</td><td>${esc(a.runId ?? '')}</td></tr>`,
    ),
    `<tr style="font-weight:bold"><td>Total</td><td>${esc(total)}</td><td align="right">${esc(shortfalls(digest.totals.stake))}</td><td align="right">${esc(surpluses(digest.totals.stake))}</td><td align="right">${esc(noFigure(digest.totals.stake))}</td><td></td></tr>`,
    '</table>',
    `<p>Colours: ${colourLegend()
      .map((l) => `<span style="${style(l.colour)};padding:2px 4px">${l.colour}</span> ${esc(l.means)}`)
      .join('; ')}. The verdict takes its worst account's colour.</p>`,
    ...(top.length
      ? [`<p><b>${esc(topTitle)}</b></p>`, '<ol>', ...top.map((b) => `<li>${esc(groupBreakLine(b))}</li>`), '</ol>']
      : []),
    `<p>${esc(workbook)}</p>`,
    `<p style="color:#555">${esc(whereText)}</p>`,
    '</body></html>',
  ].join('\n');
  return { subject: groupSubject(digest), text, html };
}
