import { afterAll, beforeAll, expect, it } from 'vitest';
import { sql } from 'kysely';
import { Pool } from 'undici';
import { silentLogger } from '../../src/log/logger.js';
import { startWebhookServer, type WebhookServer } from '../../src/webhooks/server.js';
import { createTestStore, storeKinds, type StoreKind, type TestStore } from '../helpers/db.js';
import { validEvent } from '../helpers/webhook-corpus.js';
import { receiverConfig } from '../helpers/webhook-post.js';
import { recordFigure } from './figures.js';
import { describe } from 'vitest';
import { openStore, type Store } from '../../src/store/database.js';

// Issue 17, item 6: webhook load from a local generator (undici), 2,000 events/s for 30 s with
// 10% duplicates and out-of-order states; every event stored exactly once, p99 printed.
// WEBHOOK_LOAD_RATE / WEBHOOK_LOAD_SECONDS / WEBHOOK_LOAD_DB override the defaults.
const RATE = Number(process.env.WEBHOOK_LOAD_RATE ?? 2000);
const SECONDS = Number(process.env.WEBHOOK_LOAD_SECONDS ?? 30);
const DUPLICATE_SHARE = 0.1;
const POOL = Number(process.env.WEBHOOK_LOAD_POOL ?? 32);
/**
 * Requests outstanding at most: a receiver slower than the rate throttles the generator (as a
 * real sender's connection limit would) instead of queueing minutes of work; the figure then
 * shows the rate the receiver held. WEBHOOK_LOAD_STRICT=1 also requires the rate and p99 < 5 s.
 */
const MAX_IN_FLIGHT = Number(process.env.WEBHOOK_LOAD_IN_FLIGHT ?? 256);
const STRICT = process.env.WEBHOOK_LOAD_STRICT === '1';
const STATES = ['PENDING', 'WITHDRAWING', 'COMPLETED'] as const;
/** The database the load runs on: Postgres when the suite has one (see the README: the embedded one holds less). */
const LOAD_DB: StoreKind = (process.env.WEBHOOK_LOAD_DB as StoreKind | undefined) ?? (storeKinds.includes('postgres') ? 'postgres' : 'embedded');

interface Delivery {
  eventId: string;
  body: Buffer;
  duplicate: boolean;
}

/**
 * The deliveries in sending order: orders of three states each, the states of an order sent in a
 * shuffled order within a short window (out of order), and 10% of the sends repeats of an event
 * already sent (the sender's duplicates), byte for byte.
 */
function plan(total: number): { deliveries: Delivery[]; orders: Map<string, string> } {
  let seed = 17;
  const rand = () => ((seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31) / 2 ** 31);
  const deliveries: Delivery[] = [];
  const orders = new Map<string, string>();
  const sent: Delivery[] = [];
  let n = 0;
  let fresh: Delivery[] = [];
  while (deliveries.length < total) {
    if (sent.length > 10 && rand() < DUPLICATE_SHARE) {
      const again = sent[Math.floor(rand() * sent.length)]!;
      deliveries.push({ ...again, duplicate: true });
      continue;
    }
    if (fresh.length === 0) {
      const orderId = `load-ord-${++n}`;
      fresh = STATES.map((state, i) => {
        const ev = validEvent({ eventId: `load-${n}-${state}`, orderId, orderState: state, orderStateUpdatedAt: `2026-11-20T10:00:0${i}.00000000${i}Z`, transactionHash: state === 'COMPLETED' ? `0x${n}` : null }, 'load');
        return { eventId: ev.eventId as string, body: Buffer.from(JSON.stringify(ev)), duplicate: false };
      });
      // Out of order: the three states of an order in a random order.
      fresh.sort(() => rand() - 0.5);
      orders.set(orderId, 'COMPLETED');
    }
    const e = fresh.shift()!;
    deliveries.push(e);
    sent.push(e);
  }
  return { deliveries, orders };
}

function percentile(sorted: number[], p: number): number {
  return sorted.length ? sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]! : 0;
}

