import { afterAll, beforeAll, expect, it } from 'vitest';
import { loadConfig, type Config } from '../../src/config/load.js';
import { silentLogger } from '../../src/log/logger.js';
import { startSandbox, type Sandbox } from '../helpers/sandbox.js';
import { syncPartner, type PartnerSyncOptions, type PartnerFigures } from '../helpers/sync.js';
import { listingCost } from '../../src/sources/partner/plan.js';
import { requireTimestampKey, walletWithoutTag } from '../../src/sources/partner/transform.js';
import { unsettledCoverage as loadCoverageRows } from '../../src/store/sync/cursors.js';
import type { StageContext } from '../../src/stages/context.js';
import type { Period } from '../../src/domain/period.js';
import { describeEachStore } from '../helpers/db.js';

/**
 * What the partner sync costs in requests, counted at the sandbox per endpoint and day: a past
 * day is listed once and never again, today until two passes agree, a wallet's whole history
 * once, and a nightly run asks only for its new day and its open orders.
 */
const NOW = new Date('2026-11-21T15:30:00Z');
const TODAY = '2026-11-21';
const PAST = ['2026-11-17', '2026-11-18', '2026-11-19', '2026-11-20'];
const REFERENCE_DATA = { '/currencies': 1, '/regions': 1, '/payment-methods': 1 };

/** One key per kind of request: a day listing, a wallet listing (whole or bounded), a fetch by id. */
function requestKey(path: string, q: URLSearchParams): string {
  if (path.startsWith('/orders/')) return '/orders/{id}';
  if (path !== '/orders') return path;
  const wallet = q.get('walletAddress');
  if (wallet !== null)
    return q.get('from') === null ? `wallet ${wallet}` : `wallet ${wallet} ${q.get('from')}..${q.get('to')}`;
  return `day ${q.get('from')}`;
}

