import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { parseJsonLossless } from '../../src/decimal/json.js';
import { parseJsonMarked, parseJsonTokenized, stringifyMarked } from '../../src/sources/exchange/wire.js';

/** What a parser gives for a text: its value, or the fact that it refused the text. */
function outcome(parse: (text: string) => unknown, text: string): { value: unknown } | { refused: true } {
  try {
    return { value: parse(text) };
  } catch {
    return { refused: true };
  }
}

/** Strings that look like numbers in value position to a regex that does not know where strings are. */
const tricky = fc.constantFrom(':1,', '[2]', ',3}', 'a: 4 ,b', ':-5e3]', '\\":6,', '":7,"', ', 8 }', '1', '');

describe('parseJsonMarked: numbers marked without a call per token, as the tokenizing path marks them', () => {
  it('any JSON text: the same value (or refusal) as the tokenizing path', () => {
    fc.assert(
      fc.property(fc.json(), (text) => {
        expect(outcome(parseJsonMarked, text)).toEqual(outcome(parseJsonTokenized, text));
      }),
      { numRuns: 3000 },
    );
  });

  it('strings holding number-like text beside real numbers, with any whitespace', () => {
    const member = fc.tuple(
      fc.constantFrom('a', 'b:1,', 'c'),
      fc.oneof(
        tricky,
        fc.integer().map(String),
        fc.constantFrom('1.5', '-0.0001', '5.4044E-4', '12345678901234567890'),
      ),
      fc.boolean(),
      fc.constantFrom('', ' ', '\n  '),
    );
    const text = fc
      .array(member, { maxLength: 6 })
      .map(
        (ms) =>
          `[{${ms
            .map(
              ([k, v, asString, ws]) =>
                `${JSON.stringify(k)}:${ws}${asString || !/^-?\d/.test(v) ? JSON.stringify(v) : v}${ws}`,
            )
            .join(',')}}, ${ms.length}]`,
      );
    fc.assert(
      fc.property(text, (t) => {
        expect(outcome(parseJsonMarked, t)).toEqual(outcome(parseJsonTokenized, t));
      }),
      { numRuns: 3000 },
    );
  });

  it('a page keeps every digit and type; a bare number, and text that is not JSON, take the tokenizing path', () => {
    const page = '[{"execId":52880000000998,"qty":"704.28","px":1.0007,"fee":5.4044E-4,"note":"a:1,b"}, 7 ]';
    const parsed = parseJsonMarked(page);
    expect(parsed).toEqual([
      { execId: '\u000152880000000998', qty: '704.28', px: '\u00011.0007', fee: '\u00015.4044E-4', note: 'a:1,b' },
      '\u00017',
    ]);
    expect(stringifyMarked(parsed)).toBe(page.replace(', 7 ]', ',7]'));
    expect(parseJsonMarked('12345678901234567890')).toBe('\u000112345678901234567890');
    expect(() => parseJsonMarked('{"a":1,}')).toThrow(SyntaxError);
  });
});

describe('stringifyMarked: a record back as its JSON text, from either parser', () => {
  it('writes LosslessNumbers (the fills pages are read by parseJsonLossless) as the numbers received', () => {
    const page =
      '[{"execId":9007199254742361,"qty":"0.1","price":20041.123456789012345678,"fee":5.4044E-4,"side":"BUY"}]';
    const [record] = parseJsonLossless(page) as unknown[];
    expect(stringifyMarked(record)).toBe(page.slice(1, -1));
    const [marked] = parseJsonMarked(page) as unknown[];
    expect(stringifyMarked(marked)).toBe(page.slice(1, -1));
  });
});
