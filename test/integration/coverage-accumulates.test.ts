import { expect, it } from 'vitest';
import { sql } from 'kysely';
import { coverageOfDays } from '../../src/store/sync/cursors.js';
import { saveCoverage } from '../../src/store/sync/partner-orders.js';
import { upsertOrders } from '../../src/store/sync/exchange-records.js';
import { quarantineRecords, resolveQuarantined } from '../../src/store/sync/quarantine.js';
import type { Db } from '../../src/store/db/database.js';
import type { NewExchangeOrder } from '../../src/store/db/schema.js';
import { describeEachStore } from '../helpers/db.js';

const DAY = '2026-11-20';
const DAY_MS = Date.parse(`${DAY}T00:00:00Z`);

// Issue 17, "What failed" 4: after a second run the Coverage sheet showed the last scan only (86
// deposits of a day that holds 701), and the day's quarantined count fell to 0 while the
// quarantined record was still open.
describeEachStore('coverage accumulates over runs', (ctx) => {
  it("counts everything stored and still quarantined for a day, not the last scan's numbers", async () => {
    const db = ctx.store.db;
    // Run 1 read the whole day: 701 deposits and one bad record, quarantined.
    await sql`insert into exchange_deposit (deposit_id, amount, currency, address, state, timestamp, raw)
      select 'dep-' || g, 1, 'BTC', 'addr', 'COMPLETED', ${new Date(DAY_MS)}::timestamptz + (g || ' seconds')::interval, '{}'
      from generate_series(1, 701) g`.execute(db);
    // A deposit of the next day, outside the period.
    await sql`insert into exchange_deposit (deposit_id, amount, currency, address, state, timestamp, raw)
      values ('dep-next', 1, 'BTC', 'addr', 'COMPLETED', ${new Date(DAY_MS + 86_400_000 + 5)}, '{}')`.execute(db);
    await db
      .insertInto('quarantine')
      .values([
        {
          source: 'exchange',
          endpoint: '/deposits',
          entity: 'deposit',
          record_key: 'dep-bad',
          position: null,
          raw_text: JSON.stringify({ id: 'dep-bad', timestamp: DAY_MS + 3_600_000, amount: 'x' }),
          raw_hash: 'h1',
          reason: 'amount: must be a decimal number (got "x")',
        },
        {
          source: 'exchange',
          endpoint: '/deposits',
          entity: 'deposit',
          record_key: 'dep-fixed',
          position: null,
          raw_text: JSON.stringify({ id: 'dep-fixed', timestamp: DAY_MS + 7_200_000 }),
          raw_hash: 'h2',
          reason: 'was bad',
          resolved_at: new Date(),
        },
      ])
      .execute();
    await db
      .insertInto('sync_coverage')
      .values({
        source: 'exchange',
        stream: 'deposits',
        day: DAY,
        pages: 1,
        rows: 701,
        quarantined: 1,
        settled: true,
        run_id: 'run-1',
      })
      .execute();
    // Run 2 read from its cursor: 86 new rows of the day, nothing bad; its row replaced run 1's.
    await db
      .updateTable('sync_coverage')
      .set({ rows: 86, quarantined: 0, run_id: 'run-2' })
      .where('stream', '=', 'deposits')
      .execute();
    // The partner's day, scanned twice the same way through the partner store.
    await saveCoverage(
      db,
      'default',
      'run-1',
      { day: DAY, stream: 'orders', pages: 1, rows: 0, quarantined: 0, settled: true, detail: null },
      new Date(),
    );

    const rows = await coverageOfDays(db, 'default', { from: DAY, to: '2026-11-21' });
    const deposits = rows.find((r) => r.source === 'exchange' && r.stream === 'deposits' && r.day === DAY);
    expect(deposits?.rows).toBe(701);
    expect(deposits?.quarantined).toBe(1);
    expect(deposits?.runId).toBe('run-2');
    const orders = rows.find((r) => r.source === 'partner' && r.stream === 'orders');
    expect(orders?.rows).toBe(0);

    // A third scan adds: one more deposit stored for the day shows as 702, whatever that scan read.
    await sql`insert into exchange_deposit (deposit_id, amount, currency, address, state, timestamp, raw)
      values ('dep-late', 1, 'BTC', 'addr', 'COMPLETED', ${new Date(DAY_MS + 86_000_000)}, '{}')`.execute(db);
    await db.updateTable('sync_coverage').set({ rows: 1, run_id: 'run-3' }).where('stream', '=', 'deposits').execute();
    const again = await coverageOfDays(db, 'default', { from: DAY, to: '2026-11-21' });
    expect(again.find((r) => r.stream === 'deposits')?.rows).toBe(702);
    // Counts the caller already holds (the report's per-day sums of the fills) stand for the store's for their
    // stream only; a day they lack counts 0.
    const counted = await coverageOfDays(
      db,
      'default',
      { from: DAY, to: '2026-11-21' },
      new Map([['exchange:deposits', new Map([['2026-11-19', 5]])]]),
    );
    expect(counted.find((r) => r.stream === 'deposits')?.rows).toBe(0);
    const given = await coverageOfDays(
      db,
      'default',
      { from: DAY, to: '2026-11-21' },
      new Map([['exchange:deposits', new Map([[DAY, 702]])]]),
    );
    expect(given).toEqual(again);

    // The bad deposit comes back fixed and its entry is resolved, while the last scan's own count
    // still says 1 (or 2, a record read twice across a page boundary): the store decides, 0.
    await db.updateTable('quarantine').set({ resolved_at: new Date() }).where('record_key', '=', 'dep-bad').execute();
    await db
      .updateTable('sync_coverage')
      .set({ quarantined: 2, run_id: 'run-4' })
      .where('stream', '=', 'deposits')
      .execute();
    const fixed = await coverageOfDays(db, 'default', { from: DAY, to: '2026-11-21' });
    expect(fixed.find((r) => r.stream === 'deposits')?.quarantined).toBe(0);
  });
});

