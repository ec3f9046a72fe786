/** The Summary sheet, top to bottom: a list of named sections, each a function of the run's figures. Moving a section
 * is moving its name in SUMMARY_LAYOUT; the words and figures it shares with the e-mail and the CLI are in summary.ts.
 */
import type { Row } from './cells.js';
import { headline, runFailure, stagesInRunOrder } from './summary.js';
import { blank, withTextColumns, type SummaryInput, type SummarySection } from './summary-layout.js';
import { detailPointer, failureDetails, moneyAtStakeSection, partialPeriod, verdict } from './summary-verdict.js';
import { changesSincePreviousRun, lateData, openBreaksByRule, openBreaksBySeverity } from './summary-open-breaks.js';
import { balances } from './summary-balances.js';
import {
  apiRequests,
  assumptionsInForce,
  detailFiles,
  recordCounts,
  ruleResults,
  runDetails,
  syncTimes,
  webhookCounts,
} from './summary-run.js';
import { feesPerDay, fillTotals, partnerTotals, transferTotals } from './summary-totals.js';
import { howToRead } from './summary-how-to-read.js';
import { largestOpenBreaks } from './summary-top-breaks.js';
import { closedPeriodsChanged, everyClosedPeriodChange } from './summary-closed-periods.js';

export { summarySpec, type SummaryDetail, type SummaryInput } from './summary-layout.js';

/**
 * The Summary's first printed page (A4 landscape, one page wide): the verdict, the money at stake, the closed periods
 * changed since sign-off (when any), the open breaks by severity and the largest by USD impact. A page break follows
 * it; the reference tables print on later pages.
 */
export const SUMMARY_FIRST_PAGE: readonly SummarySection[][] = [
  [verdict, failureDetails, partialPeriod, moneyAtStakeSection, detailPointer],
  [closedPeriodsChanged],
  [openBreaksBySeverity],
  [largestOpenBreaks],
];

/**
 * After the first page: the rest of the first screen (late data, every change to a closed period when the first page
 * could not name them all, breaks by rule, the balance table), then the run.
 */
export const SUMMARY_LATER_PAGES: readonly SummarySection[][] = [
  [lateData],
  [everyClosedPeriodChange],
  [openBreaksByRule],
  [balances],
  [runDetails],
  [detailFiles],
  [recordCounts, webhookCounts],
  [apiRequests, syncTimes],
  [partnerTotals],
  [fillTotals],
  [transferTotals],
  [feesPerDay],
  [ruleResults],
  [assumptionsInForce],
  [changesSincePreviousRun],
  [howToRead],
];

/**
 * The Summary's blocks in print order, a blank row between two blocks; a block whose sections have nothing to say for
 * this run (no balances read, no detail files) is left out with its blank row.
 */
export const SUMMARY_LAYOUT: readonly SummarySection[][] = [...SUMMARY_FIRST_PAGE, ...SUMMARY_LATER_PAGES];

export function summaryRows(input: SummaryInput): Row[] {
  const facts = {
    ...input,
    head: headline(input.run, input.counts),
    failure: runFailure(input.run),
    stages: stagesInRunOrder(input.run.stages),
  };
  const build = (layout: readonly SummarySection[][]) =>
    layout.map((block) => block.flatMap((s) => s(facts))).filter((rows) => rows.length);
  const first = build(SUMMARY_FIRST_PAGE);
  const later = build(SUMMARY_LATER_PAGES);
  const lastOfFirst = first.at(-1)?.at(-1);
  // the manual break under the first page's last row; the blank row between the two parts opens the next page
  if (lastOfFirst && later.length) lastOfFirst.pageBreakAfter = true;
  const blocks = [...first, ...later];
  return withTextColumns(blocks.flatMap((rows, i) => (i ? [blank(), ...rows] : rows)));
}
