/** The e-mail's digest of a run's workbook (banner, status, the five oldest or largest open breaks in words), computed
 * when the workbook is written.
 */
import { Decimal } from '../decimal/decimal.js';
import { MS_PER_DAY } from '../util/dates.js';
import type { OpenBreakCounts, ReportedBreak } from '../domain/index.js';
import { breakSentence } from '../rules/describe.js';
import type { ClosedPeriodDigest, DigestBreak, DigestFigures, ReportDigest, RunInfo } from '../domain/index.js';
import type { ClosedPeriodChanges } from '../domain/evidence.js';
import { changedCloses, closeWords } from './summary-closed-periods.js';
import { headline, partialRun, periodLabel, runFailure } from './summary.js';
import { lateDigest } from './late-data.js';
import { breakImpact, type UsdRates } from './usd-rates.js';
import { byAge, rankByUsdImpact, valueBreaks } from './top-breaks.js';
import { recordWords } from '../rules/words.js';
import type { Precision } from './precision.js';
import { scaleOf } from './breaks-sheet.js';

/** Breaks the e-mail lists in words. */
export const DIGEST_BREAKS = 5;

/**
 * The money a break moves, valued in USD and signed from the business's side as its rule's descriptor says
 * (docs/rules.md "Money at stake"); null when it moves no money or has no USD figure: the Breaks sheet's "USD impact".
 */
export function usdImpact(
  b: Pick<ReportedBreak, 'code' | 'unit' | 'currency' | 'expected' | 'actual' | 'difference' | 'detail'>,
  rates: UsdRates,
): Decimal | null {
  // The Breaks sheet's own valuation, so the e-mail and the sheet never differ.
  return breakImpact(b, rates)?.usd ?? null;
}

/** Whole days a break has been open (first seen to now). */
export function breakAgeDays(firstSeenAt: Date, now: Date): number {
  return Math.max(0, Math.floor((now.getTime() - firstSeenAt.getTime()) / MS_PER_DAY));
}

/**
 * The five open breaks the e-mail names: the Summary's largest by USD impact, the same breaks in the same order
 * (rankByUsdImpact, explained or not); when fewer than five have an impact, then the others (no money, no USD figure,
 * zero), the unexplained first, then the oldest (byAge). A break of no money never goes before one that has some.
 */
export function topBreaks(
  breaks: readonly ReportedBreak[],
  rates: UsdRates,
  now: Date,
  limit = DIGEST_BREAKS,
  precision?: Precision,
): DigestBreak[] {
  const valued = valueBreaks(breaks, rates);
  const ranked = rankByUsdImpact(valued);
  const explained = (b: ReportedBreak) => b.workflow?.status === 'explained';
  const rest = valued
    .filter((x) => !ranked.includes(x))
    .sort((x, y) => Number(explained(x.b)) - Number(explained(y.b)) || byAge(x.b, y.b));
  const chosen = [
    ...ranked.map((x) => ({ x, why: 'largest' as const })),
    ...rest.map((x) => ({ x, why: 'oldest' as const })),
  ].slice(0, limit);
  return chosen.map(({ x: { b, v }, why }) => ({
    code: b.code,
    key: b.key,
    severity: b.severity,
    sentence: breakSentence(b, precision ? scaleOf(b, precision) : null),
    ageDays: breakAgeDays(b.firstSeenAt, now),
    usdImpact: v.kind === 'usd' ? v.usd.toFixed(Math.max(2, v.usd.dp())) : null,
    ...(v.kind !== 'usd' ? { noImpact: v.kind } : {}),
    record: recordWords(b),
    inPeriod: b.inPeriod,
    explained: explained(b),
    why,
  }));
}

/** The digest stored with the workbook (run.report_digest): what `deliver` sends, now or later. */
export function buildDigest(input: {
  run: Pick<
    RunInfo,
    'periodFrom' | 'periodTo' | 'startedAt' | 'status' | 'failedStage' | 'ruleResults' | 'error' | 'lateBreaks'
  >;
  openBreaks: readonly ReportedBreak[];
  counts: OpenBreakCounts;
  rates: UsdRates;
  now: Date;
  attachmentName: string;
  detailDir?: string;
  /** The currencies' decimals: the breaks' sentences read at them (as on the Breaks sheet). */
  precision?: Precision;
  /** The Summary's money figures (money at stake, closing balances in USD), kept for the group report. */
  figures?: DigestFigures;
  /** What the database holds for the period (storedCounts): the e-mail's figures of a run that did not count it. */
  stored?: Record<string, number>;
  /** The account's signed closes with their prior-period adjustments (closedPeriodChanges). */
  closedPeriods?: readonly ClosedPeriodChanges[];
}): ReportDigest {
  const closed = closedPeriodDigest(input.closedPeriods);
  const head = headline(input.run, input.counts);
  const failure = runFailure(input.run);
  return {
    period: periodLabel(input.run.periodFrom, input.run.periodTo),
    partial: partialRun(input.run),
    attachmentName: input.attachmentName,
    ...(input.detailDir ? { detailDir: input.detailDir } : {}),
    headline: { tone: head.tone, text: head.text, detail: head.detail, status: head.status },
    topBreaks: topBreaks(input.openBreaks, input.rates, input.now, DIGEST_BREAKS, input.precision),
    late: lateDigest(input.run.lateBreaks ?? []),
    ...(input.figures ? { figures: input.figures } : {}),
    ...(failure
      ? { failure: { ...failure, stored: !failure.judged && input.stored ? { ...input.stored } : null } }
      : {}),
    ...(closed.length ? { closedPeriods: closed } : {}),
    writtenAt: input.now.toISOString(),
  };
}

/** The changed closes as the e-mail names them. */
function closedPeriodDigest(closes: readonly ClosedPeriodChanges[] | undefined): ClosedPeriodDigest[] {
  return changedCloses(closes).map((c) => ({
    closeId: c.closeId,
    period: periodLabel(c.period.from, c.period.to),
    by: c.by,
    changes: c.count,
    usdTotal: c.usdTotal?.toFixed() ?? null,
    words: closeWords(c),
  }));
}
