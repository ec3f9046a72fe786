import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { sql } from 'kysely';
import { createTestStore, describeEachStore, latestChanges, withoutChangeXid } from '../helpers/db.js';
import { loadConfig } from '../../src/config/load.js';
import { createLogger, silentLogger } from '../../src/log/logger.js';
import { Decimal } from '../../src/decimal/decimal.js';
import type { Store } from '../../src/store/db/database.js';
import type { StageContext } from '../../src/stages/context.js';
import { syncExchange, SyncAbortedError } from '../helpers/sync.js';
import { startSandbox, type Sandbox, type SandboxOptions } from '../helpers/sandbox.js';

const dir = mkdtempSync(join(tmpdir(), 'rr-exchange-sb-'));
const configPath = join(dir, 'config.json');
// Short back-off and a body timeout well below the sandbox's 15 s "slow" fault.
writeFileSync(
  configPath,
  JSON.stringify({
    exchange: { rateLimitPerSecond: 1000 },
    http: { retryBaseMs: 5, retryMaxMs: 50, maxRetries: 10, connectTimeoutMs: 2000, bodyTimeoutMs: 1500 },
  }),
);

function ctxFor(store: Store, sb: Sandbox, signal?: AbortSignal): StageContext {
  const config = loadConfig({ env: { ...sb.env }, configPath });
  return { store, config, logger: silentLogger(), runId: null, now: new Date(sb.data.clock()), signal };
}

const canon = (v: string | undefined | null) => (v === undefined || v === null ? null : new Decimal(v).toString());
const text = (d: Decimal | null | undefined) => (d === null || d === undefined ? null : d.toString());

async function compareWithSandbox(store: Store, sb: Sandbox, malformedDeposits: string[]) {
  const db = store.db;
  const fills = await db.selectFrom('exchange_fill').selectAll().orderBy('exec_id').execute();
  const expected = sb.data.fills();
  expect(fills.length).toBe(expected.length);
  fills.forEach((row, i) => {
    const f = expected[i]!;
    expect([
      row.exec_id,
      row.ex_ord_id,
      row.trade_id,
      row.side,
      row.symbol,
      row.price.toString(),
      row.qty.toString(),
      row.fee.toString(),
      row.timestamp.getTime(),
    ]).toEqual([
      f.execId,
      f.exOrdId,
      f.tradeId,
      f.side,
      f.symbol,
      canon(f.price),
      canon(f.qty),
      canon(f.fee),
      f.timestamp,
    ]);
  });

  const orders = await db.selectFrom('exchange_order').selectAll().execute();
  const expectedOrders = sb.data.exchangeOrders();
  expect(orders.length).toBe(expectedOrders.length);
  const byId = new Map(orders.map((o) => [o.ex_ord_id, o]));
  for (const o of expectedOrders) {
    const row = byId.get(o.exOrdId);
    expect(row, `order ${o.exOrdId}`).toBeDefined();
    expect([
      row!.cl_ord_id,
      row!.ord_type,
      row!.ord_status,
      row!.side,
      row!.symbol,
      text(row!.price),
      text(row!.cum_qty),
      text(row!.leaves_qty),
      text(row!.avg_px),
      row!.timestamp?.getTime(),
    ]).toEqual([
      o.clOrdId,
      o.ordType,
      o.ordStatus,
      o.side,
      o.symbol,
      canon(o.price),
      canon(o.cumQty),
      canon(o.leavesQty),
      canon(o.avgPx),
      o.timestamp,
    ]);
  }

  const deposits = await db.selectFrom('exchange_deposit').selectAll().execute();
  const expectedDeposits = sb.data.deposits().filter((d) => !malformedDeposits.includes(d.depositId));
  expect(deposits.length).toBe(expectedDeposits.length);
  const depById = new Map(deposits.map((d) => [d.deposit_id, d]));
  for (const d of expectedDeposits) {
    const row = depById.get(d.depositId)!;
    expect([
      row.amount.toString(),
      row.currency,
      row.address,
      row.tx_hash,
      row.state,
      row.timestamp?.getTime(),
    ]).toEqual([canon(d.amount), d.currency, d.address, d.txHash ?? null, d.state, d.timestamp]);
  }

  const withdrawals = await db.selectFrom('exchange_withdrawal').selectAll().execute();
  const expectedWithdrawals = sb.data.withdrawals();
  expect(withdrawals.length).toBe(expectedWithdrawals.length);
  const wdById = new Map(withdrawals.map((w) => [w.withdrawal_id, w]));
  for (const w of expectedWithdrawals) {
    const row = wdById.get(w.withdrawalId)!;
    expect([
      row.amount.toString(),
      text(row.fee),
      row.currency,
      row.beneficiary,
      row.state,
      row.timestamp?.getTime(),
    ]).toEqual([canon(w.amount), canon(w.fee), w.currency, w.beneficiary, w.state, w.timestamp]);
  }

  const snapshot = await db
    .selectFrom('balance_snapshot')
    .select('id')
    .orderBy('id', 'desc')
    .limit(1)
    .executeTakeFirstOrThrow();
  const balances = await db
    .selectFrom('balance')
    .selectAll()
    .where('snapshot_id', '=', snapshot.id)
    .orderBy('currency')
    .execute();
  expect(
    balances.map((b) => [
      b.currency,
      b.balance.toString(),
      b.available.toString(),
      b.balance_local.toString(),
      b.rate.toString(),
    ]),
  ).toEqual(
    [...sb.data.balances()]
      .sort((a, b) => (a.currency < b.currency ? -1 : 1))
      .map((b) => [b.currency, canon(b.balance), canon(b.available), canon(b.balance_local), canon(b.rate)]),
  );
  const whitelist = await db.selectFrom('exchange_whitelist_entry').select('whitelist_id').execute();
  expect(whitelist.map((w) => w.whitelist_id).sort()).toEqual(
    sb.data
      .whitelist()
      .map((w) => w.whitelistId)
      .sort(),
  );
  const symbols = await db.selectFrom('exchange_symbol').select('symbol').execute();
  expect(symbols.map((s) => s.symbol).sort()).toEqual(
    sb.data
      .symbols()
      .map((s) => s.symbol)
      .sort(),
  );
}

