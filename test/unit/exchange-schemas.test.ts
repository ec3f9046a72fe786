import { describe, expect, it } from 'vitest';
import type { z } from 'zod';
import { parseJsonMarked, stringifyMarked } from '../../src/sources/exchange/wire.js';
import { parseJsonLossless } from '../../src/decimal/json.js';
import {
  balanceSchema,
  depositSchema,
  fastFill,
  fastOrder,
  fillSchema,
  orderSchema,
  symbolSchema,
  validateRecords,
  withdrawalSchema,
} from '../../src/sources/exchange/schemas.js';
import {
  toDepositRow,
  toFillRow,
  toOrderRow,
  toSymbolRow,
  toWithdrawalRow,
} from '../../src/sources/exchange/transform.js';

/** Captured shapes (docs/apis.md): numbers and strings mixed, exponent notation, extra fields. */
const FILLS_PAGE = `[
  {"exOrdId": 11234560004191, "tradeId": "1", "execId": 9007199254740993, "side": "BUY", "symbol": "BTC-USD",
   "price": "0.0", "qty": "5.4044E-4", "fee": 0.000000000000000001, "timestamp": 1700000000123, "liquidity": "MAKER"},
  {"exOrdId": "11234560004192", "tradeId": 7700030967, "execId": "9007199254740994", "side": "SELL", "symbol": "ETH-USD",
   "price": 2034.123456789012345678, "qty": "9.0E-4", "fee": "1.2E+1", "timestamp": "1700000000124"},
  {"exOrdId": "11234560004193", "tradeId": "8", "execId": "9007199254740995", "side": "BUY", "symbol": "BTC-USD",
   "price": "abc", "qty": "0.1", "fee": "0", "timestamp": 1700000000125, "note": "text with 123 and \\"quotes\\""},
  {"tradeId": "9", "side": "HOLD", "symbol": 5, "price": "1", "qty": "1", "fee": "0", "timestamp": 17000000001250000}
]`;

describe('exact-number JSON reading', () => {
  it('keeps every digit of every number, leaves strings alone, and writes numbers back as numbers', () => {
    const text = '{"a": 9007199254740993, "b": "123", "c": -1.50E-7, "d": [0.1, "x\\"1\\\\"], "e": null, "f": true}';
    const v = parseJsonMarked(text) as Record<string, unknown>;
    expect(stringifyMarked(v)).toBe(
      '{"a":9007199254740993,"b":"123","c":-1.50E-7,"d":[0.1,"x\\"1\\\\"],"e":null,"f":true}',
    );
    expect(v.b).toBe('123');
  });

  it('rejects a truncated body', () => {
    expect(() => parseJsonMarked('[{"execId": 1, "qty": "0.')).toThrow();
    expect(() => parseJsonMarked('[{"execId": 12')).toThrow();
  });
});

