import { describe, expect, it } from 'vitest';
import { RECORD_KINDS } from '../../src/domain/record-kinds.js';
import { EXCHANGE_STREAM_CURSORS } from '../../src/sources/exchange/streams.js';
import { ORDERS_STREAM } from '../../src/sources/partner/streams.js';
import { SOURCES } from '../../src/sources/index.js';

/** The streams domain/record-kinds.ts lists for a source, without the source ('exchange:fills' -> 'fills'). */
function registered(source: string): string[] {
  const streams = new Set(Object.values(RECORD_KINDS).flatMap((kind) => kind.streams));
  return [...streams]
    .filter((s) => s.startsWith(`${source}:`))
    .map((s) => s.slice(source.length + 1))
    .sort();
}

describe("each source's streams.ts names the coverage streams of domain/record-kinds.ts", () => {
  it('exchange: every stream the registry lists has its cursors, and no other', () => {
    expect(Object.keys(EXCHANGE_STREAM_CURSORS).sort()).toEqual(registered('exchange'));
  });

  it('partner: the day listings of orders', () => {
    expect([ORDERS_STREAM]).toEqual(registered('partner'));
    expect(ORDERS_STREAM).toBe('orders');
  });

  it('every Source of src/sources/registry.ts names the streams domain/record-kinds.ts lists for it', () => {
    expect(SOURCES.map((s) => s.name).sort()).toEqual(['exchange', 'partner']);
    for (const source of SOURCES) expect([...source.streams].sort()).toEqual(registered(source.name));
  });
});
