/** The webhook receiver of a multi-account config: each account's events at its own path, any other path refused. */
import { PassThrough } from 'node:stream';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { request } from 'undici';
import { loadConfig, type Config } from '../../src/config/load.js';
import { createLogger, silentLogger } from '../../src/log/logger.js';
import { startWebhookServer, type WebhookServer } from '../../src/webhooks/server.js';
import { startSandboxAccounts } from '../helpers/sandbox.js';
import { describeEachStore } from '../helpers/db.js';
import { writeConfig } from '../helpers/config.js';
import { validEvent } from '../helpers/webhook-corpus.js';

const WEBHOOKS = { port: 0, host: '127.0.0.1', allowedIps: ['127.0.0.1'], bodyLimitBytes: 4096 };

function groupConfig(names: string[]): Config {
  return loadConfig({
    env: {},
    configPath: writeConfig({ accounts: names.map((name) => ({ name })), webhooks: WEBHOOKS }),
  });
}

async function post(url: string, path: string, body: string | Record<string, unknown>) {
  const res = await request(url + path, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });
  return { status: res.statusCode, text: await res.body.text() };
}

describeEachStore('webhook receiver of a group of accounts', (ctx) => {
  let server: WebhookServer;
  const logLines: string[] = [];
  beforeAll(async () => {
    const destination = new PassThrough();
    destination.on('data', (d: Buffer) => logLines.push(...d.toString().split('\n').filter(Boolean)));
    server = await startWebhookServer({
      store: ctx.store,
      config: groupConfig(['alpha', 'beta', 'gamma']),
      logger: createLogger({ level: 'warn', destination }),
    });
  });
  afterAll(async () => {
    await server?.close();
  });

  const rows = (eventId: string) =>
    ctx.store.db
      .selectFrom('webhook_event')
      .select(['account', 'order_id', 'order_state'])
      .where('event_id', '=', eventId)
      .orderBy('account')
      .execute();

  it("stores each account's events under the account of the path, the same eventId apart per account", async () => {
    expect(server.accounts.map((a) => a.url)).toEqual(
      ['alpha', 'beta', 'gamma'].map((a) => `${server.url}/webhooks/${a}`),
    );
    const ev = validEvent({ orderState: 'COMPLETED' }, 'group');
    expect((await post(server.url, '/webhooks/alpha', ev)).status).toBe(200);
    expect(await rows(ev.eventId as string)).toEqual([
      { account: 'alpha', order_id: ev.orderId, order_state: 'COMPLETED' },
    ]);
    // Another organisation's event with the same ids is its own, not a duplicate of alpha's.
    const res = await post(server.url, '/webhooks/beta/', ev);
    expect(res.status).toBe(200);
    expect(JSON.parse(res.text)).toMatchObject({ status: 'stored' });
    expect(await rows(ev.eventId as string)).toEqual([
      { account: 'alpha', order_id: ev.orderId, order_state: 'COMPLETED' },
      { account: 'beta', order_id: ev.orderId, order_state: 'COMPLETED' },
    ]);
    const orders = await ctx.store.db
      .selectFrom('partner_order')
      .select(['account', 'order_state'])
      .where('order_id', '=', ev.orderId as string)
      .orderBy('account')
      .execute();
    expect(orders).toEqual([
      { account: 'alpha', order_state: 'COMPLETED' },
      { account: 'beta', order_state: 'COMPLETED' },
    ]);
    expect((await post(server.url, '/webhooks/beta', ev)).text).toContain('"duplicate"');
  });

  it('quarantines a malformed body under the account of its path', async () => {
    const body = '{"eventId": "group-broken", ';
    expect((await post(server.url, '/webhooks/gamma', body)).status).toBe(400);
    const q = await ctx.store.db
      .selectFrom('quarantine')
      .select(['account', 'endpoint'])
      .where('raw_text', '=', body)
      .execute();
    expect(q).toEqual([{ account: 'gamma', endpoint: '/webhooks/gamma' }]);
  });

  it('answers 404 to any other path, stores nothing, counts and logs it without the body', async () => {
    const eventsBefore = await ctx.store.db.selectFrom('webhook_event').select('event_id').execute();
    const quarantineBefore = await ctx.store.db.selectFrom('quarantine').select('id').execute();
    const before = server.stats();
    const paths = [
      '/',
      '/webhooks',
      '/webhooks/',
      '/webhooks/nosuch',
      '/webhooks/ALPHA',
      '/webhooks/alpha/x',
      '/orders',
    ];
    for (const path of paths) {
      const ev = validEvent({ userId: 'secret-user-7' }, 'lost');
      const res = await post(server.url, path, ev);
      expect(res.status, path).toBe(404);
      expect(res.text).toContain('/webhooks/<account>');
    }
    // An oversized or malformed body at an unknown path is refused for its path, before its body is read.
    expect((await post(server.url, '/nowhere', 'x'.repeat(10_000))).status).toBe(404);
    const after = server.stats();
    expect(after.unknownPath - before.unknownPath).toBe(paths.length + 1);
    expect([after.received, after.invalid, after.tooLarge]).toEqual([before.received, before.invalid, before.tooLarge]);
    expect(await ctx.store.db.selectFrom('webhook_event').select('event_id').execute()).toHaveLength(
      eventsBefore.length,
    );
    expect(await ctx.store.db.selectFrom('quarantine').select('id').execute()).toHaveLength(quarantineBefore.length);
    const warned = logLines
      .map((l) => JSON.parse(l) as { level: string; path?: string; msg: string })
      .filter((l) => l.msg.includes('no account'));
    expect(warned.map((l) => [l.level, l.path])).toEqual([...paths, '/nowhere'].map((p) => ['warn', p]));
    expect(logLines.join('\n')).not.toContain('secret-user-7');
  });

  it('still refuses an address that is not a sender with 403, whatever the path', async () => {
    const server2 = await startWebhookServer({
      store: ctx.store,
      config: { ...groupConfig(['alpha', 'beta']), webhooks: { ...WEBHOOKS, allowedIps: ['34.76.54.194'] } } as Config,
      logger: silentLogger(),
    });
    try {
      expect((await post(server2.url, '/webhooks/alpha', validEvent())).status).toBe(403);
      expect((await post(server2.url, '/webhooks/nosuch', validEvent())).status).toBe(403);
      expect(server2.stats()).toMatchObject({ rejected: 2, unknownPath: 0, stored: 0 });
    } finally {
      await server2.close();
    }
  });
});