describe('exchange schemas and transforms', () => {
  const page = parseJsonMarked(FILLS_PAGE) as unknown[];
  const { valid, invalid } = validateRecords(fillSchema, page, 'execId', true);

  it('accepts numbers or strings for ids and decimals, exponent notation and unknown fields', () => {
    expect(valid.map((v) => v.index)).toEqual([0, 1]);
    const [a, b] = valid.map((v) => toFillRow(v));
    expect(a).toEqual({
      page_index: 1,
      exec_id: '9007199254740993',
      ex_ord_id: '11234560004191',
      trade_id: '1',
      side: 'BUY',
      symbol: 'BTC-USD',
      price: '0.0',
      qty: '0.00054044',
      fee: '0.000000000000000001',
      timestamp: '2023-11-14T22:13:20.123Z',
      // The record as received: numbers stay numbers, extra fields stay.
      raw: '{"exOrdId":11234560004191,"tradeId":"1","execId":9007199254740993,"side":"BUY","symbol":"BTC-USD","price":"0.0","qty":"5.4044E-4","fee":0.000000000000000001,"timestamp":1700000000123,"liquidity":"MAKER"}',
    });
    expect(b!.price).toBe('2034.123456789012345678');
    expect(b!.qty).toBe('0.0009');
    expect(b!.fee).toBe('12');
    expect(b!.timestamp).toBe('2023-11-14T22:13:20.124Z');
  });

  it('rejects bad records with reasons naming field and value, keeping the id when readable', () => {
    expect(invalid).toHaveLength(2);
    expect(invalid[0]).toMatchObject({
      index: 2,
      key: '9007199254740995',
      reason: 'price: must be a decimal number (got "abc")',
    });
    expect(invalid[1]!.key).toBeNull();
    const reason = invalid[1]!.reason;
    expect(reason).toContain('exOrdId: must be a non-negative integer id (got nothing)');
    expect(reason).toContain('execId: must be a non-negative integer id (got nothing)');
    expect(reason).toContain('side: must be one of BUY, SELL (got "HOLD")');
    expect(reason).toContain('symbol: must be a string (got the number 5)');
    expect(reason).toContain('timestamp: must be epoch milliseconds (got 17000000001250000)');
  });

  it('maps an order summary with optional fields absent or null', () => {
    const o = parseJsonMarked(
      '{"exOrdId": 11234560004191, "clOrdId": "abc1", "ordType": "MARKET", "ordStatus": "FILLED", "side": "BUY", "price": "0.0", "symbol": "BTC-USD", "lastShares": null, "cumQty": "1.5E-3", "avgPx": 20123.5, "timestamp": 1700000000123, "mktOrdId": 5}',
    );
    const {
      valid: [v],
      invalid: bad,
    } = validateRecords(orderSchema, [o], 'exOrdId', true);
    expect(bad).toEqual([]);
    expect(toOrderRow(v!)).toMatchObject({
      ex_ord_id: '11234560004191',
      ord_status: 'FILLED',
      price: '0.0',
      last_shares: null,
      leaves_qty: null,
      cum_qty: '0.0015',
      avg_px: '20123.5',
    });
    const { invalid } = validateRecords(
      orderSchema,
      [parseJsonMarked('{"clOrdId":"x","ordType":"LIMIT","ordStatus":"DONE","side":"BUY","symbol":"BTC-USD"}')],
      'exOrdId',
      true,
    );
    expect(invalid[0]!.reason).toContain(
      'ordStatus: must be one of OPEN, REJECTED, CANCELED, FILLED, PART_FILLED, EXPIRED, PENDING (got "DONE")',
    );
  });

  it('maps deposits (tag after a colon kept) and withdrawals', () => {
    const d = parseJsonMarked(
      '{"depositId": "D17", "amount": 1.000000000000000001, "currency": "XRP", "address": "rEb8TK3gBgk5auZkwc6sHnwrGVJH8DuaLh:12345", "state": "UNCONFIRMED", "timestamp": 1700000000123}',
    );
    expect(toDepositRow(validateRecords(depositSchema, [d], 'depositId').valid[0]!)).toMatchObject({
      deposit_id: 'D17',
      amount: '1.000000000000000001',
      address: 'rEb8TK3gBgk5auZkwc6sHnwrGVJH8DuaLh:12345',
      tx_hash: null,
      state: 'UNCONFIRMED',
    });
    const w = parseJsonMarked(
      '{"withdrawalId": 42, "amount": "0.5", "fee": "5.0E-4", "currency": "BTC", "beneficiary": "wl-1"}',
    );
    expect(toWithdrawalRow(validateRecords(withdrawalSchema, [w], 'withdrawalId').valid[0]!)).toMatchObject({
      withdrawal_id: '42',
      fee: '0.0005',
      state: null,
      timestamp: null,
    });
  });

  it('validates balances and derives symbol increments exactly', () => {
    const b = parseJsonMarked(
      '{"currency":"BTC","balance":"1.5","available":1.25,"balance_local":30000.12,"available_local":"25000.10","rate":"20000.08"}',
    );
    expect(validateRecords(balanceSchema, [b], 'currency').valid[0]!.value.available).toBe('1.25');
    const s = parseJsonMarked(
      '{"base_currency":"BTC","base_currency_scale":8,"counter_currency":"USD","counter_currency_scale":2,"min_price_increment":1,"min_price_increment_scale":2,"min_order_size":50,"min_order_size_scale":8,"max_order_size":0,"max_order_size_scale":8,"lot_size":1,"lot_size_scale":8,"status":"open","id":1,"auction_price":0,"auction_time":""}',
    );
    const v = validateRecords(symbolSchema, [s], 'id', true).valid[0]!;
    expect(toSymbolRow('whatever-key', v.value)).toEqual({
      symbol: 'BTC-USD',
      base_currency: 'BTC',
      base_currency_scale: 8,
      counter_currency: 'USD',
      counter_currency_scale: 2,
      price_increment: '0.01',
      lot_size: '0.00000001',
      min_order_size: '0.0000005',
      max_order_size: '0',
      status: 'open',
    });
  });
});

