import { afterAll, beforeAll, expect, it } from 'vitest';
import { describeEachStore, latestChanges, withoutChangeXid } from '../helpers/db.js';
import { loadConfig } from '../../src/config/load.js';
import { silentLogger } from '../../src/log/logger.js';
import { Decimal } from '../../src/decimal/decimal.js';
import type { Store } from '../../src/store/db/database.js';
import type { StageContext } from '../../src/stages/context.js';
import { syncExchange, SyncAbortedError } from '../helpers/sync.js';
import {
  FAKE_NOW,
  makeData,
  startFakeExchange,
  type FakeData,
  type FakeExchange,
  type FakeOptions,
  fakeExchangeConfigFile,
} from './exchange-fake-api.js';

const configPath = fakeExchangeConfigFile('rr-exchange-');

function ctxFor(store: Store, api: FakeExchange, signal?: AbortSignal): StageContext {
  const config = loadConfig({ env: { EXCHANGE_API_URL: api.url, EXCHANGE_API_TOKEN: api.token }, configPath });
  return { store, config, logger: silentLogger(), runId: null, now: FAKE_NOW, signal };
}

const canon = (v: string) => new Decimal(v).toString();

/** Everything the sync stores that a re-run must leave identical (times of observation excluded). */
async function dump(store: Store) {
  const db = store.db;
  const fills = withoutChangeXid(await db.selectFrom('exchange_fill').selectAll().orderBy('exec_id').execute());
  const orders = await db
    .selectFrom('exchange_order')
    .select(['ex_ord_id', 'ord_status', 'cum_qty', 'price', 'timestamp', 'raw'])
    .orderBy('ex_ord_id')
    .execute();
  const states = await db
    .selectFrom('exchange_order_state')
    .select(['ex_ord_id', 'ord_status', 'cum_qty'])
    .orderBy('ex_ord_id')
    .orderBy('ord_status')
    .execute();
  const deposits = await db
    .selectFrom('exchange_deposit')
    .select(['deposit_id', 'amount', 'state', 'address', 'tx_hash', 'timestamp'])
    .orderBy('deposit_id')
    .execute();
  const depositStates = await db
    .selectFrom('exchange_deposit_state')
    .select(['deposit_id', 'state'])
    .orderBy('deposit_id')
    .orderBy('state')
    .execute();
  const withdrawals = await db
    .selectFrom('exchange_withdrawal')
    .select(['withdrawal_id', 'amount', 'fee', 'state'])
    .orderBy('withdrawal_id')
    .execute();
  const withdrawalStates = await db
    .selectFrom('exchange_withdrawal_state')
    .select(['withdrawal_id', 'state'])
    .orderBy('withdrawal_id')
    .orderBy('state')
    .execute();
  const notFound = await db.selectFrom('exchange_order_not_found').select('ex_ord_id').orderBy('ex_ord_id').execute();
  const quarantine = await db
    .selectFrom('quarantine')
    .select(['entity', 'record_key', 'reason', 'resolved_at'])
    .orderBy('id')
    .execute();
  const refs = await db.selectFrom('reference_snapshot').select(['kind', 'content_hash']).orderBy('id').execute();
  const stringify = (x: unknown) =>
    JSON.parse(JSON.stringify(x, (_k, v: unknown) => (v instanceof Decimal ? `D:${v.toString()}` : v))) as unknown;
  return stringify({
    fills,
    orders,
    states,
    deposits,
    depositStates,
    withdrawals,
    withdrawalStates,
    notFound,
    quarantine: quarantine.map((q) => ({ ...q, resolved_at: q.resolved_at !== null })),
    refs,
  });
}

