/** The partner listings' fast path (fastPartnerOrder) against partnerOrderSchema: same verdict, same value. */
import { describe, expect, it } from 'vitest';
import { parseJsonLossless } from '../../src/decimal/json.js';
import { fastPartnerOrder, partnerOrderSchema } from '../../src/sources/partner/schemas.js';
import { validateOrders } from '../../src/sources/partner/sync-common.js';

describe('partner orders fast path (fastPartnerOrder)', () => {
  // Every field's shapes: accepted ones (strings, JSON numbers, exponents, nulls, unknown fields) and rejected ones
  // (wrong types, impossible dates, out-of-range decimals, overlong keys, missing required fields).
  const base = JSON.stringify({
    orderId: 'ord-1',
    externalReference: 'ext-1',
    orderType: 'BUY',
    createdAt: '2026-11-20T10:11:12.123456789Z',
    orderState: 'COMPLETED',
    orderStateUpdatedAt: '2026-11-20T10:15:00Z',
    paymentMethod: 'CARD',
    inputCurrency: 'EUR',
    inputAmount: '100.50',
    outputCurrency: 'BTC',
    outputAmount: '0.001234567890123456',
    amountUsd: '108.91',
    processingFee: '1.00',
    processingFeeUsd: '1.08',
    partnerFee: '0.50',
    partnerFeeUsd: '0.54',
    networkFee: '0.07',
    networkFeeUsd: '0.08',
    userId: 'u-1',
    targetWalletAddress: 'bc1qxyz',
    transactionHash: '0xabc',
    extra: { nested: [1, 2] },
  });
  const variants: Array<[string, string]> = [
    ['orderId', '""'],
    ['orderId', `"${'k'.repeat(201)}"`],
    ['orderId', `"${'k'.repeat(200)}"`],
    ['orderId', '12345'],
    ['orderType', '"SELL"'],
    ['orderType', '"buy"'],
    ['orderState', '"PENDING"'],
    ['orderState', '"DONE"'],
    ['orderState', 'null'],
    ['createdAt', '"2026-02-30T00:00:00Z"'],
    ['createdAt', '"0000-01-01T00:00:00Z"'],
    ['createdAt', '"2026-11-20 10:11:12+0100"'],
    ['createdAt', '"2026-11-20T10:11:12.1234567891Z"'],
    ['createdAt', '"2026-11-20T25:00:00Z"'],
    ['createdAt', '"2026-11-20T10:11:12+16:00"'],
    ['createdAt', '"yesterday"'],
    ['createdAt', '1700000000000'],
    ['orderStateUpdatedAt', '"2026-11-20t10:15:00z"'],
    ['orderStateUpdatedAt', 'null'],
    ['inputCurrency', '""'],
    ['inputCurrency', '5'],
    ['outputCurrency', 'null'],
    ['inputAmount', '100.5'],
    ['inputAmount', '1.0E+2'],
    ['inputAmount', '"1e-3"'],
    ['inputAmount', '" 7 "'],
    ['inputAmount', '"abc"'],
    ['inputAmount', `"1${'0'.repeat(140)}"`],
    ['inputAmount', `"0.${'1'.repeat(20000)}"`],
    ['inputAmount', 'true'],
    ['inputAmount', 'null'],
    ['amountUsd', 'null'],
    ['amountUsd', '108.91'],
    ['amountUsd', '"-1"'],
    ['amountUsd', '[]'],
    ['networkFeeUsd', '"."'],
    ['paymentMethod', 'null'],
    ['paymentMethod', '7'],
    ['userId', '{}'],
    ['targetWalletAddress', 'false'],
    ['transactionHash', 'null'],
    ['transactionHash', '""'],
    ['transactionHash', `"${'h'.repeat(201)}"`],
    ['transactionHash', '42'],
    ['externalReference', '1'],
  ];
  const records: unknown[] = [
    base,
    ...variants.map(([k, v]) => base.replace(new RegExp(`"${k}":("[^"]*"|[^,]+),`), `"${k}":${v},`)),
    ...['orderId', 'orderType', 'createdAt', 'orderState', 'inputCurrency', 'inputAmount', 'amountUsd', 'userId'].map(
      (k) => base.replace(new RegExp(`"${k}":("[^"]*"|[^,]+),`), ''),
    ),
  ].map((text) => parseJsonLossless(text));
  records.push(null, 5, 'x', [], parseJsonLossless('[1]'), parseJsonLossless('{"orderId": {"a": 1}}'));

  it('every variant is the base with one field changed (the test edits what it means to)', () => {
    expect(variants.map(([k, v]) => base.replace(new RegExp(`"${k}":("[^"]*"|[^,]+),`), `"${k}":${v},`))).not.toContain(
      base,
    );
  });

  it('gives the schema value for every record it accepts, and never accepts one the schema refuses', () => {
    let fast = 0;
    let refused = 0;
    for (const r of records) {
      const parsed = partnerOrderSchema.safeParse(r);
      const quick = fastPartnerOrder(r);
      if (parsed.success) {
        // Only a record without a required decimal is left to the schema (zod passes an absent unknown-typed key).
        if (quick === null) expect((r as { inputAmount?: unknown }).inputAmount).toBeUndefined();
        else {
          expect(quick).toEqual(parsed.data);
          fast++;
        }
      } else {
        expect(quick).toBeNull();
        refused++;
      }
    }
    expect(fast).toBeGreaterThan(15);
    expect(refused).toBeGreaterThan(25);
  });

  it('validateOrders keeps the same valid orders and reasons as the schema alone', () => {
    const page = validateOrders(records);
    const bySchema = records.map((r) => partnerOrderSchema.safeParse(r));
    expect(page.valid.map((v) => v.order)).toEqual(bySchema.flatMap((p) => (p.success ? [p.data] : [])));
    expect(page.invalid.map((b) => b.position)).toEqual(bySchema.flatMap((p, i) => (p.success ? [] : [i])));
    expect(page.invalid[0]?.reason).toMatch(/orderId: must not be empty/);
  });
});
