/** Partner order rules: fees, USD amounts, precision, states and webhook gaps (P_* rules). */
import { Decimal, ZERO } from '../decimal/decimal.js';
import type { Verdict } from './types.js';
import type { PartnerCurrency, PartnerOrder, WebhookEventLite } from '../domain/index.js';
import type { Failure } from './types.js';
import { compareTimestampText, diff, HOUR_MS, hoursOf } from './util.js';

/** Inputs of the partner rules, from config and reference data (docs/rules.md "Partner rules"). */
export interface PartnerRuleConfig {
  /** tolerances.usd (default 0.01). */
  usdTolerance: Decimal;
  /** partner.feeRate; null: P_PARTNER_FEE_RATE not checked. */
  feeRate: Decimal | null;
  /** Latest partner currencies snapshot by code; null: no snapshot (P_PRECISION not checked). */
  currencies: ReadonlyMap<string, PartnerCurrency> | null;
  now: Date;
  /** staleAfterHours.partnerOrder (default 24). */
  staleAfterHours: number;
}

const FEES = [
  ['processingFee', 'processingFeeUsd'],
  ['partnerFee', 'partnerFeeUsd'],
  ['networkFee', 'networkFeeUsd'],
] as const;

export function checkFeeUsd(o: PartnerOrder, cfg: Pick<PartnerRuleConfig, 'usdTolerance'>): Verdict {
  // Without amountUsd there is no rate to check against (P_AMOUNT_USD reports that); a zero
  // input amount has no rate at all.
  if (o.amountUsd === null || o.inputAmount.isZero()) return 'n/a';
  const failures: Failure[] = [];
  // |usd - fee x amountUsd / inputAmount| > tol, compared as |usd x inputAmount - fee x amountUsd| > tol x |inputAmount|:
  // products are exact at the configured precision where a 60-digit quotient is rounded, and three long divisions
  // per order were most of the partner rules' time. The quotient is formed only for a failure's expected figure.
  let scaledTolerance: Decimal | null = null;
  for (const [feeField, usdField] of FEES) {
    const fee = o[feeField];
    const usd = o[usdField];
    if (fee === null && usd === null) continue;
    if (fee === null || usd === null) {
      failures.push({
        check: fee === null ? `${usdField} without ${feeField}` : `${feeField} without ${usdField}`,
        expected: fee === null ? null : 'present',
        actual: usd,
        difference: null,
      });
      continue;
    }
    if (o.inputCurrency === 'USD') {
      const expected = fee.toDecimalPlaces(2, Decimal.ROUND_HALF_UP);
      if (!usd.eq(expected))
        failures.push({
          check: `${usdField} != ${feeField} to the cent`,
          expected,
          actual: usd,
          difference: diff(usd, expected),
        });
    } else {
      scaledTolerance ??= cfg.usdTolerance.times(o.inputAmount.abs());
      if (usd.times(o.inputAmount).minus(fee.times(o.amountUsd)).abs().gt(scaledTolerance)) {
        const shown = fee.times(o.amountUsd).div(o.inputAmount).toDecimalPlaces(8, Decimal.ROUND_HALF_UP);
        failures.push({
          check: `${usdField} != ${feeField} x amountUsd / inputAmount`,
          expected: shown,
          actual: usd,
          difference: diff(usd, shown),
        });
      }
    }
  }
  return failures;
}

export function checkAmountUsd(o: PartnerOrder): Verdict {
  if (o.inputCurrency === 'USD') {
    if (o.amountUsd === null)
      return [
        {
          check: 'amountUsd missing on a USD order',
          expected: o.inputAmount,
          actual: null,
          difference: null,
        },
      ];
    if (!o.amountUsd.eq(o.inputAmount))
      return [
        {
          check: 'amountUsd != inputAmount on a USD order',
          expected: o.inputAmount,
          actual: o.amountUsd,
          difference: diff(o.amountUsd, o.inputAmount),
        },
      ];
    return [];
  }
  if (o.amountUsd === null)
    return [{ check: 'amountUsd missing', expected: 'present', actual: null, difference: null }];
  return [];
}

export function checkPartnerFeeRate(
  o: PartnerOrder,
  feeRate: Decimal,
  currencies: ReadonlyMap<string, PartnerCurrency> | null,
): Verdict {
  const currency = currencies?.get(o.inputCurrency);
  if (!currency) return 'skipped';
  const expected = o.inputAmount.times(feeRate).toDecimalPlaces(currency.precision, Decimal.ROUND_HALF_UP);
  if (o.partnerFee === null) return [{ check: 'partnerFee missing', expected, actual: null, difference: null }];
  if (!o.partnerFee.eq(expected))
    return [
      {
        check: 'partnerFee != inputAmount x partner.feeRate',
        expected,
        actual: o.partnerFee,
        difference: diff(o.partnerFee, expected),
      },
    ];
  return [];
}

export function checkFeeBounds(o: PartnerOrder): Verdict {
  const failures: Failure[] = [];
  let sum = ZERO;
  for (const [field] of FEES) {
    const fee = o[field] ?? ZERO;
    if (fee.isNegative() && !fee.isZero())
      failures.push({
        check: `${field} is negative`,
        expected: ZERO,
        actual: fee,
        difference: fee,
      });
    sum = sum.plus(fee);
  }
  if (sum.gte(o.inputAmount))
    failures.push({
      check: 'fees sum to inputAmount or more',
      expected: o.inputAmount,
      actual: sum,
      difference: diff(sum, o.inputAmount),
    });
  return failures;
}