describeEachStore('partner sync request counts against the sandbox', (ctx) => {
  let sandbox: Sandbox;
  let config: Config;
  let wallets: string[];

  beforeAll(async () => {
    sandbox = await startSandbox({
      seed: 11,
      days: PAST.length,
      ordersPerDay: 120,
      exchangeOrdersPerDay: 1,
      depositsPerDay: 0,
      withdrawalsPerDay: 0,
      now: NOW,
    });
    const base = loadConfig({ env: { ...sandbox.env } });
    const configured = Object.values(sandbox.data.depositAddresses());
    config = {
      ...base,
      partner: {
        ...base.partner,
        wallets: configured,
        publicRateLimitPerSecond: 1000,
        privateRateLimitPerSecond: 1000,
      },
    } as Config;
    // What the sync lists: each configured address, and without its :tag.
    wallets = [...new Set(configured.flatMap((a) => [a, walletWithoutTag(a)]))].sort();
  });
  afterAll(async () => {
    await sandbox?.close();
  });

  const ordersOn = (day: string) => sandbox.data.partnerOrders().filter((o) => o.createdAt.startsWith(day));
  const walletOrders = (wallet: string, day?: string) =>
    sandbox.data
      .partnerOrders()
      .filter((o) => o.targetWalletAddress === wallet && (!day || o.createdAt.startsWith(day)));

  async function counted(
    now: Date,
    runId: string,
    period: Period | null,
    options: PartnerSyncOptions = {},
  ): Promise<{ result: PartnerFigures; counts: Record<string, number> }> {
    const counts: Record<string, number> = {};
    const off = sandbox.onRequest((info) => {
      if (info.api !== 'partner') return;
      const key = requestKey(info.path, info.query);
      counts[key] = (counts[key] ?? 0) + 1;
    });
    try {
      const stage: StageContext = { store: ctx.store, config, logger: silentLogger(), runId, now };
      return { result: await syncPartner(stage, period, options), counts };
    } finally {
      off();
    }
  }

  async function storedState(ids: string[]): Promise<Record<string, string>> {
    const rows = await ctx.store.db
      .selectFrom('partner_order')
      .select(['order_id', 'order_state', 'order_state_updated_at_text'])
      .where('order_id', 'in', ids)
      .execute();
    return Object.fromEntries(rows.map((r) => [r.order_id, `${r.order_state} ${r.order_state_updated_at_text}`]));
  }

  it('first sync: each past day read once, today twice, each wallet whole once', async () => {
    const { result, counts } = await counted(NOW, 'r-first', { from: PAST[0]!, to: '2026-11-22' });
    const expected: Record<string, number> = { ...REFERENCE_DATA };
    for (const day of PAST) {
      const n = ordersOn(day).length;
      expected[`day ${day}`] = listingCost(n);
      expect(listingCost(n), day).toBeLessThanOrEqual(Math.ceil(n / 50) + 1);
    }
    expected[`day ${TODAY}`] = 2 * listingCost(ordersOn(TODAY).length);
    for (const w of wallets) expected[`wallet ${w}`] = listingCost(walletOrders(w).length);
    expect(counts).toEqual(expected);
    expect(wallets.some((w) => walletOrders(w).length > 0)).toBe(true);
    expect(result.coverage.map((c) => [c.day, c.passes.length, c.settled, c.closed])).toEqual([
      ...PAST.map((d) => [d, 1, true, true]),
      [TODAY, 2, true, false],
    ]);
    expect(result.walletHistories).toBe(wallets.length);
    const all = sandbox.data.partnerOrders();
    expect(
      await ctx.store.db
        .selectFrom('partner_order')
        .select((eb) => eb.fn.countAll<string>().as('n'))
        .executeTakeFirstOrThrow(),
    ).toEqual({ n: String(all.length) });
    const stored = await storedState(all.map((o) => o.orderId));
    expect(all.filter((o) => stored[o.orderId] !== `${o.orderState} ${o.orderStateUpdatedAt}`)).toEqual([]);
  });

  it('a day that does not settle: the wallets are listed bounded by that day, not whole again', async () => {
    const before = ordersOn(TODAY).length;
    // Orders keep arriving while today is paged: no two passes agree.
    const off = sandbox.onPartnerOrdersPage((info) => {
      if (
        info.query.get('from') === TODAY &&
        info.query.get('walletAddress') === null &&
        info.query.get('offset') === '0'
      )
        sandbox.addPartnerOrders(1);
    });
    const { result, counts } = await counted(new Date(sandbox.data.clock()), 'r-today', {
      from: TODAY,
      to: '2026-11-22',
    }).finally(off);
    const expected: Record<string, number> = {
      ...REFERENCE_DATA,
      [`day ${TODAY}`]: [0, 1, 2, 3].reduce((sum, k) => sum + listingCost(before + k), 0),
    };
    for (const w of wallets) expected[`wallet ${w} ${TODAY}..2026-11-22`] = listingCost(walletOrders(w, TODAY).length);
    expect(counts).toEqual(expected);
    expect(result.coverage.map((c) => [c.day, c.passes.length, c.settled])).toEqual([[TODAY, 4, false]]);
    expect(result.walletHistories).toBe(0);
  });

  it('nightly with a look-back of 3 days: no past day listed again, yesterday once, wallets bounded by it, nothing by id', async () => {
    sandbox.addPartnerOrders(3); // the rest of yesterday's orders, created after the day-time syncs
    const open = await ctx.store.db
      .selectFrom('partner_order')
      .select(['order_id', 'created_at_text'])
      .where('order_state', 'in', ['PENDING', 'WITHDRAWING'])
      .execute();
    expect(open.filter((o) => !o.created_at_text.startsWith(TODAY))).toEqual([]);
    const { result, counts } = await counted(new Date('2026-11-22T02:00:00Z'), 'r-night-1', {
      from: '2026-11-18',
      to: '2026-11-22',
    });
    const expected: Record<string, number> = {
      ...REFERENCE_DATA,
      [`day ${TODAY}`]: listingCost(ordersOn(TODAY).length),
    };
    for (const w of wallets) expected[`wallet ${w} ${TODAY}..2026-11-22`] = listingCost(walletOrders(w, TODAY).length);
    expect(counts).toEqual(expected);
    expect(result.walletHistories).toBe(0);
    expect(result.skippedDays).toEqual(['2026-11-18', '2026-11-19', '2026-11-20']);
    expect(result.coverage.map((c) => [c.day, c.passes.length, c.settled, c.closed])).toEqual([[TODAY, 1, true, true]]);
    // Skipped days keep the coverage of the run that read them: settled, so S_COVERAGE sees no gap.
    const rows = await ctx.store.db
      .selectFrom('sync_coverage')
      .select(['day', 'settled', 'run_id'])
      .where('source', '=', 'partner')
      .orderBy('day')
      .execute();
    expect(rows.map((r) => [String(r.day), r.settled, r.run_id])).toEqual([
      ...PAST.map((d) => [d, true, 'r-first']),
      [TODAY, true, 'r-night-1'],
    ]);
    expect((await loadCoverageRows(ctx.store.db, config.account)).unsettled).toEqual([]);
    const today = ordersOn(TODAY);
    const stored = await storedState(today.map((o) => o.orderId));
    expect(today.filter((o) => stored[o.orderId] !== `${o.orderState} ${o.orderStateUpdatedAt}`)).toEqual([]);
  });

  it('open orders of past days: by id, or the day listed again when that costs fewer requests', async () => {
    const day18 = ordersOn('2026-11-18').slice(0, 1);
    const day19 = ordersOn('2026-11-19').slice(0, 4);
    const n19 = ordersOn('2026-11-19').length;
    expect(listingCost(n19)).toBeLessThan(day19.length);
    // As if these had been read while still PENDING: an older state time, so the current one replaces it.
    const ids = [...day18, ...day19].map((o) => o.orderId);
    await ctx.store.db
      .updateTable('partner_order')
      .set({
        order_state: 'PENDING',
        order_state_updated_key: '2000-01-01T00:00:00.000000000Z',
        transaction_hash: null,
      })
      .where('order_id', 'in', ids)
      .execute();
    // The sandbox clock stays at 15:30 on the 21st: that day's last orders stay PENDING, more of them than its listing costs.
    const openOn21 = await ctx.store.db
      .selectFrom('partner_order')
      .select(['order_id', 'created_at_text'])
      .where('order_state', 'in', ['PENDING', 'WITHDRAWING'])
      .where('created_at_text', 'like', `${TODAY}%`)
      .execute();
    // Listed newest first, the day is read only until the page that passes its oldest open order.
    const oldestOpen = openOn21.map((o) => requireTimestampKey(o.created_at_text)).sort()[0]!;
    const sinceOldestOpen = ordersOn(TODAY).filter((o) => requireTimestampKey(o.createdAt) >= oldestOpen).length;
    expect(listingCost(sinceOldestOpen)).toBeLessThan(openOn21.length);
    const { result, counts } = await counted(new Date('2026-11-23T02:00:00Z'), 'r-night-2', {
      from: '2026-11-19',
      to: '2026-11-23',
    });
    const expected: Record<string, number> = {
      ...REFERENCE_DATA,
      'day 2026-11-22': 1,
      'day 2026-11-19': listingCost(n19),
      [`day ${TODAY}`]: listingCost(sinceOldestOpen),
      '/orders/{id}': 1,
    };
    for (const w of wallets) expected[`wallet ${w} 2026-11-22..2026-11-23`] = 1;
    expect(counts).toEqual(expected);
    expect(result.skippedDays).toEqual(['2026-11-19', '2026-11-20', TODAY]);
    expect(result.relistedForRefresh).toEqual(['2026-11-19', TODAY]);
    expect(result.refreshed).toBe(1);
    const stored = await storedState(ids);
    expect(Object.values(stored)).toEqual(ids.map(() => expect.stringMatching(/^(COMPLETED|FAILED) /)));
    expect(
      [...day18, ...day19].filter((o) => stored[o.orderId] !== `${o.orderState} ${o.orderStateUpdatedAt}`),
    ).toEqual([]);
  });

  it('open orders that are the newest of a past day: the day is read newest first only until it passes them', async () => {
    const day = '2026-11-20';
    const all = ordersOn(day);
    expect(listingCost(all.length)).toBeGreaterThan(2);
    // The day's five newest orders, as if read while still PENDING: the first page holds them all.
    const newest = all.slice(-5).map((o) => o.orderId);
    await ctx.store.db
      .updateTable('partner_order')
      .set({
        order_state: 'PENDING',
        order_state_updated_key: '2000-01-01T00:00:00.000000000Z',
        transaction_hash: null,
      })
      .where('order_id', 'in', newest)
      .execute();
    const { result, counts } = await counted(new Date('2026-11-23T02:10:00Z'), 'r-night-3', {
      from: '2026-11-22',
      to: '2026-11-23',
    });
    // (The 21st, whose last orders the sandbox keeps PENDING, is read again in part as well.)
    expect(counts[`day ${day}`]).toBe(1);
    expect(counts['/orders/{id}']).toBeUndefined();
    expect(result.relistedForRefresh).toContain(day);
    const stored = await storedState(newest);
    expect(all.slice(-5).filter((o) => stored[o.orderId] !== `${o.orderState} ${o.orderStateUpdatedAt}`)).toEqual([]);
  });

  it('--relist and --wallet-history read the period and every wallet again, once each', async () => {
    const period = { from: '2026-11-19', to: '2026-11-23' };
    const { result, counts } = await counted(new Date('2026-11-23T03:00:00Z'), 'r-relist', period, {
      relist: true,
      walletHistory: true,
    });
    const expected: Record<string, number> = { ...REFERENCE_DATA, 'day 2026-11-22': 1 };
    for (const day of ['2026-11-19', '2026-11-20', TODAY]) expected[`day ${day}`] = listingCost(ordersOn(day).length);
    for (const w of wallets) expected[`wallet ${w}`] = listingCost(walletOrders(w).length);
    expect(counts).toEqual(expected);
    expect(result.skippedDays).toEqual([]);
    expect(result.inserted + result.updated).toBe(0);
  });
});