/** Everything a re-run must leave identical (observation times excluded). */
async function dump(store: Store) {
  const db = store.db;
  const out = {
    fills: withoutChangeXid(await db.selectFrom('exchange_fill').selectAll().orderBy('exec_id').execute()),
    orders: await db
      .selectFrom('exchange_order')
      .select(['ex_ord_id', 'ord_status', 'cum_qty', 'avg_px', 'price', 'timestamp', 'raw'])
      .orderBy('ex_ord_id')
      .execute(),
    orderStates: await db
      .selectFrom('exchange_order_state')
      .select(['ex_ord_id', 'ord_status', 'cum_qty'])
      .orderBy('ex_ord_id')
      .orderBy('ord_status')
      .execute(),
    deposits: await db
      .selectFrom('exchange_deposit')
      .select(['deposit_id', 'amount', 'state', 'raw'])
      .orderBy('deposit_id')
      .execute(),
    depositStates: await db
      .selectFrom('exchange_deposit_state')
      .select(['deposit_id', 'state'])
      .orderBy('deposit_id')
      .orderBy('state')
      .execute(),
    withdrawals: await db
      .selectFrom('exchange_withdrawal')
      .select(['withdrawal_id', 'amount', 'fee', 'state', 'raw'])
      .orderBy('withdrawal_id')
      .execute(),
    withdrawalStates: await db
      .selectFrom('exchange_withdrawal_state')
      .select(['withdrawal_id', 'state'])
      .orderBy('withdrawal_id')
      .orderBy('state')
      .execute(),
    notFound: await db.selectFrom('exchange_order_not_found').select('ex_ord_id').orderBy('ex_ord_id').execute(),
    quarantine: await db
      .selectFrom('quarantine')
      .select(['entity', 'record_key', 'reason', 'raw_hash'])
      .where('resolved_at', 'is', null)
      .orderBy('raw_hash')
      .execute(),
    references: await db
      .selectFrom('reference_snapshot')
      .select(['kind', 'content_hash'])
      .orderBy('kind')
      .orderBy('content_hash')
      .execute(),
  };
  return JSON.parse(
    JSON.stringify(out, (_k, v: unknown) => (v instanceof Decimal ? `D:${v.toString()}` : v)),
  ) as unknown;
}

