import { afterAll, beforeAll, expect, it } from 'vitest';
import { sql } from 'kysely';
import { silentLogger } from '../../src/log/logger.js';
import { startWebhookServer, type WebhookServer } from '../../src/webhooks/server.js';
import { createTestStore, describeEachStore } from '../helpers/db.js';
import { malformedCorpus, validEvent } from '../helpers/webhook-corpus.js';
import { writeWebhookEvents } from '../../src/store/sync/webhook-events.js';
import { parseJsonLossless, stringifyJsonLossless } from '../../src/decimal/json.js';
import { orderEventSchema } from '../../src/sources/partner/schemas.js';
import { orderToRow, requireTimestampKey } from '../../src/sources/partner/transform.js';
import { canonicalHash } from '../../src/sources/partner/webhook-body.js';
import { postBytes, quarantinedBody, receiverConfig, storedEventBytes } from '../helpers/webhook-post.js';

const utf8 = (s: string) => Buffer.from(s, 'utf8');

// Issue 17, "What failed" 3: each of these was answered 503 on every retry (or stored wrongly).
describeEachStore('webhook bodies that validate but did not store', (ctx) => {
  let server: WebhookServer;
  beforeAll(async () => {
    server = await startWebhookServer({ store: ctx.store, config: receiverConfig(), logger: silentLogger() });
  });
  afterAll(async () => {
    await server?.close();
  });

  for (const c of malformedCorpus().filter((x) => x.whatFailed)) {
    it(`${c.name}: 400, quarantined byte for byte with a reason naming the field, never 503`, async () => {
      const res = await postBytes(server.url, c.bytes);
      expect(res.status).toBe(400);
      const q = await quarantinedBody(ctx.store, c.bytes);
      expect(q, 'quarantined under the sha256 of the exact bytes').not.toBeNull();
      expect(q!.rawBytes?.equals(c.bytes)).toBe(true);
      if (c.field) expect(q!.reason).toContain(c.field);
      // A second delivery (the sender's retry) gets the same answer and the same single entry.
      expect((await postBytes(server.url, c.bytes)).status).toBe(400);
    });
  }

  it('refuses 2026-02-30 instead of storing it as March 2', async () => {
    const ev = validEvent({ orderStateUpdatedAt: '2026-02-30T10:00:00Z', createdAt: '2026-02-30T09:00:00Z' });
    const res = await postBytes(server.url, utf8(JSON.stringify(ev)));
    expect(res.status).toBe(400);
    // refused by the event schema (src/sources/common/storable.ts), naming the field and the value
    expect((JSON.parse(res.text) as { error: string }).error).toContain(
      'orderStateUpdatedAt: must be a real date-time: 2026-02-30 is not a calendar date (month 02 of 2026 has 28 days) (got "2026-02-30T10:00:00Z")',
    );
    const order = await ctx.store.db
      .selectFrom('partner_order')
      .select('order_id')
      .where('order_id', '=', ev.orderId as string)
      .execute();
    expect(order).toEqual([]);
  });

  it('keeps two eventIds that differ only in invalid UTF-8 apart: both quarantined, neither acknowledged as a duplicate', async () => {
    const a = Buffer.concat([utf8('{"eventId":"evt-utf8-'), Buffer.from([0xff]), utf8('","orderId":"o"}')]);
    const b = Buffer.concat([utf8('{"eventId":"evt-utf8-'), Buffer.from([0xfe]), utf8('","orderId":"o"}')]);
    const ra = await postBytes(server.url, a);
    const rb = await postBytes(server.url, b);
    expect([ra.status, rb.status]).toEqual([400, 400]);
    expect(rb.text).not.toContain('duplicate');
    const qa = await quarantinedBody(ctx.store, a);
    const qb = await quarantinedBody(ctx.store, b);
    expect(qa?.rawBytes?.equals(a)).toBe(true);
    expect(qb?.rawBytes?.equals(b)).toBe(true);
    expect(qa?.reason).toContain('not valid UTF-8');
    // Nothing was rewritten to U+FFFD anywhere.
    const fffd = await sql<{
      n: string;
    }>`select count(*) as n from quarantine where raw_text like ${'%\uFFFD%'}`.execute(ctx.store.db);
    expect(Number(fffd.rows[0]?.n)).toBe(0);
  });

  it('stores a repeated eventId with another body as a conflict, leaves the stored event as it was, and counts a same-body repeat as a duplicate', async () => {
    const ev = validEvent();
    const first = utf8(JSON.stringify(ev));
    expect((await postBytes(server.url, first)).status).toBe(200);
    // Same event, other key order and spacing: a duplicate.
    const reordered = utf8(JSON.stringify(Object.fromEntries(Object.entries(ev).reverse()), null, 2));
    const dup = await postBytes(server.url, reordered);
    expect(dup.status).toBe(200);
    expect(dup.text).toContain('duplicate');
    const other = utf8(JSON.stringify({ ...ev, inputAmount: '999.00' }));
    const res = await postBytes(server.url, other);
    expect(res.status).toBe(200);
    expect(res.text).toContain('conflict');
    expect((await postBytes(server.url, other)).status).toBe(200);
    const conflicts = await sql<{ event_id: string; seen_count: number; raw_bytes: Uint8Array }>`
      select event_id, seen_count, raw_bytes from webhook_event_conflict where event_id = ${ev.eventId as string}`.execute(
      ctx.store.db,
    );
    expect(conflicts.rows).toHaveLength(1);
    expect(conflicts.rows[0]?.seen_count).toBe(2);
    expect(Buffer.from(conflicts.rows[0]!.raw_bytes).equals(other)).toBe(true);
    expect((await storedEventBytes(ctx.store, ev.eventId as string))?.equals(first)).toBe(true);
    const order = await ctx.store.db
      .selectFrom('partner_order')
      .select('input_amount')
      .where('order_id', '=', ev.orderId as string)
      .executeTakeFirstOrThrow();
    expect(order.input_amount.toString()).toBe('100');
    expect(server.stats().conflicts).toBe(2);
  });
});

