import { describe, expect, it } from 'vitest';
import {
  checkAmountUsd,
  checkFeeBounds,
  checkFeeUsd,
  checkPartnerFeeRate,
  checkPrecision,
  checkStale,
  checkState,
  checkWebhookGap,
} from '../../src/rules/partner-rules.js';
import { compareTimestampText } from '../../src/rules/util.js';
import { currencies, d, failures, makeCurrency, makeOrder, NOW } from './recon-factories.js';

const tol = { usdTolerance: d('0.01') };

describe('P_FEE_USD', () => {
  it('passes a consistent order', () => expect(checkFeeUsd(makeOrder(), tol)).toEqual([]));

  it('passes exactly at the tolerance and fails one unit over (18-decimal USD twin)', () => {
    // expected 2.5 x 108 / 100 = 2.7
    expect(checkFeeUsd(makeOrder({ processingFeeUsd: d('2.71') }), tol)).toEqual([]);
    expect(checkFeeUsd(makeOrder({ processingFeeUsd: d('2.69') }), tol)).toEqual([]);
    const over = failures(checkFeeUsd(makeOrder({ processingFeeUsd: d('2.710000000000000001') }), tol));
    expect(over).toHaveLength(1);
    expect(over[0]).toMatchObject({
      expected: '2.7',
      actual: '2.710000000000000001',
      difference: '0.010000000000000001',
    });
  });

  it('reports expected rounded to 8 decimals for a non-terminating rate', () => {
    const o = makeOrder({
      inputAmount: d('3'),
      amountUsd: d('1'),
      processingFee: d('1'),
      processingFeeUsd: d('0.4'),
      partnerFee: null,
      partnerFeeUsd: null,
      networkFee: null,
      networkFeeUsd: null,
    });
    expect(failures(checkFeeUsd(o, tol))[0]).toMatchObject({
      expected: '0.33333333',
      actual: '0.4',
      difference: '0.06666667',
    });
  });

  it('is exact to the cent on USD orders', () => {
    const usd = makeOrder({
      inputCurrency: 'USD',
      inputAmount: d('100'),
      amountUsd: d('100'),
      processingFee: d('2.345'),
      processingFeeUsd: d('2.35'),
      partnerFee: d('1'),
      partnerFeeUsd: d('1'),
      networkFee: d('0.5'),
      networkFeeUsd: d('0.5'),
    });
    expect(checkFeeUsd(usd, tol)).toEqual([]);
    expect(failures(checkFeeUsd({ ...usd, processingFeeUsd: d('2.34') }, tol))[0]).toMatchObject({
      expected: '2.35',
      actual: '2.34',
      difference: '-0.01',
    });
  });

  it('breaks on a fee without its USD twin and the reverse; all failures kept', () => {
    const v = failures(checkFeeUsd(makeOrder({ partnerFeeUsd: null, networkFee: null }), tol));
    expect(v.map((f) => f.check)).toEqual(['partnerFee without partnerFeeUsd', 'networkFeeUsd without networkFee']);
  });

  it('does not apply without amountUsd or with inputAmount 0', () => {
    expect(checkFeeUsd(makeOrder({ amountUsd: null }), tol)).toBe('n/a');
    expect(checkFeeUsd(makeOrder({ inputAmount: d('0') }), tol)).toBe('n/a');
  });
});

describe('P_AMOUNT_USD', () => {
  it('USD: amountUsd must equal inputAmount numerically', () => {
    expect(
      checkAmountUsd(makeOrder({ inputCurrency: 'USD', inputAmount: d('100.10'), amountUsd: d('100.1') })),
    ).toEqual([]);
    expect(
      failures(
        checkAmountUsd(
          makeOrder({ inputCurrency: 'USD', inputAmount: d('100'), amountUsd: d('100.000000000000000001') }),
        ),
      )[0],
    ).toMatchObject({ difference: '0.000000000000000001' });
    expect(failures(checkAmountUsd(makeOrder({ inputCurrency: 'USD', amountUsd: null })))).toHaveLength(1);
  });
  it('non-USD: missing amountUsd is a break', () => {
    expect(failures(checkAmountUsd(makeOrder({ amountUsd: null })))[0]).toMatchObject({
      expected: 'present',
      actual: null,
    });
    expect(checkAmountUsd(makeOrder())).toEqual([]);
  });
});