const small: Partial<SandboxOptions> = {
  seed: 11,
  days: 3,
  exchangeOrdersPerDay: 250,
  fillsPerOrder: 3,
  ordersPerDay: 20,
  depositsPerDay: 6,
  withdrawalsPerDay: 4,
};

const variants: Array<[string, Partial<SandboxOptions>]> = [
  [
    'newest-first fills, inclusive execId bounds, faults on',
    { fillsOrder: 'newest-first', execIdBound: 'inclusive', faults: 'default' },
  ],
  [
    'oldest-first fills, exclusive execId and from bounds, inclusive to, ids ascending within a millisecond',
    {
      fillsOrder: 'oldest-first',
      execIdBound: 'exclusive',
      exchangeFromBound: 'exclusive',
      exchangeToBound: 'inclusive',
      sameMsOrder: 'id-asc',
    },
  ],
];

for (const [title, options] of variants) {
  describeEachStore(`exchange sync against the sandbox (${title})`, (ctx) => {
    let sb: Sandbox;
    beforeAll(async () => {
      sb = await startSandbox({ ...small, ...options });
    });
    afterAll(() => sb.close());

    it('stores the sandbox history row for row and digit for digit; a re-run changes nothing', async () => {
      const faults = options.faults === 'default';
      const malformed = faults
        ? sb
            .expectedBreaks()
            .filter((b) => b.code === 'S_QUARANTINE')
            .map((b) => b.key)
        : [];
      const result = await syncExchange(ctxFor(ctx.store, sb), { progress: 'off' });
      expect(result.settled).toBe(true);
      expect(result.counts.fills).toBe(sb.data.fills().length);
      await compareWithSandbox(ctx.store, sb, malformed);
      // The malformed record is quarantined with its raw body and reason; its page's neighbours landed.
      const q = await ctx.store.db.selectFrom('quarantine').selectAll().where('resolved_at', 'is', null).execute();
      expect(q.map((r) => r.record_key)).toEqual(malformed);
      if (faults) {
        expect(q[0]!.entity).toBe('deposit');
        expect(q[0]!.reason).toContain('amount: must be a decimal number (got "NaN.0")');
        expect(q[0]!.raw_text).toContain(malformed[0]!);
        expect(result.counts.retries).toBeGreaterThan(0);
      }

      const before = await dump(ctx.store);
      const changes = await latestChanges(ctx.store.db);
      const again = await syncExchange(ctxFor(ctx.store, sb), { progress: 'off' });
      expect(again.counts.fills).toBe(0);
      expect(await dump(ctx.store)).toEqual(before);
      // Re-reading the same records is no change for the reconcile to judge.
      expect(await latestChanges(ctx.store.db)).toEqual(changes);

      // Backfill of a date range (fills by from/to and execId, the rest by windows) restores lost rows.
      const fills = sb.data.fills();
      const from = new Date(fills[Math.floor(fills.length / 3)]!.timestamp);
      const to = new Date(from.getTime() + 6 * 3_600_000);
      await ctx.store.db
        .deleteFrom('exchange_fill')
        .where('timestamp', '>=', from)
        .where('timestamp', '<', to)
        .execute();
      await ctx.store.db
        .deleteFrom('exchange_order')
        .where('timestamp', '>=', from)
        .where('timestamp', '<', to)
        .execute();
      const backfilled = await syncExchange(ctxFor(ctx.store, sb), { progress: 'off', backfill: { from, to } });
      expect(backfilled.counts.fills).toBeGreaterThan(0);
      expect(await dump(ctx.store)).toEqual(before);

      // An incremental walk inserts its pages as new fills. With the fills cursor lost, the walk reads stored fills
      // again: its first page meets them (a unique violation) and every page is upserted, so nothing is duplicated or
      // quarantined, and a stored fill whose record differs from the exchange's takes the exchange's record.
      const tampered = fills[Math.floor(fills.length / 2)]!.execId;
      await ctx.store.db
        .updateTable('exchange_fill')
        .set({ raw: '{"tampered":true}' })
        .where('exec_id', '=', tampered)
        .execute();
      await ctx.store.db
        .deleteFrom('sync_cursor')
        .where('source', '=', 'exchange')
        .where('name', 'in', ['fills.execId', 'fills.pending'])
        .execute();
      const lines: string[] = [];
      const destination = new Writable({
        write(chunk: Buffer, _encoding, done) {
          lines.push(chunk.toString());
          done();
        },
      });
      const rewalked = await syncExchange(
        { ...ctxFor(ctx.store, sb), logger: createLogger({ level: 'warn', destination }) },
        { progress: 'off' },
      );
      expect(rewalked.settled).toBe(true);
      // Upserted as pages, not written record by record as a page the database refuses would be.
      expect(lines.filter((l) => l.includes('refused by the database'))).toEqual([]);
      expect(await dump(ctx.store)).toEqual(before);
      expect(
        await ctx.store.db.selectFrom('quarantine').select('record_key').where('resolved_at', 'is', null).execute(),
      ).toEqual(malformed.map((key) => ({ record_key: key })));
    });
  });
}