describeEachStore('webhook group commit', (ctx) => {
  it('judges each delivery of a batch as one at a time would: stored, duplicate within the batch, conflict, duplicate of a stored event', async () => {
    const item = (ev: Record<string, unknown>) => {
      const bytes = utf8(JSON.stringify(ev));
      const parsed = parseJsonLossless(bytes.toString('utf8'));
      const e = orderEventSchema.parse(parsed);
      return {
        event: {
          eventId: e.eventId,
          orderId: e.orderId,
          orderState: e.orderState,
          orderStateUpdatedAt: e.orderStateUpdatedAt,
          orderStateUpdatedKey: requireTimestampKey(e.orderStateUpdatedAt),
          createdAtText: e.createdAt,
          remoteAddr: null,
          extraFields: [],
          raw: bytes.toString('utf8'),
          rawBytes: bytes,
          bodyHash: canonicalHash(parsed),
        },
        order: orderToRow(e, stringifyJsonLossless(parsed)),
      };
    };
    const stored = validEvent({ eventId: 'gc-stored' });
    await writeWebhookEvents(ctx.store.db, 'default', [item(stored)], new Date());
    const a = validEvent({
      eventId: 'gc-a',
      orderId: 'gc-ord',
      orderState: 'PENDING',
      orderStateUpdatedAt: '2026-11-20T10:00:00Z',
    });
    const b = validEvent({
      eventId: 'gc-b',
      orderId: 'gc-ord',
      orderState: 'COMPLETED',
      orderStateUpdatedAt: '2026-11-20T10:00:02Z',
      transactionHash: '0x1',
    });
    const results = await writeWebhookEvents(
      ctx.store.db,
      'default',
      [item(b), item(a), item(a), item({ ...a, inputAmount: '5' }), item(stored), item({ ...stored, userId: 'other' })],
      new Date(),
    );
    expect(results.map((r) => r.kind)).toEqual(['stored', 'stored', 'duplicate', 'conflict', 'duplicate', 'conflict']);
    expect(results.slice(0, 2)).toEqual([
      { kind: 'stored', applied: true },
      { kind: 'stored', applied: false },
    ]);
    const order = await ctx.store.db
      .selectFrom('partner_order')
      .select(['order_state'])
      .where('order_id', '=', 'gc-ord')
      .executeTakeFirstOrThrow();
    expect(order.order_state).toBe('COMPLETED');
    const dups = await ctx.store.db
      .selectFrom('webhook_event')
      .select(['event_id', 'duplicate_count'])
      .where('event_id', 'in', ['gc-a', 'gc-stored'])
      .orderBy('event_id')
      .execute();
    expect(dups).toEqual([
      { event_id: 'gc-a', duplicate_count: 1 },
      { event_id: 'gc-stored', duplicate_count: 1 },
    ]);
    const conflicts = await sql<{
      n: string;
    }>`select count(*) as n from webhook_event_conflict where event_id in ('gc-a', 'gc-stored')`.execute(ctx.store.db);
    expect(Number(conflicts.rows[0]?.n)).toBe(2);
  });
});

describeEachStore('webhook receiver without its database', (ctx) => {
  it('answers 503 only while the database is unavailable', async () => {
    const own = await createTestStore(ctx.kind);
    const server = await startWebhookServer({ store: own.store, config: receiverConfig(), logger: silentLogger() });
    try {
      const ev = utf8(JSON.stringify(validEvent()));
      expect((await postBytes(server.url, ev)).status).toBe(200);
      await own.store.close();
      expect((await postBytes(server.url, utf8(JSON.stringify(validEvent())))).status).toBe(503);
      expect((await postBytes(server.url, utf8('{'))).status).toBe(503);
      expect(server.stats().errors).toBe(2);
    } finally {
      await server.close();
      await own.drop().catch(() => undefined);
    }
  });
});