const ORDER_DAY = '2026-11-18';
const ORDER_DAY_MS = Date.parse(`${ORDER_DAY}T00:00:00Z`);
const STATUSES = ['FILLED', 'PART_FILLED', 'OPEN', 'CANCELED', 'CANCELED'] as const;

/** Order i of ORDER_DAY (or `dayMs`): by i % 5 FILLED, PART_FILLED, OPEN, CANCELED with a partial fill, CANCELED unfilled. */
function orderRow(i: number, status: string = STATUSES[i % 5]!, dayMs = ORDER_DAY_MS): NewExchangeOrder {
  const cumQty =
    status === 'FILLED' ? '1' : status === 'PART_FILLED' ? '0.5' : status === 'CANCELED' && i % 5 === 3 ? '0.2' : '0';
  return {
    ex_ord_id: String(1000 + i),
    cl_ord_id: `c${i}`,
    ord_type: 'LIMIT',
    ord_status: status,
    side: 'BUY',
    price: '100.5',
    text: null,
    symbol: 'BTC-USD',
    last_shares: null,
    last_px: null,
    leaves_qty: null,
    cum_qty: cumQty,
    avg_px: '100.5',
    timestamp: new Date(dayMs + i * 60_000).toISOString(),
    raw: JSON.stringify({ exOrdId: String(1000 + i), ordStatus: status, cumQty, timestamp: dayMs + i * 60_000 }),
  };
}

/** A scan's page of one listing: its rows and coverage written in one statement, as commitLeaf does. */
async function listed(
  db: Db,
  runId: string,
  stream: string,
  rows: NewExchangeOrder[],
  at: Date,
  pages = 1,
  quarantined = 0,
): Promise<void> {
  const coverage = new Map([[ORDER_DAY, { pages, rows: rows.length, quarantined, settled: true }]]);
  await upsertOrders(db, 'default', rows, at, {
    account: 'default',
    runId,
    coverageStream: stream,
    coverage,
    cursors: [],
  });
}

/** Figures of the Coverage sheet for ORDER_DAY, by stream. */
async function orderDay(db: Db): Promise<Record<string, { pages: number; rows: number; quarantined: number }>> {
  const rows = await coverageOfDays(db, 'default', { from: ORDER_DAY, to: '2026-11-19' });
  return Object.fromEntries(
    rows.map((r) => [`${r.source}:${r.stream}`, { pages: r.pages, rows: r.rows, quarantined: r.quarantined }]),
  );
}

