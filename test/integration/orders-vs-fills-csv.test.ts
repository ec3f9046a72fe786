import { beforeAll, expect, it } from 'vitest';
import type { Store } from '../../src/store/db/database.js';
import { eachRow } from '../../src/store/db/keyset.js';
import { ordersWithFillsIn } from '../../src/store/report/exchange-sheets.js';
import { orderVsFillsCsvLines } from '../../src/store/report/orders-vs-fills-csv.js';
import { csvLine } from '../../src/report/csv.js';
import { Precision } from '../../src/report/precision.js';
import { BreakIndex, orderVsFillsCsvPrint, orderVsFillsRow, ordersVsFillsSpec } from '../../src/report/sheets.js';
import { describeEachStore } from '../helpers/db.js';

const ACCOUNT = 'default';
const SPAN = { from: new Date('2026-11-01T00:00:00Z'), to: new Date('2026-11-02T00:00:00Z') };

const PRECISION = new Precision({
  partner: new Map(),
  symbols: new Map([
    ['BTC-USDT', { base: 'BTC', counter: 'USDT', baseScale: 8, counterScale: 2, priceScale: 2 } as never],
  ]),
});

/** Orders and fills whose lines are easy to get wrong: ties, repeating quotients, orphans, quoting, nulls. */
async function seed({ db }: Store): Promise<void> {
  const order = (id: string, o: Record<string, unknown>) =>
    db
      .insertInto('exchange_order')
      .values({
        account: ACCOUNT,
        ex_ord_id: id,
        ord_status: 'FILLED',
        ord_type: 'LIMIT',
        side: 'BUY',
        symbol: 'BTC-USDT',
        timestamp: '2026-11-01T01:00:00Z',
        raw: '{}',
        ...o,
      })
      .execute();
  let exec = 0;
  const fill = (exOrdId: string, at: string, qty: string, price: string, fee = '0.01', symbol = 'BTC-USDT') =>
    db
      .insertInto('exchange_fill')
      .values({
        account: ACCOUNT,
        exec_id: String(++exec),
        ex_ord_id: exOrdId,
        side: 'BUY',
        symbol,
        price,
        qty,
        fee,
        timestamp: at,
        raw: '{}',
      })
      .execute();
  // VWAP exact: (0.1 x 60000 + 0.2 x 60000.75) / 0.3 = 60000.5 = avgPx
  await order('101', { cum_qty: '0.30000000', avg_px: '60000.50', leaves_qty: '0' });
  await fill('101', '2026-11-01T02:00:00.123456Z', '0.1', '60000');
  await fill('101', '2026-11-01T02:00:01Z', '0.2', '60000.75', '-0.25');
  // A quotient that repeats (6001 / 3), of a symbol with no symbol data (default decimals); a break on it
  await order('102', { symbol: 'ETH-EUR', cum_qty: '3', avg_px: '2000.333' });
  await fill('102', '2026-11-01T03:00:00Z', '1', '2000', '0.5', 'ETH-EUR');
  await fill('102', '2026-11-01T03:00:00.5Z', '2', '2000.5', '0.5', 'ETH-EUR');
  // A tie at the VWAP's sixth decimal: 0.0000005 rounds up, once; no avgPx
  await order('103', { cum_qty: '1', avg_px: null });
  await fill('103', '2026-11-01T04:00:00Z', '1', '0.0000005');
  // Just under a tie after many digits: 1.0000004999999999999999999 / 1
  await order('104', { cum_qty: '2', avg_px: '1' });
  await fill('104', '2026-11-01T04:30:00Z', '1', '1.0000004999999999999999999');
  await fill('104', '2026-11-01T04:30:00Z', '1', '1.0000004999999999999999999');
  // 70 nines after the 4: rounding first to 60 digits would make it a tie, and round it up
  await order('110', { cum_qty: '1', avg_px: '1' });
  await fill('110', '2026-11-01T09:00:00Z', '1', `1.0000004${'9'.repeat(70)}`);
  // (2^100 - 1 + 2^100 x 5e-7) / 2^100 = 1.0000005 - 2^-100: its 100 decimals go past numeric's division scale
  await order('111', { cum_qty: '1267650600228229401496703205376', avg_px: '1' });
  await fill('111', '2026-11-01T10:00:00Z', '1267650600228229401496703205375', '1');
  await fill('111', '2026-11-01T10:00:01Z', '1', '633825300114114700748351.60288');
  // An orphan: fills of an order the exchange never listed (its symbol from its fills)
  await fill('105', '2026-11-01T05:00:00.999999Z', '0.5', '1.25', '0', 'XRP-EUR');
  // Created in the span with cumQty > 0 and no fill stored; cumQty unknown on another
  await order('106', { cum_qty: '0.5', avg_px: '100', timestamp: '2026-11-01T06:00:00Z' });
  await order('107', { cum_qty: null, avg_px: null, symbol: null, side: null, ord_type: null });
  await fill('107', '2026-11-01T07:00:00Z', '3', '10', '0', 'LTC-EUR');
  // A fill before the span counts in the order's sums (all its stored fills); a symbol that needs quotes
  await order('108', { symbol: 'A,"B', cum_qty: '2', avg_px: '5', ord_status: 'PART_FILLED' });
  await fill('108', '2026-10-31T23:59:59.999999Z', '1', '4', '0', 'A,"B');
  await fill('108', '2026-11-01T08:00:00Z', '1', '6', '0', 'A,"B');
  // Outside the span entirely: not listed
  await order('109', { cum_qty: '1', timestamp: '2026-11-02T00:00:00Z' });
  await fill('109', '2026-11-02T00:00:00Z', '1', '1');
}

