/** Where each deposit and withdrawal moves the balance: its state history placed into the pairs of balance snapshots
 * (E_BALANCE_ROLL).
 */
import { ZERO, type Decimal } from '../decimal/decimal.js';
import type { DayFlows, PaymentHistory } from '../domain/index.js';

export type { PaymentHistory } from '../domain/index.js';

/** One balance movement of a payment: signed (credit > 0), placed at `at`, and how it was placed. */
export interface PaymentMove {
  kind: 'deposit' | 'withdrawal';
  id: string;
  currency: string;
  delta: Decimal;
  at: Date;
  placedBy: 'timestamp' | 'state';
}

/** Non-final states first among states observed at the same instant. */
const NON_FINAL = new Set(['UNCONFIRMED', 'PENDING']);

/**
 * The balance movements of one payment (docs/apis.md "Balance flows"). A state's effect: a deposit
 * COMPLETED credits `amount`; a withdrawal in a debit state debits `amount` (amount + fee). The
 * first observed state's effect is placed at the record's timestamp (its creation: a record first
 * seen already final is placed by its timestamp; a withdrawal first seen PENDING was debited when
 * created), or at that first observation when it has no timestamp. Each later state moves the
 * balance by the difference of the effects, placed where that state was first observed (never before
 * the record's timestamp): a deposit
 * UNCONFIRMED then COMPLETED is credited there, a withdrawal PENDING then REFUNDED (FAILED,
 * REJECTED: any state outside the debit states) is credited back there. The moves of a payment
 * always add up to its current state's effect.
 */
export function paymentMoves(p: PaymentHistory, withdrawalDebitStates: readonly string[]): PaymentMove[] {
  if (p.states.length === 0) return [];
  const debit = new Set(withdrawalDebitStates);
  const effect = (state: string): Decimal =>
    p.kind === 'deposit' ? (state === 'COMPLETED' ? p.amount : ZERO) : debit.has(state) ? p.amount.negated() : ZERO;
  const rank = (state: string) => (state === p.current ? 2 : NON_FINAL.has(state) ? 0 : 1);
  const history = [...p.states].sort(
    (a, b) => a.observedAt.getTime() - b.observedAt.getTime() || rank(a.state) - rank(b.state),
  );
  const moves: PaymentMove[] = [];
  const first = history[0]!;
  let before = effect(first.state);
  if (!before.isZero())
    moves.push({
      kind: p.kind,
      id: p.id,
      currency: p.currency,
      delta: before,
      at: p.timestamp ?? first.observedAt,
      placedBy: 'timestamp',
    });
  for (const step of history.slice(1)) {
    const now = effect(step.state);
    const delta = now.minus(before);
    // A state cannot change before the record exists: observed_at is the observing sync's start, so a
    // record created during that sync can carry a later state stamped before its own timestamp.
    const at = p.timestamp && p.timestamp > step.observedAt ? p.timestamp : step.observedAt;
    if (!delta.isZero()) moves.push({ kind: p.kind, id: p.id, currency: p.currency, delta, at, placedBy: 'state' });
    before = now;
  }
  return moves;
}

/**
 * The index of the pair (bounds[i], bounds[i + 1]] holding `at`, or -1 outside them. bounds are
 * the snapshots' fetch times, ascending.
 */
export function pairOf(bounds: readonly Date[], at: Date): number {
  const t = at.getTime();
  let lo = 0;
  let hi = bounds.length - 1;
  if (hi < 1 || t <= bounds[0]!.getTime() || t > bounds[hi]!.getTime()) return -1;
  // the last i with bounds[i] < t
  while (hi - lo > 1) {
    const mid = (lo + hi) >>> 1;
    if (bounds[mid]!.getTime() < t) lo = mid;
    else hi = mid;
  }
  return lo;
}

/**
 * The deposits and withdrawals of each pair of consecutive snapshots as daily flows (index i: the
 * pair bounds[i], bounds[i + 1]), each movement in the pair that holds its time. `withdrawals` is
 * what was debited less what was credited back; `depositsByState` / `withdrawalsByState` are the
 * parts placed by an observed state change (the rest by timestamp).
 */
export function placePayments(
  bounds: readonly Date[],
  payments: readonly PaymentHistory[],
  withdrawalDebitStates: readonly string[],
): DayFlows[][] {
  const pairs: Map<string, Required<DayFlows>>[] = bounds.slice(1).map(() => new Map());
  for (const p of payments) {
    for (const m of paymentMoves(p, withdrawalDebitStates)) {
      const i = pairOf(bounds, m.at);
      if (i < 0) continue;
      const day = m.at.toISOString().slice(0, 10);
      const key = `${m.currency}\u0000${day}`;
      let f = pairs[i]!.get(key);
      if (!f) pairs[i]!.set(key, (f = emptyFlows(m.currency, day)));
      if (m.kind === 'deposit') {
        f.deposits = f.deposits.plus(m.delta);
        if (m.placedBy === 'state') f.depositsByState = f.depositsByState.plus(m.delta);
      } else {
        f.withdrawals = f.withdrawals.minus(m.delta);
        if (m.placedBy === 'state') f.withdrawalsByState = f.withdrawalsByState.minus(m.delta);
      }
    }
  }
  return pairs.map((m) =>
    [...m.values()].sort((a, b) =>
      a.currency === b.currency ? (a.day < b.day ? -1 : 1) : a.currency < b.currency ? -1 : 1,
    ),
  );
}

export function emptyFlows(currency: string, day: string): Required<DayFlows> {
  return {
    currency,
    day,
    deposits: ZERO,
    withdrawals: ZERO,
    bought: ZERO,
    sold: ZERO,
    fees: ZERO,
    depositsByState: ZERO,
    withdrawalsByState: ZERO,
  };
}
