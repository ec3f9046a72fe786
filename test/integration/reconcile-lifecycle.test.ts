import { expect, it } from 'vitest';
import { reconcilePeriod } from '../../src/stages/reconcile.js';
import { exchangeOrdersWithFillsIn, fillsIn } from '../../src/store/recon/exchange-reads.js';
import { partnerOrdersCreatedIn } from '../../src/store/recon/partner-reads.js';
import { jsonSummary } from '../../src/stages/summary.js';
import { createRun } from '../../src/store/runs/runs.js';
import { describeEachStore } from '../helpers/db.js';
import { insertOrder, makeConfig, newContext, NOW, PLANTED, seedWorld } from './reconcile-seed.js';

const PERIOD = { from: '2026-11-10', to: '2026-11-11' };
const config = makeConfig({ partner: { wallets: ['0xWALLET'] } });

describeEachStore('reconcilePeriod', (ctx) => {
  const db = () => ctx.store.db;
  const openBreaks = async () =>
    (
      await db()
        .selectFrom('break')
        .select(['code', 'key'])
        .where('status', '=', 'open')
        .orderBy('code')
        .orderBy('key')
        .execute()
    ).map((b) => `${b.code} ${b.key}`);
  const breakOf = (code: string, key: string) =>
    db().selectFrom('break').selectAll().where('code', '=', code).where('key', '=', key).executeTakeFirstOrThrow();

  it('finds exactly the planted breaks and records the run', async () => {
    await seedWorld(db());
    // A break of an order outside the period, found by an earlier run: seen again (its order was
    // never judged in this store), its first-seen run kept.
    await createRun(db(), {
      account: 'default',
      command: 'reconcile',
      id: 'r-old',
      startedAt: new Date('2026-11-02T03:00:00Z'),
    });
    await db()
      .insertInto('break')
      .values({
        code: 'P_FEE_USD',
        key: 'o-old',
        entity: 'partnerOrder',
        unit: 'amount',
        severity: 'medium',
        status: 'open',
        first_seen_run: 'r-old',
        first_seen_at: '2026-11-02T03:00:00Z',
        last_seen_run: 'r-old',
        last_seen_at: '2026-11-02T03:00:00Z',
      })
      .execute();

    const result = await reconcilePeriod(await newContext(ctx.store, config, 'run1', PERIOD), PERIOD);
    expect(await openBreaks()).toEqual(PLANTED);
    expect(await breakOf('P_FEE_USD', 'o-old')).toMatchObject({
      first_seen_run: 'r-old',
      last_seen_run: 'run1',
      status: 'open',
    });
    // The account's first judgement: every stored record, the period's and the others.
    expect(result.judged).toMatchObject({ since: null, outsidePeriod: { partnerOrders: 2, withdrawals: 0 } });
    expect(result.late).toEqual([]);
    expect(result.counts).toEqual({
      partnerOrders: 3,
      fills: 4,
      exchangeOrders: 2,
      deposits: 1,
      withdrawals: 1,
      balanceSnapshots: 2,
      quarantined: 1,
    });

    const run = await db().selectFrom('run').selectAll().where('id', '=', 'run1').executeTakeFirstOrThrow();
    expect(run.ruleset_version).toBeTruthy();
    const rules = JSON.parse(
      JSON.stringify(run.rule_results, (_k, v) =>
        v && typeof v === 'object' && 'isLosslessNumber' in v ? Number(v.value) : v,
      ),
    ) as Array<Record<string, unknown>>;
    const byCode = Object.fromEntries(rules.map((r) => [r.code, r]));
    expect(byCode.P_PARTNER_FEE_RATE).toMatchObject({
      status: 'not_checked',
      reason: 'partner.feeRate not configured',
    });
    expect(byCode.P_WEBHOOK_GAP).toMatchObject({ status: 'not_checked', reason: 'webhooks not configured' });
    // The period's three orders and the two of 2026-11-01 (o-old, o-pend).
    expect(byCode.P_FEE_USD).toMatchObject({ status: 'breaks', checked: 5, breaks: 2 });
    expect(byCode.E_FILL_QTY).toMatchObject({ status: 'breaks', checked: 2, breaks: 1 });
    expect(byCode.E_FEE_RATE).toMatchObject({ status: 'passed', checked: 4 });

    const usd = await breakOf('E_BALANCE_ROLL', 'USD');
    expect(usd).toMatchObject({
      expected: '8688.27',
      actual: '8688.28',
      difference: '0.01',
      severity: 'high',
      first_seen_run: 'run1',
    });
    const roll = await db()
      .selectFrom('balance_roll')
      .selectAll()
      .where('run_id', '=', 'run1')
      .orderBy('currency')
      .execute();
    expect(
      roll.map((r) => [
        r.currency,
        r.opening.toString(),
        r.deposits.toString(),
        r.withdrawals.toString(),
        r.bought.toString(),
        r.sold.toString(),
        r.fees.toString(),
        r.expected_closing.toString(),
        r.residual.toString(),
        r.first_divergent_day,
      ]),
    ).toEqual([
      ['ETH', '1', '0.031234567890123456', '0.101', '0.76', '0.1', '0', '1.590234567890123456', '0', null],
      ['USD', '10000', '0', '0', '210', '1520', '1.73', '8688.27', '0.01', '2026-11-09'],
    ]);
  });

  it('re-running the same period never duplicates a break and keeps first-seen', async () => {
    const again = await reconcilePeriod(await newContext(ctx.store, config, 'run2', PERIOD), PERIOD);
    expect(await openBreaks()).toEqual(PLANTED);
    const { n } = await db()
      .selectFrom('break')
      .select((eb) => eb.fn.countAll<string>().as('n'))
      .executeTakeFirstOrThrow();
    expect(Number(n)).toBe(PLANTED.length);
    expect(await breakOf('P_FEE_USD', 'o-feeusd')).toMatchObject({ first_seen_run: 'run1', last_seen_run: 'run2' });
    // Nothing changed since run1: the order of another day is not judged again, its break is left as run1 left it.
    expect(again.judged.outsidePeriod.partnerOrders).toBe(0);
    expect(await breakOf('P_FEE_USD', 'o-old')).toMatchObject({
      first_seen_run: 'r-old',
      last_seen_run: 'run1',
      status: 'open',
    });
  });

  it('resolves fixed breaks with the run that resolved them, and reopens them later', async () => {
    await db()
      .updateTable('partner_order')
      .set({ processing_fee_usd: '2.7' })
      .where('order_id', '=', 'o-feeusd')
      .execute();
    // the missing deposit arrives (after the closing snapshot, so the roll-forward is unchanged) with a wrong amount
    await db()
      .insertInto('exchange_deposit')
      .values({
        deposit_id: 'dep-3',
        amount: '1',
        currency: 'ETH',
        address: '0xWALLET',
        tx_hash: '0xo-missing',
        state: 'COMPLETED',
        timestamp: '2026-11-11T06:00:00Z',
        raw: '{}',
      })
      .execute();
    await db().updateTable('quarantine').set({ resolved_at: NOW }).execute();
    await reconcilePeriod(await newContext(ctx.store, config, 'run3', PERIOD), PERIOD);
    expect(await breakOf('P_FEE_USD', 'o-feeusd')).toMatchObject({
      status: 'resolved',
      resolved_run: 'run3',
      first_seen_run: 'run1',
    });
    expect(await breakOf('X_DEPOSIT_MISSING', 'o-missing')).toMatchObject({ status: 'resolved', resolved_run: 'run3' });
    expect(await breakOf('S_QUARANTINE', 'q-1')).toMatchObject({ status: 'resolved', resolved_run: 'run3' });
    expect(await breakOf('X_DEPOSIT_AMOUNT', 'o-missing')).toMatchObject({
      status: 'open',
      expected: '0.031234567890123456',
      actual: '1',
      difference: '0.968765432109876544',
    });

    await db()
      .updateTable('partner_order')
      .set({ processing_fee_usd: '2.8' })
      .where('order_id', '=', 'o-feeusd')
      .execute();
    await reconcilePeriod(await newContext(ctx.store, config, 'run4', PERIOD), PERIOD);
    expect(await breakOf('P_FEE_USD', 'o-feeusd')).toMatchObject({
      status: 'open',
      reopened_count: 1,
      first_seen_run: 'run1',
      last_seen_run: 'run4',
      resolved_run: null,
    });
    const events = await db()
      .selectFrom('break_event')
      .select(['run_id', 'event'])
      .where('code', '=', 'P_FEE_USD')
      .where('key', '=', 'o-feeusd')
      .orderBy('id')
      .execute();
    expect(events.map((e) => `${e.run_id}:${e.event}`)).toEqual([
      'run1:opened',
      'run2:seen',
      'run3:resolved',
      'run4:reopened',
    ]);
  });

  it('a run for another period leaves scoped breaks untouched and still judges balances and staleness', async () => {
    const other = { from: '2026-11-12', to: '2026-11-13' };
    const r = await reconcilePeriod(await newContext(ctx.store, config, 'run5', other), other);
    expect(r.counts.partnerOrders).toBe(0);
    expect(await breakOf('P_FEE_USD', 'o-feeusd')).toMatchObject({ status: 'open', last_seen_run: 'run4' });
    expect(await breakOf('E_FILL_QTY', '100')).toMatchObject({ status: 'open', last_seen_run: 'run4' });
    expect(await breakOf('E_BALANCE_ROLL', 'USD')).toMatchObject({ status: 'open', last_seen_run: 'run5' });
    expect(await breakOf('P_STALE', 'o-pend')).toMatchObject({ status: 'open', last_seen_run: 'run5' });

    const summary = await jsonSummary(db(), 'default', 'run5');
    expect(summary).toMatchObject({ runId: 'run5', status: 'running', period: other, report: null });
    expect(summary.counts).toEqual({
      partnerOrders: 0,
      fills: 0,
      exchangeOrders: 0,
      deposits: 0,
      withdrawals: 0,
      balanceSnapshots: 2,
      quarantined: 0,
    });
    expect(summary.breaks[0]).toEqual({
      code: 'E_BALANCE_ROLL',
      key: 'USD',
      severity: 'high',
      currency: 'USD',
      expected: '8688.27',
      actual: '8688.28',
      difference: '0.01',
      status: 'open',
      firstSeenRun: 'run1',
      lastSeenRun: 'run5',
      inPeriod: false,
      workflow: { status: 'unexplained', owner: null, explanation: null, lastNote: null },
      account: 'default',
    });
    // The seed synced nothing of the other period: its only breaks are its day's unsynced streams
    // (S_COVERAGE, opened by this run); every other open break is carried over, and the counts say so.
    const unsynced = [
      'exchange:deposits',
      'exchange:fills',
      'exchange:orders',
      'exchange:trades',
      'exchange:withdrawals',
      'partner:orders',
    ].map((s) => `S_COVERAGE ${s}:2026-11-12`);
    expect(
      summary.breaks
        .filter((b) => b.inPeriod)
        .map((b) => `${b.code} ${b.key}`)
        .sort(),
    ).toEqual(unsynced);
    expect(summary.breakCounts).toMatchObject({
      total: summary.breaks.length,
      inPeriod: unsynced.length,
      carriedOver: summary.breaks.length - unsynced.length,
    });
    expect(summary.breaks.map((b) => `${b.code} ${b.key}`)).toContain('P_FEE_USD o-old');
    expect(JSON.parse(JSON.stringify(summary))).toEqual(summary);
  });

  it('partner orders with sub-millisecond creation times page exactly across page boundaries', async () => {
    // Stored to the microsecond: a JS Date of the last row of a page keeps only the millisecond.
    const created = [
      '2026-10-20T10:00:00.123100Z',
      '2026-10-20T10:00:00.123456Z',
      '2026-10-20T10:00:00.123789Z',
      '2026-10-20T10:00:00.124500Z',
      '2026-10-20T10:00:00.124501Z',
    ];
    for (const [i, at] of created.entries()) await insertOrder(db(), { id: `o-us-${i}`, created: at, updated: at });
    const span = { from: new Date('2026-10-20T00:00:00Z'), to: new Date('2026-10-21T00:00:00Z') };
    for (const size of [1, 2, 3, 1000]) {
      const ids: string[] = [];
      for await (const page of partnerOrdersCreatedIn(db(), 'default', span, size)) {
        ids.push(...page.map((o) => o.orderId));
        if (ids.length > 20) break; // a page that repeats rows would otherwise page forever
      }
      expect(ids).toEqual(created.map((_, i) => `o-us-${i}`));
    }
  });

  it('keyset pages neither skip nor repeat rows at any page size', async () => {
    const span = { from: new Date('2026-11-01T00:00:00Z'), to: new Date('2026-11-11T00:00:00Z') };
    const collect = async <T>(gen: AsyncGenerator<T[]>) => {
      const out: T[] = [];
      for await (const page of gen) out.push(...page);
      return out;
    };
    for (const size of [1, 2, 3, 1000]) {
      expect((await collect(partnerOrdersCreatedIn(db(), 'default', span, size))).map((o) => o.orderId)).toEqual([
        'o-old',
        'o-pend',
        'o-ok',
        'o-feeusd',
        'o-missing',
      ]);
      expect((await collect(fillsIn(db(), 'default', span, size))).map((f) => `${f.execId}:${f.orderFound}`)).toEqual([
        '1:true',
        '2:true',
        '3:true',
        '900:false',
      ]);
      const orders = await collect(exchangeOrdersWithFillsIn(db(), 'default', span, size));
      expect(orders.map((o) => `${o.exOrdId}:${o.found}:${o.fillQty.toString()}:${o.fillNotional.toString()}`)).toEqual(
        ['100:true:0.75:1500', '101:true:0.1:210', '999:false:0.01:20'],
      );
    }
  });
});