describeEachStore('webhook receiver of one account', (ctx) => {
  it('takes any path for its one account, its own /webhooks/<name> included', async () => {
    const config = loadConfig({ env: {}, configPath: writeConfig({ account: 'solo', webhooks: WEBHOOKS }) });
    expect(config.multiAccount).toBe(false);
    const server = await startWebhookServer({ store: ctx.store, config, logger: silentLogger() });
    try {
      const paths = ['/', '/webhooks', '/webhooks/orders', '/webhooks/solo', '/webhooks/nosuch'];
      const ids: string[] = [];
      for (const path of paths) {
        const ev = validEvent({}, 'solo');
        ids.push(ev.eventId as string);
        expect((await post(server.url, path, ev)).status, path).toBe(200);
      }
      const stored = await ctx.store.db
        .selectFrom('webhook_event')
        .select(['event_id', 'account'])
        .where('event_id', 'in', ids)
        .orderBy('event_id')
        .execute();
      expect(stored).toEqual(
        ids.map((id) => ({ event_id: id, account: 'solo' })).sort((a, b) => (a.event_id < b.event_id ? -1 : 1)),
      );
      expect(server.stats()).toMatchObject({ stored: paths.length, unknownPath: 0 });
    } finally {
      await server.close();
    }
  });
});

describeEachStore('the sandbox delivering a group', (ctx) => {
  it("delivers each account's events to that account's path, and each lands under its account", async () => {
    const names = ['north', 'south'];
    const server = await startWebhookServer({ store: ctx.store, config: groupConfig(names), logger: silentLogger() });
    const group = await startSandboxAccounts({
      days: 1,
      ordersPerDay: 6,
      exchangeOrdersPerDay: 1,
      depositsPerDay: 0,
      withdrawalsPerDay: 0,
      live: false,
      faults: 'none',
      webhookUrl: server.url,
      accounts: names.map((name, i) => ({ name, seed: 70 + i })),
    });
    try {
      for (const name of names) await group.accounts[name]!.webhooksIdle();
      for (const name of names) {
        const sandbox = group.accounts[name]!;
        expect(sandbox.options.webhookUrl).toBe(`${server.url}/webhooks/${name}`);
        const acked = new Set(
          sandbox
            .webhookDeliveries()
            .filter((d) => d.ok)
            .map((d) => d.eventId),
        );
        expect(acked.size).toBeGreaterThan(5);
        const stored = await ctx.store.db
          .selectFrom('webhook_event')
          .select('event_id')
          .where('account', '=', name)
          .execute();
        expect(stored.map((r) => r.event_id).sort()).toEqual([...acked].sort());
        const orders = await ctx.store.db
          .selectFrom('partner_order')
          .select('order_id')
          .where('account', '=', name)
          .execute();
        const own = new Set(sandbox.data.partnerOrders().map((o) => o.orderId));
        expect(orders.length).toBeGreaterThan(0);
        expect(orders.filter((o) => !own.has(o.order_id))).toEqual([]);
      }
      expect(server.stats()).toMatchObject({ unknownPath: 0, invalid: 0, rejected: 0 });
    } finally {
      await group.close();
      await server.close();
    }
  });
});
