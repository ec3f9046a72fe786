import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { reconcilePeriod, type ReconcileResult } from '../../src/stages/reconcile.js';
import { setCursor } from '../../src/store/sync/cursors.js';
import { upsertOrders } from '../../src/store/sync/exchange-records.js';
import { createTestStore, describeEachStore, storeKinds } from '../helpers/db.js';
import { insertBalanceSnapshot, insertFill, insertOrder, makeConfig, newContext, seedWorld } from './reconcile-seed.js';
import type { Db } from '../../src/store/db/database.js';

/**
 * docs/rules.md "What a run judges": a reconcile judges its period and every record changed since
 * the account was last judged, whatever its day, with its dependents; the breaks of those records
 * open, resolve and reopen as if their own period had been reconciled, and the run names the breaks
 * of earlier days that late data moved. Each step here is a change a real service makes late.
 */
const PERIOD = { from: '2026-11-10', to: '2026-11-11' };
/** A later night: none of the changed records belongs to its day. */
const LATER = { from: '2026-11-20', to: '2026-11-21' };
const config = makeConfig({ partner: { wallets: ['0xWALLET'], feeRate: '0.01' } });

describeEachStore('reconcile judges what changed since the account was last judged', (ctx) => {
  const db = () => ctx.store.db;
  let n = 0;
  const reconcile = async (period = LATER): Promise<ReconcileResult> =>
    reconcilePeriod(await newContext(ctx.store, config, `chg-${++n}`, period), period);
  const breakOf = (code: string, key: string) =>
    db()
      .selectFrom('break')
      .select(['status', 'first_seen_run', 'last_seen_run', 'resolved_run', 'message'])
      .where('code', '=', code)
      .where('key', '=', key)
      .executeTakeFirst();
  const late = (r: ReconcileResult) => r.late.map((b) => `${b.event} ${b.code} ${b.key} ${b.day}`).sort();

  it('the first judgement takes every stored record; a run with nothing changed judges only its period', async () => {
    await seedWorld(db());
    // The exchange's deposits read past every order these steps complete: X_DEPOSIT_MISSING judges each of them
    // (an order completed after the read waits for a later one: test/integration/deposit-horizon.test.ts).
    await setCursor(db(), 'default', 'exchange', 'deposits.time', String(Date.parse('2026-12-01T00:00:00Z')));
    // Records of 2026-11-11, after the period, each to change later.
    await db()
      .insertInto('exchange_order')
      .values({
        ex_ord_id: '200',
        ord_status: 'FILLED',
        side: 'BUY',
        symbol: 'ETH-USD',
        cum_qty: '1',
        leaves_qty: '0',
        avg_px: '2000',
        timestamp: '2026-11-11T05:00:00Z',
        raw: '{}',
      })
      .execute();
    await insertFill(db(), {
      execId: '10',
      exOrdId: '200',
      price: '2000',
      qty: '0.5',
      fee: '1',
      at: '2026-11-11T05:00:00Z',
    });
    await insertOrder(db(), {
      id: 'o-late',
      created: '2026-11-11T06:00:00Z',
      state: 'PENDING',
      tx: null,
      wallet: '0xelse',
    });
    await insertOrder(db(), { id: 'o-dep', created: '2026-11-11T07:00:00Z', wallet: '0xWALLET' });
    await insertOrder(db(), { id: 'o-rej', created: '2026-11-11T08:00:00Z', wallet: '0xWALLET' });
    await db()
      .insertInto('exchange_deposit')
      .values({
        deposit_id: 'dep-rej',
        amount: '0.031234567890123456',
        currency: 'ETH',
        address: '0xWALLET',
        tx_hash: '0xo-rej',
        state: 'UNCONFIRMED',
        timestamp: '2026-11-11T08:05:00Z',
        raw: '{}',
      })
      .execute();

    const first = await reconcile(PERIOD);
    expect(first.judged.since).toBeNull();
    expect(await breakOf('E_FILL_QTY', '200')).toMatchObject({ status: 'open', first_seen_run: 'chg-1' });
    expect(await breakOf('X_DEPOSIT_MISSING', 'o-dep')).toMatchObject({ status: 'open' });
    // An UNCONFIRMED deposit may still be credited: it settles its order.
    expect(await breakOf('X_DEPOSIT_MISSING', 'o-rej')).toBeUndefined();
    expect(await breakOf('P_PARTNER_FEE_RATE', 'o-late')).toBeUndefined();

    const quiet = await reconcile();
    expect(quiet.judged.since).toBe(first.judged.until);
    expect(quiet.judged.outsidePeriod).toEqual({ partnerOrders: 0, withdrawals: 0, balancePairs: 0 });
    expect(quiet.ruleResults.find((r) => r.code === 'E_FILL_QTY')).toMatchObject({ checked: 0 });
    expect(quiet.late).toEqual([]);
    expect(await breakOf('E_FILL_QTY', '200')).toMatchObject({ status: 'open', last_seen_run: 'chg-1' });
    expect(await breakOf('X_DEPOSIT_MISSING', 'o-dep')).toMatchObject({ status: 'open', last_seen_run: 'chg-1' });
  });

  it('a re-seen record is no change: an upsert that only moves last_seen_at keeps its change_xid', async () => {
    const before = await changeXid(db(), 'exchange_order', 'ex_ord_id', '200');
    const row = {
      ex_ord_id: '200',
      cl_ord_id: null,
      ord_type: null,
      ord_status: 'FILLED',
      side: 'BUY',
      price: null,
      text: null,
      symbol: 'ETH-USD',
      last_shares: null,
      last_px: null,
      leaves_qty: '0',
      cum_qty: '1',
      avg_px: '2000',
      timestamp: '2026-11-11T05:00:00Z',
      raw: '{"a":1}',
    };
    await upsertOrders(db(), 'default', [row], new Date('2026-11-13T00:00:00Z'));
    await upsertOrders(db(), 'default', [row], new Date('2026-11-14T00:00:00Z'));
    expect(await changeXid(db(), 'exchange_order', 'ex_ord_id', '200')).toBe(before);
    expect((await reconcile()).ruleResults.find((r) => r.code === 'E_FILL_QTY')).toMatchObject({ checked: 0 });
  });

  it('late fill, late completion at another fee, late listing, late rejection: judged by the next run of any period', async () => {
    await insertFill(db(), {
      execId: '11',
      exOrdId: '200',
      price: '2000',
      qty: '0.5',
      fee: '1',
      at: '2026-11-11T05:00:01Z',
    });
    await db()
      .updateTable('partner_order')
      .set({
        order_state: 'COMPLETED',
        order_state_updated_at: '2026-11-13T10:00:00Z',
        order_state_updated_at_text: '2026-11-13T10:00:00Z',
        partner_fee: '1.25',
        partner_fee_usd: '1.35',
        transaction_hash: '0xo-late',
      })
      .where('order_id', '=', 'o-late')
      .execute();
    await db()
      .insertInto('exchange_deposit')
      .values({
        deposit_id: 'dep-late',
        amount: '0.031234567890123456',
        currency: 'ETH',
        address: '0xWALLET',
        tx_hash: '0xo-dep',
        state: 'COMPLETED',
        timestamp: '2026-11-11T07:05:00Z',
        raw: '{}',
      })
      .execute();
    await db().updateTable('exchange_deposit').set({ state: 'REJECTED' }).where('deposit_id', '=', 'dep-rej').execute();

    const r = await reconcile();
    expect(late(r)).toEqual([
      'opened P_PARTNER_FEE_RATE o-late 2026-11-11',
      'opened X_DEPOSIT_MISSING o-rej 2026-11-11',
      'resolved E_FILL_QTY 200 2026-11-11',
      'resolved X_DEPOSIT_MISSING o-dep 2026-11-11',
    ]);
    expect(await breakOf('E_FILL_QTY', '200')).toMatchObject({
      status: 'resolved',
      resolved_run: r.runId,
      first_seen_run: 'chg-1',
    });
    expect(await breakOf('P_PARTNER_FEE_RATE', 'o-late')).toMatchObject({ status: 'open', first_seen_run: r.runId });
    expect(r.judged.outsidePeriod.partnerOrders).toBe(3);
    const stored = await db()
      .selectFrom('run')
      .select('late_breaks')
      .where('id', '=', r.runId)
      .executeTakeFirstOrThrow();
    expect(JSON.parse(JSON.stringify(stored.late_breaks))).toHaveLength(4);

    // Nothing changed since: the same run again judges nothing of those days, the breaks stay as they are.
    const again = await reconcile();
    expect(again.late).toEqual([]);
    expect(again.judged.outsidePeriod.partnerOrders).toBe(0);
    expect(await breakOf('P_PARTNER_FEE_RATE', 'o-late')).toMatchObject({ status: 'open', last_seen_run: r.runId });
  });

  it('a change on one side of a hash match judges the other: a deposit that gives up a hash, a fee corrected back, a 404, a beneficiary', async () => {
    // dep-1 settled o-ok (2026-11-10); listed again with another hash, o-ok has no deposit any more.
    await db().updateTable('exchange_deposit').set({ tx_hash: '0xother' }).where('deposit_id', '=', 'dep-1').execute();
    // The exchange answers 404 for the orphan fill's order: the fill is judged again, with the new reason.
    await db().insertInto('exchange_order_not_found').values({ ex_ord_id: '999' }).execute();
    // The withdrawal's beneficiary is corrected to one on the whitelist.
    await db()
      .updateTable('exchange_withdrawal')
      .set({ beneficiary: 'wl-1' })
      .where('withdrawal_id', '=', 'wd-1')
      .execute();
    // The partner corrects the fee back.
    await db()
      .updateTable('partner_order')
      .set({ partner_fee: '1', partner_fee_usd: '1.08' })
      .where('order_id', '=', 'o-late')
      .execute();

    const r = await reconcile();
    expect(late(r)).toEqual([
      'opened X_DEPOSIT_MISSING o-ok 2026-11-10',
      'resolved E_WITHDRAWAL_BENEFICIARY wd-1 2026-11-10',
      'resolved P_PARTNER_FEE_RATE o-late 2026-11-11',
    ]);
    expect(await breakOf('E_FILL_ORPHAN', '900')).toMatchObject({
      status: 'open',
      last_seen_run: r.runId,
      message: expect.stringContaining('404'),
    });
    // The notes the changes left (the hash given up, the 404) are pruned once judged.
    expect(await db().selectFrom('recon_change').select(['kind', 'key']).execute()).toEqual([]);

    // The fee changes again to the contract's: resolved breaks reopen as if their day were reconciled.
    await db()
      .updateTable('partner_order')
      .set({ partner_fee: '1.25', partner_fee_usd: '1.35' })
      .where('order_id', '=', 'o-late')
      .execute();
    const again = await reconcile();
    expect(late(again)).toEqual(['reopened P_PARTNER_FEE_RATE o-late 2026-11-11']);
  });

  it('an order of another day that changed and carries no hash any more is judged by its own change', async () => {
    // Nothing else points at it: the hash it gave up is carried by no order, so only its change_xid finds it.
    await db()
      .updateTable('partner_order')
      .set({ partner_fee: '1', partner_fee_usd: '1.08', transaction_hash: null })
      .where('order_id', '=', 'o-late')
      .execute();
    const r = await reconcile();
    expect(late(r)).toContain('resolved P_PARTNER_FEE_RATE o-late 2026-11-11');
    expect(r.judged.outsidePeriod.partnerOrders).toBe(1);
  });
});

