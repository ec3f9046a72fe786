/** The report's plain data (the run, its breaks, the period's records as the sheets show them): loaders fill it from
 * the store, tests by hand.
 */
import type { Decimal } from '../decimal/decimal.js';
import type {
  Break,
  CoverageRow,
  OpenBreakCounts,
  Deposit,
  ExchangeOrderAgg,
  Fill,
  LateBreak,
  LateCounts,
  PartnerOrder,
  BalanceLine,
  Withdrawal,
} from '../domain/index.js';
import type { RunRequests } from '../http/meter.js';
import type { RuleResult as WrittenRuleResult, RuleStatus } from '../rules/tally.js';

/**
 * A rule's result as the report reads it back from run.rule_results: the tally's shape (what a
 * run writes), with any status text and the figures null for runs written by older versions.
 */
export interface RuleResult extends Omit<WrittenRuleResult, 'status' | 'checked' | 'breaks' | 'skipped'> {
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
  ruleResults: RuleResult[];
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
  /** |difference| in USD, decimal text; null when not money or no rate. */
  usdImpact: string | null;
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
  attachmentName: string;
  headline: { tone: 'ok' | 'explained' | 'bad'; text: string; detail: string; status: string };
  topBreaks: DigestBreak[];
  /** What late data changed about earlier days (absent in digests written before it was reported). */
  late?: LateCounts & { breaks: LateBreak[] };
  writtenAt: string;
}

/** One day's fees: what partner orders earned (partner fee) and what fills paid the exchange, per currency. */
export interface FeeDayRec {
  day: string;
  currency: string;
  partnerFee: Decimal | null;
  partnerFeeUsd: Decimal | null;
  exchangeFee: Decimal | null;
}

/** A partner order as the rules see it, plus the columns only the report shows. */
export type PartnerOrderRec = PartnerOrder & {
  paymentMethod: string | null;
  externalReference: string | null;
};

export interface PartnerDailyRec {
  day: string;
  currency: string;
  orders: number;
  completed: number;
  pending: number;
  withdrawing: number;
  failed: number;
  volume: Decimal;
  processingFee: Decimal;
  partnerFee: Decimal;
  networkFee: Decimal;
  amountUsd: Decimal;
  feesUsd: Decimal;
}

/** An exchange order with a fill in the period, against all its stored fills. */
export type OrderVsFillsRec = Pick<
  ExchangeOrderAgg,
  'exOrdId' | 'found' | 'symbol' | 'side' | 'cumQty' | 'leavesQty' | 'avgPx' | 'fillQty'
> & {
  ordType: string | null;
  status: string | null;
  fills: number;
  notional: Decimal;
  fees: Decimal;
  firstFill: Date | null;
  lastFill: Date | null;
};

/** A fill as the sheet lists it: the stored fill with its trade id, without the rules' order lookups. */
export type FillRec = Omit<Fill, 'orderFound' | 'orderNotFound' | 'ordType'> & { tradeId: string | null };

export type DepositRec = Omit<Deposit, 'firstSeenAt'>;

export type WithdrawalRec = Omit<Withdrawal, 'firstSeenAt'>;

/** One row of the reconciliation engineer's balance_roll table (sql/0004_recon.sql). */
export interface BalanceRollRec {
  currency: string;
  opening: Decimal | null;
  deposits: Decimal | null;
  withdrawals: Decimal | null;
  bought: Decimal | null;
  sold: Decimal | null;
  fees: Decimal | null;
  expectedClosing: Decimal | null;
  actualClosing: Decimal | null;
  residual: Decimal | null;
  /** Parts of deposits / withdrawals placed by an observed state change (null: figures older than that split). */
  depositsByState?: Decimal | null;
  withdrawalsByState?: Decimal | null;
  firstDivergentDay: string | null;
  openingAt: Date | null;
  closingAt: Date | null;
}

/** A currency of the latest balance snapshot. */
export type BalanceRec = BalanceLine & { fetchedAt: Date };

/** A stream's day of coverage, with its quarantined records and the run that synced it. */
export type CoverageRec = Omit<CoverageRow, 'detail'> & { quarantined: number; runId: string | null };

export interface Totals {
  partner: Array<{
    currency: string;
    orders: number;
    volume: Decimal;
    fees: Decimal;
    amountUsd: Decimal;
    feesUsd: Decimal;
  }>;
  fills: Array<{ symbol: string; fills: number; qty: Decimal; notional: Decimal; fees: Decimal }>;
  deposits: Array<{ currency: string; count: number; amount: Decimal }>;
  withdrawals: Array<{ currency: string; count: number; amount: Decimal; fee: Decimal }>;
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

/** Webhook events received in the period; drift = events with fields beyond the contract. */
export interface WebhookStats {
  events: number;
  duplicates: number;
  drifted: number;
  driftFields: string[];
  /** Repeated eventIds whose body differed from the stored event's (webhook_event_conflict), first seen in the span. */
  conflicts: number;
}
