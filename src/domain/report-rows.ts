/** The period's records and figures as the workbook's sheets show them, read by the store. */
import type { Decimal } from '../decimal/decimal.js';
import type { BalanceLine, Deposit, ExchangeOrderAgg, Fill, Withdrawal } from './exchange.js';
import type { PartnerOrder } from './partner.js';
import type { CoverageRow } from './sync.js';

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

/** A UTC day's fills of one symbol: quantity in the base currency, notional (qty x price) and fees summed exactly. */
export interface ExchangeDailyFillRec {
  day: string;
  symbol: string;
  fills: number;
  qty: Decimal;
  notional: Decimal;
  fees: Decimal;
}

/** A UTC day's deposits of one currency: all of them counted, only the COMPLETED ones (credited) counted and summed. */
export interface ExchangeDailyDepositRec {
  day: string;
  currency: string;
  count: number;
  completed: number;
  amount: Decimal;
}

/** A UTC day's withdrawals of one currency: all counted, those in a debit state counted and summed with their fees. */
export interface ExchangeDailyWithdrawalRec {
  day: string;
  currency: string;
  count: number;
  debited: number;
  amount: Decimal;
  fee: Decimal;
}

/** The period's exchange movements per UTC day (the Exchange daily sheet), each by day then symbol or currency. */
export interface ExchangeDailyAgg {
  fills: ExchangeDailyFillRec[];
  deposits: ExchangeDailyDepositRec[];
  withdrawals: ExchangeDailyWithdrawalRec[];
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
export type FillRec = Omit<Fill, 'orderFound' | 'orderNotFound' | 'ordType' | 'orderSide' | 'orderSymbol'> & {
  tradeId: string | null;
};

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

/** Webhook events received in the period; drift = events with fields beyond the contract. */
export interface WebhookStats {
  events: number;
  duplicates: number;
  drifted: number;
  driftFields: string[];
  /** Repeated eventIds whose body differed from the stored event's (webhook_event_conflict), first seen in the span. */
  conflicts: number;
}
