/** Simulator: the canonical records of the simulated world. */
/**
 * Canonical records of the simulated world. Decimals are canonical decimal strings (the wire
 * layer decides how each one is written), ids are strings, exchange times are epoch ms.
 * These are also what `sandbox.data` hands to tests, so they can compare digit for digit.
 */

export type PartnerOrderState = 'PENDING' | 'WITHDRAWING' | 'COMPLETED' | 'FAILED';

/** One state of a partner order's life; `at` is the wire text (ms or ns fraction), `atMs` its floor in ms. */
export interface StateStep<S extends string> {
  state: S;
  at: string;
  atMs: number;
}

export interface PartnerOrderRecord {
  orderId: string;
  externalReference: string;
  subPartnerId?: string;
  orderType: 'BUY' | 'SELL';
  paymentMethod: 'CARD' | 'APPLE_PAY' | 'GOOGLE_PAY';
  inputCurrency: string;
  inputAmount: string;
  outputCurrency: string;
  outputAmount: string;
  amountUsd?: string;
  processingFee: string;
  processingFeeUsd: string;
  partnerFee: string;
  partnerFeeUsd: string;
  networkFee: string;
  networkFeeUsd: string;
  userId: string;
  userCountry: string;
  userState?: string;
  targetWalletAddress: string;
  /** The hash the order carries once COMPLETED. */
  txHash: string;
  /** Planted P_STATE: a hash shown although the order is not COMPLETED. */
  hashWhileNotCompleted?: boolean;
  createdAt: string;
  createdAtMs: number;
  /** States in time order; the order's state at time t is the last step with atMs <= t. */
  timeline: StateStep<PartnerOrderState>[];
  /** Webhook states never delivered (planted P_WEBHOOK_GAP). */
  undeliveredStates?: PartnerOrderState[];
  /** Whether the deposit for this order goes to one of our exchange addresses. */
  paidToUs: boolean;
}

/** A partner order as polled at some moment: what GET /orders returns. */
export interface PartnerOrderView {
  orderId: string;
  externalReference: string;
  subPartnerId?: string;
  orderType: 'BUY' | 'SELL';
  createdAt: string;
  orderState: PartnerOrderState;
  orderStateUpdatedAt: string;
  paymentMethod: string;
  inputCurrency: string;
  inputAmount: string;
  outputCurrency: string;
  outputAmount: string;
  amountUsd?: string;
  processingFee: string;
  processingFeeUsd: string;
  partnerFee: string;
  partnerFeeUsd: string;
  networkFee: string;
  networkFeeUsd: string;
  userId: string;
  targetWalletAddress: string;
  transactionHash?: string;
}

export type OrdStatus = 'OPEN' | 'REJECTED' | 'CANCELED' | 'FILLED' | 'PART_FILLED' | 'EXPIRED' | 'PENDING';

export interface ExchangeOrderRecord {
  exOrdId: string;
  clOrdId: string;
  ordType: 'MARKET' | 'LIMIT';
  ordStatus: OrdStatus;
  side: 'BUY' | 'SELL';
  price?: string;
  text?: string;
  symbol: string;
  lastShares?: string;
  lastPx?: string;
  leavesQty: string;
  cumQty: string;
  avgPx?: string;
  timestamp: number;
  /** Planted E_FILL_ORPHAN: the order exists for nobody (404, absent from lists). */
  hidden?: boolean;
}

export interface FillRecord {
  exOrdId: string;
  tradeId: string;
  execId: string;
  side: 'BUY' | 'SELL';
  symbol: string;
  price: string;
  qty: string;
  fee: string;
  timestamp: number;
}

export type DepositState = 'REJECTED' | 'UNCONFIRMED' | 'COMPLETED';

export interface DepositRecord {
  depositId: string;
  amount: string;
  currency: string;
  address: string;
  txHash?: string;
  timestamp: number;
  /** State steps by epoch ms; a COMPLETED deposit is COMPLETED from its timestamp on. */
  timeline: Array<{ state: DepositState; atMs: number }>;
  /** Planted E_BALANCE_ROLL: credited to the balance but not listed until fixed. */
  hidden?: boolean;
  /** Late event `list-deposit`: credited as its timeline says, but not listed (nor found by id) until released. */
  unlisted?: boolean;
  /** Already counted in the running balance when it was inserted (never count it again). */
  preCredited?: boolean;
  /** Fault profile: this record is served malformed. */
  malformed?: boolean;
}

export type WithdrawalState = 'REJECTED' | 'PENDING' | 'REFUNDED' | 'FAILED' | 'COMPLETED';

export interface WithdrawalRecord {
  withdrawalId: string;
  amount: string;
  fee: string;
  currency: string;
  beneficiary: string;
  timestamp: number;
  timeline: Array<{ state: WithdrawalState; atMs: number }>;
}

export interface DepositView {
  depositId: string;
  amount: string;
  currency: string;
  address: string;
  txHash?: string;
  state: DepositState;
  timestamp: number;
}

export interface WithdrawalView {
  withdrawalId: string;
  amount: string;
  fee: string;
  currency: string;
  beneficiary: string;
  state: WithdrawalState;
  timestamp: number;
}

export interface WhitelistEntry {
  whitelistId: string;
  name: string;
  currency: string;
}

export interface BalanceView {
  currency: string;
  balance: string;
  available: string;
  balance_local: string;
  available_local: string;
  rate: string;
}

export interface ExpectedBreak {
  code: string;
  key: string;
  requires?: 'webhooks';
  /** The real-world case a planted break stands for, when a code is planted more than once (e.g. `market-fill-at-maker-rate`). */
  case?: string;
  /** The break exists only from this time on (ISO; a webhook gap whose retry window has not passed yet). */
  dueAt?: string;
}

/** A webhook event: the order shape at one state change plus the event-only fields. */
export interface OrderEvent extends PartnerOrderView {
  eventId: string;
  userCountry: string;
  userState?: string;
}
