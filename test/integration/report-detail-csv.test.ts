import { beforeAll, expect, it } from 'vitest';
import type { Store } from '../../src/store/db/database.js';
import { eachRow } from '../../src/store/db/keyset.js';
import { fillsByTimeIn } from '../../src/store/report/exchange-sheets.js';
import { fillCsvPages, partnerOrderCsvPages } from '../../src/store/report/sheet-csv.js';
import type { CsvPage, CsvReader } from '../../src/store/report/csv-text.js';
import { csvLine } from '../../src/report/csv.js';
import { Precision } from '../../src/report/precision.js';
import {
  BreakIndex,
  fillRow,
  fillCsvFields,
  fillsSpec,
  partnerOrderRow,
  partnerOrdersSpec,
} from '../../src/report/sheets.js';
import { partnerOrdersCreatedIn } from '../../src/store/recon/partner-reads.js';
import { upsertPartnerOrders } from '../../src/store/sync/partner-orders.js';
import type { NewPartnerOrder } from '../../src/store/db/schema.js';
import { describeEachStore } from '../helpers/db.js';

const ACCOUNT = 'default';
const SPAN = { from: new Date('2026-11-01T00:00:00Z'), to: new Date('2026-11-02T00:00:00Z') };

/** The store without its COPY stream: CSV text by keyset pages, as on the embedded database. */
const paged = (store: Store): CsvReader => ({ db: store.db });

/** The lines of CSV pages, and the row counts the pages claim (which must add up to the lines). */
async function linesOf(pages: AsyncIterable<CsvPage>): Promise<string[]> {
  let text = '';
  let rows = 0;
  for await (const p of pages) {
    text += p.text;
    rows += p.rows;
  }
  const lines = text ? text.split(/(?<=\r\n)(?=.)/s) : [];
  expect(lines).toHaveLength(rows);
  return lines;
}

/** Fills whose texts are easy to get wrong: sub-millisecond times, trailing zeros, 18 decimals, a symbol unknown or absent, huge values. */
async function seed({ db }: Store): Promise<void> {
  let id = 0;
  const fill = (timestamp: string, f: { price: string; qty: string; fee: string; symbol?: string }) =>
    db
      .insertInto('exchange_fill')
      .values({
        account: ACCOUNT,
        exec_id: String(1_000_000_000_000 + ++id),
        ex_ord_id: String(900_000_000_000 + id),
        trade_id: id % 2 ? String(700_000_000_000 + id) : null,
        side: id % 3 ? 'BUY' : 'SELL',
        symbol: f.symbol ?? 'ETH-EUR',
        price: f.price,
        qty: f.qty,
        fee: f.fee,
        timestamp,
        raw: '{}',
      })
      .execute();
  await fill('2026-11-01T00:00:00Z', { price: '2000.10000000', qty: '1.50', fee: '3.0015' });
  await fill('2026-11-01T00:00:00.000999Z', { price: '0', qty: '0.000000000000000001', fee: '0.000000000000000000' });
  await fill('2026-11-01T08:15:30.123456Z', { price: '60000.5', qty: '100', fee: '-0.25', symbol: 'BTC-USDT' });
  await fill('2026-11-01T12:00:00.999999Z', { price: '123456789012345678.123456789', qty: '10.000', fee: '0.10' });
  await fill('2026-11-01T23:59:59.999999Z', { price: '0.00001000', qty: '250000', fee: '1E-8', symbol: 'XRP' });
  await fill('2026-11-01T23:59:59.9999995Z', { price: '1', qty: '1', fee: '0', symbol: 'NOSYMBOL' });
}

