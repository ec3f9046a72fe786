/** The cross-system rules: a partner order paid to us against the exchange deposit that settles it (X_*). */
import { checkDepositAmount, checkDepositMissing } from '../cross-rules.js';
import { defineRule } from '../define.js';
import { depositMissingSentence } from '../sentences.js';
import { PERIOD_ORDERS } from './partner.js';

export const X_DEPOSIT_MISSING = defineRule({
  code: 'X_DEPOSIT_MISSING',
  family: 'cross',
  title: 'Exchange deposit missing for a paid order',
  severity: 'high',
  description:
    'COMPLETED BUY order paid to our deposit address has no non-REJECTED exchange deposit with its transaction ' +
    'hash (one deposit settles one order)',
  scope: PERIOD_ORDERS,
  entity: 'partnerOrder',
  stake: {
    basis: 'expected',
    how: 'minus the amount the order paid to our deposit address (nothing arrived); else the difference',
  },
  sentence: depositMissingSentence,
  check: {
    partnerOrder: (o, x) => ({
      verdict: checkDepositMissing(o, x.ourAddresses, x.deposit, x.ref.depositsThrough ?? null),
      currency: o.outputCurrency,
    }),
  },
});

export const X_DEPOSIT_AMOUNT = defineRule({
  code: 'X_DEPOSIT_AMOUNT',
  family: 'cross',
  title: 'Exchange deposit differs from the order',
  severity: 'high',
  description: "Matched exchange deposit's amount or currency differs from the order's output",
  scope: PERIOD_ORDERS,
  entity: 'partnerOrder',
  subject: 'Exchange deposit',
  check: {
    partnerOrder: (o, x) => ({
      verdict: checkDepositAmount(o, x.ourAddresses, x.deposit),
      currency: o.outputCurrency,
    }),
  },
});