/**
 * Checks a fast path against its schema on `base` (a record's JSON text), each one-field variant of it and `base`
 * without each of `missing`, every text parsed both ways (marked numbers and lossless), plus a few non-objects: it gives
 * exactly the schema's value for every record the schema accepts and null for every other, and validateRecords gives
 * the same valid values, rejections and reasons with and without it.
 */
function fastPathAgrees<T>(c: {
  schema: z.ZodType<T, unknown>;
  fast: (r: unknown) => T | null;
  key: string;
  base: string;
  variants: Array<[string, string]>;
  missing: string[];
  least: { accepted: number; rejected: number };
}): void {
  const vary = (k: string, v: string) => c.base.replace(new RegExp(`"${k}": [^,]+,`), `"${k}": ${v},`);
  const drop = (k: string) => c.base.replace(new RegExp(`"${k}": [^,]+, ?`), '');
  const records: unknown[] = [c.base, ...c.variants.map(([k, v]) => vary(k, v)), ...c.missing.map(drop)].flatMap(
    (text) => [parseJsonMarked(text), parseJsonLossless(text)],
  );
  records.push(null, 5, 'x', [], parseJsonLossless('[1]'));

  it('every variant and every missing field changes the base record', () => {
    for (const [k, v] of c.variants) expect(vary(k, v), `${k}: ${v}`).not.toBe(c.base);
    for (const k of c.missing) expect(drop(k), k).not.toBe(c.base);
  });

  it('gives the schema value for every record the schema accepts, and null for every other', () => {
    let accepted = 0;
    for (const r of records) {
      const parsed = c.schema.safeParse(r);
      const quick = c.fast(r);
      if (parsed.success) {
        expect(quick).toStrictEqual(parsed.data);
        accepted++;
      } else expect(quick).toBeNull();
    }
    expect(accepted).toBeGreaterThan(c.least.accepted);
  });

  it('validateRecords with the fast path: same valid values, same rejections and reasons', () => {
    const slow = validateRecords(c.schema, records, c.key, true);
    const quick = validateRecords(c.schema, records, c.key, true, c.fast);
    expect(quick).toStrictEqual(slow);
    expect(quick.invalid.length).toBeGreaterThan(c.least.rejected);
  });
}

describe('fills fast path (fastFill)', () => {
  // Shapes of every field: accepted ones (numbers, strings, padding zeros, exponents, spaces) and
  // rejected ones (wrong types, marked numbers as text, negatives, fractions, missing fields).
  const base =
    '{"exOrdId": 11234560004191, "tradeId": "1", "execId": 9007199254740993, "side": "BUY", "symbol": "BTC-USD", "price": "0.0", "qty": "5.4044E-4", "fee": 0.000000000000000001, "timestamp": 1700000000123, "liquidity": "MAKER"}';
  const variants: Array<[string, string]> = [
    ['exOrdId', '"0007"'],
    ['exOrdId', '" 12 "'],
    ['exOrdId', '1.23E2'],
    ['exOrdId', '"1.5"'],
    ['exOrdId', '-1'],
    ['exOrdId', 'null'],
    ['exOrdId', '""'],
    ['execId', '"00"'],
    ['execId', '1e3'],
    ['tradeId', 'true'],
    ['tradeId', '{}'],
    ['side', '"SELL"'],
    ['side', '"buy"'],
    ['side', '1'],
    ['symbol', '""'],
    ['symbol', '5'],
    ['symbol', '"ETH-USD"'],
    ['symbol', 'null'],
    ['price', '2034.123456789012345678'],
    ['price', '"  12.5 "'],
    ['price', '"1.2E+1"'],
    ['price', '"abc"'],
    ['price', '-0.5'],
    ['price', '"."'],
    ['price', '[]'],
    ['qty', '9.0E-4'],
    ['qty', '"9.0e-4"'],
    ['fee', '"0"'],
    ['fee', 'null'],
    ['timestamp', '"1700000000124"'],
    ['timestamp', '1.7E12'],
    ['timestamp', '17000000001250000'],
    ['timestamp', '-5'],
    ['timestamp', '1.5'],
  ];
  fastPathAgrees({
    schema: fillSchema,
    fast: fastFill,
    key: 'execId',
    base,
    variants,
    missing: ['exOrdId', 'execId', 'side', 'symbol', 'fee', 'timestamp'],
    least: { accepted: 20, rejected: 10 },
  });
});

