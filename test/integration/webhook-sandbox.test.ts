import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { expect, it } from 'vitest';
import { request } from 'undici';
import { loadConfig, type Config } from '../../src/config/load.js';
import { silentLogger } from '../../src/log/logger.js';
import { startSandbox } from '../helpers/sandbox.js';
import { startWebhookServer } from '../../src/webhooks/server.js';
import { describeEachStore } from '../helpers/db.js';

/**
 * A proxy in front of the receiver that injects receiver-side faults by request number:
 * a 503 before the receiver sees the request, and a connection cut after the receiver stored
 * the event (the acknowledgement is lost, so the sender delivers it again).
 */
async function faultyProxy(
  target: string,
): Promise<{ url: string; faults: () => { refused: number; cut: number }; close: () => Promise<void> }> {
  let n = 0;
  const counts = { refused: 0, cut: 0 };
  const server = http.createServer(async (req, res) => {
    const k = ++n;
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    if (k % 9 === 4) {
      counts.refused++;
      res.writeHead(503).end();
      return;
    }
    const forwarded = await request(target + (req.url ?? '/'), {
      method: 'POST',
      headers: {
        'content-type': String(req.headers['content-type'] ?? 'application/json'),
        'x-forwarded-for': String(req.headers['x-forwarded-for'] ?? ''),
      },
      body: Buffer.concat(chunks),
    });
    const body = await forwarded.body.text();
    if (k % 11 === 6) {
      counts.cut++;
      res.destroy();
      return;
    }
    res.writeHead(forwarded.statusCode, { 'content-type': 'application/json' }).end(body);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/webhooks`,
    faults: () => ({ ...counts }),
    close: () =>
      new Promise<void>((r) => {
        server.close(() => r());
        server.closeAllConnections();
      }),
  };
}

describeEachStore('webhook receiver fed by the sandbox sender', (ctx) => {
  it('stores every event of a day once and ends each order in its latest state, despite faults', async () => {
    const base = loadConfig({ env: {} });
    // Behind our (test) proxy: the sender's address arrives in X-Forwarded-For, trusted explicitly.
    const config = {
      ...base,
      webhooks: {
        port: 0,
        host: '127.0.0.1',
        allowedIps: base.webhooks?.allowedIps ?? [
          '34.76.54.194',
          '34.77.167.89',
          '35.187.43.203',
          '35.241.153.74',
          '35.241.224.80',
        ],
        // The test proxy connects from 127.0.0.1: only its X-Forwarded-For is read.
        trustedProxies: ['127.0.0.1'],
        bodyLimitBytes: 65536,
      },
    } as Config;
    const receiver = await startWebhookServer({ store: ctx.store, config, logger: silentLogger() });
    const proxy = await faultyProxy(receiver.url);
    const sandbox = await startSandbox({
      seed: 11,
      days: 1,
      ordersPerDay: 30,
      exchangeOrdersPerDay: 1,
      depositsPerDay: 0,
      withdrawalsPerDay: 0,
      webhookUrl: proxy.url,
    });
    try {
      await sandbox.webhooksIdle();
      const deliveries = sandbox.webhookDeliveries();
      const acked = new Set(deliveries.filter((d) => d.ok).map((d) => d.eventId));
      const attempted = new Set(deliveries.map((d) => d.eventId));
      expect(acked.size).toBeGreaterThan(50);
      // Nothing given up: every event was eventually acknowledged.
      expect([...attempted].filter((id) => !acked.has(id))).toEqual([]);
      expect(proxy.faults().refused).toBeGreaterThan(0);
      expect(proxy.faults().cut).toBeGreaterThan(0);

      const events = await ctx.store.db.selectFrom('webhook_event').select(['event_id', 'duplicate_count']).execute();
      expect(events.map((e) => e.event_id).sort()).toEqual([...acked].sort());
      const stats = receiver.stats();
      expect(stats.stored).toBe(acked.size);
      expect(stats.duplicates).toBeGreaterThan(0);
      expect(events.reduce((s, e) => s + e.duplicate_count, 0)).toBe(stats.duplicates);
      expect(stats.invalid + stats.rejected + stats.errors).toBe(0);

      // Some orders had their PENDING event acknowledged after a later state's.
      const firstOk = new Map<string, number>();
      deliveries.forEach((d, i) => {
        if (d.ok && !firstOk.has(`${d.orderId}:${d.orderState}`)) firstOk.set(`${d.orderId}:${d.orderState}`, i);
      });
      const late = [...new Set(deliveries.map((d) => d.orderId))].filter((id) => {
        const pending = firstOk.get(`${id}:PENDING`);
        return (
          pending !== undefined &&
          ['WITHDRAWING', 'COMPLETED', 'FAILED'].some((st) => (firstOk.get(`${id}:${st}`) ?? Infinity) < pending)
        );
      });
      expect(late.length).toBeGreaterThan(0);

      // Each order ends in its latest state (late earlier states and duplicates included).
      const orders = await ctx.store.db
        .selectFrom('partner_order')
        .select(['order_id', 'order_state', 'order_state_updated_at_text'])
        .execute();
      const views = new Map(sandbox.data.partnerOrders().map((o) => [o.orderId, o]));
      const deliveredOrders = new Set(deliveries.map((d) => d.orderId));
      expect(orders.length).toBe(deliveredOrders.size);
      for (const o of orders) {
        const v = views.get(o.order_id);
        expect([o.order_id, o.order_state, o.order_state_updated_at_text]).toEqual([
          o.order_id,
          v?.orderState,
          v?.orderStateUpdatedAt,
        ]);
      }
    } finally {
      await sandbox.close();
      await proxy.close();
      await receiver.close();
    }
  });
});
