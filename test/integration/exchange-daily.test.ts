import { sql } from 'kysely';
import { beforeAll, expect, it } from 'vitest';
import { Decimal } from '../../src/decimal/decimal.js';
import type { Store } from '../../src/store/db/database.js';
import { periodTotals } from '../../src/store/recon/counts.js';
import { exchangeDailyIn, fillCountsOfDays, fillTotalsOfDays } from '../../src/store/report/exchange-daily.js';
import { describeEachStore } from '../helpers/db.js';

const ACCOUNT = 'default';
const SPAN = { from: new Date('2026-11-01T00:00:00Z'), to: new Date('2026-11-03T00:00:00Z') };
const DEBIT_STATES = ['PENDING', 'COMPLETED'];

/** Decimals as their exact text, so a sum is compared to the last digit. */
const exact = <T extends object>(rows: T[]) =>
  rows.map((r) => Object.fromEntries(Object.entries(r).map(([k, v]) => [k, v instanceof Decimal ? v.toFixed() : v])));

async function seed({ db }: Store): Promise<void> {
  let id = 0;
  const fill = (timestamp: string, symbol: string, qty: string, price: string, fee: string, account = ACCOUNT) =>
    db
      .insertInto('exchange_fill')
      .values({
        account,
        exec_id: String(++id),
        ex_ord_id: '1',
        side: 'BUY',
        symbol,
        price,
        qty,
        fee,
        timestamp,
        raw: '{}',
      })
      .execute();
  // Both ends of the first day; an 18th-decimal quantity and fee that a JS number would lose.
  await fill('2026-11-01T00:00:00Z', 'ETH-EUR', '1.5', '2000.10', '3.0015');
  await fill('2026-11-01T23:59:59.999Z', 'ETH-EUR', '0.000000000000000001', '2000', '0.000000000000000002');
  await fill('2026-11-01T12:00:00Z', 'BTC-USDT', '0.01', '60000.5', '0.6');
  await fill('2026-11-02T08:00:00Z', 'ETH-EUR', '0.25', '1999.99', '0.5');
  // Outside the span (before it, at its exclusive end) or of another account.
  await fill('2026-10-31T23:59:59.999Z', 'ETH-EUR', '7', '2000', '7');
  await fill('2026-11-03T00:00:00Z', 'ETH-EUR', '7', '2000', '7');
  await fill('2026-11-01T12:00:00Z', 'ETH-EUR', '7', '2000', '7', 'other');

  const deposit = (timestamp: string | null, currency: string, amount: string, state: string, account = ACCOUNT) =>
    db
      .insertInto('exchange_deposit')
      .values({
        account,
        deposit_id: `dep-${++id}`,
        amount,
        currency,
        address: 'addr',
        tx_hash: null,
        state,
        timestamp,
        raw: '{}',
      })
      .execute();
  await deposit('2026-11-01T09:00:00Z', 'EUR', '100.10', 'COMPLETED');
  await deposit('2026-11-01T10:00:00Z', 'EUR', '50', 'PENDING');
  await deposit('2026-11-01T11:00:00Z', 'BTC', '0.5', 'PENDING');
  await deposit('2026-11-02T09:00:00Z', 'EUR', '0.000000000000000001', 'COMPLETED');
  await deposit('2026-11-03T00:00:00Z', 'EUR', '9', 'COMPLETED');
  await deposit(null, 'EUR', '9', 'COMPLETED');
  await deposit('2026-11-01T09:00:00Z', 'EUR', '9', 'COMPLETED', 'other');

  const withdrawal = (
    timestamp: string,
    currency: string,
    amount: string,
    fee: string | null,
    state: string | null,
    account = ACCOUNT,
  ) =>
    db
      .insertInto('exchange_withdrawal')
      .values({
        account,
        withdrawal_id: `wd-${++id}`,
        amount,
        fee,
        currency,
        beneficiary: 'bank',
        state,
        timestamp,
        raw: '{}',
      })
      .execute();
  await withdrawal('2026-11-01T15:00:00Z', 'EUR', '1000', '1.50', 'COMPLETED');
  await withdrawal('2026-11-01T16:00:00Z', 'EUR', '200', '2', 'REJECTED');
  await withdrawal('2026-11-01T17:00:00Z', 'EUR', '300', null, 'PENDING');
  await withdrawal('2026-11-02T10:00:00Z', 'BTC', '0.1', '0.0005', 'FAILED');
  await withdrawal('2026-11-02T11:00:00Z', 'BTC', '0.2', '0.0001', null);
  await withdrawal('2026-10-31T12:00:00Z', 'EUR', '9', '9', 'COMPLETED');
  await withdrawal('2026-11-01T15:00:00Z', 'EUR', '9', '9', 'COMPLETED', 'other');
}