describe('orders fast path (fastOrder)', () => {
  // Every field's shapes: accepted ones (numbers, strings, exponents, nulls, unknown fields) and rejected ones (wrong
  // types, marked numbers as text, unknown statuses, overlong symbols, missing required fields).
  const base =
    '{"exOrdId": 11234560004191, "clOrdId": "c-1", "ordType": "LIMIT", "ordStatus": "FILLED", "side": "BUY", "price": "2034.12", "text": "ok", "symbol": "BTC-USD", "lastShares": 0.5, "lastPx": "2034.12", "leavesQty": "0", "cumQty": "5.4044E-4", "avgPx": 2034.123456789012345678, "timestamp": 1700000000123, "extra": [1]}';
  const variants: Array<[string, string]> = [
    ['exOrdId', '"0007"'],
    ['exOrdId', '1.23E2'],
    ['exOrdId', '-1'],
    ['exOrdId', '"x"'],
    ['exOrdId', '99999999999999999999'],
    ['clOrdId', 'null'],
    ['clOrdId', '12'],
    ['clOrdId', '""'],
    ['ordType', '"MARKET"'],
    ['ordType', '"limit"'],
    ['ordType', 'null'],
    ['ordStatus', '"PART_FILLED"'],
    ['ordStatus', '"DONE"'],
    ['side', '"SELL"'],
    ['side', '"buy"'],
    ['price', 'null'],
    ['price', '"abc"'],
    ['price', '1e-3'],
    ['price', `"1${'0'.repeat(140)}"`],
    ['price', '[]'],
    ['text', 'null'],
    ['text', '5'],
    ['symbol', '""'],
    ['symbol', '5'],
    ['symbol', `"${'S'.repeat(201)}"`],
    ['symbol', 'null'],
    ['lastShares', '"  1.5 "'],
    ['leavesQty', 'true'],
    ['cumQty', '"-0.5"'],
    ['avgPx', 'null'],
    ['timestamp', 'null'],
    ['timestamp', '"1700000000124"'],
    ['timestamp', '1.7E12'],
    ['timestamp', '-5'],
    ['timestamp', '1.5'],
    ['timestamp', '"soon"'],
  ];
  fastPathAgrees({
    schema: orderSchema,
    fast: fastOrder,
    key: 'exOrdId',
    base,
    variants,
    missing: ['exOrdId', 'clOrdId', 'ordType', 'price', 'symbol', 'avgPx', 'timestamp'],
    least: { accepted: 30, rejected: 20 },
  });
});

describe('records holding U+0000', () => {
  const fill = {
    exOrdId: '1',
    tradeId: '2',
    execId: '3',
    side: 'BUY',
    symbol: 'BTC-USD',
    price: '1',
    qty: '2',
    fee: '0',
    timestamp: 1700000000000,
  };
  it('are quarantined with the field named, alone or beside schema issues', () => {
    const records = [
      fill,
      { ...fill, execId: '4', extra: { 'k\u0000': 1 } },
      { ...fill, execId: '5', price: 'x', tags: ['a', 'b\u0000'] },
    ];
    const page = validateRecords(fillSchema, records, 'execId', true, fastFill, '[... "k\\u0000" ...]');
    expect(page.valid.map((v) => v.value.execId)).toEqual(['3']);
    expect(page.invalid.map((r) => [r.key, r.reason])).toEqual([
      ['4', 'extra.k\\u0000: the key holds the character \\u0000, which the database cannot store'],
      [
        '5',
        'price: must be a decimal number (got "x"); tags.1: holds the character \\u0000, which the database cannot store',
      ],
    ]);
  });
});
