import type { Decimal } from '../decimal/decimal.js';
import type { RunRequests } from '../http/meter.js';
import type { PartnerOrder } from '../rules/types.js';

/** Plain data the report is built from; loaders fill these from the store, tests build them by hand. */

export type Severity = 'high' | 'medium' | 'low';
export type RuleStatus = 'passed' | 'breaks' | 'not_checked';

export interface RuleResult {
  code: string;
  severity: string;
  description: string;
  status: RuleStatus | string;
  checked: number | null;
  breaks: number | null;
  reason?: string;
}

export interface StageInfo {
  status?: string;
  ms?: number;
  error?: string;
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
}

export interface BreakInfo {
  code: string;
  key: string;
  severity: string;
  currency: string | null;
  expected: string | null;
  actual: string | null;
  difference: string | null;
  message: string | null;
  detail: unknown;
  status: string;
  firstSeenRun: string;
  firstSeenAt: Date;
  lastSeenRun: string;
  lastSeenAt: Date;
  resolvedRun: string | null;
  resolvedAt: Date | null;
  reopenedCount: number;
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

export interface OrderVsFillsRec {
  exOrdId: string;
  found: boolean;
  symbol: string | null;
  side: string | null;
  ordType: string | null;
  status: string | null;
  cumQty: Decimal | null;
  leavesQty: Decimal | null;
  avgPx: Decimal | null;
  fills: number;
  fillQty: Decimal;
  notional: Decimal;
  fees: Decimal;
  firstFill: Date | null;
  lastFill: Date | null;
}

export interface FillRec {
  execId: string;
  exOrdId: string;
  tradeId: string | null;
  side: string;
  symbol: string;
  price: Decimal;
  qty: Decimal;
  fee: Decimal;
  timestamp: Date;
}

export interface DepositRec {
  depositId: string;
  amount: Decimal;
  currency: string;
  address: string;
  txHash: string | null;
  state: string;
  timestamp: Date | null;
}

export interface WithdrawalRec {
  withdrawalId: string;
  amount: Decimal;
  fee: Decimal | null;
  currency: string;
  beneficiary: string;
  state: string | null;
  timestamp: Date | null;
}

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
  firstDivergentDay: string | null;
  openingAt: Date | null;
  closingAt: Date | null;
}

/** A currency of the latest balance snapshot. */
export interface BalanceRec {
  currency: string;
  balance: Decimal;
  available: Decimal;
  balanceLocal: Decimal;
  rate: Decimal;
  fetchedAt: Date;
}

export interface CoverageRec {
  source: string;
  stream: string;
  day: string;
  pages: number;
  rows: number;
  quarantined: number;
  settled: boolean;
  runId: string | null;
}

export interface Totals {
  partner: Array<{ currency: string; orders: number; volume: Decimal; fees: Decimal; amountUsd: Decimal; feesUsd: Decimal }>;
  fills: Array<{ symbol: string; fills: number; qty: Decimal; notional: Decimal; fees: Decimal }>;
  deposits: Array<{ currency: string; count: number; amount: Decimal }>;
  withdrawals: Array<{ currency: string; count: number; amount: Decimal; fee: Decimal }>;
}

export interface BreakRef {
  code: string;
  key: string;
  severity: string;
  message: string | null;
}

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
}