async function expectMatches(store: Store, data: FakeData) {
  const fills = await store.db.selectFrom('exchange_fill').selectAll().orderBy('exec_id').execute();
  const expected = [...data.fills]
    .filter((f) => !data.malformed.has(f.execId))
    .sort((a, b) => (BigInt(a.execId) < BigInt(b.execId) ? -1 : 1));
  expect(fills.length).toBe(expected.length);
  fills.forEach((row, i) => {
    const f = expected[i]!;
    expect(row.exec_id).toBe(f.execId);
    expect(row.ex_ord_id).toBe(f.exOrdId);
    expect(row.trade_id).toBe(f.tradeId);
    expect(row.side).toBe(f.side);
    expect(row.symbol).toBe(f.symbol);
    expect(row.price.toString()).toBe(canon(f.price));
    expect(row.qty.toString()).toBe(canon(f.qty));
    expect(row.fee.toString()).toBe(canon(f.fee));
    expect(row.timestamp.getTime()).toBe(f.timestamp);
  });
  const orders = await store.db.selectFrom('exchange_order').selectAll().orderBy('ex_ord_id').execute();
  expect(orders.length).toBe(data.orders.length);
  const byId = new Map(data.orders.map((o) => [o.exOrdId, o]));
  for (const row of orders) {
    const o = byId.get(row.ex_ord_id)!;
    expect(row.ord_status).toBe(o.ordStatus);
    expect(row.price?.toString()).toBe(canon(o.price));
    expect(row.timestamp?.getTime()).toBe(o.timestamp);
  }
  const deposits = await store.db.selectFrom('exchange_deposit').selectAll().orderBy('deposit_id').execute();
  expect(deposits.map((d) => [d.deposit_id, d.amount.toString(), d.state, d.address])).toEqual(
    [...data.deposits]
      .sort((a, b) => a.depositId.localeCompare(b.depositId))
      .map((d) => [d.depositId, canon(d.amount), d.state, d.address]),
  );
  const withdrawals = await store.db.selectFrom('exchange_withdrawal').selectAll().execute();
  expect(withdrawals.length).toBe(data.withdrawals.length);
}

const variants: Array<[string, Partial<FakeOptions>]> = [
  ['newest-first, inclusive bounds', { fillsOrder: 'newest-first', inclusive: true }],
  [
    'oldest-first, exclusive bounds, faults, numbers as strings',
    { fillsOrder: 'oldest-first', inclusive: false, faultEvery: 7, numbersAsNumbers: false },
  ],
];

