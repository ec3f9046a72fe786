// sql/0023_fill_raw_numbers.sql: the raw records stored with {value, isLosslessNumber} objects get their numbers back.
import { readFileSync } from 'node:fs';
import { sql } from 'kysely';
import { expect, it } from 'vitest';
import { describeEachStore } from '../helpers/db.js';

const REPAIR = readFileSync(new URL('../../sql/0023_fill_raw_numbers.sql', import.meta.url), 'utf8');

const fill = (execId: string, raw: string) => ({
  exec_id: execId,
  ex_ord_id: '7',
  side: 'BUY',
  symbol: 'ETH-USD',
  price: '20041.123456789012345678',
  qty: '0.00054044',
  fee: '0',
  timestamp: new Date(1793531708540),
  raw,
});

describeEachStore('migration 0023: fills raw records', (ctx) => {
  it('puts the numbers back as the page path stores them, and leaves every other record alone', async () => {
    const asReceived =
      '{"execId":9007199254742361,"exOrdId":"7","price":20041.123456789012345678,"qty":5.4044E-4,"fee":0,' +
      '"side":"BUY","symbol":"ETH-USD","timestamp":1793531708540,"note":{"value":"1","isLosslessNumber":false}}';
    const n = (v: string) => `{"value":"${v}","isLosslessNumber":true}`;
    const damaged =
      `{"execId":${n('9007199254742361')},"exOrdId":"7","price":${n('20041.123456789012345678')},` +
      `"qty":${n('5.4044E-4')},"fee":${n('0')},"side":"BUY","symbol":"ETH-USD","timestamp":${n('1793531708540')},` +
      '"note":{"value":"1","isLosslessNumber":false}}';
    await ctx.store.db
      .insertInto('exchange_fill')
      .values([fill('1', damaged), fill('2', asReceived)])
      .execute();
    await sql.raw(REPAIR).execute(ctx.store.db);
    const rows = await sql<{ exec_id: string; same: boolean; raw: string }>`
      select exec_id::text, raw = ${asReceived}::jsonb as same, raw::text from exchange_fill order by exec_id`.execute(
      ctx.store.db,
    );
    expect(rows.rows.map((r) => [r.exec_id, r.same])).toEqual([
      ['1', true],
      ['2', true],
    ]);
    // Digits intact: an id above 2^53 and 18 decimals.
    expect(rows.rows[0]!.raw).toContain('"execId": 9007199254742361');
    expect(rows.rows[0]!.raw).toContain('"price": 20041.123456789012345678');
    // Once repaired, running it again changes nothing.
    await sql.raw(REPAIR).execute(ctx.store.db);
    const again = await sql<{ raw: string }>`select raw::text from exchange_fill order by exec_id`.execute(
      ctx.store.db,
    );
    expect(again.rows.map((r) => r.raw)).toEqual(rows.rows.map((r) => r.raw));
  });
});