describeEachStore('exchange sync against the sandbox: killed part-way and resumed', (ctx) => {
  let sb: Sandbox;
  beforeAll(async () => {
    sb = await startSandbox({ ...small, seed: 12, fillsOrder: 'newest-first' });
  });
  afterAll(() => sb.close());

  it('equals an uninterrupted sync after aborts at several points', async () => {
    const ref = await createTestStore(ctx.kind);
    let reference: unknown;
    try {
      await syncExchange(ctxFor(ref.store, sb), { progress: 'off' });
      reference = await dump(ref.store);
    } finally {
      await ref.drop();
    }
    let aborted = 0;
    for (const requestsBeforeAbort of [3, 7, 12, 20, 40]) {
      const ac = new AbortController();
      let n = 0;
      const off = sb.onRequest(({ api }) => {
        if (api === 'exchange' && ++n === requestsBeforeAbort) ac.abort(new Error('killed by the test'));
      });
      try {
        await syncExchange(ctxFor(ctx.store, sb, ac.signal), { progress: 'off' });
      } catch (err) {
        expect(err).toBeInstanceOf(SyncAbortedError);
        aborted++;
      } finally {
        off();
      }
    }
    expect(aborted).toBeGreaterThanOrEqual(4);
    await syncExchange(ctxFor(ctx.store, sb), { progress: 'off' });
    expect(await dump(ctx.store)).toEqual(reference);
    await compareWithSandbox(ctx.store, sb, []);
  });
});

/** A sandbox of `small` for the describe block that calls it: started before its tests, closed after them. */
function smallSandbox(): () => Sandbox {
  let sb: Sandbox | undefined;
  beforeAll(async () => {
    sb = await startSandbox(small);
  });
  afterAll(() => sb?.close());
  return () => sb!;
}

