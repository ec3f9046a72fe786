import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestStore, storeKinds } from '../helpers/db.js';
import { loadConfig } from '../../src/config/load.js';
import { silentLogger } from '../../src/log/logger.js';
import type { Store } from '../../src/store/db/database.js';
import { syncExchange } from '../helpers/sync.js';
import { startSandbox, type Sandbox, type SandboxOptions } from '../helpers/sandbox.js';
import { Decimal } from '../../src/decimal/decimal.js';

/**
 * What the exchange sync costs in requests against servers that cap or cut their answers in
 * each way the contracts leave open, with nothing missed (issue 12, items 2 to 4).
 */
const dir = mkdtempSync(join(tmpdir(), 'rr-exchange-cost-'));
const configPath = join(dir, 'config.json');
writeFileSync(
  configPath,
  JSON.stringify({
    exchange: { rateLimitPerSecond: 1000, historyStart: '2020-01-01' },
    http: { retryBaseMs: 5, retryMaxMs: 50 },
  }),
);

async function sync(store: Store, sb: Sandbox) {
  const config = loadConfig({ env: { ...sb.env }, configPath });
  return syncExchange(
    { store, config, logger: silentLogger(), runId: null, now: new Date(sb.data.clock()), signal: undefined },
    { progress: 'off' },
  );
}

/** Counts the exchange requests of `fn` by "METHOD /path" (ids folded into {id}), with their queries. */
async function counting<T>(
  sb: Sandbox,
  fn: () => Promise<T>,
): Promise<{ result: T; count: (key: string) => number; queries: (key: string) => URLSearchParams[] }> {
  const seen: Array<{ key: string; query: URLSearchParams }> = [];
  const off = sb.onRequest(({ api, method, path, query }) => {
    if (api !== 'exchange') return;
    const key = `${method} ${path.replace(/^\/(orders|deposits|withdrawals)\/.+$/, '/$1/{id}')}`;
    seen.push({ key, query: new URLSearchParams(query) });
  });
  try {
    const result = await fn();
    return {
      result,
      count: (k) => seen.filter((s) => s.key === k).length,
      queries: (k) => seen.filter((s) => s.key === k).map((s) => s.query),
    };
  } finally {
    off();
  }
}

async function withStore<T>(kind: (typeof storeKinds)[number], fn: (store: Store) => Promise<T>): Promise<T> {
  const t = await createTestStore(kind);
  try {
    return await fn(t.store);
  } finally {
    await t.drop();
  }
}

const base: Partial<SandboxOptions> = { seed: 31, ordersPerDay: 2, fillsPerOrder: 1 };

describe('deposits and withdrawals: an answer is verified, not split per record', () => {
  let sb: Sandbox;
  beforeAll(async () => {
    sb = await startSandbox({
      ...base,
      days: 10,
      exchangeOrdersPerDay: 5,
      depositsPerDay: 300,
      withdrawalsPerDay: 100,
    });
  });
  afterAll(() => sb.close());

  for (const kind of storeKinds) {
    for (const cut of [undefined, 1000, 500]) {
      it(`syncs ~3,000 deposits and ~1,000 withdrawals in at most 10 requests each, nothing missed, ${cut ? `answers cut at ${cut}` : 'no cut'}; a nightly re-read costs what its 3 days hold [${kind}]`, async () => {
        sb.setOption('paymentsAnswerCap', cut);
        await withStore(kind, async (store) => {
          const first = await counting(sb, () => sync(store, sb));
          expect(first.result.settled).toBe(true);
          const deposits = await store.db
            .selectFrom('exchange_deposit')
            .select(['deposit_id', 'state'])
            .orderBy('deposit_id')
            .execute();
          const want = sb.data.deposits();
          expect(want.length).toBeGreaterThan(3000);
          expect(deposits.map((d) => [d.deposit_id, d.state])).toEqual(
            want.map((d) => [d.depositId, d.state]).sort((a, b) => (a[0]! < b[0]! ? -1 : 1)),
          );
          const withdrawals = await store.db.selectFrom('exchange_withdrawal').select('withdrawal_id').execute();
          expect(withdrawals.length).toBe(sb.data.withdrawals().length);
          expect(first.count('GET /deposits')).toBeLessThanOrEqual(10);
          expect(first.count('GET /withdrawals')).toBeLessThanOrEqual(10);
          // Non-final ones were all listed by this run: none is asked by id.
          expect(first.count('GET /deposits/{id}')).toBe(0);
          expect(first.count('GET /withdrawals/{id}')).toBe(0);
          if (cut) expect(first.result.cursors['deposits.maxAnswer']).toBe(String(cut));
          else expect(first.result.cursors['deposits.maxAnswer']).toBe(String(want.length));

          const nightly = await counting(sb, () => sync(store, sb));
          expect(nightly.result.settled).toBe(true);
          const clock = sb.data.clock();
          const inThreeDays = want.filter((d) => d.timestamp >= clock - 3 * 86_400_000).length;
          const wdInThreeDays = sb.data.withdrawals().filter((d) => d.timestamp >= clock - 3 * 86_400_000).length;
          // Nothing changed: one answer per stream when three days fit below the cap, else the
          // walk's pages down to the first answer below the cap.
          const pages = (n: number) => (cut === undefined ? 1 : Math.floor(n / cut) + 1);
          expect(nightly.count('GET /deposits')).toBe(pages(inThreeDays));
          expect(nightly.count('GET /withdrawals')).toBe(pages(wdInThreeDays));
          if (process.env.COST_LOG)
            console.log({
              cut,
              first: ['/deposits', '/withdrawals'].map((p) => first.count(`GET ${p}`)),
              nightly: ['/deposits', '/withdrawals'].map((p) => nightly.count(`GET ${p}`)),
              inThreeDays,
              wdInThreeDays,
            });
          expect(nightly.count('GET /deposits/{id}')).toBe(0);
        });
      });
    }
  }
});

