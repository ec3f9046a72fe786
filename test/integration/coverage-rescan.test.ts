import { afterAll, beforeAll, expect, it } from 'vitest';
import { describeEachStore } from '../helpers/db.js';
import { loadConfig } from '../../src/config/load.js';
import { silentLogger } from '../../src/log/logger.js';
import type { Store } from '../../src/store/db/database.js';
import { coverageOfDays } from '../../src/store/sync/cursors.js';
import { syncExchange } from '../helpers/sync.js';
import { makeData, startFakeExchange, type FakeExchange, fakeExchangeConfigFile } from './exchange-fake-api.js';

/**
 * Issue 17 item 4 through the exchange sync: syncs of the same account one after another (from
 * the cursors, then a backfill of what the first read) leave every day's rows and quarantined as
 * the first sync stored them, and add their pages.
 */
const configPath = fakeExchangeConfigFile('rr-coverage-');
const PERIOD = { from: '2026-09-01', to: '2027-01-01' };
const dayOf = (ms: number) => new Date(ms).toISOString().slice(0, 10);

type Figures = Map<string, { pages: number; rows: number; quarantined: number }>;

async function coverage(store: Store): Promise<Figures> {
  const rows = await coverageOfDays(store.db, 'default', PERIOD);
  return new Map(
    rows.map((r) => [`${r.source}:${r.stream}:${r.day}`, { pages: r.pages, rows: r.rows, quarantined: r.quarantined }]),
  );
}

describeEachStore('coverage over repeated exchange syncs', (ctx) => {
  let api: FakeExchange;
  let now: Date;
  beforeAll(async () => {
    const data = makeData(600, 400);
    // As the exchange reports them: only orders with fills carry a filled quantity (what /trades lists here).
    for (const o of data.orders) if (o.ordStatus !== 'FILLED' && o.ordStatus !== 'PART_FILLED') o.cumQty = '0';
    // A FILLED order without fills that fails validation in both listings that return it.
    const bad = data.orders[300]!;
    data.malformed.set(
      bad.exOrdId,
      JSON.stringify({
        exOrdId: bad.exOrdId,
        clOrdId: bad.clOrdId,
        ordType: 'LIMIT',
        ordStatus: 'FILLED',
        side: bad.side,
        symbol: bad.symbol,
        price: 'abc',
        timestamp: bad.timestamp,
      }),
    );
    api = await startFakeExchange(data, { fillsOrder: 'newest-first', inclusive: true });
    // "Now" just after the last order: the next sync's overlap re-reads the last orders of their day.
    now = new Date(Math.max(...data.orders.map((o) => o.timestamp)) + 1);
  });
  afterAll(() => api.close());

  const sync = (runId: string, backfill?: { from: Date; to: Date }) => {
    const config = loadConfig({ env: { EXCHANGE_API_URL: api.url, EXCHANGE_API_TOKEN: api.token }, configPath });
    return syncExchange(
      { store: ctx.store, config, logger: silentLogger(), runId, now },
      { progress: 'off', backfill },
    );
  };

  it("a rescan leaves every day's rows and quarantined as stored, and adds its pages", async () => {
    await sync('run-1');
    const first = await coverage(ctx.store);
    // The order listings' figures are the fake's orders of each day, by status and with fills.
    const bad = api.data.orders[300]!;
    const want = new Map<string, number>();
    for (const o of api.data.orders) {
      if (o === bad) continue;
      const day = dayOf(o.timestamp);
      for (const stream of [
        `orders.${o.ordStatus}`,
        ...(o.ordStatus === 'FILLED' || o.ordStatus === 'PART_FILLED' ? ['trades'] : []),
      ])
        want.set(`exchange:${stream}:${day}`, (want.get(`exchange:${stream}:${day}`) ?? 0) + 1);
    }
    for (const [key, n] of want) expect(first.get(key)?.rows, key).toBe(n);
    expect(first.get(`exchange:orders.FILLED:${dayOf(bad.timestamp)}`)?.quarantined).toBe(1);
    expect(first.get(`exchange:trades:${dayOf(bad.timestamp)}`)?.quarantined).toBe(1);
    const lastDay = dayOf(now.getTime() - 1);
    const listings = [...first.keys()].filter(
      (k) => /^exchange:(orders\.[A-Z_]+|trades):/.test(k) && k.endsWith(`:${lastDay}`),
    );
    expect(listings.length).toBeGreaterThanOrEqual(5);

    // Run 2 reads from its cursors: only the overlap, the last orders of their day.
    await sync('run-2');
    const second = await coverage(ctx.store);
    // Run 3 backfills from the first order to now: the same range run 1 read.
    await sync('run-3', { from: new Date(Math.min(...api.data.orders.map((o) => o.timestamp))), to: now });
    const third = await coverage(ctx.store);
    for (const [key, f] of first) {
      if (key.includes(':cursor:')) continue;
      for (const [name, later] of [
        ['second', second.get(key)],
        ['third', third.get(key)],
      ] as const) {
        expect(later?.rows, `${name} ${key}`).toBe(f.rows);
        expect(later?.quarantined, `${name} ${key}`).toBe(f.quarantined);
      }
      expect(second.get(key)!.pages, key).toBeGreaterThanOrEqual(f.pages);
      expect(third.get(key)!.pages, key).toBeGreaterThanOrEqual(second.get(key)!.pages);
    }
    // Each listing asked again for the day: its pages added to the earlier runs'.
    for (const key of listings) {
      expect(second.get(key)!.pages, key).toBeGreaterThan(first.get(key)!.pages);
      expect(third.get(key)!.pages, key).toBeGreaterThan(second.get(key)!.pages);
    }
  });
});
