import { sql } from 'kysely';
import { expect, it } from 'vitest';
import { describeEachStore } from '../helpers/db.js';
import {
  upsertOrders,
  upsertDeposits,
  recordPage,
  type PageBookkeeping,
} from '../../src/store/sync/exchange-records.js';
import type { NewExchangeOrder } from '../../src/store/db/schema.js';
import type { Db } from '../../src/store/db/database.js';

const order = (id: string, status: string, cumQty: string): NewExchangeOrder => ({
  ex_ord_id: id,
  cl_ord_id: `c${id}`,
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
  timestamp: '2026-11-20T10:00:00.000Z',
  raw: `{"exOrdId":${id},"ordStatus":"${status}","cumQty":"${cumQty}"}`,
});

const bookkeeping = (cursor: string): PageBookkeeping => ({
  account: 'default',
  runId: 'run-1',
  coverageStream: 'orders.FILLED',
  coverage: new Map([['2026-11-20', { pages: 1, rows: 2, quarantined: 0, settled: true }]]),
  cursors: [{ name: 'orders.FILLED.time', value: cursor }],
});

/** The statement's own setting, read inside the transaction it ran in. */
async function syncCommitAfter(db: Db, write: (trx: Db) => Promise<unknown>): Promise<string> {
  return db.transaction().execute(async (trx) => {
    await write(trx);
    const r = await sql<{ synchronous_commit: string }>`show synchronous_commit`.execute(trx);
    return r.rows[0]!.synchronous_commit;
  });
}

describeEachStore('exchange page commit', (ctx) => {
  it('writes a window page, its coverage and its cursor in one statement that commits asynchronously', async () => {
    const db = ctx.store.db;
    const at = new Date('2026-11-21T00:00:00Z');
    expect(
      await syncCommitAfter(db, (trx) =>
        upsertOrders(trx, 'default', [order('7', 'FILLED', '1.5'), order('5', 'OPEN', '0')], at, bookkeeping('1000')),
      ),
    ).toBe('off');
    const orders = await db
      .selectFrom('exchange_order')
      .select(['ex_ord_id', 'ord_status', 'cum_qty', 'last_seen_at'])
      .orderBy('ex_ord_id')
      .execute();
    expect(orders.map((o) => [o.ex_ord_id, o.ord_status, String(o.cum_qty)])).toEqual([
      ['5', 'OPEN', '0'],
      ['7', 'FILLED', '1.5'],
    ]);
    const cov = await db.selectFrom('sync_coverage').select(['stream', 'pages', 'rows']).execute();
    expect(cov).toEqual([{ stream: 'orders.FILLED', pages: 1, rows: 2 }]);
    const cur = await db.selectFrom('sync_cursor').select(['name', 'value']).execute();
    expect(cur).toEqual([{ name: 'orders.FILLED.time', value: '1000' }]);

    // The same page again in the same run: rows not rewritten, coverage adds up, cursor moves.
    await upsertOrders(
      db,
      'default',
      [order('7', 'FILLED', '1.5'), order('5', 'FILLED', '2')],
      at,
      bookkeeping('2000'),
    );
    const states = await db
      .selectFrom('exchange_order_state')
      .select(['ex_ord_id', 'ord_status'])
      .orderBy('ex_ord_id')
      .orderBy('ord_status')
      .execute();
    expect(states.map((s) => `${s.ex_ord_id}:${s.ord_status}`)).toEqual(['5:FILLED', '5:OPEN', '7:FILLED']);
    expect(await db.selectFrom('sync_coverage').select(['pages', 'rows']).executeTakeFirstOrThrow()).toEqual({
      pages: 2,
      rows: 4,
    });
    expect((await db.selectFrom('sync_cursor').select('value').executeTakeFirstOrThrow()).value).toBe('2000');

    // An empty window still records its coverage and cursor, asynchronously too.
    expect(
      await syncCommitAfter(db, (trx) =>
        upsertDeposits(trx, 'default', [], at, {
          ...bookkeeping('3000'),
          coverageStream: 'deposits',
          cursors: [{ name: 'deposits.time', value: '3000' }],
        }),
      ),
    ).toBe('off');
    expect(await syncCommitAfter(db, (trx) => recordPage(trx, bookkeeping('4000')))).toBe('off');
    const cursors = await db.selectFrom('sync_cursor').select(['name', 'value']).orderBy('name').execute();
    expect(cursors).toEqual([
      { name: 'deposits.time', value: '3000' },
      { name: 'orders.FILLED.time', value: '4000' },
    ]);
  });

  it('keeps the larger of a growing cursor (a learned page cap) when two listings commit out of order; other cursors take the last value', async () => {
    const db = ctx.store.db;
    const page = (cursors: PageBookkeeping['cursors']): PageBookkeeping => ({
      account: 'caps',
      runId: null,
      coverageStream: 'orders.FILLED',
      coverage: new Map(),
      cursors,
    });
    const caps = async () =>
      Object.fromEntries(
        (await db.selectFrom('sync_cursor').select(['name', 'value']).where('account', '=', 'caps').execute()).map(
          (r) => [r.name, r.value],
        ),
      );
    await recordPage(
      db,
      page([
        { name: 'orders.maxPage', value: '100', grows: true },
        { name: 'orders.FILLED.time', value: '5000' },
      ]),
    );
    await recordPage(
      db,
      page([
        { name: 'orders.maxPage', value: '16', grows: true },
        { name: 'orders.FILLED.time', value: '4000' },
      ]),
    );
    expect(await caps()).toEqual({ 'orders.maxPage': '100', 'orders.FILLED.time': '4000' });
    await recordPage(db, page([{ name: 'orders.maxPage', value: '1000', grows: true }]));
    expect((await caps())['orders.maxPage']).toBe('1000');
  });
});
