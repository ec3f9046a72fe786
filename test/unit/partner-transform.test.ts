import { describe, expect, it } from 'vitest';
import { parseJsonLossless, stringifyJsonLossless } from '../../src/decimal/json.js';
import {
  compareTimestamps,
  flattenCurrencies,
  orderToRow,
  timestampKey,
  walletWithoutTag,
} from '../../src/sources/partner/transform.js';
import {
  extraEventFields,
  formatPartnerIssues,
  orderEventSchema,
  partnerOrderSchema,
} from '../../src/sources/partner/schemas.js';
import { parseReferencesCsv } from '../../src/sources/partner/references-csv.js';
import { requireDecimal } from '../../src/sources/common/wire-decimal.js';

function makeOrder(overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    orderId: 'o-1',
    orderType: 'BUY',
    createdAt: '2023-11-15T14:43:06.894070237Z',
    orderState: 'COMPLETED',
    orderStateUpdatedAt: '2023-11-15T14:50:00Z',
    inputCurrency: 'EUR',
    inputAmount: '100.50',
    outputCurrency: 'ETH',
    ...overrides,
  };
}

describe('timestampKey', () => {
  it('normalizes to a fixed-width UTC form that compares to the nanosecond', () => {
    expect(timestampKey('2023-11-15T14:43:06.894070237Z')).toBe('2023-11-15T14:43:06.894070237Z');
    expect(timestampKey('2023-11-15T14:43:06.9Z')).toBe('2023-11-15T14:43:06.900000000Z');
    expect(timestampKey('2023-11-15T14:43:06Z')).toBe('2023-11-15T14:43:06.000000000Z');
    expect(timestampKey('2023-11-15T15:43:06.1+01:00')).toBe('2023-11-15T14:43:06.100000000Z');
    expect(timestampKey('2023-11-15T14:43:06.1-0130')).toBe('2023-11-15T16:13:06.100000000Z');
    expect(timestampKey('yesterday')).toBeNull();
    expect(timestampKey('2023-11-15T14:43:06.1234567891Z')).toBeNull();
  });

  it('orders what raw text and microseconds get wrong', () => {
    // As text '...06.9Z' > '...06.894070237Z' happens to be right, but '...06Z' vs '...06.1Z' is not.
    expect(compareTimestamps('2023-11-15T14:43:06Z', '2023-11-15T14:43:06.1Z')).toBeLessThan(0);
    // Same microsecond, one nanosecond apart.
    expect(compareTimestamps('2023-11-15T14:43:06.000000901Z', '2023-11-15T14:43:06.000000900Z')).toBeGreaterThan(0);
    expect(compareTimestamps('2023-11-15T15:43:06+01:00', '2023-11-15T14:43:06.000000000Z')).toBe(0);
  });
});

describe('partner order schema and row', () => {
  it('keeps every digit of string, number and exponent amounts', () => {
    const raw = parseJsonLossless(
      JSON.stringify(makeOrder({ outputAmount: 'X', amountUsd: '5.4044E-4' })).replace(
        '"X"',
        '0.123456789012345678901',
      ),
    );
    const parsed = partnerOrderSchema.parse(raw);
    const row = orderToRow(parsed, stringifyJsonLossless(raw));
    expect(row.input_amount).toBe('100.50');
    expect(row.output_amount).toBe('0.123456789012345678901');
    expect(row.amount_usd).toBe('0.00054044');
    expect(row.created_at_text).toBe('2023-11-15T14:43:06.894070237Z');
    expect(row.order_state_updated_key).toBe('2023-11-15T14:50:00.000000000Z');
    expect(row.raw).toContain('0.123456789012345678901');
  });

  it('requires what the rules need, accepts the rest as optional and keeps unknown fields', () => {
    expect(partnerOrderSchema.safeParse(makeOrder({ somethingNew: 1 })).success).toBe(true);
    const missing = makeOrder();
    delete missing.orderStateUpdatedAt;
    const r = partnerOrderSchema.safeParse(missing);
    expect(r.success).toBe(false);
    if (!r.success) expect(formatPartnerIssues(r.error)).toBe('orderStateUpdatedAt: required');
    const bad = partnerOrderSchema.safeParse(makeOrder({ inputAmount: '1,5', orderState: 'DONE' }));
    expect(bad.success).toBe(false);
    if (!bad.success) {
      const msg = formatPartnerIssues(bad.error);
      expect(msg).toContain('inputAmount: must be a decimal number (got "1,5")');
      expect(msg).toContain('orderState: must be one of PENDING, WITHDRAWING, COMPLETED, FAILED (got "DONE")');
    }
    // A fractional JS number has already lost digits: never accepted as an amount.
    expect(partnerOrderSchema.safeParse(makeOrder({ inputAmount: 0.1 })).success).toBe(false);
  });

  it('finds event fields beyond the contract', () => {
    const ev = { ...makeOrder(), eventId: 'e', userCountry: 'DE', riskScore: 1, a: 2 };
    expect(extraEventFields(ev)).toEqual(['a', 'riskScore']);
    expect(orderEventSchema.safeParse(ev).success).toBe(false); // misses required event fields
  });
});

describe('small helpers', () => {
  it('flattens currencies wrapped in an extra array level, and plain arrays', () => {
    expect(flattenCurrencies([[{ code: 'EUR' }, { code: 'BTC' }]])).toEqual([{ code: 'EUR' }, { code: 'BTC' }]);
    expect(flattenCurrencies([{ code: 'EUR' }])).toEqual([{ code: 'EUR' }]);
    expect(flattenCurrencies({ code: 'EUR' })).toBeNull();
  });

  it('writes plain decimals as sent and exponent forms exactly (the one canonicaliser, common/wire-decimal.ts)', () => {
    expect(requireDecimal('10.50')).toBe('10.50');
    expect(requireDecimal('9.0E-4')).toBe('0.0009');
    expect(requireDecimal(parseJsonLossless('1e2'))).toBe('100');
    // A JSON number keeps its scale too.
    expect(requireDecimal(parseJsonLossless('10.50'))).toBe('10.50');
    expect(() => requireDecimal('1,5')).toThrow('not a decimal number: "1,5"');
  });

  it('strips a :tag from a wallet address', () => {
    expect(walletWithoutTag('rXRP:123')).toBe('rXRP');
    expect(walletWithoutTag('0xabc')).toBe('0xabc');
  });

  it('reads references from a CSV by header or first column', () => {
    expect(parseReferencesCsv('id,externalReference\n1,ref-a\n2,ref-b\n3,ref-a\n4,\n')).toEqual(['ref-a', 'ref-b']);
    expect(parseReferencesCsv('\ufeffref-1;x\nref-2\n\n')).toEqual(['ref-1;x', 'ref-2']);
    expect(parseReferencesCsv('ref-1,extra\n"ref,2",z\n')).toEqual(['ref-1', 'ref,2']);
    expect(parseReferencesCsv('')).toEqual([]);
  });
});