describe('P_PARTNER_FEE_RATE', () => {
  const rate = d('0.01');
  it('rounds half-up to the currency precision and compares exactly', () => {
    expect(
      checkPartnerFeeRate(makeOrder({ inputAmount: d('100.5'), partnerFee: d('1.01') }), rate, currencies()),
    ).toEqual([]); // 1.005 -> 1.01
    expect(
      failures(checkPartnerFeeRate(makeOrder({ inputAmount: d('100.5'), partnerFee: d('1') }), rate, currencies()))[0],
    ).toMatchObject({ expected: '1.01', actual: '1', difference: '-0.01' });
  });
  it('skips (counted) an order whose currency is not in the snapshot', () => {
    expect(checkPartnerFeeRate(makeOrder({ inputCurrency: 'GBP' }), rate, currencies())).toBe('skipped');
  });
  it('18-decimal input currency', () => {
    const eth = currencies(makeCurrency({ code: 'ETH', type: 'CRYPTO', precision: 18 }));
    const o = makeOrder({
      inputCurrency: 'ETH',
      inputAmount: d('1.123456789012345678'),
      partnerFee: d('0.011234567890123457'),
    });
    expect(checkPartnerFeeRate(o, rate, eth)).toEqual([]);
    expect(failures(checkPartnerFeeRate({ ...o, partnerFee: d('0.011234567890123456') }, rate, eth))[0]).toMatchObject({
      difference: '-0.000000000000000001',
    });
  });
});

describe('P_FEE_BOUNDS', () => {
  it('fees summing just below inputAmount pass; equal fails', () => {
    expect(checkFeeBounds(makeOrder({ inputAmount: d('4.000000000000000001') }))).toEqual([]);
    expect(failures(checkFeeBounds(makeOrder({ inputAmount: d('4') })))[0]).toMatchObject({
      expected: '4',
      actual: '4',
      difference: '0',
    });
  });
  it('a negative fee breaks; missing fees count as 0', () => {
    expect(failures(checkFeeBounds(makeOrder({ networkFee: d('-0.000000000000000001') })))[0]).toMatchObject({
      check: 'networkFee is negative',
    });
    expect(checkFeeBounds(makeOrder({ processingFee: null, partnerFee: null, networkFee: null }))).toEqual([]);
  });
});

describe('P_PRECISION', () => {
  it('checks decimals ignoring trailing zeros', () => {
    expect(checkPrecision(makeOrder({ inputAmount: d('100.100') }), currencies())).toEqual([]);
    expect(failures(checkPrecision(makeOrder({ inputAmount: d('100.001') }), currencies()))[0]).toMatchObject({
      expected: '100',
      actual: '100.001',
      currency: 'EUR',
    });
    expect(
      failures(checkPrecision(makeOrder({ outputAmount: d('0.0312345678901234567') }), currencies()))[0],
    ).toMatchObject({ currency: 'ETH' });
  });
  it('min/max buy bounds are inclusive, only for BUY with a FIAT input', () => {
    expect(checkPrecision(makeOrder({ inputAmount: d('20') }), currencies())).toEqual([]);
    expect(checkPrecision(makeOrder({ inputAmount: d('5000') }), currencies())).toEqual([]);
    expect(failures(checkPrecision(makeOrder({ inputAmount: d('19.99') }), currencies()))[0]).toMatchObject({
      expected: '20',
      difference: '-0.01',
    });
    expect(failures(checkPrecision(makeOrder({ inputAmount: d('5000.01') }), currencies()))[0]).toMatchObject({
      expected: '5000',
      difference: '0.01',
    });
    expect(checkPrecision(makeOrder({ orderType: 'SELL', inputAmount: d('19.99') }), currencies())).toEqual([]);
  });
  it('skips an order whose currencies are unknown', () => {
    expect(checkPrecision(makeOrder({ inputCurrency: 'GBP', outputCurrency: 'DOGE' }), currencies())).toBe('skipped');
  });
});

