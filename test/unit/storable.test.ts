/** Validation equals storability (issue 17): what the database cannot hold is refused at validation, with the field and the reason. */
import { describe, expect, it } from 'vitest';
import { fillSchema, depositSchema, validateRecords } from '../../src/sources/exchange/schemas.js';
import { formatPartnerIssues, partnerOrderSchema } from '../../src/sources/partner/schemas.js';
import { calendarIssue, numericRangeIssue, unstorableText } from '../../src/sources/common/storable.js';

const fill = {
  exOrdId: '1',
  tradeId: '1',
  execId: '5',
  side: 'BUY',
  symbol: 'BTC-USD',
  price: '1',
  qty: '1',
  fee: '0',
  timestamp: 1,
};
const order = {
  orderId: 'o1',
  orderType: 'BUY',
  createdAt: '2026-02-01T10:00:00Z',
  orderState: 'PENDING',
  orderStateUpdatedAt: '2026-02-01T10:00:00Z',
  inputCurrency: 'USD',
  inputAmount: '1',
  outputCurrency: 'BTC',
};

function partnerReason(record: unknown): string | null {
  const p = partnerOrderSchema.safeParse(record);
  return p.success ? null : formatPartnerIssues(p.error);
}

describe('storable values', () => {
  it('numeric range: 131072 digits before the point, 16383 after', () => {
    expect(numericRangeIssue('1e131071')).toBeNull();
    expect(numericRangeIssue('1e131072')).toMatch(/131073 digits before/);
    expect(numericRangeIssue('1e-16383')).toBeNull();
    expect(numericRangeIssue('1.5e-16382')).toBeNull();
    expect(numericRangeIssue('1e-16384')).toMatch(/16384 digits after/);
    expect(numericRangeIssue(`0.${'0'.repeat(16384)}`)).toMatch(/16384 digits after/);
    expect(numericRangeIssue('0e-99999')).toBeNull();
  });

  it('calendar dates', () => {
    expect(calendarIssue('2026-02-30', '10:00:00')).toMatch(/not a calendar date/);
    expect(calendarIssue('2024-02-29', '10:00:00')).toBeNull();
    expect(calendarIssue('2100-02-29', '10:00:00')).toMatch(/28 days/);
    expect(calendarIssue('0000-01-01', '00:00:00')).toMatch(/year 0000/);
    expect(calendarIssue('2026-13-01', '00:00:00')).toMatch(/month 13/);
    expect(calendarIssue('2026-01-01', '24:00:00')).toMatch(/time of day/);
  });

  it('text: NUL and lone surrogates, in values and keys, with the path', () => {
    expect(unstorableText({ a: { b: 'x\u0000' } })).toMatch(/^a\.b: holds the character \\u0000/);
    expect(unstorableText({ ['k\u0000']: 1 })).toMatch(/^k\\u0000: the key holds/);
    expect(unstorableText({ a: ['ok', '\ud800'] })).toMatch(/^a\.1: holds a lone UTF-16 surrogate/);
    expect(unstorableText({ a: '\ud83d\ude00' })).toBeNull();
  });

  it('text: reports the first issue in document order, and walks a record 100,000 deep without recursion', () => {
    expect(unstorableText({ a: 'x\u0000', ['k\u0000']: 1, c: ['\ud800'] })).toMatch(/^a: holds the character/);
    expect(unstorableText({ a: 'ok', ['k\u0000']: 'x\u0000' })).toMatch(/^k\\u0000: the key holds/);
    expect(unstorableText({ a: [{ b: 'ok' }, { c: '\ud800' }], d: 'x\u0000' })).toMatch(/^a\.1\.c: holds a lone/);
    let deep: unknown = 'x\u0000';
    for (let i = 0; i < 100_000; i++) deep = i % 2 ? [deep] : { k: deep };
    expect(unstorableText(deep)).toMatch(/^(0\.k\.){49999}0\.k: holds the character \\u0000/);
  });

  it('exchange: a 20-digit id, qty 1e200000, NUL, a lone surrogate, a 201-character id are refused with the field', () => {
    const page = [
      { ...fill, execId: '99999999999999999999' },
      { ...fill, execId: '9223372036854775807' },
      { ...fill, execId: '9223372036854775808' },
      { ...fill, execId: '6', qty: '1e200000' },
      { ...fill, execId: '7', fee: '1e-20000' },
      { ...fill, execId: '8', symbol: 'BTC\u0000' },
      { ...fill, execId: '9', extra: '\udc00' },
      { ...fill, execId: '1.0E19' },
    ];
    const v = validateRecords(fillSchema, page, 'execId', true);
    expect(v.valid.map((r) => r.value.execId)).toEqual(['9223372036854775807']);
    const reasons = v.invalid.map((r) => r.reason);
    expect(reasons[0]).toMatch(
      /^execId: is beyond the largest id the database holds \(bigint, at most 9223372036854775807\)/,
    );
    expect(reasons[1]).toMatch(/^execId: is beyond the largest id/);
    expect(reasons[2]).toMatch(/^qty: is too large for the database: 200001 digits before the decimal point/);
    expect(reasons[3]).toMatch(/^fee: has too many decimals for the database: 20000 digits after/);
    expect(reasons[4]).toMatch(/^symbol: holds the character \\u0000/);
    expect(reasons[5]).toMatch(/^extra: holds a lone UTF-16 surrogate/);
    expect(reasons[6]).toMatch(/^execId: is beyond the largest id/);
    const d = validateRecords(
      depositSchema,
      [{ depositId: 'd'.repeat(201), amount: '1', currency: 'BTC', address: 'a', state: 'COMPLETED' }],
      'depositId',
    );
    expect(d.invalid[0]!.reason).toMatch(/^depositId: is longer than 200 characters/);
  });

  it('partner: networkFee 1e-20000, an impossible date, year 0000, a long orderId, NUL', () => {
    expect(partnerReason(order)).toBeNull();
    expect(partnerReason({ ...order, networkFee: '1e-20000' })).toMatch(
      /^networkFee: has too many decimals for the database/,
    );
    expect(partnerReason({ ...order, createdAt: '2026-02-30T10:00:00Z' })).toMatch(
      /^createdAt: must be a real date-time: 2026-02-30 is not a calendar date/,
    );
    expect(partnerReason({ ...order, orderStateUpdatedAt: '0000-01-01T00:00:00Z' })).toMatch(
      /^orderStateUpdatedAt: must be a real date-time: year 0000/,
    );
    expect(partnerReason({ ...order, orderId: 'x'.repeat(20_000) })).toMatch(/^orderId: is longer than 200 characters/);
    expect(partnerReason({ ...order, inputAmount: '1e200000' })).toMatch(/^inputAmount: is too large/);
  });
});
