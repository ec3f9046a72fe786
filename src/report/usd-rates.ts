/** USD values of amounts in any currency, from the rates the run already holds (balance snapshot, partner orders). */
import { Decimal } from '../decimal/decimal.js';
import type { Break } from '../domain/index.js';
import { amountAtStake } from '../rules/describe.js';

/** Where a currency's USD rate comes from, for the Summary's assumptions and the cell notes. */
export type RateSource = 'usd' | 'balance snapshot' | 'partner orders';

export interface UsdRate {
  rate: Decimal;
  source: RateSource;
}

/**
 * A currency's USD rate: 1 for USD; else the latest balance snapshot's `rate` (the exchange's
 * local currency, assumed USD: see the Summary's assumptions); else the period's partner orders in
 * that input currency (sum of amountUsd / sum of inputAmount). No rate: no USD value (null), never a guess.
 */
export class UsdRates {
  private readonly rates = new Map<string, UsdRate>();

  constructor(input: {
    balances?: Iterable<{ currency: string; rate: Decimal }>;
    partner?: Iterable<{ currency: string; inputAmount: Decimal; amountUsd: Decimal }>;
  }) {
    for (const p of input.partner ?? [])
      if (!p.inputAmount.isZero())
        this.rates.set(p.currency, { rate: p.amountUsd.div(p.inputAmount), source: 'partner orders' });
    // The exchange's own rate wins where both exist: it is the one balances are valued at.
    for (const b of input.balances ?? [])
      if (b.rate.gt(0)) this.rates.set(b.currency, { rate: b.rate, source: 'balance snapshot' });
    this.rates.set('USD', { rate: new Decimal(1), source: 'usd' });
  }

  rateOf(currency: string | null | undefined): UsdRate | null {
    return currency ? (this.rates.get(currency) ?? null) : null;
  }

  /** The amount in USD, rounded half-up to the cent; null when the currency has no known rate. */
  usd(value: Decimal | null | undefined, currency: string | null | undefined): Decimal | null {
    const r = this.rateOf(currency);
    if (!r || value === null || value === undefined) return null;
    return value.times(r.rate).toDecimalPlaces(2, Decimal.ROUND_HALF_UP);
  }

  /**
   * A break's impact in USD as it is shown: to the cent, or, under half a cent, to its first significant digit, so a
   * difference that is not zero never shows as 0.00. dp: the decimals to show it with.
   */
  impact(value: Decimal | null | undefined, currency: string | null | undefined): { usd: Decimal; dp: number } | null {
    const r = this.rateOf(currency);
    if (!r || value === null || value === undefined) return null;
    const exact = value.times(r.rate);
    const cents = exact.toDecimalPlaces(2, Decimal.ROUND_HALF_UP);
    if (!cents.isZero() || exact.isZero()) return { usd: cents, dp: 2 };
    // decimal.js's exponent: 0.0003 is 3e-4, shown with 4 decimals
    const dp = Math.min(MAX_IMPACT_DP, -exact.e);
    return { usd: exact.toDecimalPlaces(dp, Decimal.ROUND_HALF_UP), dp };
  }
}

/**
 * A break's USD impact as the Breaks sheet, the Summary's money at stake and the e-mail all show it: the amount at stake
 * (rules/describe.ts, signed like the difference) valued by `rates`; null when its figures are not money or its
 * currency has no rate.
 */
export function breakImpact(
  b: Pick<Break, 'code' | 'unit' | 'currency' | 'expected' | 'actual' | 'difference'>,
  rates: UsdRates,
): { usd: Decimal; dp: number } | null {
  const at = amountAtStake(b);
  return at ? rates.impact(at.value, at.currency) : null;
}

/** Most decimals a sub-cent impact is shown with. */
const MAX_IMPACT_DP = 18;
