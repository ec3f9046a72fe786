import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { parse } from 'lossless-json';
import {
  isLosslessNumber,
  keysUnlessNumber,
  LosslessNumber,
  markJsonNumbers,
  parseJsonLossless,
} from '../../src/decimal/json.js';
import {
  parseJsonMarked,
  parseJsonMarkedExact,
  parseJsonTokenized,
  stringifyMarked,
} from '../../src/sources/exchange/wire.js';

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

/**
 * The expression markJsonNumbers replaced, kept as its specification: a JSON number (exactly JSON's grammar) where a
 * value stands, after a colon, a comma or a bracket and before a comma or a closing bracket.
 */
const VALUE_NUMBER = /([:,[]\s*)(-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?)(?=\s*[,\]}])/g;

/** Object members counted in a parsed value (a repeated key counts once). */
function members(value: unknown): number {
  if (value === null || typeof value !== 'object' || isLosslessNumber(value)) return 0;
  if (Array.isArray(value)) return value.reduce((n: number, v) => n + members(v), 0);
  return Object.values(value).reduce((n: number, v) => n + 1 + members(v), 0);
}

/** A value with its marked numbers turned into LosslessNumbers: what the lossless parser gives for the same text. */
function unmarked(value: unknown): unknown {
  if (typeof value === 'string') return value.charCodeAt(0) === 1 ? new LosslessNumber(value.slice(1)) : value;
  if (value === null || typeof value !== 'object' || isLosslessNumber(value)) return value;
  if (Array.isArray(value)) return value.map(unmarked);
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(value)) Object.defineProperty(out, k, { value: unmarked(v), enumerable: true });
  return out;
}

/** Texts with numbers (malformed ones too) where values and keys stand, strings that look like numbers, repeats. */
const numberish = fc.constantFrom(
  '0',
  '-0',
  '1',
  '01',
  '-1.50',
  '1e400',
  '5.4044E-4',
  '9223372036854775807',
  '1.',
  '.5',
);
const adversarial = fc
  .array(
    fc.tuple(
      fc.constantFrom('a', 'b', 'a', '__proto__', ':1,', '\u0001'),
      fc.oneof(
        numberish,
        tricky.map((t) => JSON.stringify(t)),
        fc.constantFrom('null', 'true', '[1, 2]', '{"c":3}'),
      ),
      fc.constantFrom('', ' ', '\n'),
    ),
    { maxLength: 6 },
  )
  .map(
    (ms) =>
      `[{${ms.map(([k, v, ws]) => `${JSON.stringify(k)}${ws}:${ws}${v}${ws}`).join(',')}}${ms.map(([, v]) => `,${v}`).join('')}]`,
  );

describe('markJsonNumbers: VALUE_NUMBER in one pass, with the members counted', () => {
  it('takes every text the expression took, with the same value (it leaves strings alone, the expression not)', () => {
    fc.assert(
      fc.property(fc.oneof(fc.json(), adversarial), (text) => {
        const before = outcome(JSON.parse, text.replace(VALUE_NUMBER, '$1"\\u0001$2"'));
        const marked = markJsonNumbers(text);
        const after = marked === null ? null : outcome(JSON.parse, marked.text);
        // What the expression's path kept: JSON.parse took the text and no number was left unmarked.
        if ('value' in before && keysUnlessNumber(before.value) !== null) expect(after).toEqual(before);
      }),
      { numRuns: 3000 },
    );
    expect(markJsonNumbers('[{"a":":1,"},2]')?.text).toBe('[{"a":":1,"},"\\u00012"]');
  });

  it('counts every member of a JSON text, nested ones and "__proto__" included', () => {
    fc.assert(
      fc.property(fc.json(), (text) => {
        const marked = markJsonNumbers(text);
        // Only a bare number as the whole text stands outside value position.
        if (marked === null) expect(text.trim()).toMatch(/^-?\d/);
        else expect(marked.keys).toBe(members(parse(text)));
      }),
      { numRuns: 3000 },
    );
    expect(markJsonNumbers('{"a" : {"b":[1, {"c":"d:"}]}, "__proto__": "x\\":"}')?.keys).toBe(4);
    expect(markJsonNumbers('{"a":"unterminated}')).toBeNull();
    expect(markJsonNumbers('{"a":01}')).toBeNull();
    expect(markJsonNumbers('{1:2}')).toBeNull();
  });
});

describe("parseJsonMarkedExact: the lossless parser's value and refusals, numbers marked", () => {
  it("any text: the lossless parser's value (numbers as marked strings or LosslessNumbers) or its refusal", () => {
    fc.assert(
      fc.property(fc.oneof(fc.json(), adversarial), (text) => {
        const ours = outcome(parseJsonMarkedExact, text);
        const theirs = outcome(parse, text);
        expect('value' in ours ? { value: unmarked(ours.value) } : ours).toEqual(theirs);
      }),
      { numRuns: 3000 },
    );
  });

  it('refuses a repeated key with another value, keeps one with the same value', () => {
    expect(() => parseJsonMarkedExact('[{"execId":1,"qty":"1","qty":"2"}]')).toThrow(/Duplicate key 'qty'/);
    expect(parseJsonMarkedExact('[{"execId":1,"qty":2,"qty":2}]')).toEqual([
      { execId: new LosslessNumber('1'), qty: new LosslessNumber('2') },
    ]);
    expect(parseJsonMarked('[{"qty":"1","qty":"2"}]')).toEqual([{ qty: '2' }]);
    expect(parseJsonMarkedExact('[{"execId":52880000000998,"fee":5.4044E-4}]')).toEqual([
      { execId: '\u000152880000000998', fee: '\u00015.4044E-4' },
    ]);
  });
});

describe('stringifyMarked: a record back as its JSON text, from either parser', () => {
  it('writes LosslessNumbers (parseJsonLossless, and a fills page that repeats a key) as the numbers received', () => {
    const page =
      '[{"execId":9007199254742361,"qty":"0.1","price":20041.123456789012345678,"fee":5.4044E-4,"side":"BUY"}]';
    const [record] = parseJsonLossless(page) as unknown[];
    expect(stringifyMarked(record)).toBe(page.slice(1, -1));
    const [marked] = parseJsonMarked(page) as unknown[];
    expect(stringifyMarked(marked)).toBe(page.slice(1, -1));
  });
});