describeEachStore('the detail CSV of the exchange orders vs fills, written by Postgres', (t) => {
  beforeAll(() => seed(t.store));

  it('prints every order byte for byte as the sheet row does (a server; the embedded database builds the rows)', async () => {
    const breaks = new BreakIndex([
      { code: 'E_FILL_AVGPX', key: '102', entity: 'exchangeOrder' },
      { code: 'E_FILL_QTY', key: '102', entity: 'exchangeOrder' },
    ]);
    const width = ordersVsFillsSpec.columns.length;
    const rows: string[] = [];
    for await (const o of eachRow(ordersWithFillsIn(t.store.db, ACCOUNT, SPAN)))
      rows.push(csvLine(orderVsFillsRow(o, PRECISION, breaks).cells, width));
    expect(rows).toHaveLength(10);
    const { copyOut } = t.store;
    if (!copyOut) return;
    let text = '';
    let counted = 0;
    const fillSymbols = ['BTC-USDT', 'ETH-EUR', 'XRP-EUR', 'LTC-EUR', 'A,"B'];
    const print = orderVsFillsCsvPrint(PRECISION, breaks);
    for await (const page of orderVsFillsCsvLines({ db: t.store.db, copyOut }, ACCOUNT, SPAN, print, fillSymbols)) {
      text += page.text;
      counted += page.rows;
    }
    const lines = text.split(/(?<=\r\n)(?=.)/s);
    expect(counted).toBe(10);
    expect(lines).toEqual(rows);
    expect(lines).toEqual([
      '101,yes,BTC-USDT,BUY,LIMIT,FILLED,2,0.3,0.3,0,60000.5,60000.5,0,18000.15,-0.24,2026-11-01T02:00:00.123Z,2026-11-01T02:00:01.000Z,\r\n',
      expect.stringMatching(
        /^102,yes,ETH-EUR,BUY,LIMIT,FILLED,2,3,3,0,2000.333,2000\.3333+,0\.0003+,6001,1,.*,"E_FILL_AVGPX, E_FILL_QTY"\r\n$/,
      ),
      '103,yes,BTC-USDT,BUY,LIMIT,FILLED,1,1,1,0,,0.000001,,0.0000005,0.01,2026-11-01T04:00:00.000Z,2026-11-01T04:00:00.000Z,\r\n',
      '104,yes,BTC-USDT,BUY,LIMIT,FILLED,2,2,2,0,1,1,0,2.0000009999999999999999998,0.02,2026-11-01T04:30:00.000Z,2026-11-01T04:30:00.000Z,\r\n',
      '105,NO (orphan),XRP-EUR,,,,1,,0.5,,,1.25,,0.625,0,2026-11-01T05:00:00.999Z,2026-11-01T05:00:00.999Z,\r\n',
      '106,yes,BTC-USDT,BUY,LIMIT,FILLED,0,0.5,0,-0.5,100,,,0,0,,,\r\n',
      expect.stringMatching(/^107,yes,LTC-EUR,,,FILLED,1,,3,,,10,,30,0,/),
      '108,yes,"A,""B",BUY,LIMIT,PART_FILLED,2,2,2,0,5,5,0,10,0,2026-10-31T23:59:59.999Z,2026-11-01T08:00:00.000Z,\r\n',
      `110,yes,BTC-USDT,BUY,LIMIT,FILLED,1,1,1,0,1,1,0,1.0000004${'9'.repeat(70)},0.01,2026-11-01T09:00:00.000Z,2026-11-01T09:00:00.000Z,\r\n`,
      '111,yes,BTC-USDT,BUY,LIMIT,FILLED,2,1267650600228229401496703205376,1267650600228229401496703205376,0,1,1,0,1267651234053529515611403953726.60288,0.02,2026-11-01T10:00:00.000Z,2026-11-01T10:00:01.000Z,\r\n',
    ]);
  });
});
