/** Exchange deposit and withdrawal rules: stale records (E_STALE) and beneficiaries off the whitelist
 * (E_WITHDRAWAL_BENEFICIARY).
 */
import { Decimal } from '../decimal/decimal.js';
import type { Verdict } from './types.js';
import type { Deposit, Withdrawal } from '../domain/index.js';
import { HOUR_MS, hoursOf } from './util.js';

/** A record without an exchange timestamp ages from when we first saw it. */
function ageMs(now: Date, timestamp: Date | null, firstSeenAt: Date): number {
  return now.getTime() - (timestamp ?? firstSeenAt).getTime();
}

export function checkDepositStale(d: Deposit, now: Date, staleAfterHours: number): Verdict {
  return d.state === 'UNCONFIRMED' ? stale('deposit', d.state, d, now, staleAfterHours) : 'n/a';
}

export function checkWithdrawalStale(w: Withdrawal, now: Date, staleAfterHours: number): Verdict {
  return w.state === 'PENDING' ? stale('withdrawal', w.state, w, now, staleAfterHours) : 'n/a';
}

/** A deposit or withdrawal in its waiting state for longer than staleAfterHours: one failure, its age in hours. */
function stale(
  kind: 'deposit' | 'withdrawal',
  state: string,
  r: Deposit | Withdrawal,
  now: Date,
  staleAfterHours: number,
): Verdict {
  const age = ageMs(now, r.timestamp, r.firstSeenAt);
  const limit = staleAfterHours * HOUR_MS;
  if (age <= limit) return [];
  return [
    {
      check: `${kind} ${state} for more than ${staleAfterHours}h`,
      expected: new Decimal(staleAfterHours),
      actual: hoursOf(age),
      difference: hoursOf(age - limit),
      currency: r.currency,
      // E_STALE's records are deposits: a withdrawal names its kind
      ...(kind === 'withdrawal' && { entity: kind }),
      note: 'age in hours',
      facts: { state },
    },
  ];
}

/** States in which nothing left the account: a withdrawal refused, failed or sent back. */
const NOTHING_LEFT = new Set(['REJECTED', 'FAILED', 'REFUNDED']);

export function checkBeneficiary(w: Withdrawal, whitelist: ReadonlySet<string>): Verdict {
  if (whitelist.has(w.beneficiary)) return [];
  // What left the account to an unknown address: the amount and its fee.
  const gone = w.state !== null && NOTHING_LEFT.has(w.state) ? new Decimal(0) : w.amount.plus(w.fee ?? 0).neg();
  return [
    {
      check: `beneficiary ${w.beneficiary} not on the whitelist snapshot`,
      expected: 'whitelisted beneficiary',
      actual: w.beneficiary,
      difference: null,
      currency: w.currency,
      stake: { value: gone, currency: w.currency },
    },
  ];
}
