/** The partner rules: each partner order against itself and the contract (P_*). */
import { defineRule, LIMIT_ONLY, noMoney } from '../define.js';
import { needs } from '../inputs.js';
import {
  checkAmountUsd,
  checkFeeBounds,
  checkFeeUsd,
  checkPartnerFeeRate,
  checkPrecision,
  checkStale,
  checkState,
  checkWebhookGap,
} from '../partner-rules.js';
import { staleSentence } from '../sentences.js';

export const PERIOD_ORDERS = 'partner orders created in the period';

export const P_FEE_USD = defineRule({
  code: 'P_FEE_USD',
  family: 'partner',
  title: 'Partner fee USD twin',
  severity: 'medium',
  description: 'Fee USD amounts equal fee x amountUsd / inputAmount (exact to the cent for USD orders)',
  scope: PERIOD_ORDERS,
  entity: 'partnerOrder',
  subject: 'Partner fee USD twin',
  check: { partnerOrder: (o, x) => ({ verdict: checkFeeUsd(o, x.cfg), currency: 'USD' }) },
});

export const P_AMOUNT_USD = defineRule({
  code: 'P_AMOUNT_USD',
  family: 'partner',
  title: 'Partner order USD amount',
  severity: 'medium',
  description: 'amountUsd equals inputAmount on USD orders and is present on the others',
  scope: PERIOD_ORDERS,
  entity: 'partnerOrder',
  subject: 'USD amount',
  check: { partnerOrder: (o) => ({ verdict: checkAmountUsd(o), currency: 'USD' }) },
});

export const P_PARTNER_FEE_RATE = defineRule({
  code: 'P_PARTNER_FEE_RATE',
  family: 'partner',
  title: 'Partner fee rate',
  severity: 'medium',
  description: 'partnerFee equals inputAmount x the contract partner fee rate, rounded to the currency precision',
  scope: PERIOD_ORDERS,
  entity: 'partnerOrder',
  subject: 'Partner fee',
  requires: [needs.partnerFeeRate, needs.currencies],
  check: {
    partnerOrder: (o, x) => ({
      verdict: checkPartnerFeeRate(o, x.cfg.partnerFeeRate!, x.ref.currencies),
      currency: o.inputCurrency,
    }),
  },
});

export const P_FEE_BOUNDS = defineRule({
  code: 'P_FEE_BOUNDS',
  family: 'partner',
  title: 'Partner fees out of bounds',
  severity: 'high',
  description: 'Fees are non-negative and their sum is below inputAmount',
  scope: PERIOD_ORDERS,
  entity: 'partnerOrder',
  check: { partnerOrder: (o) => ({ verdict: checkFeeBounds(o), currency: o.inputCurrency }) },
});

export const P_PRECISION = defineRule({
  code: 'P_PRECISION',
  family: 'partner',
  title: 'Partner amount precision or limits',
  severity: 'low',
  description:
    "Amounts have no more decimals than their currency's precision; BUY amounts within the currency's min/max",
  scope: PERIOD_ORDERS,
  entity: 'partnerOrder',
  requires: [needs.currencies],
  check: {
    partnerOrder: (o, x) => ({ verdict: checkPrecision(o, x.ref.currencies!), currency: o.inputCurrency }),
  },
});

export const P_STATE = defineRule({
  code: 'P_STATE',
  family: 'partner',
  title: 'Partner order state inconsistent',
  severity: 'medium',
  description: 'COMPLETED orders have a transaction hash, other states none; state time not before creation',
  scope: PERIOD_ORDERS,
  entity: 'partnerOrder',
  unit: 'text',
  stake: noMoney('a state, not an amount'),
  check: { partnerOrder: (o) => checkState(o) },
});

export const P_STALE = defineRule({
  code: 'P_STALE',
  family: 'partner',
  title: 'Partner order stuck',
  severity: 'low',
  description: 'Order PENDING or WITHDRAWING longer than the configured age (or no longer found)',
  scope: 'every stored partner order still PENDING / WITHDRAWING',
  reach: 'everything',
  entity: 'partnerOrder',
  unit: 'hours',
  holds: LIMIT_ONLY,
  sentence: staleSentence,
  stake: noMoney('an age (the order is late, its amounts are judged by the other rules)'),
  check: { openPartnerOrder: (o, x) => checkStale(o, x.cfg.now, x.cfg.staleAfterHours.partnerOrder) },
});

export const P_WEBHOOK_GAP = defineRule({
  code: 'P_WEBHOOK_GAP',
  family: 'partner',
  title: 'Partner webhook missing or different',
  severity: 'low',
  description: "Settled order's polled state has no matching webhook event, or the latest event's state differs",
  scope:
    'settled partner orders whose last state change just passed the 3-day retry window (any creation day), and ' +
    'those with an open break',
  reach: 'judged',
  entity: 'partnerOrder',
  unit: 'text',
  stake: noMoney('a missing or different webhook event'),
  requires: [needs.webhooks],
  check: { settledPartnerOrder: (o, x) => checkWebhookGap(o, x.events, x.cfg.now) },
});
