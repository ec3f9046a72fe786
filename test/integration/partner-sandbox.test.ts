import { afterAll, beforeAll, expect, it } from 'vitest';
import { loadConfig, type Config } from '../../src/config/load.js';
import { silentLogger } from '../../src/log/logger.js';
import { toDecimal } from '../../src/decimal/decimal.js';
import { isLosslessNumber } from '../../src/decimal/json.js';
import { startSandbox, type Sandbox, type PartnerOrderView } from '../helpers/sandbox.js';
import { syncPartner } from '../helpers/sync.js';
import type { StageContext } from '../../src/stages/context.js';
import { addDays, toDay } from '../../src/util/dates.js';
import { describeEachStore } from '../helpers/db.js';

const AMOUNTS = [
  ['input_amount', 'inputAmount'],
  ['output_amount', 'outputAmount'],
  ['amount_usd', 'amountUsd'],
  ['processing_fee', 'processingFee'],
  ['processing_fee_usd', 'processingFeeUsd'],
  ['partner_fee', 'partnerFee'],
  ['partner_fee_usd', 'partnerFeeUsd'],
  ['network_fee', 'networkFee'],
  ['network_fee_usd', 'networkFeeUsd'],
] as const;

function wireText(v: unknown): string | null {
  if (v === null || v === undefined) return null;
  return isLosslessNumber(v) ? (v as { value: string }).value : String(v);
}

/** Every field of the stored row against the sandbox's record: amounts to the last digit, times to the nanosecond. */
async function expectStoredExactly(ctx: StageContext, views: PartnerOrderView[]): Promise<void> {
  const rows = await ctx.store.db
    .selectFrom('partner_order')
    .selectAll()
    .where(
      'order_id',
      'in',
      views.map((v) => v.orderId),
    )
    .execute();
  const byId = new Map(rows.map((r) => [r.order_id, r]));
  for (const v of views) {
    const row = byId.get(v.orderId);
    expect(row, `order ${v.orderId} stored`).toBeDefined();
    if (!row) continue;
    expect([
      row.order_state,
      row.order_state_updated_at_text,
      row.created_at_text,
      row.external_reference,
      row.transaction_hash ?? undefined,
    ]).toEqual([v.orderState, v.orderStateUpdatedAt, v.createdAt, v.externalReference, v.transactionHash]);
    const raw = row.raw as Record<string, unknown>;
    for (const [col, field] of AMOUNTS) {
      const expected = v[field];
      if (expected === undefined) {
        expect(row[col], `${v.orderId} ${field}`).toBeNull();
        continue;
      }
      // Same value in numeric, and the very digits (trailing zeros included) in the raw record.
      expect(row[col]?.toString(), `${v.orderId} ${field}`).toBe(toDecimal(expected).toString());
      expect(wireText(raw[field]), `${v.orderId} raw ${field}`).toBe(expected);
    }
  }
}

async function dump(ctx: StageContext) {
  const db = ctx.store.db;
  return {
    orders: await db.selectFrom('partner_order').selectAll().orderBy('order_id').execute(),
    states: await db
      .selectFrom('partner_order_state')
      .select(['order_id', 'order_state', 'order_state_updated_at_text', 'source'])
      .orderBy('order_id')
      .orderBy('order_state')
      .execute(),
    snapshots: await db.selectFrom('reference_snapshot').select(['id', 'kind', 'content_hash']).orderBy('id').execute(),
    currencies: await db.selectFrom('partner_currency').selectAll().orderBy('snapshot_id').orderBy('code').execute(),
    quarantine: await db
      .selectFrom('quarantine')
      .select(['id', 'record_key', 'seen_count', 'resolved_at'])
      .orderBy('id')
      .execute(),
  };
}

