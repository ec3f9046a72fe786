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
import { breakImpact, breakValuation, type UsdRates } from './usd-rates.js';
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
 * The five open breaks the e-mail names: unexplained ones first (an explained one only when fewer than five are
 * unexplained); within each, the largest absolute USD impact first, then (no impact, or the same) the oldest (first
 * seen earliest; ties by severity, code and key). A break of no money (zero or no USD impact) never goes before one
 * that has some.
 */
export function topBreaks(
  breaks: readonly ReportedBreak[],
  rates: UsdRates,
  now: Date,
  limit = DIGEST_BREAKS,
  precision?: Precision,
): DigestBreak[] {
  const rank = { high: 0, medium: 1, low: 2 } as Record<string, number>;
  const valued = breaks.map((b) => {
    const valuation = breakValuation(b, rates);
    const usd = valuation.kind === 'usd' ? valuation.usd : null;
    const noImpact = valuation.kind === 'usd' ? undefined : valuation.kind;
    return { b, usd, noImpact, size: usd ? usd.abs() : new Decimal(0), explained: b.workflow?.status === 'explained' };
  });
  type Valued = (typeof valued)[number];
  const order = (x: Valued, y: Valued) =>
    Number(x.explained) - Number(y.explained) ||
    y.size.comparedTo(x.size) ||
    x.b.firstSeenAt.getTime() - y.b.firstSeenAt.getTime() ||
    (rank[x.b.severity] ?? 9) - (rank[y.b.severity] ?? 9) ||
    x.b.code.localeCompare(y.b.code) ||
    x.b.key.localeCompare(y.b.key);
  const chosen = [...valued]
    .sort(order)
    .slice(0, limit)
    .map((v): { v: Valued; why: DigestBreak['why'] } => ({ v, why: v.size.gt(0) ? 'largest' : 'oldest' }));
  return chosen.map(({ v, why }) => ({
    code: v.b.code,
    key: v.b.key,
    severity: v.b.severity,
    sentence: breakSentence(v.b, precision ? scaleOf(v.b, precision) : null),
    ageDays: breakAgeDays(v.b.firstSeenAt, now),
    usdImpact: v.usd ? v.usd.toFixed(Math.max(2, v.usd.dp())) : null,
    ...(v.noImpact ? { noImpact: v.noImpact } : {}),
    record: recordWords(v.b),
    inPeriod: v.b.inPeriod,
    explained: v.explained,
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