for (const [title, options] of variants) {
  describeEachStore(`exchange sync against a fake API (${title})`, (ctx) => {
    let api: FakeExchange;
    beforeAll(async () => {
      const data = makeData(2_600, 700);
      data.hiddenOrders.add(data.orders[5]!.exOrdId);
      // A fill of an order the exchange does not know: the orphan rule's input.
      data.fills.push({ ...data.fills[data.fills.length - 1]!, execId: '9007199254799999', exOrdId: '123456789' });
      api = await startFakeExchange(data, options);
    });
    afterAll(() => api.close());

    it('stores every record digit for digit, then a re-run changes nothing', async () => {
      const first = await syncExchange(ctxFor(ctx.store, api), { progress: 'off' });
      expect(first.settled).toBe(true);
      await expectMatches(ctx.store, api.data);
      expect(first.cursors['fills.execId']).toBe('9007199254799999');
      expect(first.cursors['fills.pending']).toBe('[]');
      const notFound = await ctx.store.db.selectFrom('exchange_order_not_found').select('ex_ord_id').execute();
      expect(notFound.map((r) => r.ex_ord_id)).toEqual(['123456789']);
      const balances = await ctx.store.db.selectFrom('balance').selectAll().orderBy('currency').execute();
      expect(balances.map((b) => [b.currency, b.balance.toString(), b.balance_local.toString()])).toEqual([
        ['BTC', '1.5', '30000.12'],
        ['ETH', '10.000000000000000001', '30000'],
      ]);
      const symbols = await ctx.store.db.selectFrom('exchange_symbol').selectAll().orderBy('symbol').execute();
      expect(
        symbols.map((s) => [
          s.symbol,
          s.price_increment?.toString(),
          s.lot_size?.toString(),
          s.min_order_size?.toString(),
        ]),
      ).toEqual([
        ['BTC-USD', '0.1', '0.00000001', '0.0000005'],
        ['ETH-USD', '0.01', '0.00000001', '0.001'],
      ]);

      const before = await dump(ctx.store);
      const changes = await latestChanges(ctx.store.db);
      const again = await syncExchange(ctxFor(ctx.store, api), { progress: 'off' });
      expect(again.counts.fills).toBe(0);
      expect(await dump(ctx.store)).toEqual(before);
      // Re-reading the same records is no change for the reconcile to judge.
      expect(await latestChanges(ctx.store.db)).toEqual(changes);
    });

    it('lands late state changes of open deposits, withdrawals and orders in the state history', async () => {
      const dep = api.data.deposits.find((d) => d.state === 'UNCONFIRMED')!;
      dep.state = 'COMPLETED';
      const wd = api.data.withdrawals.find((w) => w.state === 'PENDING')!;
      wd.state = 'COMPLETED';
      const ord = api.data.orders.find((o) => o.ordStatus === 'OPEN')!;
      ord.ordStatus = 'FILLED';
      // The orphan's order turns up (listed by id only, with an old timestamp).
      api.data.orders.push({ ...api.data.orders[0]!, exOrdId: '123456789', clOrdId: 'late' });
      api.data.hiddenOrders.add('123456789');
      await syncExchange(ctxFor(ctx.store, api), { progress: 'off' });
      const depStates = await ctx.store.db
        .selectFrom('exchange_deposit_state')
        .select('state')
        .where('deposit_id', '=', dep.depositId)
        .orderBy('state')
        .execute();
      expect(depStates.map((s) => s.state)).toEqual(['COMPLETED', 'UNCONFIRMED']);
      const wdStates = await ctx.store.db
        .selectFrom('exchange_withdrawal_state')
        .select('state')
        .where('withdrawal_id', '=', wd.withdrawalId)
        .orderBy('state')
        .execute();
      expect(wdStates.map((s) => s.state)).toEqual(['COMPLETED', 'PENDING']);
      const o = await ctx.store.db
        .selectFrom('exchange_order')
        .select('ord_status')
        .where('ex_ord_id', '=', ord.exOrdId)
        .executeTakeFirstOrThrow();
      expect(o.ord_status).toBe('FILLED');
      const ordStates = await ctx.store.db
        .selectFrom('exchange_order_state')
        .select('ord_status')
        .where('ex_ord_id', '=', ord.exOrdId)
        .orderBy('ord_status')
        .execute();
      expect(ordStates.map((s) => s.ord_status)).toEqual(['FILLED', 'OPEN']);
      expect(await ctx.store.db.selectFrom('exchange_order_not_found').selectAll().execute()).toEqual([]);
      const late = await ctx.store.db
        .selectFrom('exchange_order')
        .select('cl_ord_id')
        .where('ex_ord_id', '=', '123456789')
        .executeTakeFirstOrThrow();
      expect(late.cl_ord_id).toBe('late');
    });
  });
}

describeEachStore('exchange sync: interrupted and resumed equals uninterrupted', (ctx) => {
  let api: FakeExchange;
  let reference: unknown;
  beforeAll(async () => {
    api = await startFakeExchange(makeData(3_100, 800), { fillsOrder: 'newest-first', inclusive: true });
  });
  afterAll(() => api.close());

  it('aborts between pages at several points and resumes to the same rows', async () => {
    // Reference: an uninterrupted sync into a fresh schema of the same store kind.
    const { createTestStore } = await import('../helpers/db.js');
    const ref = await createTestStore(ctx.kind);
    try {
      await syncExchange(ctxFor(ref.store, api), { progress: 'off' });
      reference = await dump(ref.store);
    } finally {
      await ref.drop();
    }
    // Abort after 2, then 5, then 9 pages (the counter is shared by all streams), then finish.
    for (const pagesBeforeAbort of [2, 5, 9, 30]) {
      const ac = new AbortController();
      let seen = 0;
      const base = api.requests.length;
      const timer = setInterval(() => {
        seen = api.requests.length - base;
        if (seen >= pagesBeforeAbort) ac.abort(new Error('killed by the test'));
      }, 1);
      try {
        await syncExchange(ctxFor(ctx.store, api, ac.signal), { progress: 'off' });
      } catch (err) {
        expect(err).toBeInstanceOf(SyncAbortedError);
      } finally {
        clearInterval(timer);
      }
    }
    await syncExchange(ctxFor(ctx.store, api), { progress: 'off' });
    expect(await dump(ctx.store)).toEqual(reference);
  });
});

