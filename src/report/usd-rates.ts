/** USD values of amounts in any currency, from the rates the run already holds (balance snapshot, partner orders). */
import { Decimal } from '../decimal/decimal.js';
import { stakeOf, stakeRuleText, type StakeFields } from '../rules/describe.js';

/** Where a currency's USD rate comes from, for the Summary's assumptions and the cell notes. */
export type RateSource = 'usd' | 'balance snapshot' | 'partner orders';

export interface UsdRate {
  rate: Decimal;
  source: RateSource;
  /** Where and when the rate was taken, in words ("balance snapshot of 2026-11-05 23:59 UTC"); null for USD. */
  asOf: string | null;
}

/** "2026-11-05 23:59 UTC". */
const utcMinute = (d: Date) => `${d.toISOString().slice(0, 16).replace('T', ' ')} UTC`;

/**
 * A currency's USD rate: 1 for USD; else the latest balance snapshot's `rate` (the exchange's
 * local currency, assumed USD: see the Summary's assumptions); else the period's partner orders in
 * that input currency (sum of amountUsd / sum of inputAmount). No rate: no USD value (null), never a guess.
 */
export class UsdRates {
  private readonly rates = new Map<string, UsdRate>();

  constructor(input: {
    balances?: Iterable<{ currency: string; rate: Decimal; fetchedAt?: Date }>;
    partner?: Iterable<{ currency: string; inputAmount: Decimal; amountUsd: Decimal }>;
    /** The period the partner orders are of (named with their rates). */
    period?: { from: Date; to: Date };
  }) {
    const orders = input.period
      ? `partner orders of ${utcMinute(input.period.from)} to ${utcMinute(input.period.to)}`
      : 'partner orders of the period';
    for (const p of input.partner ?? [])
      if (!p.inputAmount.isZero())
        this.rates.set(p.currency, { rate: p.amountUsd.div(p.inputAmount), source: 'partner orders', asOf: orders });
    // The exchange's own rate wins where both exist: it is the one balances are valued at.
    for (const b of input.balances ?? [])
      if (b.rate.gt(0))
        this.rates.set(b.currency, {
          rate: b.rate,
          source: 'balance snapshot',
          asOf: `balance snapshot${b.fetchedAt ? ` of ${utcMinute(b.fetchedAt)}` : ''}`,
        });
    this.rates.set('USD', { rate: new Decimal(1), source: 'usd', asOf: null });
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
    return shownUsd(value.times(r.rate));
  }
}

/**
 * A USD figure as every report shows it: to the cent, or, under half a cent and not zero, to its first significant
 * digit (-0.0004), so a figure that is not zero never shows as 0.00. dp: the decimals to show it with.
 */
export function shownUsd(exact: Decimal): { usd: Decimal; dp: number } {
  const cents = exact.toDecimalPlaces(2, Decimal.ROUND_HALF_UP);
  if (!cents.isZero() || exact.isZero()) return { usd: cents, dp: 2 };
  // decimal.js's exponent: 0.0003 is 3e-4, shown with 4 decimals (however many: a cap would show 1e-19 as 0)
  const dp = -exact.e;
  return { usd: exact.toDecimalPlaces(dp, Decimal.ROUND_HALF_UP), dp };
}

/** "-1,234.50", "-0.0004": shownUsd with thousands separators. */
export function usdFigureText(exact: Decimal): string {
  const { usd, dp } = shownUsd(exact);
  const [whole, decimals] = usd.toFixed(dp).split('.');
  return `${whole!.replace(/\B(?=(\d{3})+(?!\d))/g, ',')}${decimals ? `.${decimals}` : ''}`;
}

/**
 * A break's money at stake in USD: its amount at stake (rules/describe.ts stakeOf, signed from the business's side)
 * valued at `rates`, with the amount, the rate and where it comes from; 'no money' when its rule or check moves none;
 * 'no figure' when it does but there is no USD figure (no rate for its currency, or no amount recorded).
 */
export type Valuation =
  | { kind: 'usd'; usd: Decimal; dp: number; amount: Decimal; currency: string; rate: UsdRate }
  | { kind: 'no money' }
  | { kind: 'no figure'; why: string };

export function breakValuation(b: StakeFields, rates: UsdRates): Valuation {
  const stake = stakeOf(b);
  if (stake === 'no money') return { kind: 'no money' };
  if (stake === 'unknown') return { kind: 'no figure', why: 'no amount recorded' };
  const rate = rates.rateOf(stake.currency);
  if (!rate) return { kind: 'no figure', why: `no USD rate for ${stake.currency}` };
  return {
    kind: 'usd',
    ...shownUsd(stake.value.times(rate.rate)),
    amount: stake.value,
    currency: stake.currency,
    rate,
  };
}

/**
 * A break's USD impact as the Breaks sheet, the Summary's money at stake and the e-mail all show it (breakValuation);
 * null when it moves no money or has no USD figure.
 */
export function breakImpact(b: StakeFields, rates: UsdRates): { usd: Decimal; dp: number } | null {
  const v = breakValuation(b, rates);
  return v.kind === 'usd' ? { usd: v.usd, dp: v.dp } : null;
}

/**
 * How the impact was valued, in words, for the Breaks sheet's "USD valuation": "-0.5 BTC x 65000 USD/BTC (balance
 * snapshot of 2026-11-05 23:59 UTC)", "no money: an age ...", "no USD figure: no USD rate for XYZ".
 */
export function valuationText(b: StakeFields, v: Valuation): string {
  if (v.kind === 'no money') return stakeRuleText(b.code);
  if (v.kind === 'no figure') return `no USD figure: ${v.why} (${stakeRuleText(b.code)})`;
  const amount = `${v.amount.toFixed()} ${v.currency}`;
  if (v.rate.source === 'usd') return `${amount}, in USD`;
  return `${amount} x ${v.rate.rate.toSignificantDigits(10).toFixed()} USD/${v.currency} (${v.rate.asOf ?? v.rate.source})`;
}