/** Partner orders with sub-millisecond and nanosecond times, trailing zeros, absent amounts and optional fields. */
async function seedPartner({ db }: Store): Promise<void> {
  const order = (id: string, createdAt: string, o: Partial<NewPartnerOrder> = {}): NewPartnerOrder => ({
    order_id: id,
    external_reference: `ref-${id}`,
    sub_partner_id: null,
    order_type: 'BUY',
    created_at: createdAt,
    created_at_text: createdAt,
    order_state: 'COMPLETED',
    order_state_updated_at: createdAt,
    order_state_updated_at_text: createdAt,
    order_state_updated_key: createdAt,
    payment_method: 'CARD',
    input_currency: 'EUR',
    input_amount: '100.00',
    output_currency: 'BTC',
    output_amount: '0.00150000',
    amount_usd: '108.7000',
    processing_fee: '2.99',
    processing_fee_usd: '3.25',
    partner_fee: '1.000',
    partner_fee_usd: '1.09',
    network_fee: '1.50',
    network_fee_usd: '1.63',
    user_id: null,
    target_wallet_address: 'bc1q-wallet',
    transaction_hash: `0x${id}`,
    raw: '{}',
    ...o,
  });
  await upsertPartnerOrders(
    db,
    ACCOUNT,
    [
      order('a-1', '2026-11-01T00:00:00.000Z'),
      order('a-2', '2026-11-01T09:30:15.123456789Z', {
        order_state: 'PENDING',
        order_state_updated_at: '2026-11-01T09:31:00.999999Z',
        output_amount: null,
        amount_usd: null,
        transaction_hash: null,
        payment_method: null,
        external_reference: null,
      }),
      // fields CSV must quote: a comma and quotes, a line break
      order('a-4', '2026-11-01T12:00:00Z', { external_reference: 'ref, "quoted"', payment_method: 'CARD\nLINE' }),
      order('a-3', '2026-11-01T23:59:59.9995Z', { input_amount: '0.000000000000000001', partner_fee: '0' }),
      order('b-0', '2026-11-02T00:00:00Z'),
    ],
    'poll',
    new Date('2026-11-03T00:00:00Z'),
  );
}

