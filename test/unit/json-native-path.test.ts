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
