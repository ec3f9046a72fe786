import type { Decimal } from '../decimal/decimal.js';

/**
 * Domain records the rules work on. They are plain data, built by the I/O layer
 * (src/reconcile) from the store and by test factories; amounts are always Decimal.
 */

export type Severity = 'high' | 'medium' | 'low';

export interface PartnerOrder {
  orderId: string;
  orderType: string; // BUY | SELL
  createdAt: Date;
  /** Wire text, kept for nanosecond comparisons. */
  createdAtText: string;
  orderState: string; // PENDING | WITHDRAWING | COMPLETED | FAILED
  orderStateUpdatedAt: Date;
  orderStateUpdatedAtText: string;
  inputCurrency: string;
  inputAmount: Decimal;
  outputCurrency: string;
  outputAmount: Decimal | null;
  amountUsd: Decimal | null;
  processingFee: Decimal | null;
  processingFeeUsd: Decimal | null;
  partnerFee: Decimal | null;
  partnerFeeUsd: Decimal | null;
  networkFee: Decimal | null;
  networkFeeUsd: Decimal | null;
  targetWalletAddress: string | null;
  transactionHash: string | null;
  /** The refresh by id answered 404. */
  notFound: boolean;
}

export interface PartnerCurrency {
  code: string;
  type: string; // FIAT | CRYPTO
  precision: number;
  minBuyAmount: Decimal | null;
  maxBuyAmount: Decimal | null;
}

export interface WebhookEventLite {
  orderState: string;
  orderStateUpdatedAtText: string;
}

/** An exchange order with the set-based sums of *all* its stored fills. */
export interface ExchangeOrderAgg {
  exOrdId: string;
  /** false: no stored exchange order with this id (an orphan; E_FILL_ORPHAN reports it). */
  found: boolean;
  symbol: string | null;
  side: string | null;
  cumQty: Decimal | null;
  leavesQty: Decimal | null;
  avgPx: Decimal | null;
  fillCount: number;
  fillQty: Decimal;
  /** sum(qty x price) */
  fillNotional: Decimal;
}

export interface Fill {
  execId: string;
  exOrdId: string;
  side: string;
  symbol: string;
  price: Decimal;
  qty: Decimal;
  fee: Decimal;
  timestamp: Date;
  /** The fill's order is stored (false: orphan). */
  orderFound: boolean;
  /** GET /orders/{id} answered 404 for its order. */
  orderNotFound: boolean;
}

export interface Deposit {
  depositId: string;
  amount: Decimal;
  currency: string;
  address: string;
  txHash: string | null;
  state: string;
  timestamp: Date | null;
  firstSeenAt: Date;
}

export interface Withdrawal {
  withdrawalId: string;
  amount: Decimal;
  fee: Decimal | null;
  currency: string;
  beneficiary: string;
  state: string | null;
  timestamp: Date | null;
  firstSeenAt: Date;
}

export interface BalanceLine {
  currency: string;
  balance: Decimal;
  available: Decimal;
  balanceLocal: Decimal;
  rate: Decimal;
}

export interface BalanceSnapshot {
  id: string;
  fetchedAt: Date;
  balances: BalanceLine[];
}

/** One fees snapshot: the rates in force from fetchedAt. */
export interface FeeRates {
  fetchedAt: Date;
  makerRate: Decimal;
  takerRate: Decimal;
}
export type FeeSchedule = FeeRates[];

export interface SymbolRules {
  symbol: string;
  baseCurrency: string | null;
  baseScale: number | null;
  counterCurrency: string | null;
  counterScale: number | null;
  priceIncrement: Decimal | null;
  lotSize: Decimal | null;
  minOrderSize: Decimal | null;
  /** 0 or null: no limit. */
  maxOrderSize: Decimal | null;
}

export interface CoverageRow {
  source: string;
  stream: string;
  day: string;
  settled: boolean;
  pages: number;
  rows: number;
  detail: unknown;
}

export interface QuarantinedRecord {
  id: string;
  source: string;
  endpoint: string;
  entity: string | null;
  recordKey: string | null;
  position: number | null;
  reason: string;
  firstSeenAt: Date;
}

/** A break as a rule reports it; amounts are decimal strings. */
export interface DetectedBreak {
  code: string;
  key: string;
  severity: Severity;
  currency: string | null;
  expected: string | null;
  actual: string | null;
  difference: string | null;
  message: string;
  detail?: unknown;
}

/** One failed check of a rule on one entity. */
export interface Failure {
  check: string;
  expected: string | null;
  actual: string | null;
  difference: string | null;
  currency?: string | null;
  note?: string;
}
