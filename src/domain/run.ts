/** A run as the report and the commands read it back: its stages, rule results, requests, the e-mail's digest, and what changed. */
import type { Break, LateBreak, LateCounts, OpenBreakCounts } from './break.js';

/** The two APIs. */
export type ApiName = 'partner' | 'exchange';

/** One endpoint's attempts in a run. */
export interface EndpointRequests {
  /** Every attempt, retries included: each one spends the rate limit. */
  requests: number;
  /** The attempts after the first of a request (429, 5xx, network faults). */
  retries: number;
  /** The configured rate limit its class of call is paced at (partner public 10/s, private 100/s; exchange). */
  perSecond: number;
}

/**
 * run.requests: API -> endpoint -> counts, e.g.
 * {"partner":{"GET /orders":{"requests":412,"retries":1,"perSecond":100}},"exchange":{"GET /fills":{...}}}.
 * An endpoint is the method and the path template: no query, ids as {id} ("GET /orders/{id}").
 */
export type RunRequests = Partial<Record<ApiName, Record<string, EndpointRequests>>>;

export type RuleStatus = 'passed' | 'breaks' | 'not_checked';

/** One element of run.rule_results. */
export interface RuleResult {
  code: string;
  severity: string;
  description: string;
  status: RuleStatus;
  checked: number;
  breaks: number;
  /** Entities in scope the rule could not judge (unknown currency, symbol...). */
  skipped?: number;
  reason?: string;
}

/**
 * A rule's result as the report reads it back from run.rule_results: the tally's shape (what a
 * run writes), with any status text and the figures null for runs written by older versions.
 */
export interface StoredRuleResult extends Omit<RuleResult, 'status' | 'checked' | 'breaks' | 'skipped'> {
  status: RuleStatus | string;
  checked: number | null;
  breaks: number | null;
}

export interface StageInfo {
  status?: string;
  ms?: number;
  error?: string;
  /** ISO times of the stage's start and end (run.stages). */
  startedAt?: string;
  finishedAt?: string;
  /** The order the stage was first recorded in (recordStage); stages are listed by it, then by startedAt. */
  seq?: number;
}

export interface RunInfo {
  id: string;
  account: string;
  command: string;
  status: string;
  periodFrom: string;
  periodTo: string;
  startedAt: Date;
  finishedAt: Date | null;
  failedStage: string | null;
  error: string | null;
  stages: Record<string, StageInfo>;
  counts: Record<string, number>;
  /** The API requests the run made, per endpoint (run.requests). */
  requests: RunRequests;
  ruleResults: StoredRuleResult[];
  rulesetVersion: string | null;
  configHash: string | null;
  /** The open-break counts the run's workbook shows (null before a workbook was written). */
  breakCounts?: OpenBreakCounts | null;
  /** What the run's e-mail shows, stored with the workbook (null before a workbook was written). */
  reportDigest?: ReportDigest | null;
  /** Breaks of earlier days the run's reconcile opened, reopened or resolved on late data (run.late_breaks). */
  lateBreaks?: LateBreak[];
}

/** One open break in words, as the e-mail lists it (the five oldest or largest). */
export interface DigestBreak {
  code: string;
  key: string;
  severity: string;
  /** breakSentence(b). */
  sentence: string;
  /** Whole days since first seen, at the time the workbook was written. */
  ageDays: number;
  /** The signed USD impact (docs/rules.md "Money at stake"), decimal text; null when no money or no USD figure. */
  usdImpact: string | null;
  /** Why usdImpact is null: its rule moves no money, or it does and has no USD figure (absent in older digests). */
  noImpact?: 'no money' | 'no figure';
  /** The record in words ("withdrawal w-1", "BTC"); absent in older digests (the key says it). */
  record?: string;
  inPeriod: boolean;
  explained: boolean;
  /** Why it is listed: among the largest by USD impact, or among the oldest. */
  why: 'largest' | 'oldest';
}

/**
 * What the e-mail says, fixed when the workbook is written (run.report_digest) so that a delivery
 * retried later sends the figures of its attachment: the period label, the banner and status, and
 * the breaks in words. The counts are run.break_counts.
 */
export interface ReportDigest {
  period: string;
  /** The period was not over when its run started (absent in digests written before this was said). */
  partial?: boolean;
  attachmentName: string;
  /** The run's detail folder, every record of the period (absent in digests written before there was one). */
  detailDir?: string;
  headline: { tone: 'ok' | 'explained' | 'bad'; text: string; detail: string; status: string };
  topBreaks: DigestBreak[];
  /** What late data changed about earlier days (absent in digests written before it was reported). */
  late?: LateCounts & { breaks: LateBreak[] };
  /** The Summary's money figures, exact decimal text, for the group report (absent in digests written before). */
  figures?: DigestFigures;
  /** The run failed (in a stage other than deliver): what the workbook says of it (absent for a run that did not fail). */
  failure?: DigestFailure;
  /** The signed closes whose records changed since sign-off (docs/closing.md; absent: none, or written before). */
  closedPeriods?: ClosedPeriodDigest[];
  writtenAt: string;
}

/** A signed close with prior-period adjustments, as the e-mail names it: its changes counted, their USD sum as text. */
export interface ClosedPeriodDigest {
  closeId: string;
  period: string;
  by: string;
  changes: number;
  usdTotal: string | null;
  /** The line the e-mail shows (report/summary-closed-periods.ts closeWords). */
  words: string;
}

/**
 * A failed run's workbook: the stage and its error (scrubbed of secrets, as run.error), whether the run judged the
 * breaks before it failed (if not, they are as last known), and what the database held for the period when the run
 * did not count it itself.
 */
export interface DigestFailure {
  stage: string;
  error: string | null;
  judged: boolean;
  stored: Record<string, number> | null;
}

/**
 * The money at stake as exact decimal text (report/money-at-stake.ts; docs/reports.md "Money at stake"). total,
 * inPeriod, carriedOver: the open breaks' absolute USD impacts, shortfalls and surpluses alike (the first figures
 * stored); unvalued: breaks that move money without a USD figure. The rest is absent in digests written before it.
 */
export interface MoneyAtStakeFigures {
  total: string;
  inPeriod: string;
  carriedOver: string;
  unvalued: number;
  /** The sum of the negative USD impacts (money missing or gone), split like the breaks. */
  shortfalls?: { total: string; inPeriod: string; carriedOver: string };
  /** The sum of the positive USD impacts (money extra). */
  surpluses?: { total: string; inPeriod: string; carriedOver: string };
  /** Open breaks that move money without a USD figure (no rate, no amount recorded). */
  noFigure?: { total: number; inPeriod: number; carriedOver: number };
  /** Open breaks that move no money (ages, states, coverage, quarantine). */
  noMoney?: { total: number; inPeriod: number; carriedOver: number };
}

/** The money at stake and the closing balances in USD, as the account's Summary shows them. */
export interface DigestFigures {
  moneyAtStake: MoneyAtStakeFigures;
  /** The closing balances' USD total (all currencies with a rate); null without a balance snapshot. */
  closingUsd: string | null;
  /** Currencies with a closing balance and no USD rate, left out of closingUsd. */
  closingUnvalued: string[];
}

export type BreakRef = Pick<Break, 'code' | 'key' | 'severity' | 'message'>;

export interface Changes {
  previous: { id: string; startedAt: Date; status: string } | null;
  /** first_seen_run is this run */
  opened: BreakRef[];
  /** reopened in this run (open again after a resolution) */
  reopened: BreakRef[];
  /** resolved_run is this run */
  resolved: BreakRef[];
  /** open and first seen before this run */
  stillOpen: number;
}