describeEachStore('partner sync against the sandbox', (ctx) => {
  let sandbox: Sandbox;
  let stage: StageContext;
  let today: string;
  beforeAll(async () => {
    sandbox = await startSandbox({
      seed: 7,
      days: 2,
      ordersPerDay: 70,
      exchangeOrdersPerDay: 2,
      depositsPerDay: 1,
      withdrawalsPerDay: 1,
    });
    today = toDay(new Date(sandbox.data.clock()));
    const base = loadConfig({ env: { ...sandbox.env } });
    const wallets = Object.values(sandbox.data.depositAddresses());
    const config = {
      ...base,
      partner: {
        ...base.partner,
        wallets,
        publicRateLimitPerSecond: 1000,
        privateRateLimitPerSecond: 1000,
        quotes: [{ quoteCurrencyCode: 'EUR', baseCurrencyCode: 'BTC', quoteCurrencyAmount: '100' }],
      },
      http: { ...base.http, retryBaseMs: 10, retryMaxMs: 50 },
    } as Config;
    stage = { store: ctx.store, config, logger: silentLogger(), runId: null, now: new Date(sandbox.data.clock()) };
  });
  afterAll(async () => {
    await sandbox?.close();
  });

  it('stores every order of the period digit for digit while orders arrive during the scan', async () => {
    const period = { from: addDays(today, -2), to: today };
    const day1 = period.from;
    const arrived: PartnerOrderView[] = [];
    const off = sandbox.onPartnerOrdersPage((info) => {
      // While the first day is being paged, two newer orders of that day arrive: every later page shifts.
      if (info.query.get('from') === day1 && Number(info.query.get('offset')) === 0 && arrived.length === 0)
        arrived.push(...sandbox.addPartnerOrders(2, new Date(`${day1}T23:59:59.000Z`)));
    });
    const result = await syncPartner({ ...stage, runId: 'r-sandbox-1' }, period);
    off();
    expect(arrived).toHaveLength(2);
    const expected = sandbox.data
      .partnerOrders()
      .filter((o) => o.createdAt.slice(0, 10) >= period.from && o.createdAt.slice(0, 10) < period.to);
    expect(expected.length).toBeGreaterThan(100);
    await expectStoredExactly(stage, expected);
    for (const c of result.coverage) expect(c.settled, c.day).toBe(true);
    const perDay = Object.fromEntries(result.coverage.map((c) => [c.day, c.rows]));
    for (const day of [day1, addDays(day1, 1)])
      expect(perDay[day], day).toBe(expected.filter((o) => o.createdAt.startsWith(day)).length);
    expect(result.coverage[0]?.passes[0]?.duplicates).toBeGreaterThan(0);
    expect(result.quarantined).toBe(0);
    expect(result.quotes).toBe(1);
    const currencies = await ctx.store.db.selectFrom('partner_currency').select(['code', 'precision']).execute();
    expect(currencies.map((c) => c.code).sort()).toEqual(
      sandbox.data
        .currencies()
        .map((c) => c.code)
        .sort(),
    );
  });

  it('finds the orders paid to our wallets and by external reference', async () => {
    const ours = new Set(Object.values(sandbox.data.depositAddresses()).flatMap((a) => [a, a.split(':')[0]]));
    const paidToUs = sandbox.data.partnerOrders().filter((o) => ours.has(o.targetWalletAddress));
    expect(paidToUs.length).toBeGreaterThan(0);
    await ctx.store.db
      .deleteFrom('partner_order')
      .where(
        'order_id',
        'in',
        paidToUs.map((o) => o.orderId),
      )
      .execute();
    const result = await syncPartner(stage, null, { walletsOnly: true });
    expect(result.wallets).toBeGreaterThan(0);
    await expectStoredExactly(stage, paidToUs);

    const some = sandbox.data.partnerOrders().slice(0, 3);
    await ctx.store.db
      .deleteFrom('partner_order')
      .where(
        'order_id',
        'in',
        some.map((o) => o.orderId),
      )
      .execute();
    const byRef = await syncPartner(stage, null, { externalReferences: some.map((o) => o.externalReference) });
    expect(byRef.references).toBe(3);
    await expectStoredExactly(stage, some);
  });

  it('refreshes stored non-final orders by id, and records a 404', async () => {
    // An added order whose createdAt text is whole seconds can already be final (its compressed
    // timeline starts at the floor of the second): only the PENDING ones test the refresh.
    const fresh = sandbox.addPartnerOrders(4).filter((o) => o.orderState === 'PENDING');
    expect(fresh.length).toBeGreaterThan(0);
    await syncPartner(stage, null, { externalReferences: fresh.map((o) => o.externalReference) });
    await ctx.store.db
      .insertInto('partner_order')
      .values({
        order_id: 'not-at-the-partner',
        order_type: 'BUY',
        created_at: '2026-01-01T00:00:00Z',
        created_at_text: '2026-01-01T00:00:00Z',
        order_state: 'PENDING',
        order_state_updated_at: '2026-01-01T00:00:00Z',
        order_state_updated_at_text: '2026-01-01T00:00:00Z',
        input_currency: 'EUR',
        input_amount: '1',
        output_currency: 'BTC',
        raw: '{}',
      })
      .execute();
    await new Promise((r) => setTimeout(r, 20));
    sandbox.advance(60_000); // the sandbox clock moves on: the new orders reach their final states
    const later = sandbox.data.partnerOrders().filter((o) => fresh.some((f) => f.orderId === o.orderId));
    expect(later.every((o) => o.orderState === 'COMPLETED' || o.orderState === 'FAILED')).toBe(true);

    const result = await syncPartner(stage, null);
    expect(result.refreshed).toBeGreaterThanOrEqual(fresh.length + 1);
    expect(result.notFound).toBe(1);
    await expectStoredExactly(stage, later);
    const history = await ctx.store.db
      .selectFrom('partner_order_state')
      .select(['order_id', 'order_state'])
      .where(
        'order_id',
        'in',
        fresh.map((o) => o.orderId),
      )
      .execute();
    for (const o of later)
      expect(history.filter((h) => h.order_id === o.orderId).map((h) => h.order_state)).toContain(o.orderState);
    const gone = await ctx.store.db
      .selectFrom('partner_order')
      .select('not_found_at')
      .where('order_id', '=', 'not-at-the-partner')
      .executeTakeFirstOrThrow();
    expect(gone.not_found_at).not.toBeNull();
    // Every stored order that the partner still knows is in the partner's current state.
    const stored = await ctx.store.db
      .selectFrom('partner_order')
      .select(['order_id', 'order_state'])
      .where('order_id', '!=', 'not-at-the-partner')
      .execute();
    const now = new Map(sandbox.data.partnerOrders().map((o) => [o.orderId, o.orderState]));
    const stale = stored.filter(
      (r) => now.get(r.order_id) !== r.order_state && (r.order_state === 'PENDING' || r.order_state === 'WITHDRAWING'),
    );
    expect(stale).toEqual([]);
  });

  it('changes nothing when the same sync runs again', async () => {
    const period = { from: addDays(today, -2), to: today };
    await syncPartner({ ...stage, runId: 'r-sandbox-2' }, period);
    const before = await dump(stage);
    const result = await syncPartner({ ...stage, runId: 'r-sandbox-2' }, period);
    expect(result.inserted + result.updated).toBe(0);
    expect(await dump(stage)).toEqual(before);
  });
});

