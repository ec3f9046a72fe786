/** Webhook bodies for tests: a valid order event, and a corpus of malformed or unstorable bodies (issue 17), each as the exact bytes a sender would post. */

let seq = 0;

/** A valid order event (the contract's fields), unique ids per call. */
export function validEvent(overrides: Record<string, unknown> = {}, prefix = 'corpus'): Record<string, unknown> {
  seq++;
  return {
    eventId: `${prefix}-evt-${seq}`,
    orderId: `${prefix}-ord-${seq}`,
    externalReference: `ref-${seq}`,
    orderType: 'BUY',
    createdAt: '2026-11-20T10:00:00.123456789Z',
    orderState: 'PENDING',
    orderStateUpdatedAt: '2026-11-20T10:00:00.123456789Z',
    paymentMethod: 'CARD',
    inputCurrency: 'EUR',
    inputAmount: '100.00',
    outputCurrency: 'BTC',
    outputAmount: '0.001234567890123456',
    amountUsd: '108.12',
    processingFee: '1.99',
    processingFeeUsd: '2.15',
    partnerFee: '1.00',
    partnerFeeUsd: '1.08',
    networkFee: '0.50',
    networkFeeUsd: '0.54',
    userId: 'user-1',
    userCountry: 'DE',
    targetWalletAddress: 'bc1qexample',
    ...overrides,
  };
}

export interface CorpusCase {
  name: string;
  bytes: Buffer;
  /** A field the reason must name (when the body was readable enough to have fields). */
  field?: string;
  /** Part of "What failed" item 3 of issue 17 (answered 503 for ever on 2026-11-23's main). */
  whatFailed?: boolean;
  /** Nested deeper than the receiver's limit (issue 43): refused 400 before it is parsed. */
  deep?: boolean;
}

/** JSON text of arrays and objects alternating `depth` levels deep, a string at the bottom. */
export function deepValue(depth: number): string {
  const open: string[] = [];
  const close: string[] = [];
  for (let i = 0; i < depth; i++) {
    open.push(i % 2 ? '[' : '{"k":');
    close.push(i % 2 ? ']' : '}');
  }
  return `${open.join('')}"bottom"${close.reverse().join('')}`;
}

const utf8 = (s: string) => Buffer.from(s, 'utf8');
/** A valid event's JSON text with `marker` replaced by raw JSON text (to write numbers and escapes as the wire has them). */
function withRaw(overrides: Record<string, unknown>, replacements: Record<string, string>): Buffer {
  let text = JSON.stringify(validEvent(overrides));
  for (const [marker, raw] of Object.entries(replacements)) text = text.replace(JSON.stringify(marker), raw);
  return utf8(text);
}
function withBytes(before: string, bytes: number[], after: string): Buffer {
  return Buffer.concat([utf8(before), Buffer.from(bytes), utf8(after)]);
}
function event(overrides: Record<string, unknown>): Buffer {
  return utf8(JSON.stringify(validEvent(overrides)));
}

