import { afterAll, beforeAll, expect, it } from 'vitest';
import { sql } from 'kysely';
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { silentLogger } from '../../src/log/logger.js';
import { startWebhookServer, type WebhookServer } from '../../src/webhooks/server.js';
import { createTestStore, storeKinds, type StoreKind, type TestStore } from '../helpers/db.js';
import { validEvent } from '../helpers/webhook-corpus.js';
import { receiverConfig } from '../helpers/webhook-post.js';
import { recordFigure } from './figures.js';
import { describe } from 'vitest';

// Issue 17, item 6: webhook load from a local generator (undici, load-generator.mjs in a process
// of its own), 2,000 events/s for 30 s with 10% duplicates and out-of-order states; every event
// stored exactly once, p99 printed. The suite's config runs this file alone, after the others:
// on two cores a kill test beside it would measure the machine, not the receiver.
// WEBHOOK_LOAD_RATE / WEBHOOK_LOAD_SECONDS / WEBHOOK_LOAD_DB override the defaults.
const RATE = Number(process.env.WEBHOOK_LOAD_RATE ?? 2000);
const SECONDS = Number(process.env.WEBHOOK_LOAD_SECONDS ?? 30);
const DUPLICATE_SHARE = 0.1;
/**
 * Requests outstanding at most: a receiver slower than the rate throttles the generator (as a
 * real sender's connection limit would) instead of queueing minutes of work; the figure then
 * shows the rate the receiver held. WEBHOOK_LOAD_STRICT=1 also requires the rate and p99 < 5 s.
 */
const MAX_IN_FLIGHT = Number(process.env.WEBHOOK_LOAD_IN_FLIGHT ?? 256);
const STRICT = process.env.WEBHOOK_LOAD_STRICT === '1';
const STATES = ['PENDING', 'WITHDRAWING', 'COMPLETED'] as const;
/** The database the load runs on: Postgres when the suite has one (docs/operations.md "Embedded database or Postgres": the embedded one holds less). */
const LOAD_DB: StoreKind =
  (process.env.WEBHOOK_LOAD_DB as StoreKind | undefined) ?? (storeKinds.includes('postgres') ? 'postgres' : 'embedded');

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
  const rand = () => (seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31) / 2 ** 31;
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
        const ev = validEvent(
          {
            eventId: `load-${n}-${state}`,
            orderId,
            orderState: state,
            orderStateUpdatedAt: `2026-11-20T10:00:0${i}.00000000${i}Z`,
            transactionHash: state === 'COMPLETED' ? `0x${n}` : null,
          },
          'load',
        );
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

interface GeneratorResult {
  sent: number;
  /** From the first send until every answer came back. */
  seconds: number;
  /** From the first send to the last: stretched when the receiver's backlog reached the in-flight cap. */
  sendSeconds: number;
  statuses: Record<string, number>;
  p50Ms: number;
  p99Ms: number;
  maxMs: number;
  /** How far the sender fell behind its schedule at worst (its in-flight cap reached). */
  worstLagMs: number;
}

/** Runs load-generator.mjs in a child process and returns its figures. */
function runGenerator(
  url: string,
  bodiesFile: string,
  rate: number,
  seconds: number,
  inFlight: number,
): Promise<GeneratorResult> {
  const script = fileURLToPath(new URL('./load-generator.mjs', import.meta.url));
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [script, url, bodiesFile, String(rate), String(seconds), String(inFlight)], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    let err = '';
    child.stdout.on('data', (c: Buffer) => (out += c.toString('utf8')));
    child.stderr.on('data', (c: Buffer) => (err += c.toString('utf8')));
    child.on('error', reject);
    child.on('close', (code) => {
      if (code !== 0) reject(new Error(`load generator exited with ${code}: ${err.trim()}`));
      else {
        if (err.trim()) console.log(`load generator: ${err.trim()}`);
        resolve(JSON.parse(out.trim().split('\n').at(-1)!) as GeneratorResult);
      }
    });
  });
}

