/** The deposit and withdrawal rules: records stuck in a state, withdrawals to beneficiaries off the whitelist. */
import { defineRule, LIMIT_ONLY, noMoney } from '../define.js';
import { needs } from '../inputs.js';
import { checkBeneficiary, checkDepositStale, checkWithdrawalStale } from '../payment-rules.js';
import { staleSentence } from '../sentences.js';

export const E_STALE = defineRule({
  code: 'E_STALE',
  family: 'payment',
  title: 'Deposit or withdrawal stuck',
  severity: 'low',
  description: 'Deposit UNCONFIRMED or withdrawal PENDING longer than the configured age',
  scope: 'every stored deposit UNCONFIRMED / withdrawal PENDING',
  reach: 'everything',
  entity: 'deposit',
  unit: 'hours',
  holds: LIMIT_ONLY,
  sentence: staleSentence,
  stake: noMoney('an age (the deposit or withdrawal is late; its amount is not in doubt)'),
  check: {
    openDeposit: (d, x) => ({
      verdict: checkDepositStale(d, x.cfg.now, x.cfg.staleAfterHours.deposit),
      currency: d.currency,
    }),
    openWithdrawal: (w, x) => ({
      verdict: checkWithdrawalStale(w, x.cfg.now, x.cfg.staleAfterHours.withdrawal),
      currency: w.currency,
    }),
  },
});

export const E_WITHDRAWAL_BENEFICIARY = defineRule({
  code: 'E_WITHDRAWAL_BENEFICIARY',
  family: 'payment',
  title: 'Withdrawal to a beneficiary not whitelisted',
  severity: 'high',
  description: 'Withdrawal to a beneficiary not on the whitelist snapshot',
  scope: 'withdrawals in the period',
  entity: 'withdrawal',
  unit: 'text',
  stake: {
    basis: 'recorded',
    how:
      'minus (amount + fee) in its currency: gone to an address not on the whitelist; 0 when the withdrawal was ' +
      'REJECTED, FAILED or REFUNDED (nothing left the account)',
  },
  requires: [needs.whitelist],
  check: { withdrawal: (w, x) => ({ verdict: checkBeneficiary(w, x.ref.whitelist!), currency: w.currency }) },
});