describeEachStore('exchange daily aggregates', (t) => {
  beforeAll(async () => {
    await seed(t.store);
  });

  it('sums fills per UTC day and symbol exactly, within the span and the account', async () => {
    const agg = await exchangeDailyIn(t.store.db, ACCOUNT, SPAN, DEBIT_STATES);
    expect(exact(agg.fills)).toEqual([
      { day: '2026-11-01', symbol: 'BTC-USDT', fills: 1, qty: '0.01', notional: '600.005', fees: '0.6' },
      {
        day: '2026-11-01',
        symbol: 'ETH-EUR',
        fills: 2,
        qty: '1.500000000000000001',
        notional: '3000.150000000000002',
        fees: '3.001500000000000002',
      },
      { day: '2026-11-02', symbol: 'ETH-EUR', fills: 1, qty: '0.25', notional: '499.9975', fees: '0.5' },
    ]);
  });

  it('counts every deposit and sums only the COMPLETED ones', async () => {
    const agg = await exchangeDailyIn(t.store.db, ACCOUNT, SPAN, DEBIT_STATES);
    expect(exact(agg.deposits)).toEqual([
      { day: '2026-11-01', currency: 'BTC', count: 1, completed: 0, amount: '0' },
      { day: '2026-11-01', currency: 'EUR', count: 2, completed: 1, amount: '100.1' },
      { day: '2026-11-02', currency: 'EUR', count: 1, completed: 1, amount: '0.000000000000000001' },
    ]);
  });

  it('counts every withdrawal and sums amount and fee of those in a debit state (no state: not debited)', async () => {
    const agg = await exchangeDailyIn(t.store.db, ACCOUNT, SPAN, DEBIT_STATES);
    expect(exact(agg.withdrawals)).toEqual([
      { day: '2026-11-01', currency: 'EUR', count: 3, debited: 2, amount: '1300', fee: '1.5' },
      { day: '2026-11-02', currency: 'BTC', count: 2, debited: 0, amount: '0', fee: '0' },
    ]);
    // the debit states are the caller's (exchange.withdrawalDebitStates)
    const onlyCompleted = await exchangeDailyIn(t.store.db, ACCOUNT, SPAN, ['COMPLETED']);
    expect(exact(onlyCompleted.withdrawals)[0]).toMatchObject({ count: 3, debited: 1, amount: '1000', fee: '1.5' });
  });

  it("adds up, over the days, to the period's totals of the Summary", async () => {
    const agg = await exchangeDailyIn(t.store.db, ACCOUNT, SPAN, DEBIT_STATES);
    const totals = await periodTotals(t.store.db, ACCOUNT, SPAN, DEBIT_STATES, agg.fills);
    const sum = <T>(rows: T[], key: (r: T) => string, value: (r: T) => Decimal) => {
      const out = new Map<string, string>();
      for (const r of rows)
        out.set(
          key(r),
          value(r)
            .plus(out.get(key(r)) ?? 0)
            .toFixed(),
        );
      return Object.fromEntries(out);
    };
    expect(
      sum(
        agg.fills,
        (f) => f.symbol,
        (f) => f.notional,
      ),
    ).toEqual(
      sum(
        totals.fills,
        (f) => f.symbol,
        (f) => f.notional,
      ),
    );
    expect(
      sum(
        agg.fills,
        (f) => f.symbol,
        (f) => f.fees,
      ),
    ).toEqual(
      sum(
        totals.fills,
        (f) => f.symbol,
        (f) => f.fees,
      ),
    );
    expect(
      sum(
        agg.deposits,
        (d) => d.currency,
        (d) => d.amount,
      ),
    ).toEqual(
      sum(
        totals.deposits,
        (d) => d.currency,
        (d) => d.amount,
      ),
    );
    expect(
      sum(
        agg.withdrawals,
        (w) => w.currency,
        (w) => w.fee,
      ),
    ).toEqual(
      sum(
        totals.withdrawals,
        (w) => w.currency,
        (w) => w.fee,
      ),
    );
  });

  it('gives the fill totals per symbol and the fills per day of one scan, equal to a grouped query of each', async () => {
    const agg = await exchangeDailyIn(t.store.db, ACCOUNT, SPAN, DEBIT_STATES);
    const direct = await sql<{ symbol: string; fills: string; qty: string; notional: string; fees: string }>`
      select symbol, count(*) as fills, sum(qty)::text as qty, sum(qty * price)::text as notional, sum(fee)::text as fees
      from exchange_fill where account = ${ACCOUNT} and timestamp >= ${SPAN.from} and timestamp < ${SPAN.to}
      group by symbol order by symbol`.execute(t.store.db);
    expect(exact(fillTotalsOfDays(agg.fills))).toEqual(
      direct.rows.map((r) => ({
        symbol: r.symbol,
        fills: Number(r.fills),
        qty: new Decimal(r.qty).toFixed(),
        notional: new Decimal(r.notional).toFixed(),
        fees: new Decimal(r.fees).toFixed(),
      })),
    );
    expect(exact(fillTotalsOfDays(agg.fills))[1]).toEqual({
      symbol: 'ETH-EUR',
      fills: 3,
      qty: '1.750000000000000001',
      notional: '3500.147500000000002',
      fees: '3.501500000000000002',
    });
    const perDay = await sql<{ day: string; n: string }>`
      select to_char(timestamp at time zone 'UTC', 'YYYY-MM-DD') as day, count(*) as n from exchange_fill
      where account = ${ACCOUNT} and timestamp >= ${SPAN.from} and timestamp < ${SPAN.to} group by 1 order by 1`.execute(
      t.store.db,
    );
    expect([...fillCountsOfDays(agg.fills)]).toEqual(perDay.rows.map((r) => [r.day, Number(r.n)]));
  });

  it('has no rows for a span without records', async () => {
    const empty = { from: new Date('2026-12-01T00:00:00Z'), to: new Date('2026-12-02T00:00:00Z') };
    expect(await exchangeDailyIn(t.store.db, ACCOUNT, empty, DEBIT_STATES)).toEqual({
      fills: [],
      deposits: [],
      withdrawals: [],
    });
  });
});