/** A reconcile of the later period on the test's store (runs named `${prefix}-1`, ...), and its ETH roll-forward break. */
function rollWorld(ctx: { store: Parameters<typeof newContext>[0] }, prefix: string) {
  const cfg = makeConfig({ account: 'default' });
  let n = 0;
  return {
    reconcile: async (): Promise<ReconcileResult> =>
      reconcilePeriod(await newContext(ctx.store, cfg, `${prefix}-${++n}`, LATER), LATER),
    eth: () =>
      ctx.store.db
        .selectFrom('break')
        .select(['status', 'last_seen_run', 'resolved_run', 'reopened_count'])
        .where('code', '=', 'E_BALANCE_ROLL')
        .where('key', '=', 'ETH')
        .executeTakeFirst(),
  };
}

describeEachStore(
  'reconcile judges every balance pair a late flow falls into, and a failing pair until it balances',
  (ctx) => {
    const db = () => ctx.store.db;
    const { reconcile, eth } = rollWorld(ctx, 'bal');

    it('opens on the pair a late deposit falls into, stays open while that pair fails, resolves when the flows add up', async () => {
      // Four nightly snapshots, ETH unchanged: every pair balances.
      for (const day of ['2026-11-09', '2026-11-10', '2026-11-11', '2026-11-12'])
        await insertBalanceSnapshot(db(), `${day}T02:00:00Z`, { ETH: '1' });
      const first = await reconcile();
      expect(first.judged.outsidePeriod.balancePairs).toBe(2);
      expect(await eth()).toBeUndefined();

      // A deposit listed late, stamped inside the first pair (the exchange's balances do not show it).
      await db()
        .insertInto('exchange_deposit')
        .values({
          deposit_id: 'dep-x',
          amount: '0.5',
          currency: 'ETH',
          address: '0xWALLET',
          state: 'COMPLETED',
          timestamp: '2026-11-09T12:00:00Z',
          raw: '{}',
        })
        .execute();
      const opened = await reconcile();
      expect(await eth()).toMatchObject({ status: 'open' });
      expect(opened.late.map((b) => `${b.event} ${b.code} ${b.key} ${b.day}`)).toEqual([
        'opened E_BALANCE_ROLL ETH 2026-11-09',
      ]);
      // The failing pair is not the latest and nothing changed: it is judged again all the same.
      const held = await reconcile();
      expect(await eth()).toMatchObject({ status: 'open', last_seen_run: held.runId });

      // The matching withdrawal arrives late too: the pair balances, the break resolves.
      await db()
        .insertInto('exchange_withdrawal')
        .values({
          withdrawal_id: 'wd-x',
          amount: '0.5',
          fee: '0',
          currency: 'ETH',
          beneficiary: 'wl-1',
          state: 'COMPLETED',
          timestamp: '2026-11-09T13:00:00Z',
          raw: '{}',
        })
        .execute();
      const resolved = await reconcile();
      expect(await eth()).toMatchObject({ status: 'resolved', resolved_run: resolved.runId });
      expect(resolved.late.map((b) => `${b.event} ${b.code} ${b.key}`)).toEqual(['resolved E_BALANCE_ROLL ETH']);
    });
  },
);

