/** The Summary's prior-period adjustments (docs/closing.md "Late data against a closed period"): on the first page,
 * each signed close whose records changed since sign-off with its largest changes; on a later page, every change.
 */
import type { Decimal } from '../decimal/decimal.js';
import { amount, textWidth, type Cell, type Row } from './cells.js';
import { RECORD_KINDS } from '../domain/record-kinds.js';
import type { CloseChange, ClosedPeriodChanges } from '../domain/evidence.js';
import { RECORD_MONEY } from './adjustment-impact.js';
import { periodLabel } from './summary.js';
import { header, muted, section, utcText, type SummarySection } from './summary-layout.js';
import { shownUsd, usdFigureText } from './usd-rates.js';

/** Changes of a close the report reads (the later page's list); `ramp-recon verify` lists every one. */
export const CLOSED_CHANGES_LISTED = 1000;
/** Changes of a close the first page names, the largest by absolute USD impact. */
export const FIRST_PAGE_CHANGES = 5;
/**
 * Digit widths a before or after value (a whole record's document, a sender's text) and a field are cut to: the
 * narrowest of their Summary columns (22 and 34 characters) less the writer's margin.
 */
const VALUE_WIDTH = 20;
const FIELD_WIDTH = 32;

export const CLOSED_CHANGES_TITLE = 'Closed periods changed since sign-off';
export const EVERY_CLOSED_CHANGE_TITLE = 'Closed periods: every change since sign-off';

/** Closes with at least one change: the ones the report names. */
export const changedCloses = (closes: readonly ClosedPeriodChanges[] | undefined) =>
  (closes ?? []).filter((c) => c.count > 0);

/** "2026-11-15: 4 changes since sign-off by alice" ... the words the e-mail and the subject share. */
export function closeWords(c: ClosedPeriodChanges): string {
  const changes = `${c.count} change${c.count === 1 ? '' : 's'}`;
  const usd = c.usdTotal ? `, USD ${usdFigureText(c.usdTotal)}` : '';
  return `${periodLabel(c.period.from, c.period.to)} (close ${c.closeId}, signed by ${c.by}): ${changes}${usd}`;
}

/** The first page's section: each changed close, then its largest changes. */
export const closedPeriodsChanged: SummarySection = ({ closedPeriods }) => {
  const closes = changedCloses(closedPeriods);
  if (!closes.length) return [];
  const rows: Row[] = [section(CLOSED_CHANGES_TITLE)];
  for (const c of closes) {
    rows.push(closeRow(c), changeHeader());
    const listed = c.changes.slice(0, FIRST_PAGE_CHANGES);
    rows.push(...listed.map(changeRow));
    if (c.count > listed.length)
      rows.push(muted(`... and ${c.count - listed.length} more: listed under "${EVERY_CLOSED_CHANGE_TITLE}" below`));
  }
  rows.push(
    muted(
      'Records of a signed-off period that changed since sign-off (prior-period adjustments); the breaks show the ' +
        'truth as it stands. Listed until the period is reopened and closed again (docs/closing.md).',
    ),
  );
  return rows;
};

/** A later page's section: every change of each close that has more than the first page names. */
export const everyClosedPeriodChange: SummarySection = ({ closedPeriods }) => {
  const closes = changedCloses(closedPeriods).filter((c) => c.count > FIRST_PAGE_CHANGES);
  if (!closes.length) return [];
  const rows: Row[] = [section(EVERY_CLOSED_CHANGE_TITLE)];
  for (const c of closes) {
    rows.push(closeRow(c), changeHeader(), ...c.changes.map(changeRow));
    if (c.count > c.changes.length)
      rows.push(muted(`... and ${c.count - c.changes.length} more: \`ramp-recon verify ${c.closeId}\` lists them all`));
  }
  return rows;
};

/**
 * A close's line. Its cells stay within the Summary's column widths (a text with a cell beside it widens its column,
 * and the print scale follows the widths); the close id, the longest, is last, where text runs on.
 */
function closeRow(c: ClosedPeriodChanges): Row {
  return {
    cells: [
      periodLabel(c.period.from, c.period.to),
      fitted(`signed by ${c.by}`, VALUE_WIDTH),
      utcText(c.at),
      `${c.count} change${c.count === 1 ? '' : 's'}`,
      c.usdTotal ? usdCell(c.usdTotal) : null,
      null,
      `close ${c.closeId}`,
    ],
    tone: 'bold',
    cellTones: { 0: 'medium' },
  };
}

const changeHeader = () => header('Field', 'Before', 'After', 'USD impact', 'First seen (UTC)', '', 'Record');

/**
 * One change: the field, before and after (text a sender controls: written as text cells, never evaluated; cut to
 * their columns' widths), the USD impact, when it was first seen, and last the record and its id ("order <UUID>"
 * fits the last column, and runs on when longer).
 */
export function changeRow(c: CloseChange): Row {
  const whole = c.field === '*';
  return {
    cells: [
      whole ? (c.before === null ? 'new record' : 'record gone') : fitted(c.field, FIELD_WIDTH),
      valueText(c.before, whole),
      valueText(c.after, whole),
      c.usdImpact ? usdCell(c.usdImpact) : noImpact(c),
      utcText(c.seenAt),
      null,
      `${RECORD_KINDS[c.stream].noun} ${c.id}`,
    ],
  };
}

function valueText(value: string | null, whole: boolean): string {
  if (value === null) return whole ? '(absent)' : '(none)';
  return fitted(value, VALUE_WIDTH);
}

/** The text cut (with "...") to at most `width` digit widths: what fits its Summary column without widening it. */
export function fitted(text: string, width: number): string {
  if (textWidth(text) <= width) return text;
  let cut = text;
  while (cut && textWidth(`${cut}...`) > width) cut = cut.slice(0, -1);
  return `${cut}...`;
}

function usdCell(usd: Decimal): Cell {
  const shown = shownUsd(usd);
  return amount(shown.usd, shown.dp);
}

/** Why a change has no USD impact: its field moves no money, or its currency has no rate. */
function noImpact(c: CloseChange): string {
  const money = RECORD_MONEY[c.stream];
  const moves = c.field === '*' || money.factors.includes(c.field) || money.currencyField === c.field;
  return moves ? 'no USD figure' : 'no money';
}