describeEachStore('exchange sync: malformed records', (ctx) => {
  let api: FakeExchange;
  beforeAll(async () => {
    const data = makeData(1_200, 400);
    const bad = data.fills[600]!;
    data.malformed.set(
      bad.execId,
      `{"exOrdId":${bad.exOrdId},"tradeId":"7","execId":${bad.execId},"side":"BUY","symbol":"BTC-USD","price":"abc","qty":"0.1","fee":"0","timestamp":${bad.timestamp},"extra":{"x":1}}`,
    );
    // Valid for the schema, but \u0000 is JSON that Postgres jsonb refuses: quarantined, and the
    // page still lands around it.
    const nul = data.fills[605]!;
    data.malformed.set(
      nul.execId,
      `{"exOrdId":${nul.exOrdId},"tradeId":"8","execId":${nul.execId},"side":"BUY","symbol":"BTC-USD","price":"1","qty":"0.1","fee":"0","timestamp":${nul.timestamp},"extra":{"note":"nul \\u0000 byte"}}`,
    );
    const badDeposit = data.deposits[3]!;
    data.malformed.set(
      badDeposit.depositId,
      `{"depositId":"${badDeposit.depositId}","currency":"BTC","address":"x","state":"WEIRD"}`,
    );
    api = await startFakeExchange(data, { fillsOrder: 'oldest-first', inclusive: true });
  });
  afterAll(() => api.close());

  it('quarantines a malformed record with its raw body and reason, stores its neighbours, resolves it when it validates later', async () => {
    const bad = api.data.fills[600]!;
    const result = await syncExchange(ctxFor(ctx.store, api), { progress: 'off' });
    const nul = api.data.fills[605]!;
    expect(result.counts.quarantined).toBe(3);
    const q = await ctx.store.db.selectFrom('quarantine').selectAll().orderBy('id').execute();
    expect(q.map((r) => [r.entity, r.record_key, r.endpoint]).sort()).toEqual(
      [
        ['fill', bad.execId, 'GET /fills'],
        ['fill', nul.execId, 'GET /fills'],
        ['deposit', api.data.deposits[3]!.depositId, 'GET /deposits'],
      ].sort(),
    );
    const byKey = new Map(q.map((r) => [r.record_key, r]));
    expect(byKey.get(bad.execId)!.reason).toBe('price: must be a decimal number (got "abc")');
    expect(byKey.get(bad.execId)!.raw_text).toContain(`"execId":${bad.execId}`);
    expect(byKey.get(nul.execId)!.reason).toBe(
      'extra.note: holds the character \\u0000, which the database cannot store',
    );
    expect(byKey.get(nul.execId)!.raw_text).toContain('nul \\u0000 byte');
    const dep = byKey.get(api.data.deposits[3]!.depositId)!;
    expect(dep.reason).toContain('amount: must be a decimal number (got nothing)');
    expect(dep.reason).toContain('state: must be one of REJECTED, UNCONFIRMED, COMPLETED (got "WEIRD")');
    const neighbours = await ctx.store.db
      .selectFrom('exchange_fill')
      .select('exec_id')
      .where('exec_id', 'in', [
        api.data.fills[599]!.execId,
        api.data.fills[601]!.execId,
        bad.execId,
        api.data.fills[604]!.execId,
        nul.execId,
      ])
      .execute();
    expect(neighbours.map((r) => r.exec_id).sort()).toEqual(
      [api.data.fills[599]!.execId, api.data.fills[601]!.execId, api.data.fills[604]!.execId].sort(),
    );

    // The deposit is fixed upstream: the next sync's overlap does not reach it, a backfill does.
    api.data.malformed.delete(api.data.deposits[3]!.depositId);
    await syncExchange(ctxFor(ctx.store, api), {
      progress: 'off',
      backfill: { from: new Date(api.data.deposits[0]!.timestamp), to: new Date(api.data.deposits[10]!.timestamp) },
    });
    const open = await ctx.store.db
      .selectFrom('quarantine')
      .select(['entity'])
      .where('resolved_at', 'is', null)
      .execute();
    expect(open.map((r) => r.entity)).toEqual(['fill', 'fill']);
  });
});

