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

export { summarySpec, type SummaryDetail, type SummaryInput } from './summary-layout.js';

/**
 * The Summary's blocks in print order, a blank row between two blocks; a block whose sections have nothing to say for
 * this run (no balances read, no detail files) is left out with its blank row. The first screen ends with the balance
 * table; the run's details follow it.
 */
export const SUMMARY_LAYOUT: readonly SummarySection[][] = [
  [verdict, failureDetails, partialPeriod, moneyAtStakeSection, detailPointer],
  [openBreaksBySeverity],
  [lateData],
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

export function summaryRows(input: SummaryInput): Row[] {
  const facts = {
    ...input,
    head: headline(input.run, input.counts),
    failure: runFailure(input.run),
    stages: stagesInRunOrder(input.run.stages),
  };
  const blocks = SUMMARY_LAYOUT.map((block) => block.flatMap((s) => s(facts))).filter((rows) => rows.length);
  return withTextColumns(blocks.flatMap((rows, i) => (i ? [blank(), ...rows] : rows)));
}
