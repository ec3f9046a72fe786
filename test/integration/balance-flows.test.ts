import { sql } from 'kysely';
import { expect, it } from 'vitest';
import { describeEachStore } from '../helpers/db.js';
import { dailyFlows, type FlowOptions } from '../../src/store/recon/balance-flows.js';
import type { DayFlows } from '../../src/domain/index.js';

/**
 * The roll-forward's daily flows between two balance snapshots, summed in SQL: each fill moves its base and its
 * counter currency by side, its fee lands on the configured currency, a symbol the snapshot does not know is read as
 * BASE-COUNTER, and only the fills after the opening's answer and up to the closing's request count.
 */
describeEachStore('balance roll daily flows', (ctx) => {
  const account = 'flows';
  let opening = '';
  let closing = '';
  let symbols = '';

  const fill = (execId: number, symbol: string, side: string, price: string, qty: string, fee: string, at: string) =>
    sql`insert into exchange_fill (account, exec_id, ex_ord_id, side, symbol, price, qty, fee, timestamp, raw)
        values (${account}, ${execId}, ${execId}, ${side}, ${symbol}, ${price}::numeric, ${qty}::numeric,
          ${fee}::numeric, ${at}::timestamptz, '{}'::jsonb)`;

  const seed = async () => {
    const db = ctx.store.db;
    const snap = async (fetched: string, requested: string) =>
      (
        await sql<{
          id: string;
        }>`insert into balance_snapshot (account, exchange_account, fetched_at, requested_at, raw)
          values (${account}, 'main', ${fetched}::timestamptz, ${requested}::timestamptz, '[]'::jsonb)
          returning id::text`.execute(db)
      ).rows[0]!.id;
    opening = await snap('2026-03-01T02:00:01Z', '2026-03-01T02:00:00Z');
    closing = await snap('2026-03-03T02:00:05Z', '2026-03-03T02:00:00Z');
    symbols = (
      await sql<{ id: string }>`insert into reference_snapshot (account, source, kind, fetched_at, content_hash, body)
        values (${account}, 'exchange', 'symbols', '2026-03-01T02:00:00Z', 'h', '[]'::jsonb) returning id::text`.execute(
        db,
      )
    ).rows[0]!.id;
    await sql`insert into exchange_symbol (snapshot_id, symbol, base_currency, counter_currency)
      values (${symbols}::bigint, 'XBTUSD', 'BTC', 'USD')`.execute(db);
    for (const q of [
      // before the opening's answer, and after the closing's request: outside
      fill(1, 'XBTUSD', 'BUY', '100', '1', '1', '2026-03-01T02:00:00.5Z'),
      fill(2, 'XBTUSD', 'BUY', '100', '1', '1', '2026-03-03T02:00:01Z'),
      // day one: a buy and a sell of a known symbol, a buy of an unknown one
      fill(3, 'XBTUSD', 'BUY', '100.5', '0.2', '0.01', '2026-03-01T10:00:00Z'),
      fill(4, 'XBTUSD', 'SELL', '101', '0.05', '0.02', '2026-03-01T11:00:00Z'),
      fill(5, 'ETH-USD', 'BUY', '2000', '0.123456789012345678', '0.5', '2026-03-01T12:00:00Z'),
      // day two: a sell of the unknown symbol, a buy of the known one
      fill(6, 'ETH-USD', 'SELL', '2100.25', '1', '0.25', '2026-03-02T09:00:00Z'),
      fill(7, 'XBTUSD', 'BUY', '99', '3', '0.3', '2026-03-02T23:59:59.999Z'),
      // another account's fill in the window: not this account's flows
      sql`insert into exchange_fill (account, exec_id, ex_ord_id, side, symbol, price, qty, fee, timestamp, raw)
          values ('other', 8, 8, 'BUY', 'XBTUSD', 1, 1, 1, '2026-03-02T00:00:00Z', '{}'::jsonb)`,
    ])
      await q.execute(db);
  };

  const flows = async (feeCurrency: FlowOptions['feeCurrency']) => {
    if (!opening) await seed();
    const rows = await dailyFlows(ctx.store.db, opening, closing, { account, symbolsSnapshotId: symbols, feeCurrency });
    return rows.map((r: DayFlows) => ({
      currency: r.currency,
      day: r.day,
      bought: r.bought.toString(),
      sold: r.sold.toString(),
      fees: r.fees.toString(),
      payments: `${r.deposits.toString()}/${r.withdrawals.toString()}`,
    }));
  };

  it('moves base and counter by side, the fees on the counter currency, per currency and UTC day', async () => {
    expect(await flows('counter')).toEqual([
      { currency: 'BTC', day: '2026-03-01', bought: '0.2', sold: '0.05', fees: '0', payments: '0/0' },
      { currency: 'BTC', day: '2026-03-02', bought: '3', sold: '0', fees: '0', payments: '0/0' },
      { currency: 'ETH', day: '2026-03-01', bought: '0.123456789012345678', sold: '0', fees: '0', payments: '0/0' },
      { currency: 'ETH', day: '2026-03-02', bought: '0', sold: '1', fees: '0', payments: '0/0' },
      // 0.05 x 101 in; 0.2 x 100.5 + 0.123456789012345678 x 2000 out; fees 0.01 + 0.02 + 0.5
      {
        currency: 'USD',
        day: '2026-03-01',
        bought: '5.05',
        sold: '267.013578024691356',
        fees: '0.53',
        payments: '0/0',
      },
      { currency: 'USD', day: '2026-03-02', bought: '2100.25', sold: '297', fees: '0.55', payments: '0/0' },
    ]);
  });

  it('puts the fees on the base currency when the exchange charges them there', async () => {
    const fees = (await flows('base')).map((r) => `${r.currency} ${r.day} ${r.fees}`);
    expect(fees).toEqual([
      'BTC 2026-03-01 0.03',
      'BTC 2026-03-02 0.3',
      'ETH 2026-03-01 0.5',
      'ETH 2026-03-02 0.25',
      'USD 2026-03-01 0',
      'USD 2026-03-02 0',
    ]);
  });
});
