import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { Decimal, toDecimal, InvalidDecimalError, roundedQuotient } from '../../src/decimal/decimal.js';
import { parseJsonLossless, stringifyJsonLossless, stringifyParsedJson } from '../../src/decimal/json.js';

describe('toDecimal', () => {
  it('accepts decimal strings, exponent notation and lossless JSON numbers exactly', () => {
    expect(toDecimal('0.123456789012345678').toString()).toBe('0.123456789012345678');
    expect(toDecimal('5.4044E-4').toString()).toBe('0.00054044');
    expect(toDecimal('9.0E-4').toString()).toBe('0.0009');
    const body = parseJsonLossless(
      '{"qty": 1.000000000000000001, "id": 9223372036854775807, "small": 5.4044E-4}',
    ) as Record<string, unknown>;
    expect(toDecimal(body.qty).toString()).toBe('1.000000000000000001');
    expect(toDecimal(body.id).toString()).toBe('9223372036854775807');
    expect(toDecimal(body.small).toString()).toBe('0.00054044');
  });

  it('keeps 60 significant digits: an 8-decimal quantity times an 8-decimal price is exact', () => {
    const product = toDecimal('12345678.12345678').mul('87654321.87654321');
    expect(product.toString()).toBe('1082152044017678.5557079622374638');
    expect(product.decimalPlaces()).toBe(16);
    expect(new Decimal('0.000000000000000001').plus('1000000000').toString()).toBe('1000000000.000000000000000001');
  });

  it('rejects fractional JS numbers, NaN, text and empty strings', () => {
    expect(() => toDecimal(0.1)).toThrow(InvalidDecimalError);
    expect(() => toDecimal('abc')).toThrow('not a decimal number: "abc"');
    expect(() => toDecimal('')).toThrow(InvalidDecimalError);
    expect(() => toDecimal('NaN')).toThrow(InvalidDecimalError);
    expect(toDecimal(42).toString()).toBe('42');
  });
});

describe('lossless JSON', () => {
  it('round-trips numbers digit for digit', () => {
    const text = '{"a":0.000000000000000001,"b":"5.4044E-4","c":[1234567890123456789,2.5]}';
    expect(stringifyJsonLossless(parseJsonLossless(text))).toBe(text);
  });

  it('stringifyParsedJson writes what stringifyJsonLossless writes, numbers nested anywhere or none', () => {
    const texts = [
      '{"a":0.000000000000000001,"b":"5.4044E-4","c":[1234567890123456789,2.5]}',
      '{"a":"x","b":{"c":[{"d":1e400}]}}',
      '{"a":"\\u0000 \\ud800 \\"q\\" é \\u2028","b":[true,false,null,[]],"c":{}}',
      '[{"orderId":"1","inputAmount":"100.50"},{"orderId":"2","inputAmount":100.50}]',
      '"text"',
      'null',
      '7',
    ];
    for (const text of texts) {
      const parsed = parseJsonLossless(text);
      expect(stringifyParsedJson(parsed)).toBe(stringifyJsonLossless(parsed));
    }
    expect(stringifyParsedJson(parseJsonLossless(texts[0]!))).toBe(texts[0]);
    expect(stringifyParsedJson({ big: 12345678901234567890n })).toBe('{"big":12345678901234567890}');
  });

  it('names the problem on a truncated body', () => {
    expect(() => parseJsonLossless('{"a": [1, 2')).toThrow(/invalid JSON/);
  });
});

describe('roundedQuotient', () => {
  /** n / d rounded half away from zero at dp decimals, by BigInt: n = ni / 10^ns, d = di / 10^ds. */
  const reference = (ni: bigint, ns: number, di: bigint, ds: number, dp: number): string => {
    // n/d = ni 10^ds / (di 10^ns); times 10^dp
    const num = ni * 10n ** BigInt(ds + dp);
    const den = di * 10n ** BigInt(ns);
    const negative = num < 0n !== den < 0n && num !== 0n;
    const a = num < 0n ? -num : num;
    const b = den < 0n ? -den : den;
    const k = (2n * a + b) / (2n * b);
    return k === 0n ? '0' : new Decimal(`${negative ? '-' : ''}${k}e-${dp}`).toFixed();
  };
  const scaled = (i: bigint, s: number) => new Decimal(`${i}e-${s}`);

  it('is the exact quotient rounded once, whatever the digits', () => {
    fc.assert(
      fc.property(
        fc.bigInt({ min: -(10n ** 40n), max: 10n ** 40n }),
        fc.nat({ max: 40 }),
        fc.bigInt({ min: -(10n ** 30n), max: 10n ** 30n }).filter((d) => d !== 0n),
        fc.nat({ max: 40 }),
        fc.nat({ max: 20 }),
        (ni, ns, di, ds, dp) => {
          expect(roundedQuotient(scaled(ni, ns), scaled(di, ds), dp).toFixed()).toBe(reference(ni, ns, di, ds, dp));
        },
      ),
    );
  });

  it('rounds a tie away from zero and never twice', () => {
    expect(roundedQuotient(new Decimal('0.0000005'), new Decimal(1), 6).toFixed()).toBe('0.000001');
    expect(roundedQuotient(new Decimal('-0.0000005'), new Decimal(1), 6).toFixed()).toBe('-0.000001');
    expect(roundedQuotient(new Decimal('0.0000005'), new Decimal(-1), 6).toFixed()).toBe('-0.000001');
    expect(roundedQuotient(new Decimal('-0.0000004'), new Decimal(1), 6).toFixed()).toBe('0');
    // 4 then 70 nines: n.div(d) at 60 digits would round it to a tie, and then up
    const n = new Decimal(`1.0000004${'9'.repeat(70)}`);
    expect(roundedQuotient(n, new Decimal(1), 6).toFixed()).toBe('1');
    expect(n.div(1).toDecimalPlaces(6, Decimal.ROUND_HALF_UP).toFixed()).toBe('1.000001');
    expect(roundedQuotient(new Decimal(6001), new Decimal(3), 4).toFixed()).toBe('2000.3333');
  });
});