describe(`webhook load [${LOAD_DB}]`, () => {
  let test: TestStore;
  let server: WebhookServer;
  beforeAll(async () => {
    // The store as serve-webhooks opens it (the default pool): the receiver measured is the one that runs.
    test = await createTestStore(LOAD_DB);
    // The suite's other files leave dirty pages behind, in the OS's cache (database folders, workbooks)
    // and in the server's: flushed now, their write-back does not slow the commits measured.
    spawnSync('sync');
    if (test.url)
      await sql`checkpoint`
        .execute(test.store.db)
        .catch((err: Error) => console.log(`webhook load: no checkpoint before the load (${err.message})`));
    server = await startWebhookServer({ store: test.store, config: receiverConfig(), logger: silentLogger() });
  });
  afterAll(async () => {
    await server?.close();
    await test?.drop();
  });

  it(`${RATE} events/s for ${SECONDS} s with ${DUPLICATE_SHARE * 100}% duplicates and out-of-order states: each stored exactly once`, async () => {
    const total = RATE * SECONDS;
    const { deliveries } = plan(total);
    const dir = mkdtempSync(join(tmpdir(), 'ramp-recon-load-'));
    const bodies = join(dir, 'bodies.ndjson');
    writeFileSync(bodies, deliveries.map((d) => d.body.toString('utf8')).join('\n'));
    // The sender is a process of its own, as a real sender is: on this event loop it would take
    // the CPU time the receiver is measured on.
    const load = await runGenerator(server.url, bodies, RATE, SECONDS, MAX_IN_FLIGHT);
    rmSync(dir, { recursive: true, force: true });
    const next = load.sent;
    const seconds = load.seconds;
    const statuses = new Map(Object.entries(load.statuses).map(([k, v]) => [Number(k), v]));
    const p99 = load.p99Ms;
    const ok = statuses.get(200) ?? 0;
    // The rate held: acknowledged events over the time the sends took. The receiver that falls
    // behind holds the sender back (MAX_IN_FLIGHT unanswered at most), so this is the rate it
    // kept up with; the drain after the last send is in p99 and the total time.
    const eventsPerSecond = ok / load.sendSeconds;
    const sentDeliveries = deliveries.slice(0, next);
    const unique = new Set(sentDeliveries.filter((d) => !d.duplicate).map((d) => d.eventId));
    const duplicatesSent = sentDeliveries.filter((d) => d.duplicate).length;

    const db = test.store.db;
    const counts = await sql<{ rows: string; distinct_ids: string; duplicates: string | null }>`
      select count(*) as rows, count(distinct event_id) as distinct_ids, sum(duplicate_count) as duplicates from webhook_event where event_id like 'load-%'`.execute(
      db,
    );
    const storedIds = new Set(
      (
        await sql<{ event_id: string }>`select event_id from webhook_event where event_id like 'load-%'`.execute(db)
      ).rows.map((r) => r.event_id),
    );
    const lost = [...unique].filter((id) => !storedIds.has(id)).length;
    const row = counts.rows[0]!;
    const duplicated =
      Number(row.rows) - Number(row.distinct_ids) + [...storedIds].filter((id) => !unique.has(id)).length;
    const notLatest = await sql<{ n: string }>`
      select count(*) as n from partner_order where order_id like 'load-ord-%' and order_id in (select order_id from webhook_event where order_state = 'COMPLETED' and event_id like 'load-%') and order_state <> 'COMPLETED'`.execute(
      db,
    );

    console.log(
      `webhook load [${LOAD_DB}]: target ${RATE}/s x ${SECONDS} s, sent ${next} (${unique.size} events, ${duplicatesSent} duplicates) in ${load.sendSeconds.toFixed(1)} s, all answered in ${seconds.toFixed(1)} s, ` +
        `acknowledged ${eventsPerSecond.toFixed(0)}/s, p50 ${load.p50Ms.toFixed(1)} ms, p99 ${p99.toFixed(1)} ms, ` +
        `max ${load.maxMs.toFixed(1)} ms, sender behind by at most ${load.worstLagMs.toFixed(0)} ms, statuses ${JSON.stringify(Object.fromEntries(statuses))}, stored ${storedIds.size}, lost ${lost}, duplicated ${duplicated}`,
    );
    recordFigure({
      kind: 'webhookLoad',
      name: `partner webhooks ${RATE}/s x ${SECONDS} s [${LOAD_DB}]`,
      db: LOAD_DB,
      eventsPerSecond: Number(eventsPerSecond.toFixed(1)),
      p99Ms: Number(p99.toFixed(1)),
      target: RATE,
      sent: next,
      stored: storedIds.size,
      duplicatesSent,
      lost,
      duplicated,
    });

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
