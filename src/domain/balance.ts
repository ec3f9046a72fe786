/** The roll-forward's data: daily flows between two balance snapshots, each pair's figures, and a payment's state history. */
import type { Decimal } from '../decimal/decimal.js';

/**
 * Flows of one currency on one UTC day between two snapshots, all positive amounts:
 * bought = what fills added to the currency (base of a BUY, counter of a SELL),
 * sold = what fills took from it, fees = fill fees charged in it,
 * withdrawals = amount + fee debited by withdrawals less what was credited back;
 * depositsByState / withdrawalsByState = the part of deposits / withdrawals placed by an observed
 * state change, not by the record's timestamp (balance-placement.ts).
 */
export interface DayFlows {
  currency: string;
  day: string;
  deposits: Decimal;
  withdrawals: Decimal;
  bought: Decimal;
  sold: Decimal;
  fees: Decimal;
  depositsByState?: Decimal;
  withdrawalsByState?: Decimal;
}

/** A fill stamped inside a balance snapshot's window (between its request and its answer): its moves as flows. */
export interface EdgeFill {
  execId: string;
  moves: readonly DayFlows[];
}

export interface DerivedDay {
  day: string;
  net: string;
  /** End-of-day balance derived backwards from the closing snapshot. */
  derivedClosing: string;
}

/** One row of the balance_roll table: the roll-forward of one currency over one snapshot pair. */
export interface RollFigures {
  currency: string;
  openingSnapshotId: string;
  closingSnapshotId: string;
  openingAt: Date;
  closingAt: Date;
  opening: Decimal;
  deposits: Decimal;
  withdrawals: Decimal;
  bought: Decimal;
  sold: Decimal;
  fees: Decimal;
  /** Parts of deposits / withdrawals placed by an observed state change (the rest by timestamp). */
  depositsByState: Decimal;
  withdrawalsByState: Decimal;
  expectedClosing: Decimal;
  actualClosing: Decimal;
  residual: Decimal;
  firstDivergentDay: string | null;
  days: DerivedDay[];
}

/** One deposit or withdrawal with the first observation of each state it has shown (exchange_*_state). */
export interface PaymentHistory {
  kind: 'deposit' | 'withdrawal';
  id: string;
  currency: string;
  /** What the balance moves by: a deposit's amount; a withdrawal's amount + fee. */
  amount: Decimal;
  /** The record's creation time on the exchange (may be missing on the wire). */
  timestamp: Date | null;
  /** The record's current state: among states first observed at the same instant, it is the latest. */
  current: string | null;
  /** Each state's first observation, in any order. */
  states: ReadonlyArray<{ state: string; observedAt: Date }>;
}
