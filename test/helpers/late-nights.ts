/**
 * The small world of the multi-night tests (late data, period close, kill inside close): its sandbox's volumes, and
 * its truth at a time: the planted and late breaks due by then.
 */
import type { ExpectedBreak, Sandbox } from './sandbox.js';

/** Four days of a small account, seed 23: its late events land on records of each kind. */
export const LATE_NIGHTS_SANDBOX = {
  seed: 23,
  days: 4,
  ordersPerDay: 20,
  exchangeOrdersPerDay: 16,
  fillsPerOrder: 2,
  depositsPerDay: 3,
  withdrawalsPerDay: 2,
};

/** A break as the tests compare them: code and key. */
export const breakKey = (b: { code: string; key: string }): string => `${b.code} ${b.key}`;

/**
 * The sandbox's truth at `now`: its planted and late breaks due by then, without the webhook gap (no receiver is
 * configured), and the balance roll-forward only once two snapshots exist.
 */
export function truthAt(sandbox: Sandbox, now: number, snapshots: number): string[] {
  return sandbox
    .expectedBreaks()
    .filter(
      (b: ExpectedBreak) =>
        b.requires !== 'webhooks' &&
        (!b.dueAt || Date.parse(b.dueAt) <= now) &&
        (b.code !== 'E_BALANCE_ROLL' || snapshots >= 2),
    )
    .map(breakKey)
    .sort();
}