describe('orders and trades: limit 1000 asked, the real cap learned, one request per page', () => {
  for (const cap of [100, 1000]) {
    let sb: Sandbox;
    describe(`a server capped at ${cap}`, () => {
      beforeAll(async () => {
        sb = await startSandbox({
          ...base,
          days: 2,
          exchangeOrdersPerDay: 2500,
          depositsPerDay: 1,
          withdrawalsPerDay: 1,
          exchangeOrdersCap: cap,
        });
      });
      afterAll(() => sb.close());

      for (const kind of storeKinds) {
        it(`gets every order at about one request per page [${kind}]`, async () => {
          await withStore(kind, async (store) => {
            const { result, count, queries } = await counting(sb, () => sync(store, sb));
            expect(result.settled).toBe(true);
            const want = sb.data.exchangeOrders();
            const rows = await store.db
              .selectFrom('exchange_order')
              .select(['ex_ord_id', 'ord_status', 'cum_qty'])
              .orderBy('ex_ord_id')
              .execute();
            expect(rows.map((r) => [r.ex_ord_id, r.ord_status, r.cum_qty?.toString()])).toEqual(
              want
                .map((o) => [o.exOrdId, o.ordStatus, o.cumQty])
                .sort((a, b) => (BigInt(a[0]!) < BigInt(b[0]!) ? -1 : 1)),
            );
            expect(queries('GET /orders').every((q) => q.get('limit') === '1000')).toBe(true);
            expect(result.cursors['orders.maxPage']).toBe(String(cap));
            expect(result.cursors['trades.maxPage']).toBe(String(cap));
            // Pages per listing: ceil(n / cap); one request each, plus a closing page and, while
            // the cap is still the contract's 100, the splits of the first pages.
            const byStatus = new Map<string, number>();
            for (const o of want) byStatus.set(o.ordStatus, (byStatus.get(o.ordStatus) ?? 0) + 1);
            const pages = (n: number) => Math.ceil(n / cap);
            const orderPages = [...byStatus.values()].reduce((a, n) => a + pages(n), 0);
            const tradePages = pages(want.filter((o) => o.cumQty !== '0').length);
            expect(count('GET /orders')).toBeLessThanOrEqual(Math.ceil(orderPages * 1.1) + 2 * 7 + (cap > 100 ? 3 : 0));
            expect(count('GET /trades')).toBeLessThanOrEqual(Math.ceil(tradePages * 1.1) + 2 + (cap > 100 ? 3 : 0));
            if (cap === 100) expect(count('GET /trades')).toBeGreaterThanOrEqual(tradePages);
            if (process.env.COST_LOG)
              console.log({
                cap,
                orders: count('GET /orders'),
                orderPages,
                trades: count('GET /trades'),
                tradePages,
                n: want.length,
              });
          });
        });
      }
    });
  }
});

