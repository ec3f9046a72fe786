/**
 * A page of the reconcile's fills pre-selection joins its fills to their orders by hash whatever the planner expects of
 * the page (store/recon/fill-candidates.ts ordersHashJoined). The fills of a night carry exec_ids above the statistics'
 * histogram (a night's ANALYZE leaves that column alone), so the planner takes such a page for one row; joined to its
 * orders by a nested loop, each fill was compared with each order of the page (a `reconcile` re-run after a nightly run
 * of 100,000 fills: 11-13 s for one page).
 */
import { sql } from 'kysely';
import { expect, it } from 'vitest';
import { fillPrefilter } from '../../src/rules/engine.js';
import { engineConfig } from '../../src/stages/reconcile-run.js';
import { fillPageQuery, ordersHashJoined } from '../../src/store/recon/fill-candidates.js';
import type { Db } from '../../src/store/db/database.js';
import { describeEachStore } from '../helpers/db.js';
import { makeConfig, NOW } from './reconcile-seed.js';

const ACCOUNT = 'plan';
const ORDERS_PER_BATCH = 200;
const FILLS_PER_ORDER = 10;
const SPAN = { from: new Date('2026-11-09T00:00:00Z'), to: new Date('2026-11-11T00:00:00Z') };

/** `ORDERS_PER_BATCH` orders with their fills, the ids of batch `batch` above those of every batch before. */
async function storeBatch(db: Db, batch: number): Promise<void> {
  const orders = Array.from({ length: ORDERS_PER_BATCH }, (_, i) => 1_000_000 * (batch + 1) + i);
  await db
    .insertInto('exchange_order')
    .values(
      orders.map((id) => ({
        account: ACCOUNT,
        ex_ord_id: String(id),
        ord_status: 'FILLED',
        ord_type: 'LIMIT',
        side: 'BUY',
        symbol: 'ETH-USD',
        timestamp: new Date('2026-11-10T01:00:00Z'),
        raw: '{}',
      })),
    )
    .execute();
  const fills = orders.flatMap((ord, o) =>
    Array.from({ length: FILLS_PER_ORDER }, (_, k) => ({
      account: ACCOUNT,
      exec_id: String(1_000_000 * (batch + 1) + o * FILLS_PER_ORDER + k),
      ex_ord_id: String(ord),
      side: 'BUY',
      symbol: 'ETH-USD',
      price: '2000',
      qty: '0.1',
      fee: '0.2',
      timestamp: new Date(Date.parse('2026-11-10T01:00:00Z') + batch * 3_600_000 + o * 1000 + k),
      raw: '{}',
    })),
  );
  for (let i = 0; i < fills.length; i += 500)
    await db
      .insertInto('exchange_fill')
      .values(fills.slice(i, i + 500))
      .execute();
}

interface PlanNode {
  'Rows Removed by Join Filter'?: number;
  Plans?: PlanNode[];
}

function nodes(node: PlanNode): PlanNode[] {
  return [node, ...(node.Plans ?? []).flatMap(nodes)];
}

describeEachStore('a fills page joined to its orders', (ctx) => {
  const db = () => ctx.store.db;
  it('hashes the join when the statistics take a page of new fills for one row', async () => {
    // The statistics know the first batch; the second, stored after them, lies above their exec_id histogram.
    await storeBatch(db(), 0);
    await sql`analyze exchange_fill`.execute(db());
    await sql`analyze exchange_order`.execute(db());
    await storeBatch(db(), 1);
    const pageSize = ORDERS_PER_BATCH * FILLS_PER_ORDER;
    const page = sql`
      select f.exec_id, f.ex_ord_id, f.side, f.symbol, f.price, f.qty, f.fee, f.timestamp
      from exchange_fill f
      where f.account = ${ACCOUNT} and f.exec_id > ${'1999999'}::bigint and f.exec_id <= ${'2999999'}::bigint`;
    const cfg = engineConfig({ config: makeConfig(), now: NOW } as Parameters<typeof engineConfig>[0]);
    const ref = { currencies: null, symbols: null, fees: null, whitelist: null, balanceSnapshotCount: 0 };
    const query = fillPageQuery(ACCOUNT, fillPrefilter(cfg, ref, SPAN), page);
    const explain = (trx: Db) =>
      sql<{ 'QUERY PLAN': unknown }>`explain (analyze, format json) ${query}`.execute(trx).then((r) => {
        const plan = r.rows[0]!['QUERY PLAN'];
        const json = (typeof plan === 'string' ? JSON.parse(plan) : plan) as Array<{ Plan: PlanNode }>;
        return nodes(json[0]!.Plan);
      });

    // What the planner expects of the page: about one row (the case the join must survive).
    const estimate = await sql<{ 'QUERY PLAN': string }>`explain ${page}`.execute(db());
    const rows = Number(/rows=(\d+)/.exec(estimate.rows[0]!['QUERY PLAN'])![1]);
    expect(rows).toBeLessThan(pageSize / 100);

    const plan = await ordersHashJoined(db(), explain);
    // Every fill of the page compared with its order alone: no fill-by-order comparisons thrown away.
    const thrownAway = plan.reduce((sum, n) => sum + (n['Rows Removed by Join Filter'] ?? 0), 0);
    expect(thrownAway).toBe(0);
    // The page scanned every fill, and each candidate met its order (the join found it).
    const result = await ordersHashJoined(db(), async (trx) => (await query.execute(trx)).rows);
    expect(Number(result[0]!.scanned)).toBe(pageSize);
    const candidates = result.filter((r) => r.exec_id !== null);
    expect(candidates.every((r) => r.order_id !== null)).toBe(true);
  });
});