describeEachStore('exchange sync: the orders of new fills are asked by id, a refused one again each run', (ctx) => {
  let api: FakeExchange;
  let hidden: string;
  let refused: string;
  beforeAll(async () => {
    const data = makeData(300, 100);
    // Two FILLED orders that no listing shows: their fills make the sync ask for them by id.
    hidden = data.orders[12]!.exOrdId;
    refused = data.orders[18]!.exOrdId;
    data.hiddenOrders.add(hidden);
    data.hiddenOrders.add(refused);
    // This one answers, but with a record that fails validation: neither stored nor a 404.
    data.malformedById.set(refused, `{"exOrdId":${refused},"ordStatus":"WEIRD"}`);
    api = await startFakeExchange(data, { fillsOrder: 'oldest-first', inclusive: true });
  });
  afterAll(() => api.close());

  const askedById = async () => {
    api.requests.length = 0;
    const result = await syncExchange(ctxFor(ctx.store, api), { progress: 'off' });
    const ids = api.requests.flatMap((r) => /\/orders\/(\d+)$/.exec(r)?.slice(1) ?? []);
    return { ids: ids.sort(), lookups: JSON.parse(result.cursors['orders.lookups']!) as { carried: string[] } };
  };

  it('asks only for the orders of fills written since the last lookups, and for the refused order each run', async () => {
    const first = await askedById();
    expect(first.ids).toEqual([hidden, refused].sort());
    expect(first.lookups.carried).toEqual([refused]);
    const stored = await ctx.store.db.selectFrom('exchange_order').select('ex_ord_id').where('ex_ord_id', '=', hidden);
    expect(await stored.execute()).toHaveLength(1);

    // Nothing new: the stored fills are not looked at again; the refused order is asked once more.
    expect((await askedById()).ids).toEqual([refused]);

    // A new fill of an order only answered by id.
    const late = { ...api.data.orders[0]!, exOrdId: '900000000099999', clOrdId: 'late' };
    api.data.orders.push(late);
    api.data.hiddenOrders.add(late.exOrdId);
    const last = api.data.fills[api.data.fills.length - 1]!;
    api.data.fills.push({ ...last, execId: (BigInt(last.execId) + 5n).toString(), exOrdId: late.exOrdId });
    expect((await askedById()).ids).toEqual([late.exOrdId, refused].sort());

    // The refused order validates now: stored, and asked no more.
    api.data.malformedById.delete(refused);
    const fixed = await askedById();
    expect(fixed.ids).toEqual([refused]);
    expect(fixed.lookups.carried).toEqual([]);
    expect((await askedById()).ids).toEqual([]);
    const orders = await ctx.store.db
      .selectFrom('exchange_order')
      .select('ex_ord_id')
      .where('ex_ord_id', 'in', [hidden, refused, late.exOrdId])
      .execute();
    expect(orders).toHaveLength(3);
  });
});
