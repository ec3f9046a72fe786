import fc from 'fast-check';
import { parse } from 'lossless-json';
import { describe, expect, it } from 'vitest';
import { InvalidJsonError, isLosslessNumber, parseJsonLossless } from '../../src/decimal/json.js';

/** What the lossless parser alone gives for a text: its value, or that it refused the text. */
function lossless(text: string): { value: unknown } | { refused: true } {
  try {
    return { value: parse(text) };
  } catch {
    return { refused: true };
  }
}

function ours(text: string): { value: unknown } | { refused: true } {
  try {
    return { value: parseJsonLossless(text) };
  } catch (err) {
    expect(err).toBeInstanceOf(InvalidJsonError);
    return { refused: true };
  }
}

describe('parseJsonLossless: the native parser where it gives the lossless value', () => {
  it('any JSON text, numbers or not: the same value as the lossless parser (and LosslessNumbers for numbers)', () => {
    fc.assert(
      fc.property(fc.json(), (text) => {
        expect(ours(text)).toEqual(lossless(text));
      }),
      { numRuns: 2000 },
    );
  });

  it('texts without numbers, with keys repeated and quotes and colons inside strings', () => {
    const key = fc.constantFrom('a', 'b', 'c"', 'd\\', ':', '"e":', '\\":');
    const text = fc
      .array(fc.tuple(key, fc.oneof(fc.string(), fc.constantFrom('x":', 'y\\', '\\"', '":"'), fc.boolean())), {
        maxLength: 6,
      })
      .map(
        (members) =>
          `{"list":[{${members.map(([k, v]) => `${JSON.stringify(k)} : ${JSON.stringify(v)}`).join(',')}}],"n":null}`,
      );
    fc.assert(
      fc.property(text, (t) => {
        expect(ours(t)).toEqual(lossless(t));
      }),
      { numRuns: 2000 },
    );
  });

  it('texts with numbers beside strings that look like them, the mark itself, "__proto__" and malformed numbers', () => {
    const num = fc.oneof(
      fc.constantFrom('0', '-0', '1', '01', '-1.50', '1e400', '5.4044E-4', '9223372036854775807', '1.', '.5', '+1'),
      fc.bigInt().map(String),
    );
    const str = fc.oneof(fc.string(), fc.constantFrom('\u0001', '\u00011', ':1,', '[2]', '":3}', 'x\\', '\\u0001'));
    const value = fc.oneof(
      num,
      str.map((v) => JSON.stringify(v)),
      fc.constantFrom('null', 'true'),
    );
    const key = fc.constantFrom('a', 'b', '__proto__', ':1,', '\u0001');
    const text = fc
      .array(fc.tuple(key, value, fc.constantFrom('', ' ', '\n')), { maxLength: 6 })
      .map(
        (members) =>
          `[{${members.map(([k, v, ws]) => `${JSON.stringify(k)}:${ws}${v}${ws}`).join(',')}},${members.map(([, v]) => v).join(',')}]`,
      );
    fc.assert(
      fc.property(text, (t) => {
        expect(ours(t)).toEqual(lossless(t));
      }),
      { numRuns: 3000 },
    );
    expect(ours('5')).toEqual(lossless('5'));
    expect(ours('[01]')).toEqual({ refused: true });
    expect(ours('{"__proto__":1}')).toEqual(lossless('{"__proto__":1}'));
  });

  it('a repeated key with another value is refused, as the lossless parser does; with the same value kept', () => {
    expect(() => parseJsonLossless('{"a":"1","b":"x","a":"2"}')).toThrow(InvalidJsonError);
    expect(() => parseJsonLossless('{"a":"1","a":"2"}')).toThrow(/Duplicate key 'a'/);
    expect(parseJsonLossless('{"a":"1","a":"1"}')).toEqual({ a: '1' });
  });

  it('numbers keep their exact text; a text that is not JSON names where it fails', () => {
    const v = parseJsonLossless('{"id":9223372036854775807,"qty":"0.1","px":0.1000000000000000000001}') as Record<
      string,
      unknown
    >;
    expect(isLosslessNumber(v.id) && String(v.id)).toBe('9223372036854775807');
    expect(isLosslessNumber(v.px) && String(v.px)).toBe('0.1000000000000000000001');
    expect(v.qty).toBe('0.1');
    expect(() => parseJsonLossless('{"a":"1",}')).toThrow(/invalid JSON: .*position/);
  });
});
