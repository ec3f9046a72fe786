import { afterAll, beforeAll, expect, it } from 'vitest';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Agent, request } from 'undici';
import { loadConfig, type Config } from '../../src/config/load.js';
import { silentLogger } from '../../src/log/logger.js';
import { startWebhookServer, type WebhookServer } from '../../src/webhooks/server.js';
import { describeEachStore } from '../helpers/db.js';
import { validEvent } from '../helpers/webhook-corpus.js';
import { hasOpenssl, selfSignedCert } from '../helpers/tls.js';

const base = loadConfig({ env: {} });
function configWith(webhooks: Partial<NonNullable<Config['webhooks']>>): Config {
  return {
    ...base,
    webhooks: {
      port: 0,
      host: '127.0.0.1',
      allowedIps: ['127.0.0.1'],
      bodyLimitBytes: 4096,
      ...webhooks,
    },
  } as Config;
}

// A valid order event with unique ids (the corpus helper's, so both follow the contract's fields together).
const makeEvent = (overrides: Record<string, unknown> = {}) => validEvent(overrides, 'server');

async function post(url: string, body: string | Record<string, unknown>, headers: Record<string, string> = {}) {
  const res = await request(url + '/webhooks/orders', {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });
  const text = await res.body.text();
  return { status: res.statusCode, text };
}

describeEachStore('webhook receiver', (ctx) => {
  let server: WebhookServer;
  beforeAll(async () => {
    server = await startWebhookServer({ store: ctx.store, config: configWith({}), logger: silentLogger() });
  });
  afterAll(async () => {
    await server?.close();
  });

  it('stores an event and creates its order, digits and nanoseconds intact', async () => {
    const ev = makeEvent({ inputAmount: '123.450000000000000001' });
    const started = Date.now();
    const res = await post(server.url, ev);
    expect(res.status).toBe(200);
    expect(Date.now() - started).toBeLessThan(1000);
    const order = await ctx.store.db
      .selectFrom('partner_order')
      .selectAll()
      .where('order_id', '=', ev.orderId as string)
      .executeTakeFirstOrThrow();
    expect(order.input_amount.toString()).toBe('123.450000000000000001');
    expect(order.output_amount?.toString()).toBe('0.001234567890123456');
    expect(order.order_state_updated_at_text).toBe('2026-11-20T10:00:00.123456789Z');
    expect(order.order_state_updated_key).toBe('2026-11-20T10:00:00.123456789Z');
    const stored = await ctx.store.db
      .selectFrom('webhook_event')
      .selectAll()
      .where('event_id', '=', ev.eventId as string)
      .executeTakeFirstOrThrow();
    expect(stored.applied).toBe(true);
    expect(stored.remote_addr).toBe('127.0.0.1');
  });

  it('stores a duplicate once, acknowledges it and counts it', async () => {
    const ev = makeEvent();
    const before = server.stats();
    for (let i = 0; i < 3; i++) expect((await post(server.url, ev)).status).toBe(200);
    const rows = await ctx.store.db
      .selectFrom('webhook_event')
      .selectAll()
      .where('event_id', '=', ev.eventId as string)
      .execute();
    expect(rows).toHaveLength(1);
    expect(rows[0]?.duplicate_count).toBe(2);
    const after = server.stats();
    expect(after.stored - before.stored).toBe(1);
    expect(after.duplicates - before.duplicates).toBe(2);
  });

  it('ends in the latest state whatever the arrival order, comparing nanoseconds', async () => {
    const orderId = 'ord-ooo';
    const common = { orderId, createdAt: '2026-11-20T10:00:00Z' };
    const pending = makeEvent({
      ...common,
      orderState: 'PENDING',
      orderStateUpdatedAt: '2026-11-20T10:00:00.000000001Z',
    });
    const withdrawing = makeEvent({
      ...common,
      orderState: 'WITHDRAWING',
      orderStateUpdatedAt: '2026-11-20T10:00:00.000000900Z',
    });
    // Same microsecond as WITHDRAWING: only the nanosecond digits order them.
    const completed = makeEvent({
      ...common,
      orderState: 'COMPLETED',
      orderStateUpdatedAt: '2026-11-20T10:00:00.000000901Z',
      transactionHash: '0xabc',
    });
    for (const ev of [completed, pending, withdrawing]) expect((await post(server.url, ev)).status).toBe(200);
    const order = await ctx.store.db
      .selectFrom('partner_order')
      .selectAll()
      .where('order_id', '=', orderId)
      .executeTakeFirstOrThrow();
    expect(order.order_state).toBe('COMPLETED');
    expect(order.transaction_hash).toBe('0xabc');
    expect(order.order_state_updated_at_text).toBe('2026-11-20T10:00:00.000000901Z');
    const events = await ctx.store.db
      .selectFrom('webhook_event')
      .select(['order_state', 'applied'])
      .where('order_id', '=', orderId)
      .orderBy('order_state')
      .execute();
    expect(events).toEqual([
      { order_state: 'COMPLETED', applied: true },
      { order_state: 'PENDING', applied: false },
      { order_state: 'WITHDRAWING', applied: false },
    ]);
    const history = await ctx.store.db
      .selectFrom('partner_order_state')
      .select('order_state')
      .where('order_id', '=', orderId)
      .execute();
    expect(history.map((h) => h.order_state).sort()).toEqual(['COMPLETED', 'PENDING', 'WITHDRAWING']);
  });

  it('answers 400 to a body that is not JSON or misses required fields, and quarantines it', async () => {
    const before = server.stats();
    const notJson = await post(server.url, '{"eventId": "evt-broken", ');
    expect(notJson.status).toBe(400);
    const missing = makeEvent({ eventId: 'evt-missing' });
    delete missing.orderState;
    const res = await post(server.url, missing);
    expect(res.status).toBe(400);
    expect(res.text).toContain('orderState');
    const bad = await post(server.url, makeEvent({ eventId: 'evt-bad-amount', inputAmount: 'abc' }));
    expect(bad.status).toBe(400);
    expect(bad.text).toContain('inputAmount: must be a decimal number (got \\"abc\\")');
    const q = await ctx.store.db
      .selectFrom('quarantine')
      .selectAll()
      .where('entity', '=', 'webhook_event')
      .orderBy('id')
      .execute();
    expect(q.map((r) => r.record_key)).toEqual([null, 'evt-missing', 'evt-bad-amount']);
    expect(q[0]?.raw_text).toBe('{"eventId": "evt-broken", ');
    expect(server.stats().invalid - before.invalid).toBe(3);
    const stored = await ctx.store.db
      .selectFrom('webhook_event')
      .select('event_id')
      .where('event_id', 'in', ['evt-missing', 'evt-bad-amount'])
      .execute();
    expect(stored).toEqual([]);
  });

  it('accepts an event with fields beyond the contract, stores it raw and counts drift', async () => {
    const before = server.stats().drift;
    const ev = makeEvent({ riskScore: 0.123456789, newThing: { a: 1 } });
    expect((await post(server.url, ev)).status).toBe(200);
    const row = await ctx.store.db
      .selectFrom('webhook_event')
      .selectAll()
      .where('event_id', '=', ev.eventId as string)
      .executeTakeFirstOrThrow();
    expect(row.extra_fields).toEqual(['newThing', 'riskScore']);
    expect(JSON.stringify(row.raw)).toContain('newThing');
    expect(server.stats().drift - before).toBe(1);
  });

  it('rejects a body over the size limit with 413', async () => {
    const res = await post(server.url, makeEvent({ padding: 'x'.repeat(5000) }));
    expect(res.status).toBe(413);
  });
});