describe(`webhook load [${LOAD_DB}]`, () => {
  let test: TestStore;
  let server: WebhookServer;
  let serving: Store;
  beforeAll(async () => {
    test = await createTestStore(LOAD_DB);
    // The receiver's own pool, as serve-webhooks would size it for a busy sender: concurrent
    // commits share Postgres' WAL flushes (the default pool of 4 serializes them).
    serving = test.url ? await openStore({ url: test.url, schema: test.schema, poolSize: POOL }) : test.store;
    server = await startWebhookServer({ store: serving, config: receiverConfig(), logger: silentLogger() });
  });
  afterAll(async () => {
    await server?.close();
    if (serving && serving !== test?.store) await serving.close();
    await test?.drop();
  });

  it(`${RATE} events/s for ${SECONDS} s with ${DUPLICATE_SHARE * 100}% duplicates and out-of-order states: each stored exactly once`, async () => {
    const total = RATE * SECONDS;
    const { deliveries } = plan(total);
    const pool = new Pool(server.url, { connections: 128, pipelining: 1, keepAliveTimeout: 30_000 });
    const latencies: number[] = [];
    const statuses = new Map<number, number>();
    const acknowledged = new Set<string>();
    let next = 0;
    const started = performance.now();
    const inFlight = new Set<Promise<void>>();
    const send = async (d: Delivery) => {
      const t0 = performance.now();
      try {
        const res = await pool.request({ path: '/webhooks/orders', method: 'POST', headers: { 'content-type': 'application/json' }, body: d.body });
        await res.body.text();
        latencies.push(performance.now() - t0);
        statuses.set(res.statusCode, (statuses.get(res.statusCode) ?? 0) + 1);
        if (res.statusCode === 200) acknowledged.add(d.eventId);
      } catch {
        statuses.set(0, (statuses.get(0) ?? 0) + 1);
      }
    };
    // Open loop: every 10 ms, the sends due by then, whatever the answers so far.
    await new Promise<void>((resolve) => {
      const tick = () => {
        const elapsed = (performance.now() - started) / 1000;
        const due = Math.min(total, Math.floor(elapsed * RATE));
        while (next < due && inFlight.size < MAX_IN_FLIGHT) {
          const p = send(deliveries[next++]!);
          inFlight.add(p);
          void p.finally(() => inFlight.delete(p));
        }
        if (next >= total || elapsed >= SECONDS) resolve();
        else setTimeout(tick, 10);
      };
      tick();
    });
    while (inFlight.size) await Promise.allSettled([...inFlight]);
    const seconds = (performance.now() - started) / 1000;
    await pool.close();

    latencies.sort((a, b) => a - b);
    const p99 = percentile(latencies, 99);
    const ok = statuses.get(200) ?? 0;
    const eventsPerSecond = ok / seconds;
    const sentDeliveries = deliveries.slice(0, next);
    const unique = new Set(sentDeliveries.filter((d) => !d.duplicate).map((d) => d.eventId));
    const duplicatesSent = sentDeliveries.filter((d) => d.duplicate).length;

    const db = test.store.db;
    const counts = await sql<{ rows: string; distinct_ids: string; duplicates: string | null }>`
      select count(*) as rows, count(distinct event_id) as distinct_ids, sum(duplicate_count) as duplicates from webhook_event where event_id like 'load-%'`.execute(db);
    const storedIds = new Set((await sql<{ event_id: string }>`select event_id from webhook_event where event_id like 'load-%'`.execute(db)).rows.map((r) => r.event_id));
    const lost = [...unique].filter((id) => !storedIds.has(id)).length;
    const row = counts.rows[0]!;
    const duplicated = Number(row.rows) - Number(row.distinct_ids) + [...storedIds].filter((id) => !unique.has(id)).length;
    const notLatest = await sql<{ n: string }>`
      select count(*) as n from partner_order where order_id like 'load-ord-%' and order_id in (select order_id from webhook_event where order_state = 'COMPLETED' and event_id like 'load-%') and order_state <> 'COMPLETED'`.execute(db);

    console.log(
      `webhook load [${LOAD_DB}]: target ${RATE}/s x ${SECONDS} s, sent ${next} (${unique.size} events, ${duplicatesSent} duplicates) in ${seconds.toFixed(1)} s, ` +
        `acknowledged ${eventsPerSecond.toFixed(0)}/s, p50 ${percentile(latencies, 50).toFixed(1)} ms, p99 ${p99.toFixed(1)} ms, ` +
        `max ${(latencies.at(-1) ?? 0).toFixed(1)} ms, statuses ${JSON.stringify(Object.fromEntries(statuses))}, stored ${storedIds.size}, lost ${lost}, duplicated ${duplicated}`,
    );
    recordFigure({ kind: 'webhookLoad', name: `partner webhooks ${RATE}/s x ${SECONDS} s [${LOAD_DB}]`, db: LOAD_DB, eventsPerSecond: Number(eventsPerSecond.toFixed(1)), p99Ms: Number(p99.toFixed(1)), target: RATE, sent: next, stored: storedIds.size, duplicatesSent, lost, duplicated });

    expect(statuses.get(200)).toBe(next);
    expect(lost).toBe(0);
    expect(duplicated).toBe(0);
    expect(storedIds.size).toBe(unique.size);
    expect(Number(row.duplicates ?? 0)).toBe(duplicatesSent);
    expect(Number(notLatest.rows[0]?.n)).toBe(0);
    if (STRICT) {
      // The sender gives up after 5 s: every acknowledgement well inside it.
      expect(p99).toBeLessThan(5000);
      // The rate held: the sends went out on time and the answers kept up (within 10%).
      expect(eventsPerSecond).toBeGreaterThan(RATE * 0.9);
    }
  });
});
