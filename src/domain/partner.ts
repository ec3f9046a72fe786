/** Partner records the rules and the report work on: the partner order and the state of a webhook event. */
import type { Decimal } from '../decimal/decimal.js';

/** A partner (on/off-ramp) order as stored; amounts are Decimal, wire timestamps kept as text too. */
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

/** The state a webhook event announced for an order, and when (wire text). */
export interface WebhookEventLite {
  orderState: string;
  orderStateUpdatedAtText: string;
}
