/** Exchange deposit and withdrawal rules: stale records (E_STALE) and beneficiaries off the whitelist
 * (E_WITHDRAWAL_BENEFICIARY).
 */
import { Decimal } from '../decimal/decimal.js';
import type { Verdict } from './tally.js';
import type { Deposit, Withdrawal } from '../domain/index.js';
import { HOUR_MS, hoursOf } from './util.js';

/** A record without an exchange timestamp ages from when we first saw it. */
function ageMs(now: Date, timestamp: Date | null, firstSeenAt: Date): number {
  return now.getTime() - (timestamp ?? firstSeenAt).getTime();
}

export function checkDepositStale(d: Deposit, now: Date, staleAfterHours: number): Verdict {
  if (d.state !== 'UNCONFIRMED') return 'n/a';
  const age = ageMs(now, d.timestamp, d.firstSeenAt);
  const limit = staleAfterHours * HOUR_MS;
  if (age <= limit) return [];
  return [
    {
      check: `deposit UNCONFIRMED for more than ${staleAfterHours}h`,
      expected: new Decimal(staleAfterHours),
      actual: hoursOf(age),
      difference: hoursOf(age - limit),
      currency: d.currency,
      note: 'age in hours',
      facts: { state: d.state },
    },
  ];
}

export function checkWithdrawalStale(w: Withdrawal, now: Date, staleAfterHours: number): Verdict {
  if (w.state !== 'PENDING') return 'n/a';
  const age = ageMs(now, w.timestamp, w.firstSeenAt);
  const limit = staleAfterHours * HOUR_MS;
  if (age <= limit) return [];
  return [
    {
      check: `withdrawal PENDING for more than ${staleAfterHours}h`,
      expected: new Decimal(staleAfterHours),
      actual: hoursOf(age),
      difference: hoursOf(age - limit),
      currency: w.currency,
      entity: 'withdrawal',
      note: 'age in hours',
      facts: { state: w.state },
    },
  ];
}

export function checkBeneficiary(w: Withdrawal, whitelist: ReadonlySet<string>): Verdict {
  if (whitelist.has(w.beneficiary)) return [];
  return [
    {
      check: `beneficiary ${w.beneficiary} not on the whitelist snapshot`,
      expected: 'whitelisted beneficiary',
      actual: w.beneficiary,
      difference: null,
      currency: w.currency,
    },
  ];
}
