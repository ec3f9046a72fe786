/** The Summary's largest open breaks by USD impact: the last table of its first printed page. */
import { amount, type Row } from './cells.js';
import { recordWords } from '../rules/words.js';
import { ageDays } from './breaks-sheet.js';
import { rankByUsdImpact, valueBreaks } from './top-breaks.js';
import { header, muted, section, type SummarySection } from './summary-layout.js';

/** Open breaks the first page names. */
export const LARGEST_BREAKS = 5;

/**
 * The open breaks with the largest absolute USD impact (breakValuation: as the Breaks sheet and the money at stake
 * value them), explained or not, in the order the e-mail's list starts with (rankByUsdImpact). Breaks with no USD
 * figure or no money cannot rank: they are counted under the table. Needs the rates, as the money at stake does.
 */
export const largestOpenBreaks: SummarySection = ({ openBreaks, rates, now }) => {
  if (!rates || !openBreaks.length) return [];
  const valued = valueBreaks(openBreaks, rates);
  const ranked = rankByUsdImpact(valued);
  const rows: Row[] = [
    section(`Largest ${LARGEST_BREAKS} open breaks by USD impact`),
    header('Rule code', 'USD impact', 'Age (days)', 'Severity', 'Period', 'Explained', 'Record'),
  ];
  for (const { b, v } of ranked.slice(0, LARGEST_BREAKS)) {
    if (v.kind !== 'usd') continue;
    rows.push({
      cells: [
        b.code,
        amount(v.usd, v.dp),
        ageDays(b.firstSeenAt, now),
        b.severity,
        b.inPeriod ? 'this period' : 'carried over',
        b.workflow?.status === 'explained' ? 'yes' : 'no',
        recordWords(b),
      ],
      cellTones: { 3: b.severity },
    });
  }
  if (!ranked.length) rows.push(muted('(no open break has a USD figure)'));
  const more = ranked.length - Math.min(ranked.length, LARGEST_BREAKS);
  const noFigure = valued.filter((x) => x.v.kind === 'no figure').length;
  const noMoney = valued.filter((x) => x.v.kind === 'no money' || (x.size && x.size.isZero())).length;
  rows.push(
    muted(
      `${more} more with a USD figure, ${noFigure} without one, ${noMoney} that move no money: the Breaks sheet ` +
        'lists every open break',
    ),
  );
  return rows;
};
