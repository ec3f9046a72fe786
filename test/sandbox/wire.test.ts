import fc from 'fast-check';
import { it, expect } from 'vitest';
import { exponentText, Raw, writeJson, type Json } from '../../sandbox/wire.js';
import { Decimal } from '../../src/decimal/decimal.js';
it('exp', () => {
  for (const t of ['0.00054044', '0.0009', '0.000000001', '0.00012300', '-0.0005']) {
    const e = exponentText(t);
    expect(new Decimal(e).eq(t), `${t} ${e}`).toBe(true);
  }
  expect(exponentText('0.00054044')).toBe('5.4044E-4');
  expect(exponentText('0.0009')).toBe('9.0E-4');
});

it('writeJson: the text JSON.stringify writes for plain values, keys of any spelling, undefined members left out', () => {
  const value: fc.Arbitrary<unknown> = fc.letrec<{ v: unknown }>((tie) => ({
    v: fc.oneof(
      { depthSize: 'small' },
      fc.string(),
      fc.maxSafeInteger(),
      fc.boolean(),
      fc.constant(null),
      fc.constant(undefined),
      fc.array(tie('v'), { maxLength: 4 }),
      fc.dictionary(fc.oneof(fc.string(), fc.constantFrom('a"b', 'c\\d', '\n', '__x')), tie('v'), { maxKeys: 4 }),
    ),
  })).v;
  fc.assert(
    fc.property(value, (v) => {
      expect(writeJson(v as Json)).toBe(JSON.stringify(v) ?? 'null');
    }),
    { numRuns: 1000 },
  );
  expect(writeJson({ a: new Raw('1.230'), b: [new Raw('9007199254740993')], c: undefined })).toBe(
    '{"a":1.230,"b":[9007199254740993]}',
  );
  expect(writeJson({})).toBe('{}');
  expect(() => writeJson({ qty: 0.1 })).toThrow(/use Raw/);
});