/** At least 30 bodies; none may be answered 5xx, each must end stored or quarantined with its exact bytes. */
export function malformedCorpus(): CorpusCase[] {
  const id = () => `corpus-bad-${++seq}`;
  const cases: CorpusCase[] = [
    // The cases of issue 17, "What failed" 3.
    {
      name: 'NUL in a value (orderId)',
      bytes: withRaw({ eventId: id(), orderId: '@O' }, { '@O': '"ord-\\u0000-x"' }),
      field: 'orderId',
      whatFailed: true,
    },
    {
      name: 'NUL in a key',
      bytes: withRaw({ eventId: id(), '@K': 1 }, { '@K': '"ke\\u0000y"' }),
      field: 'key',
      whatFailed: true,
    },
    {
      name: 'NUL in an extra field',
      bytes: withRaw({ eventId: id(), note: '@N' }, { '@N': '"a\\u0000b"' }),
      field: 'note',
      whatFailed: true,
    },
    {
      name: 'lone high surrogate in userId',
      bytes: withRaw({ eventId: id(), userId: '@S' }, { '@S': '"u\\ud800x"' }),
      field: 'userId',
      whatFailed: true,
    },
    {
      name: 'lone low surrogate in a key',
      bytes: withRaw({ eventId: id(), '@K': 'v' }, { '@K': '"k\\udc00"' }),
      field: 'key',
      whatFailed: true,
    },
    {
      name: 'inputAmount 1e200000 (number)',
      bytes: withRaw({ eventId: id(), inputAmount: '@A' }, { '@A': '1e200000' }),
      field: 'inputAmount',
      whatFailed: true,
    },
    {
      name: 'networkFee 1e-20000 (number)',
      bytes: withRaw({ eventId: id(), networkFee: '@A' }, { '@A': '1e-20000' }),
      field: 'networkFee',
      whatFailed: true,
    },
    {
      name: 'inputAmount "1e200000" (string)',
      bytes: event({ eventId: id(), inputAmount: '1e200000' }),
      field: 'inputAmount',
      whatFailed: true,
    },
    {
      name: 'extra field 1e200000',
      bytes: withRaw({ eventId: id(), riskScore: '@A' }, { '@A': '1e200000' }),
      field: 'riskScore',
      whatFailed: true,
    },
    {
      name: 'createdAt in year 0000',
      bytes: event({ eventId: id(), createdAt: '0000-01-01T00:00:00Z' }),
      field: 'createdAt',
      whatFailed: true,
    },
    {
      name: 'orderStateUpdatedAt 2026-02-30',
      bytes: event({ eventId: id(), orderStateUpdatedAt: '2026-02-30T10:00:00Z' }),
      field: 'orderStateUpdatedAt',
      whatFailed: true,
    },
    {
      name: 'eventId of 20,000 characters',
      bytes: event({ eventId: `e${'x'.repeat(19_999)}` }),
      field: 'eventId',
      whatFailed: true,
    },
    {
      name: 'orderId of 20,000 characters',
      bytes: event({ eventId: id(), orderId: `o${'y'.repeat(19_999)}` }),
      field: 'orderId',
      whatFailed: true,
    },
    {
      name: 'invalid UTF-8 (0xff) in eventId',
      bytes: withBytes('{"eventId":"evt-', [0xff], `","orderId":"x"}`),
      whatFailed: true,
    },
    // More of the same families, and the plainly malformed.
    { name: 'overlong UTF-8 NUL (C0 80)', bytes: withBytes('{"eventId":"evt-', [0xc0, 0x80], '"}') },
    { name: 'UTF-8-encoded surrogate (ED A0 80)', bytes: withBytes('{"eventId":"evt-', [0xed, 0xa0, 0x80], '"}') },
    {
      name: 'truncated UTF-8 sequence at the end',
      bytes: withBytes(JSON.stringify(validEvent({ eventId: id() })).slice(0, -2), [0xe2, 0x82], ''),
    },
    { name: 'raw NUL byte in the body', bytes: withBytes('{"eventId":"evt-', [0x00], '"}') },
    { name: 'not JSON: an open brace', bytes: utf8('{') },
    { name: 'empty body', bytes: Buffer.alloc(0) },
    { name: 'a JSON array', bytes: utf8(`[${JSON.stringify(validEvent({ eventId: id() }))}]`) },
    { name: 'a JSON string', bytes: utf8('"evt-1"') },
    { name: 'JSON null', bytes: utf8('null') },
    { name: 'missing eventId', bytes: event({ eventId: undefined }), field: 'eventId' },
    { name: 'unknown orderState', bytes: event({ eventId: id(), orderState: 'EXPLODED' }), field: 'orderState' },
    { name: 'inputAmount "abc"', bytes: event({ eventId: id(), inputAmount: 'abc' }), field: 'inputAmount' },
    {
      name: 'byte-order mark before the JSON',
      bytes: Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), event({ eventId: id() })]),
    },
    {
      name: 'nesting 20,000 deep',
      bytes: utf8(`{"eventId":"${id()}","deep":${'['.repeat(20_000)}${']'.repeat(20_000)}}`),
      deep: true,
    },
    // Issue 43: valid events whose extra field nests deep. 5,000 levels overflowed a recursive walk outside the try
    // that quarantines (503 on every retry); the case above lacks the required fields and never reached that walk.
    ...[100, 5_000, 100_000].map((depth) => ({
      name: `valid event with an extra field nested ${depth.toLocaleString('en')} deep`,
      bytes: withRaw({ eventId: id(), riskTree: '@D' }, { '@D': deepValue(depth) }),
      deep: true,
    })),
    {
      name: 'orderId 1e400 as a number',
      bytes: withRaw({ eventId: id(), orderId: '@N' }, { '@N': '1e400' }),
      field: 'orderId',
    },
    {
      name: '2026-02-29 (not a leap year)',
      bytes: event({ eventId: id(), createdAt: '2026-02-29T00:00:00Z' }),
      field: 'createdAt',
    },
    {
      name: 'month 13',
      bytes: event({ eventId: id(), orderStateUpdatedAt: '2026-13-01T00:00:00Z' }),
      field: 'orderStateUpdatedAt',
    },
    {
      name: 'hour 25',
      bytes: event({ eventId: id(), orderStateUpdatedAt: '2026-11-20T25:00:00Z' }),
      field: 'orderStateUpdatedAt',
    },
    {
      name: 'offset +25:00',
      bytes: event({ eventId: id(), createdAt: '2026-11-20T10:00:00+25:00' }),
      field: 'createdAt',
    },
    { name: 'NaN literal', bytes: utf8(JSON.stringify(validEvent({ eventId: id() })).replace('"100.00"', 'NaN')) },
    { name: 'trailing garbage after the object', bytes: utf8(`${JSON.stringify(validEvent({ eventId: id() }))}}}`) },
    {
      name: 'NUL in a nested array value',
      bytes: withRaw({ eventId: id(), tags: ['@T'] }, { '@T': '"t\\u0000"' }),
      field: 'tags',
    },
    {
      name: 'amountUsd 1e-20000 as a string',
      bytes: event({ eventId: id(), amountUsd: '1e-20000' }),
      field: 'amountUsd',
    },
    {
      name: 'transactionHash with NUL',
      bytes: withRaw({ eventId: id(), transactionHash: '@H' }, { '@H': '"0x\\u0000"' }),
      field: 'transactionHash',
    },
  ];
  return cases;
}