describeEachStore('reconcilePeriod: an exchange order whose fills never arrive (issue 14)', (ctx) => {
  const db = () => ctx.store.db;
  const cfg = makeConfig({ account: 'nofills' });
  const qtyBreak = () =>
    db()
      .selectFrom('break')
      .select(['status', 'last_seen_run', 'resolved_run', 'message', 'expected', 'actual'])
      .where('account', '=', 'nofills')
      .where('code', '=', 'E_FILL_QTY')
      .where('key', '=', '880001')
      .executeTakeFirst();

  it('is a break while no fill is stored, left alone while nothing changes, resolved by whichever run follows its fills (even dated later)', async () => {
    const order = {
      account: 'nofills',
      ord_type: 'LIMIT',
      ord_status: 'FILLED',
      side: 'BUY',
      symbol: 'ETH-USD',
      leaves_qty: '0',
      avg_px: '2000',
      timestamp: '2026-11-10T05:00:00Z',
      raw: '{}',
    };
    await db()
      .insertInto('exchange_order')
      .values([
        { ...order, ex_ord_id: '880001', cum_qty: '0.5' },
        { ...order, ex_ord_id: '880002', cum_qty: '0', ord_status: 'CANCELED' }, // nothing filled: nothing to miss
        { ...order, ex_ord_id: '880003', cum_qty: '0.5', timestamp: '2026-11-09T23:59:59.999999Z' }, // of another period
      ])
      .execute();
    // The account's first judgement takes every stored order: the period's, and 880003 of the day before.
    const first = await reconcilePeriod(await newContext(ctx.store, cfg, 'nf-1', PERIOD), PERIOD);
    expect(first.ruleResults.find((r) => r.code === 'E_FILL_QTY')).toMatchObject({
      status: 'breaks',
      checked: 2,
      breaks: 2,
    });
    expect(await qtyBreak()).toMatchObject({ status: 'open', expected: '0.5', actual: '0' });
    expect((await qtyBreak())?.message).toContain('no fill stored');

    // Another period, nothing changed: the break is left as it is, and only the period is judged.
    const next = { from: '2026-11-11', to: '2026-11-12' };
    const quiet = await reconcilePeriod(await newContext(ctx.store, cfg, 'nf-2', next), next);
    expect(quiet.ruleResults.find((r) => r.code === 'E_FILL_QTY')).toMatchObject({ checked: 0 });
    expect(await qtyBreak()).toMatchObject({ status: 'open', last_seen_run: 'nf-1' });

    // Its fill arrives late, stamped the next day: the run of a later period resolves the break (the
    // fill changed its order), and reports it as a break of an earlier day resolved by late data.
    await db()
      .insertInto('exchange_fill')
      .values({
        account: 'nofills',
        exec_id: '990001',
        ex_ord_id: '880001',
        side: 'BUY',
        symbol: 'ETH-USD',
        price: '2000',
        qty: '0.5',
        fee: '1',
        timestamp: '2026-11-11T08:00:00Z',
        raw: '{}',
      })
      .execute();
    const later = { from: '2026-11-12', to: '2026-11-13' };
    const third = await reconcilePeriod(await newContext(ctx.store, cfg, 'nf-3', later), later);
    expect(await qtyBreak()).toMatchObject({ status: 'resolved', resolved_run: 'nf-3' });
    expect(third.late).toEqual([
      {
        code: 'E_FILL_QTY',
        key: '880001',
        day: '2026-11-10',
        event: 'resolved',
        severity: 'high',
        message: expect.stringContaining('no fill stored'),
      },
    ]);
    const other = await db()
      .selectFrom('break')
      .select(['status', 'last_seen_run'])
      .where('account', '=', 'nofills')
      .where('key', '=', '880003')
      .executeTakeFirstOrThrow();
    expect(other).toEqual({ status: 'open', last_seen_run: 'nf-1' });
  });
});
