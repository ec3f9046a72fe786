import { describe, expect, it } from 'vitest';
import { Decimal, toDecimal, InvalidDecimalError } from '../../src/decimal/decimal.js';
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