describeEachStore('reconcile judges a late fill stamped inside a snapshot fetch on both sides of it', (ctx) => {
  const db = () => ctx.store.db;
  const { reconcile, eth } = rollWorld(ctx, 'edge');

  it('a late fill stamped while a snapshot was fetched is judged in the pairs either side of that snapshot', async () => {
    // Four nightly snapshots, nothing moves; the second one's /accounts request was sent a second before its answer.
    const ids: string[] = [];
    for (const day of ['2026-11-09', '2026-11-10', '2026-11-11', '2026-11-12'])
      ids.push(await insertBalanceSnapshot(db(), `${day}T02:00:00Z`, { ETH: '1', USD: '10000' }));
    await db()
      .updateTable('balance_snapshot')
      .set({ requested_at: '2026-11-10T01:59:59Z' })
      .where('id', '=', ids[1]!)
      .execute();
    expect((await reconcile()).balanceRoll.filter((f) => !f.residual.isZero())).toEqual([]);

    // A fill published late, stamped inside that fetch. No balance shows it: whichever side of the snapshot it is
    // placed on, one of the two pairs cannot balance, so both must be judged (the pair after the snapshot is
    // neither in the period, nor the latest, nor failing).
    await insertFill(db(), {
      execId: '9001',
      exOrdId: '77',
      price: '3000',
      qty: '1',
      fee: '0',
      at: '2026-11-10T01:59:59.500Z',
    });
    const judged = await reconcile();
    expect(
      judged.balanceRoll
        .map((f) => `${f.openingAt.toISOString().slice(0, 10)} ${f.currency} ${f.residual.toString()}`)
        .sort(),
    ).toEqual([
      '2026-11-09 ETH -1',
      '2026-11-09 USD 3000',
      '2026-11-10 ETH 0',
      '2026-11-10 USD 0',
      // The latest pair, always judged.
      '2026-11-11 ETH 0',
      '2026-11-11 USD 0',
    ]);
    expect(await eth()).toMatchObject({ status: 'open', last_seen_run: judged.runId });
  });
});