describeEachStore('exchange sync against the sandbox: orders created while the sync lists them', (ctx) => {
  const sandbox = smallSandbox();

  it('stores every listed order with all its fills (no order judged on a short sum of fills)', async () => {
    const sb = sandbox();
    // A first sync leaves open orders stored: the next one lists the open set again, with no upper bound. Half a day
    // of trading lands as its first order listing is asked, after its fills walk: new FILLED orders (their fills only),
    // and PART_FILLED ones the open orders' listing returns.
    await syncExchange(ctxFor(ctx.store, sb), { progress: 'off' });
    let traded = false;
    const fillsBefore = sb.data.fills().length;
    const off = sb.onRequest(({ api, path }) => {
      if (api !== 'exchange' || traded || !path.endsWith('/orders')) return;
      traded = true;
      sb.advance(12 * 3_600_000);
    });
    const context = ctxFor(ctx.store, sb);
    try {
      const result = await syncExchange(context, { progress: 'off' });
      expect(result.settled).toBe(true);
    } finally {
      off();
    }
    expect(traded).toBe(true);
    const newFills = sb.data.fills().slice(fillsBefore);
    const newOrders = new Set(newFills.map((f) => f.exOrdId));
    const partFilled = sb.data
      .exchangeOrders()
      .filter((o) => newOrders.has(o.exOrdId) && o.ordStatus === 'PART_FILLED');
    expect(newFills.length).toBeGreaterThan(50);
    expect(partFilled.length).toBeGreaterThan(0);

    // Every stored order's fills add up to its cumQty (no discrepancy is planted here), the new PART_FILLED ones too;
    // what the sync left is only of orders it does not hold, created after its now: the next run's.
    const short = sql<{ ex_ord_id: string }>`
      select o.ex_ord_id from exchange_order o
      where o.cum_qty <> (select coalesce(sum(f.qty), 0) from exchange_fill f where f.ex_ord_id = o.ex_ord_id)`;
    expect((await short.execute(ctx.store.db)).rows).toEqual([]);
    const storedIds = async () =>
      new Set((await ctx.store.db.selectFrom('exchange_order').select('ex_ord_id').execute()).map((o) => o.ex_ord_id));
    const held = await storedIds();
    // the race itself: new PART_FILLED orders stored by the open orders' listing, with their fills
    expect(partFilled.filter((o) => held.has(o.exOrdId)).length).toBeGreaterThan(0);
    const leftOrders = sb.data.exchangeOrders().filter((o) => !held.has(o.exOrdId));
    expect(leftOrders.filter((o) => o.timestamp <= context.now.getTime())).toEqual([]);
    const storedFills = async () =>
      (await ctx.store.db.selectFrom('exchange_fill').select('exec_id').orderBy('exec_id').execute()).map(
        (f) => f.exec_id,
      );
    const haveFills = new Set(await storedFills());
    const leftFills = sb.data.fills().filter((f) => !haveFills.has(f.execId));
    expect(leftFills.filter((f) => held.has(f.exOrdId))).toEqual([]);

    // The next run stores the rest: every fill and order, each order equal to its fills.
    expect((await syncExchange(ctxFor(ctx.store, sb), { progress: 'off' })).settled).toBe(true);
    expect(await storedFills()).toEqual(sb.data.fills().map((f) => f.execId));
    const all = await storedIds();
    expect(sb.data.exchangeOrders().filter((o) => !all.has(o.exOrdId))).toEqual([]);
    expect((await short.execute(ctx.store.db)).rows).toEqual([]);
  });
});

describeEachStore('exchange sync against the sandbox: a resting order that fills while the sync runs', (ctx) => {
  const sandbox = smallSandbox();

  it('stores its new fill and its new state together', async () => {
    const sb = sandbox();
    await syncExchange(ctxFor(ctx.store, sb), { progress: 'off' });
    const resting = sb.data.exchangeOrders().find((o) => o.ordStatus === 'PART_FILLED');
    expect(resting).toBeDefined();
    // The order fills after the open orders were listed again (it was among them, still PART_FILLED), as the fills
    // are read the last time: the record the sync holds of it is older than its last fill.
    let openListed = false;
    let filled: string | undefined;
    const off = sb.onRequest(({ api, path, query }) => {
      if (api !== 'exchange') return;
      if (path.endsWith('/orders') && query.get('status') === 'PART_FILLED') openListed = true;
      else if (openListed && !filled && path.endsWith('/fills')) filled = sb.fillOrder(resting!.exOrdId);
    });
    try {
      expect((await syncExchange(ctxFor(ctx.store, sb), { progress: 'off' })).settled).toBe(true);
    } finally {
      off();
    }
    expect(filled).toBeDefined();
    const stored = await sql<{ ord_status: string; cum_qty: string; fills: string }>`
      select o.ord_status, o.cum_qty::text,
        (select coalesce(sum(f.qty), 0) from exchange_fill f where f.ex_ord_id = o.ex_ord_id)::text as fills
      from exchange_order o where o.ex_ord_id = ${resting!.exOrdId}`.execute(ctx.store.db);
    const row = stored.rows[0]!;
    expect(row.ord_status).toBe('FILLED');
    expect(new Decimal(row.fills).eq(new Decimal(row.cum_qty))).toBe(true);
    expect(new Decimal(row.cum_qty).gt(new Decimal(resting!.cumQty))).toBe(true);
  });
});
