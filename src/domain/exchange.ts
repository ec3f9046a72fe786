/** Exchange records the rules and the report work on: order (with its fills' sums), fill, deposit, withdrawal, balance
 * snapshot.
 */
import type { Decimal } from '../decimal/decimal.js';

/** An exchange order with the set-based sums of *all* its stored fills. */
export interface ExchangeOrderAgg {
  exOrdId: string;
  /** false: no stored exchange order with this id (an orphan; E_FILL_ORPHAN reports it). */
  found: boolean;
  symbol: string | null;
  side: string | null;
  /** ordStatus as the exchange reports it (OPEN, FILLED, REJECTED...); null for an order not stored. */
  ordStatus: string | null;
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
  /** Its order's ordType (MARKET, LIMIT, STOP, STOPLIMIT); null when the order is not stored or has none. */
  ordType: string | null;
  /** Its order's side and symbol, as the order reports them; null when the order is not stored or has none. */
  orderSide: string | null;
  orderSymbol: string | null;
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

/** One currency of a balance snapshot. */
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