describeEachStore('webhook sender addresses', (ctx) => {
  it('rejects an address that is not a documented sender, and X-Forwarded-For when no proxy is trusted', async () => {
    const server = await startWebhookServer({
      store: ctx.store,
      config: configWith({ allowedIps: ['34.76.54.194'] }),
      logger: silentLogger(),
    });
    try {
      expect((await post(server.url, makeEvent())).status).toBe(403);
      expect((await post(server.url, makeEvent(), { 'x-forwarded-for': '34.76.54.194' })).status).toBe(403);
      expect(server.stats().rejected).toBe(2);
      expect(server.stats().stored).toBe(0);
    } finally {
      await server.close();
    }
    const n = await ctx.store.db
      .selectFrom('webhook_event')
      .select((eb) => eb.fn.countAll<string>().as('n'))
      .executeTakeFirstOrThrow();
    expect(Number(n.n)).toBe(0);
  });

  // Behind trusted proxies (webhooks.trustedProxies): test/integration/webhook-trust.test.ts.

  it('finishes in-flight requests on close: every acknowledged event is stored', async () => {
    const server = await startWebhookServer({ store: ctx.store, config: configWith({}), logger: silentLogger() });
    const events = Array.from({ length: 20 }, () => makeEvent());
    const sends = events.map((ev) => post(server.url, ev).catch(() => ({ status: 0, text: '' })));
    // Close while requests are on their way: some are mid-transaction, some not yet accepted.
    while (server.stats().received === 0) await new Promise((r) => setTimeout(r, 1));
    await server.close();
    const results = await Promise.all(sends);
    const acked = events.filter((_, i) => results[i]?.status === 200).map((e) => e.eventId as string);
    expect(acked.length).toBeGreaterThan(0);
    const rows = await ctx.store.db
      .selectFrom('webhook_event')
      .select('event_id')
      .where('event_id', 'in', acked)
      .execute();
    expect(rows).toHaveLength(acked.length);
    // The others were refused (503 or connection closed): the sender retries them, nothing acknowledged is lost.
    expect(results.every((r) => r.status === 200 || r.status === 503 || r.status === 0)).toBe(true);
  });
});

describeEachStore('webhook receiver over HTTPS', (ctx) => {
  it.skipIf(!hasOpenssl)('serves HTTPS when certificate files are configured', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'rr-tls-'));
    const { tlsCertFile: cert, tlsKeyFile: key } = selfSignedCert(dir);
    const server = await startWebhookServer({
      store: ctx.store,
      config: configWith({ tlsCertFile: cert, tlsKeyFile: key }),
      logger: silentLogger(),
    });
    try {
      expect(server.url.startsWith('https://')).toBe(true);
      const agent = new Agent({ connect: { rejectUnauthorized: false } });
      const ev = makeEvent();
      const res = await request(`${server.url}/`, {
        method: 'POST',
        body: JSON.stringify(ev),
        headers: { 'content-type': 'application/json' },
        dispatcher: agent,
      });
      expect(res.statusCode).toBe(200);
      await res.body.text();
      await agent.close();
    } finally {
      await server.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