/** A currency missing from the snapshot: that part is not judged; both missing: skipped. */
export function checkPrecision(o: PartnerOrder, currencies: ReadonlyMap<string, PartnerCurrency>): Verdict {
  const input = currencies.get(o.inputCurrency);
  const output = currencies.get(o.outputCurrency);
  if (!input && !output) return 'skipped';
  const failures: Failure[] = [];
  const places = (field: string, value: Decimal | null, c: PartnerCurrency | undefined) => {
    if (!c || value === null || value.decimalPlaces() <= c.precision) return;
    const expected = value.toDecimalPlaces(c.precision, Decimal.ROUND_HALF_UP);
    failures.push({
      check: `${field} has ${value.decimalPlaces()} decimals, ${c.code} allows ${c.precision}`,
      expected,
      actual: value,
      difference: diff(value, expected),
      currency: c.code,
    });
  };
  places('inputAmount', o.inputAmount, input);
  for (const [field] of FEES) places(field, o[field], input);
  places('outputAmount', o.outputAmount, output);
  if (o.orderType === 'BUY' && input && input.type === 'FIAT') {
    if (input.minBuyAmount !== null && o.inputAmount.lt(input.minBuyAmount))
      failures.push({
        check: 'inputAmount below minBuyAmount',
        expected: input.minBuyAmount,
        actual: o.inputAmount,
        difference: diff(o.inputAmount, input.minBuyAmount),
        currency: input.code,
      });
    if (input.maxBuyAmount !== null && o.inputAmount.gt(input.maxBuyAmount))
      failures.push({
        check: 'inputAmount above maxBuyAmount',
        expected: input.maxBuyAmount,
        actual: o.inputAmount,
        difference: diff(o.inputAmount, input.maxBuyAmount),
        currency: input.code,
      });
  }
  return failures;
}

export function checkState(o: PartnerOrder): Verdict {
  const failures: Failure[] = [];
  const hash = o.transactionHash?.trim() ? o.transactionHash : null;
  if (o.orderState === 'COMPLETED' && !hash)
    failures.push({
      check: 'COMPLETED without transactionHash',
      expected: 'transactionHash',
      actual: null,
      difference: null,
    });
  if (['PENDING', 'WITHDRAWING', 'FAILED'].includes(o.orderState) && hash)
    failures.push({ check: `${o.orderState} with a transactionHash`, expected: null, actual: hash, difference: null });
  if (compareTimestampText(o.orderStateUpdatedAtText, o.createdAtText) < 0)
    failures.push({
      check: 'orderStateUpdatedAt before createdAt',
      expected: o.createdAtText,
      actual: o.orderStateUpdatedAtText,
      difference: null,
    });
  return failures;
}

export const OPEN_PARTNER_STATES = ['PENDING', 'WITHDRAWING'];

export function checkStale(o: PartnerOrder, now: Date, staleAfterHours: number): Verdict {
  if (!OPEN_PARTNER_STATES.includes(o.orderState)) return 'n/a';
  const ageMs = now.getTime() - o.orderStateUpdatedAt.getTime();
  const limitMs = staleAfterHours * HOUR_MS;
  const figures = {
    expected: new Decimal(staleAfterHours),
    actual: hoursOf(ageMs),
    difference: hoursOf(ageMs - limitMs),
    currency: null,
    note: 'age in hours',
  };
  if (o.notFound)
    return [
      {
        check: `${o.orderState} and no longer found by the partner API (404)`,
        ...figures,
        facts: { state: o.orderState, gone: 'yes' },
      },
    ];
  if (ageMs > limitMs)
    return [{ check: `${o.orderState} for more than ${staleAfterHours}h`, ...figures, facts: { state: o.orderState } }];
  return [];
}

/** The rule of settled orders without their webhook: the stage reads its open breaks' orders again. */
export const WEBHOOK_GAP = 'P_WEBHOOK_GAP';

/** The sender retries for 3 days: before that an event may still arrive. */
export const WEBHOOK_RETRY_MS = 3 * 24 * HOUR_MS;

export function checkWebhookGap(o: PartnerOrder, events: readonly WebhookEventLite[], now: Date): Verdict {
  // Unsettled or younger than the retry window: not yet judged.
  if (o.orderState !== 'COMPLETED' && o.orderState !== 'FAILED') return 'n/a';
  if (o.orderStateUpdatedAt.getTime() >= now.getTime() - WEBHOOK_RETRY_MS) return 'n/a';
  if (!events.some((e) => e.orderState === o.orderState))
    return [
      {
        check: `no webhook event with state ${o.orderState}`,
        expected: o.orderState,
        actual: latest(events)?.orderState ?? null,
        difference: null,
        currency: null,
      },
    ];
  const last = latest(events);
  if (last && last.orderState !== o.orderState)
    return [
      {
        check: `latest webhook event state ${last.orderState} != polled ${o.orderState}`,
        expected: o.orderState,
        actual: last.orderState,
        difference: null,
        currency: null,
      },
    ];
  return [];
}

function latest(events: readonly WebhookEventLite[]): WebhookEventLite | undefined {
  let best: WebhookEventLite | undefined;
  for (const e of events)
    if (!best || compareTimestampText(e.orderStateUpdatedAtText, best.orderStateUpdatedAtText) > 0) best = e;
  return best;
}