describe('open exchange orders: learned from the status listings, asked by id only when they leave', () => {
  let sb: Sandbox;
  beforeAll(async () => {
    // A fixed clock: the sandbox keeps a tenth of the orders of its last 6 hours live (OPEN /
    // PART_FILLED), so with the wall clock their number depends on the hour the suite runs (at 07:30
    // UTC this seed has 4 open orders, too few for the two tests per database; at this time 11).
    sb = await startSandbox({
      ...base,
      days: 2,
      exchangeOrdersPerDay: 600,
      depositsPerDay: 1,
      withdrawalsPerDay: 1,
      now: new Date('2026-11-20T15:00:00Z'),
    });
  });
  afterAll(() => sb.close());

  for (const kind of storeKinds) {
    it(`an old part-filled order that fills between syncs 2 and 3 lands with its fill; one request by id that night, none the next [${kind}]`, async () => {
      const clock = sb.data.clock();
      const target = sb.data
        .exchangeOrders()
        .find((o) => o.ordStatus === 'PART_FILLED' && o.timestamp < clock - 3_600_000);
      expect(target).toBeDefined();
      await withStore(kind, async (store) => {
        await sync(store, sb);
        const second = await counting(sb, () => sync(store, sb));
        expect(second.count('GET /orders/{id}')).toBe(0);

        const execId = sb.fillOrder(target!.exOrdId);
        const filled = sb.data.exchangeOrders().find((o) => o.exOrdId === target!.exOrdId)!;
        expect(filled.ordStatus).toBe('FILLED');
        const third = await counting(sb, () => sync(store, sb));
        // The order left the open set: asked by id once, as the windowed listings never show it again.
        expect(third.queries('GET /orders/{id}')).toHaveLength(1);
        const row = await store.db
          .selectFrom('exchange_order')
          .select(['ord_status', 'cum_qty', 'leaves_qty', 'avg_px'])
          .where('ex_ord_id', '=', target!.exOrdId)
          .executeTakeFirstOrThrow();
        expect([row.ord_status, row.cum_qty?.toString(), row.leaves_qty?.toString(), row.avg_px?.toString()]).toEqual([
          'FILLED',
          filled.cumQty,
          '0',
          filled.avgPx,
        ]);
        const fills = await store.db
          .selectFrom('exchange_fill')
          .select(['exec_id', 'qty'])
          .where('ex_ord_id', '=', target!.exOrdId)
          .orderBy('exec_id')
          .execute();
        expect(fills.map((f) => f.exec_id)).toContain(execId);
        const sum = fills.reduce((acc, f) => acc.plus(f.qty.toString()), new Decimal(0));
        expect(sum.toString()).toBe(filled.cumQty);
        const states = await store.db
          .selectFrom('exchange_order_state')
          .select('ord_status')
          .where('ex_ord_id', '=', target!.exOrdId)
          .orderBy('ord_status')
          .execute();
        expect(states.map((s) => s.ord_status)).toEqual(['FILLED', 'PART_FILLED']);

        const fourth = await counting(sb, () => sync(store, sb));
        expect(fourth.count('GET /orders/{id}')).toBe(0);
      });
    });

    it(`an old part-filled order cancelled between syncs 2 and 3 lands in its final state; no open order is asked by id [${kind}]`, async () => {
      const clock = sb.data.clock();
      const open = sb.data.exchangeOrders().filter((o) => o.ordStatus === 'OPEN' || o.ordStatus === 'PART_FILLED');
      const target = open.find((o) => o.ordStatus === 'PART_FILLED' && o.timestamp < clock - 3_600_000);
      expect(target).toBeDefined();
      expect(open.length).toBeGreaterThan(5);
      await withStore(kind, async (store) => {
        await sync(store, sb);
        const second = await counting(sb, () => sync(store, sb));
        expect(second.count('GET /orders/{id}')).toBe(0);
        // The open set: one listing per non-final status, without a window.
        const listings = second.queries('GET /orders').filter((q) => !q.has('from'));
        expect(listings.map((q) => q.get('status')).sort()).toEqual(['OPEN', 'PART_FILLED', 'PENDING']);

        const del = await fetch(`${sb.env.EXCHANGE_API_URL}/orders/${target!.exOrdId}`, {
          method: 'DELETE',
          headers: { 'X-API-Token': sb.env.EXCHANGE_API_TOKEN! },
        });
        expect(del.status).toBe(200);
        const third = await counting(sb, () => sync(store, sb));
        expect(third.count('GET /orders/{id}')).toBe(1);
        const row = await store.db
          .selectFrom('exchange_order')
          .select(['ord_status', 'cum_qty'])
          .where('ex_ord_id', '=', target!.exOrdId)
          .executeTakeFirstOrThrow();
        expect([row.ord_status, row.cum_qty?.toString()]).toEqual(['CANCELED', target!.cumQty]);
        const states = await store.db
          .selectFrom('exchange_order_state')
          .select('ord_status')
          .where('ex_ord_id', '=', target!.exOrdId)
          .orderBy('ord_status')
          .execute();
        expect(states.map((s) => s.ord_status)).toEqual(['CANCELED', 'PART_FILLED']);
      });
    });
  }
});