describeEachStore('partner sync against a faulty sandbox', (ctx) => {
  it('lands every order of the period through 429s, 5xx and cut bodies', async () => {
    const sandbox = await startSandbox({
      seed: 3,
      days: 1,
      ordersPerDay: 120,
      exchangeOrdersPerDay: 1,
      depositsPerDay: 0,
      withdrawalsPerDay: 0,
      faults: {
        rateLimited: 0.15,
        retryAfterSeconds: 0,
        serverError500: 0.1,
        serverError503: 0.1,
        slow: 0,
        slowMs: 0,
        truncated: 0.1,
        malformedRecord: false,
        publicRateLimitPerSecond: 0,
      },
    });
    try {
      const base = loadConfig({ env: { ...sandbox.env } });
      const config = {
        ...base,
        partner: { ...base.partner, publicRateLimitPerSecond: 1000, privateRateLimitPerSecond: 1000 },
        http: { ...base.http, retryBaseMs: 5, retryMaxMs: 20, maxRetries: 8 },
      } as Config;
      const stage: StageContext = {
        store: ctx.store,
        config,
        logger: silentLogger(),
        runId: 'r-faults',
        now: new Date(sandbox.data.clock()),
      };
      const today = toDay(new Date(sandbox.data.clock()));
      const period = { from: addDays(today, -1), to: today };
      const faults: string[] = [];
      const off = sandbox.onRequest((info) => faults.push(info.path));
      const result = await syncPartner(stage, period);
      off();
      const expected = sandbox.data.partnerOrders().filter((o) => o.createdAt.startsWith(period.from));
      expect(result.coverage.map((c) => [c.rows, c.settled])).toEqual([[expected.length, true]]);
      await expectStoredExactly(stage, expected);
      expect(result.quarantined).toBe(0);
      // Retried requests: more requests reached the sandbox than pages and reference bodies were stored.
      expect(faults.length).toBeGreaterThan(result.pages + 3);
    } finally {
      await sandbox.close();
    }
  });
});