describeEachStore('the detail CSV of the fills and partner orders, read as text', (t) => {
  beforeAll(async () => {
    await seed(t.store);
    await seedPartner(t.store);
  });

  it('prints every partner order byte for byte as the Partner orders sheet row does', async () => {
    const breaks = new BreakIndex([
      { code: 'P_PARTNER_FEE_RATE', key: 'a-3', entity: 'partnerOrder' },
      { code: 'P_PARTNER_FEE_RATE', key: 'a-4', entity: 'partnerOrder' },
      { code: 'P_FEE_USD', key: 'a-4', entity: 'partnerOrder' },
    ]);
    const width = partnerOrdersSpec.columns.length;
    const generic: string[] = [];
    for await (const o of eachRow(partnerOrdersCreatedIn(t.store.db, ACCOUNT, SPAN)))
      generic.push(csvLine(partnerOrderRow(o, Precision.empty(), breaks).cells, width));
    const text = await linesOf(partnerOrderCsvPages(t.store, ACCOUNT, SPAN, breaks.csvFields('partnerOrder'), 2));
    expect(text).toEqual(generic);
    // On a server the store streams the lines by COPY; the keyset pages give the same bytes.
    expect(
      await linesOf(partnerOrderCsvPages(paged(t.store), ACCOUNT, SPAN, breaks.csvFields('partnerOrder'), 2)),
    ).toEqual(generic);
    expect(text).toEqual([
      '2026-11-01T00:00:00.000Z,a-1,BUY,COMPLETED,2026-11-01T00:00:00.000Z,EUR,100,BTC,0.0015,108.7,2.99,3.25,1,1.09,1.5,1.63,CARD,bc1q-wallet,0xa-1,ref-a-1,\r\n',
      '2026-11-01T09:30:15.123Z,a-2,BUY,PENDING,2026-11-01T09:31:00.999Z,EUR,100,BTC,,,2.99,3.25,1,1.09,1.5,1.63,,bc1q-wallet,,,\r\n',
      '2026-11-01T12:00:00.000Z,a-4,BUY,COMPLETED,2026-11-01T12:00:00.000Z,EUR,100,BTC,0.0015,108.7,2.99,3.25,1,1.09,1.5,1.63,"CARD\nLINE",bc1q-wallet,0xa-4,"ref, ""quoted""","P_PARTNER_FEE_RATE, P_FEE_USD"\r\n',
      '2026-11-01T23:59:59.999Z,a-3,BUY,COMPLETED,2026-11-01T23:59:59.999Z,EUR,0.000000000000000001,BTC,0.0015,108.7,2.99,3.25,0,1.09,1.5,1.63,CARD,bc1q-wallet,0xa-3,ref-a-3,P_PARTNER_FEE_RATE\r\n',
    ]);
  });

  it('reads only an account whose name needs quoting in SQL text, with a fee currency holding a backslash', async () => {
    const account = `o'neil \\ "desk"`;
    await t.store.db
      .insertInto('exchange_fill')
      .values({
        account,
        exec_id: '42',
        ex_ord_id: '43',
        trade_id: null,
        side: 'SELL',
        symbol: `IT'S-\\EUR`,
        price: '1.10',
        qty: '2',
        fee: '0.01',
        timestamp: '2026-11-01T06:00:00Z',
        raw: '{}',
      })
      .execute();
    const print = fillCsvFields(Precision.empty(), new BreakIndex([]), 'counter');
    const expected = [`2026-11-01T06:00:00.000Z,42,43,,IT'S-\\EUR,SELL,1.1,2,2.2,0.01,\\EUR,\r\n`];
    expect(await linesOf(fillCsvPages(t.store, account, SPAN, print))).toEqual(expected);
    expect(await linesOf(fillCsvPages(paged(t.store), account, SPAN, print))).toEqual(expected);
  });

  it('prints every fill byte for byte as the Fills sheet row does', async () => {
    const precision = new Precision({
      partner: new Map(),
      symbols: new Map([
        [
          'BTC-USDT',
          {
            base: 'BTC',
            counter: 'USDT',
            baseScale: 8,
            counterScale: 2,
          } as never,
        ],
      ]),
    });
    const breaks = new BreakIndex([{ code: 'E_FEE_RATE', key: '1000000000003', entity: 'fill' }]);
    const width = fillsSpec.columns.length;
    for (const feeCurrency of ['counter', 'base'] as const) {
      const generic: string[] = [];
      for await (const f of eachRow(fillsByTimeIn(t.store.db, ACCOUNT, SPAN)))
        generic.push(csvLine(fillRow(f, precision, breaks, feeCurrency).cells, width));
      const text = await linesOf(
        fillCsvPages(t.store, ACCOUNT, SPAN, fillCsvFields(precision, breaks, feeCurrency), 2),
      );
      expect(text).toEqual(generic);
      expect(
        await linesOf(fillCsvPages(paged(t.store), ACCOUNT, SPAN, fillCsvFields(precision, breaks, feeCurrency), 2)),
      ).toEqual(generic);
      // the last fill's time rounds to the next day's first microsecond: outside the span
      expect(text).toHaveLength(5);
    }
    // What the texts are: milliseconds cut, trailing zeros dropped, the exact product, nulls empty.
    const lines = await linesOf(fillCsvPages(t.store, ACCOUNT, SPAN, fillCsvFields(precision, breaks, 'counter')));
    expect(lines[0]).toBe(
      '2026-11-01T00:00:00.000Z,1000000000001,900000000001,700000000001,ETH-EUR,BUY,2000.1,1.5,3000.15,3.0015,EUR,\r\n',
    );
    expect(lines[1]).toBe(
      '2026-11-01T00:00:00.000Z,1000000000002,900000000002,,ETH-EUR,BUY,0,0.000000000000000001,0,0,EUR,\r\n',
    );
    expect(lines[2]).toBe(
      '2026-11-01T08:15:30.123Z,1000000000003,900000000003,700000000003,BTC-USDT,SELL,60000.5,100,6000050,-0.25,USDT,E_FEE_RATE\r\n',
    );
    expect(lines[3]).toContain(',123456789012345678.123456789,10,1234567890123456781.23456789,0.1,EUR,');
    expect(lines[4]).toBe(
      '2026-11-01T23:59:59.999Z,1000000000005,900000000005,700000000005,XRP,BUY,0.00001,250000,2.5,0.00000001,,\r\n',
    );
  });
});