describeEachStore('coverage of the exchange order listings and of pages accumulates over runs', (ctx) => {
  it("orders.<STATUS> and trades count every stored order of the day ever seen in the listing's set, pages add up, a re-run grows pages only", async () => {
    const db = ctx.store.db;
    const all = Array.from({ length: 250 }, (_, i) => orderRow(i));
    const run1 = new Date('2026-11-19T01:00:00Z');
    // Run 1 read the whole day: each status listing its 50 (CANCELED 100), trades the 150 orders
    // with fills. The CANCELED listing quarantined q4 (below); trades read q1 twice (a page
    // boundary inside a millisecond), which its scan counts twice.
    for (const status of ['FILLED', 'PART_FILLED', 'OPEN'])
      await listed(
        db,
        'run-1',
        `orders.${status}`,
        all.filter((r) => r.ord_status === status),
        run1,
        2,
      );
    await listed(
      db,
      'run-1',
      'orders.CANCELED',
      all.filter((r) => r.ord_status === 'CANCELED'),
      run1,
      2,
      1,
    );
    await listed(
      db,
      'run-1',
      'trades',
      all.filter((r) => r.cum_qty !== '0'),
      run1,
      2,
      2,
    );
    // The open set (listed whole, not by day) keeps its last scan's figures.
    await listed(db, 'run-1', 'orders.open', all.filter((r) => r.ord_status === 'OPEN').slice(0, 5), run1);
    // An order of the next day, outside the period.
    await upsertOrders(db, 'default', [orderRow(9999, 'FILLED', ORDER_DAY_MS + 86_400_000 - 9999 * 60_000 + 1)], run1);
    // Quarantined: a FILLED order read by both listings of its kind (one entry each), one asked by
    // id (no listing's), one resolved since, one of another day, and one whose status cannot be
    // read (no listing can be told: the status listings keep their scans' counts).
    const bad = (id: string, status: unknown, ms: number) =>
      JSON.stringify({ exOrdId: id, ordStatus: status, price: 'abc', timestamp: ms });
    await quarantineRecords(db, [
      {
        account: 'default',
        source: 'exchange',
        endpoint: 'GET /orders',
        entity: 'exchange_order',
        recordKey: 'q1',
        position: null,
        rawText: bad('q1', 'FILLED', ORDER_DAY_MS + 5),
        reason: 'price',
      },
      {
        account: 'default',
        source: 'exchange',
        endpoint: 'GET /trades',
        entity: 'exchange_order',
        recordKey: 'q1',
        position: null,
        rawText: bad('q1', 'FILLED', ORDER_DAY_MS + 5),
        reason: 'price',
      },
      {
        account: 'default',
        source: 'exchange',
        endpoint: 'GET /orders/{id}',
        entity: 'exchange_order',
        recordKey: 'q2',
        position: null,
        rawText: bad('q2', 'FILLED', ORDER_DAY_MS + 6),
        reason: 'price',
      },
      {
        account: 'default',
        source: 'exchange',
        endpoint: 'GET /orders',
        entity: 'exchange_order',
        recordKey: 'q3',
        position: null,
        rawText: bad('q3', 'OPEN', ORDER_DAY_MS + 7),
        reason: 'price',
      },
      {
        account: 'default',
        source: 'exchange',
        endpoint: 'GET /orders',
        entity: 'exchange_order',
        recordKey: 'q4',
        position: null,
        rawText: bad('q4', 7, ORDER_DAY_MS + 8),
        reason: 'ordStatus',
      },
      {
        account: 'default',
        source: 'exchange',
        endpoint: 'GET /orders',
        entity: 'exchange_order',
        recordKey: 'q5',
        position: null,
        rawText: bad('q5', 'FILLED', ORDER_DAY_MS - 1),
        reason: 'price',
      },
    ]);
    await resolveQuarantined(db, 'default', 'exchange_order', ['q3']);
    const first = await orderDay(db);
    expect(first['exchange:orders.FILLED']).toEqual({ pages: 2, rows: 50, quarantined: 1 });
    expect(first['exchange:orders.PART_FILLED']).toEqual({ pages: 2, rows: 50, quarantined: 0 });
    expect(first['exchange:orders.OPEN']).toEqual({ pages: 2, rows: 50, quarantined: 0 });
    expect(first['exchange:orders.CANCELED']).toEqual({ pages: 2, rows: 100, quarantined: 1 });
    expect(first['exchange:trades']).toEqual({ pages: 2, rows: 150, quarantined: 1 });

    // Run 2 read from its cursors: three of the OPEN orders are FILLED by now; the OPEN listing found none of the day.
    const run2 = new Date('2026-11-20T01:00:00Z');
    const nowFilled = all
      .filter((r) => r.ord_status === 'OPEN')
      .slice(0, 3)
      .map((r) => orderRow(Number(r.ex_ord_id) - 1000, 'FILLED'));
    await listed(db, 'run-2', 'orders.FILLED', nowFilled, run2);
    await listed(db, 'run-2', 'trades', nowFilled, run2);
    await listed(db, 'run-2', 'orders.OPEN', [], run2);
    await listed(db, 'run-2', 'orders.open', all.filter((r) => r.ord_status === 'OPEN').slice(3, 5), run2);
    const second = await orderDay(db);
    expect(second['exchange:orders.FILLED']).toEqual({ pages: 3, rows: 53, quarantined: 1 });
    // Still the 50 orders seen OPEN: a listing that now returns none of them does not shrink the day.
    expect(second['exchange:orders.OPEN']).toEqual({ pages: 3, rows: 50, quarantined: 0 });
    expect(second['exchange:orders.PART_FILLED']).toEqual({ pages: 2, rows: 50, quarantined: 0 });
    expect(second['exchange:trades']).toEqual({ pages: 3, rows: 153, quarantined: 1 });
    expect(second['exchange:orders.open']).toEqual({ pages: 2, rows: 2, quarantined: 0 });

    // The same sync again (run 3): nothing but pages grows.
    const run3 = new Date('2026-11-20T02:00:00Z');
    await listed(db, 'run-3', 'orders.FILLED', nowFilled, run3);
    await listed(db, 'run-3', 'trades', nowFilled, run3);
    await listed(db, 'run-3', 'orders.OPEN', [], run3);
    await quarantineRecords(db, [
      {
        account: 'default',
        source: 'exchange',
        endpoint: 'GET /orders',
        entity: 'exchange_order',
        recordKey: 'q1',
        position: null,
        rawText: bad('q1', 'FILLED', ORDER_DAY_MS + 5),
        reason: 'price',
      },
    ]);
    const third = await orderDay(db);
    expect(third['exchange:orders.FILLED']).toEqual({ pages: 4, rows: 53, quarantined: 1 });
    expect(third['exchange:orders.OPEN']).toEqual({ pages: 4, rows: 50, quarantined: 0 });
    expect(third['exchange:trades']).toEqual({ pages: 4, rows: 153, quarantined: 1 });
    expect(third['exchange:orders.CANCELED']).toEqual(first['exchange:orders.CANCELED']);
  });

  it("the partner's day listing adds its pages to the earlier runs'; the rest is the latest listing's", async () => {
    const db = ctx.store.db;
    const day = (pages: number, rows: number, quarantined: number, settled: boolean) => ({
      day: ORDER_DAY,
      stream: 'orders',
      pages,
      rows,
      quarantined,
      settled,
      detail: { pages },
    });
    await saveCoverage(db, 'default', 'run-1', day(3, 120, 1, false), new Date('2026-11-19T01:00:00Z'));
    await saveCoverage(db, 'default', 'run-2', day(2, 120, 0, true), new Date('2026-11-20T01:00:00Z'));
    const row = await db
      .selectFrom('sync_coverage')
      .select(['pages', 'rows', 'quarantined', 'settled', 'run_id'])
      .where('source', '=', 'partner')
      .executeTakeFirstOrThrow();
    expect(row).toEqual({ pages: 5, rows: 120, quarantined: 0, settled: true, run_id: 'run-2' });
    expect((await orderDay(db))['partner:orders']?.pages).toBe(5);
  });
});
