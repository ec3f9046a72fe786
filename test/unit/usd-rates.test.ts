import { describe, expect, it } from 'vitest';
import { Decimal } from '../../src/decimal/decimal.js';
import { UsdRates } from '../../src/report/usd-rates.js';

describe('UsdRates', () => {
  const rates = new UsdRates({
    balances: [
      { currency: 'BTC', rate: new Decimal('60000.5') },
      { currency: 'EUR', rate: new Decimal('1.1') },
      { currency: 'XXX', rate: new Decimal(0) },
    ],
    partner: [
      { currency: 'EUR', inputAmount: new Decimal('200'), amountUsd: new Decimal('216') },
      { currency: 'GBP', inputAmount: new Decimal('100'), amountUsd: new Decimal('127.3') },
    ],
  });
  it('values USD at 1, prefers the balance snapshot rate, falls back to the partner orders average', () => {
    expect(rates.usd(new Decimal('0.5'), 'USD')?.toFixed()).toBe('0.5');
    expect(rates.usd(new Decimal('0.01'), 'BTC')?.toFixed(2)).toBe('600.01');
    expect(rates.rateOf('EUR')?.source).toBe('balance snapshot');
    expect(rates.usd(new Decimal('10'), 'GBP')?.toFixed(2)).toBe('12.73');
  });
  it('has no value without a rate', () => {
    expect(rates.usd(new Decimal('1'), 'XXX')).toBeNull();
    expect(rates.usd(new Decimal('1'), null)).toBeNull();
    expect(rates.usd(null, 'USD')).toBeNull();
  });
});
