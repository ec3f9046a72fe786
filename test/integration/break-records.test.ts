import { beforeAll, expect, it } from 'vitest';
import { describeEachStore } from '../helpers/db.js';
import { breakRecords, type BreakKeys } from '../../src/store/report/break-records.js';
import { insertOrder } from './reconcile-seed.js';

/** The records the mailed workbook lists for open breaks' keys: each with the records that explain it. */
describeEachStore('break records: the records open breaks point at, with their partners', (ctx) => {
  const none: BreakKeys = { partnerOrder: [], exchangeOrder: [], fill: [], deposit: [], withdrawal: [] };

  beforeAll(async () => {
    await insertOrder(ctx.store.db, { id: 'ord-a', created: '2026-11-01T08:00:00Z', tx: '0xa' });
    await insertOrder(ctx.store.db, { id: 'ord-b', created: '2026-11-01T07:00:00Z', tx: '0xb' });
    await insertOrder(ctx.store.db, { id: 'ord-c', created: '2026-11-01T06:00:00Z', tx: null });
    const deposit = (id: string, hash: string, at: string) => ({
      deposit_id: id,
      amount: '0.01',
      currency: 'BTC',
      address: 'bc1q',
      tx_hash: hash,
      state: 'COMPLETED',
      timestamp: at,
      raw: '{}',
    });
    await ctx.store.db
      .insertInto('exchange_deposit')
      .values([deposit('dep-a', '0xa', '2026-11-01T09:00:00Z'), deposit('dep-b', '0xb', '2026-11-01T10:00:00Z')])
      .execute();
  });

  it('lists a partner order with its deposit, a deposit with its partner order, and nothing for no keys', async () => {
    const byOrder = await breakRecords(ctx.store.db, 'default', { ...none, partnerOrder: ['ord-a'] });
    expect(byOrder.partnerOrders.map((o) => o.orderId)).toEqual(['ord-a']);
    expect(byOrder.deposits.map((d) => d.depositId)).toEqual(['dep-a']);

    const byDeposit = await breakRecords(ctx.store.db, 'default', { ...none, deposit: ['dep-b'] });
    expect(byDeposit.partnerOrders.map((o) => o.orderId)).toEqual(['ord-b']);
    expect(byDeposit.deposits.map((d) => d.depositId)).toEqual(['dep-b']);

    // Both ways at once, in the sheet's order (created_at): ord-c has no hash, ord-b comes with dep-b.
    const both = await breakRecords(ctx.store.db, 'default', {
      ...none,
      partnerOrder: ['ord-a', 'ord-c', 'ord-a'],
      deposit: ['dep-b'],
    });
    expect(both.partnerOrders.map((o) => o.orderId)).toEqual(['ord-c', 'ord-b', 'ord-a']);
    expect(both.deposits.map((d) => d.depositId)).toEqual(['dep-a', 'dep-b']);

    const empty = await breakRecords(ctx.store.db, 'default', none);
    expect([empty.partnerOrders, empty.deposits, empty.fills, empty.ordersVsFills, empty.withdrawals]).toEqual([
      [],
      [],
      [],
      [],
      [],
    ]);
  });
});