describe('P_STATE', () => {
  it('COMPLETED needs a hash, others must not have one', () => {
    expect(checkState(makeOrder())).toEqual([]);
    expect(failures(checkState(makeOrder({ transactionHash: ' ' })))).toHaveLength(1);
    expect(failures(checkState(makeOrder({ orderState: 'FAILED' })))[0]).toMatchObject({ actual: '0xhash1' });
    expect(checkState(makeOrder({ orderState: 'PENDING', transactionHash: null }))).toEqual([]);
  });
  it('compares state time with creation time to the nanosecond', () => {
    const created = '2026-11-10T10:00:00.123456789Z';
    expect(
      checkState(makeOrder({ createdAtText: created, orderStateUpdatedAtText: '2026-11-10T10:00:00.123456789Z' })),
    ).toEqual([]);
    expect(
      failures(
        checkState(makeOrder({ createdAtText: created, orderStateUpdatedAtText: '2026-11-10T10:00:00.123456788Z' })),
      ),
    ).toHaveLength(1);
    expect(
      checkState(makeOrder({ createdAtText: created, orderStateUpdatedAtText: '2026-11-10T10:00:00.2Z' })),
    ).toEqual([]);
  });
  it('orders timestamp texts of different fraction lengths correctly', () => {
    expect(compareTimestampText('2023-11-15T14:43:06.9Z', '2023-11-15T14:43:06.894070237Z')).toBe(1);
    expect(compareTimestampText('2023-11-15T14:43:06Z', '2023-11-15T14:43:06.000000000Z')).toBe(0);
    expect(compareTimestampText('2023-11-15T15:43:06+01:00', '2023-11-15T14:43:06Z')).toBe(0);
  });
});

describe('P_STALE', () => {
  const at = (hoursAgo: number) => new Date(NOW.getTime() - hoursAgo * 3_600_000);
  it('PENDING exactly 24h passes, one ms more is stale', () => {
    expect(checkStale(makeOrder({ orderState: 'PENDING', orderStateUpdatedAt: at(24) }), NOW, 24)).toEqual([]);
    const v = failures(
      checkStale(
        makeOrder({ orderState: 'WITHDRAWING', orderStateUpdatedAt: new Date(at(24).getTime() - 1) }),
        NOW,
        24,
      ),
    );
    expect(v[0]).toMatchObject({ expected: '24', actual: '24', facts: { state: 'WITHDRAWING' } });
  });
  it('a 404 on refresh is stale whatever its age; settled orders do not apply', () => {
    expect(
      failures(
        checkStale(makeOrder({ orderState: 'PENDING', orderStateUpdatedAt: at(1), notFound: true }), NOW, 24),
      )[0]!.check,
    ).toContain('404');
    expect(checkStale(makeOrder({ orderStateUpdatedAt: at(100) }), NOW, 24)).toBe('n/a');
  });
});

describe('P_WEBHOOK_GAP', () => {
  const old = { orderStateUpdatedAt: new Date(NOW.getTime() - 3 * 86_400_000 - 1) };
  const ev = (orderState: string, orderStateUpdatedAtText: string) => ({ orderState, orderStateUpdatedAtText });
  it('needs an event with the polled state, and the latest event to agree', () => {
    const o = makeOrder(old);
    expect(
      checkWebhookGap(o, [ev('PENDING', '2026-11-10T10:00:00Z'), ev('COMPLETED', '2026-11-10T10:05:00.1Z')], NOW),
    ).toEqual([]);
    expect(failures(checkWebhookGap(o, [ev('PENDING', '2026-11-10T10:00:00Z')], NOW))[0]).toMatchObject({
      expected: 'COMPLETED',
      actual: 'PENDING',
    });
    // the latest by nanosecond text, not by arrival: .9 is after .894070237
    expect(
      failures(
        checkWebhookGap(
          o,
          [ev('COMPLETED', '2026-11-10T10:05:00.894070237Z'), ev('FAILED', '2026-11-10T10:05:00.9Z')],
          NOW,
        ),
      )[0],
    ).toMatchObject({ actual: 'FAILED' });
    expect(
      checkWebhookGap(
        o,
        [ev('FAILED', '2026-11-10T10:05:00.894070237Z'), ev('COMPLETED', '2026-11-10T10:05:00.9Z')],
        NOW,
      ),
    ).toEqual([]);
  });
  it('does not judge orders inside the 3-day retry window or unsettled ones', () => {
    expect(checkWebhookGap(makeOrder({ orderStateUpdatedAt: new Date(NOW.getTime() - 3 * 86_400_000) }), [], NOW)).toBe(
      'n/a',
    );
    expect(checkWebhookGap(makeOrder({ ...old, orderState: 'PENDING' }), [], NOW)).toBe('n/a');
  });
});