async function changeXid(db: Db, table: string, idColumn: string, id: string): Promise<string> {
  const { sql } = await import('kysely');
  const r = await sql<{
    x: string;
  }>`select change_xid::text as x from ${sql.table(table)} where ${sql.ref(idColumn)} = ${id}`.execute(db);
  return r.rows[0]!.x;
}

// A write whose transaction began before a reconcile started and commits while it runs: the
// reconcile cannot see it, so the next one must judge it. Needs a second session: Postgres only.
if (storeKinds.includes('postgres'))
  describe('reconcile judges a change committed while the previous reconcile ran [postgres]', () => {
    it('a transaction open across a reconcile is judged by the next one', async () => {
      const test = await createTestStore('postgres');
      const other = new pg.Client({ connectionString: test.url });
      await other.connect();
      try {
        const cfg = makeConfig({ account: 'race' });
        const ctx = test.store;
        await reconcilePeriod(await newContext(ctx, cfg, 'race-1', LATER), LATER);
        const order = (id: string, cum: string) =>
          `insert into exchange_order (account, ex_ord_id, ord_status, side, symbol, cum_qty, leaves_qty, avg_px, timestamp, raw)
           values ('race', ${id}, 'FILLED', 'BUY', 'ETH-USD', ${cum}, 0, 2000, '2026-11-11T05:00:00Z', '{}')`;
        await other.query('begin');
        await other.query(order('300', '1'));
        // Reconcile runs while the transaction is open: it cannot see order 300.
        const during = await reconcilePeriod(await newContext(ctx, cfg, 'race-2', LATER), LATER);
        expect(during.ruleResults.find((r) => r.code === 'E_FILL_QTY')).toMatchObject({ checked: 0 });
        await other.query('commit');
        const after = await reconcilePeriod(await newContext(ctx, cfg, 'race-3', LATER), LATER);
        expect(after.ruleResults.find((r) => r.code === 'E_FILL_QTY')).toMatchObject({ checked: 1, breaks: 1 });
        const b = await ctx.db
          .selectFrom('break')
          .select(['status', 'first_seen_run'])
          .where('account', '=', 'race')
          .where('code', '=', 'E_FILL_QTY')
          .where('key', '=', '300')
          .executeTakeFirstOrThrow();
        expect(b).toEqual({ status: 'open', first_seen_run: 'race-3' });
      } finally {
        await other.end();
        await test.drop();
      }
    });
  });
