import { beforeAll, expect, it } from 'vitest';
import { loadConfig, type Config } from '../../src/config/load.js';
import { silentLogger } from '../../src/log/logger.js';
import { parseJsonLossless } from '../../src/decimal/json.js';
import { toDecimal } from '../../src/decimal/decimal.js';
import type { HttpResponse, QueryValue } from '../../src/http/client.js';
import { orderPage, ordersPage, type PartnerClient } from '../../src/sources/partner/client.js';
import { syncPartner } from '../helpers/sync.js';
import type { StageContext } from '../../src/stages/context.js';
import { describeEachStore } from '../helpers/db.js';

/**
 * A Partner API in memory with the contract's list semantics (newest first, limit 50, offset,
 * from inclusive / to exclusive, walletAddress, externalReference without limit), so that the
 * paging logic can be tested against shifting lists without the sandbox.
 */
interface FakeOrder {
  orderId: string;
  createdAt: string;
  [k: string]: unknown;
}

function respond(body: unknown, status = 200): HttpResponse {
  const text = typeof body === 'string' ? body : JSON.stringify(body);
  return { status, body: parseJsonLossless(text), text, url: 'fake', ms: 0, attempts: 1 };
}

function fakePartner(
  orders: FakeOrder[],
  hooks: { onList?: (query: Record<string, QueryValue>) => void; currenciesBody?: string } = {},
) {
  const calls: Array<Record<string, QueryValue>> = [];
  const api: PartnerClient = {
    async currencies() {
      return respond(
        hooks.currenciesBody ??
          '[[{"type":"FIAT","name":"Euro","code":"EUR","precision":2,"minBuyAmount":20,"maxBuyAmount":"10000.00"},{"type":"CRYPTO","name":"Bitcoin","code":"BTC","precision":8,"network":"bitcoin"}]]',
      );
    },
    async regions(): Promise<HttpResponse> {
      return respond({
        countries: [{ alpha2: 'DE', alpha3: 'DEU', isBuyAllowed: true, name: 'Germany' }],
        usStates: [],
      });
    },
    async paymentMethods() {
      return respond([{ type: 'CARD', supportedCurrencies: ['EUR'] }]);
    },
    async quoteBuy(query) {
      return respond(
        `{"quoteCurrencyAmount":"${query.quoteCurrencyAmount}","quoteCurrencyCode":"EUR","quoteCurrency":[{"code":"EUR"}],"baseCurrencyAmount":"0.00123456","baseCurrencyCode":"BTC","baseCurrency":[{"code":"BTC"}],"price":"81000.12","processingFeeAmount":"1.99","partnerFeeAmount":"1.00","networkFeeAmount":"0.50","totalAmount":"100.00","paymentMethod":"CARD"}`,
      );
    },
    async listOrders(query) {
      calls.push(query);
      hooks.onList?.(query);
      let list = [...orders].sort((a, b) => (a.createdAt < b.createdAt ? 1 : a.createdAt > b.createdAt ? -1 : 0));
      if (query.externalReference !== undefined)
        return ordersPage(respond(list.filter((o) => o.externalReference === query.externalReference)));
      if (query.walletAddress !== undefined) list = list.filter((o) => o.targetWalletAddress === query.walletAddress);
      if (query.from !== undefined)
        list = list.filter(
          (o) => o.createdAt.slice(0, 10) >= String(query.from) && o.createdAt.slice(0, 10) < String(query.to),
        );
      const offset = Number(query.offset ?? 0);
      const limit = Math.min(50, Number(query.limit ?? 50));
      return ordersPage(respond(list.slice(offset, offset + limit)));
    },
    async getOrder(id) {
      const o = orders.find((x) => x.orderId === id);
      return orderPage(o ? respond(o) : respond({ errors: [{ type: 'NOT_FOUND', message: 'order not found' }] }, 404));
    },
    async close() {},
  };
  return { api, calls };
}

let n = 0;
function makeOrder(day: string, overrides: Record<string, unknown> = {}): FakeOrder {
  n++;
  const sec = String(n % 60).padStart(2, '0');
  const min = String(Math.floor(n / 60) % 60).padStart(2, '0');
  const createdAt = `${day}T10:${min}:${sec}.${String(n).padStart(9, '0')}Z`;
  return {
    orderId: `o-${String(n).padStart(5, '0')}`,
    externalReference: `ref-${n}`,
    orderType: 'BUY',
    createdAt,
    orderState: 'COMPLETED',
    orderStateUpdatedAt: createdAt,
    paymentMethod: 'CARD',
    inputCurrency: 'EUR',
    inputAmount: `${100 + n}.25`,
    outputCurrency: 'ETH',
    outputAmount: `0.${String(n).padStart(18, '7')}`,
    amountUsd: `${108 + n}.10`,
    processingFee: '1.99',
    processingFeeUsd: '2.15',
    partnerFee: '1.00',
    partnerFeeUsd: '1.08',
    networkFee: '0.50',
    networkFeeUsd: '0.54',
    userId: `u-${n}`,
    targetWalletAddress: 'wallet-other',
    transactionHash: `0xhash${n}`,
    ...overrides,
  };
}

const baseConfig = loadConfig({ env: {} });
function contextFor(
  store: StageContext['store'],
  partner: Partial<Config['partner']> = {},
  runId = 'r-test',
): StageContext {
  const config = { ...baseConfig, partner: { ...baseConfig.partner, ...partner } } as Config;
  return { store, config, logger: silentLogger(), runId, now: new Date('2026-11-22T02:00:00Z') };
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
    currencies: await db.selectFrom('partner_currency').selectAll().orderBy('code').execute(),
    quarantine: await db
      .selectFrom('quarantine')
      .select(['id', 'record_key', 'seen_count', 'resolved_at'])
      .orderBy('id')
      .execute(),
  };
}

describeEachStore('partner sync against a shifting list', (ctx) => {
  const day1 = '2026-11-20';
  const day2 = '2026-11-21';
  const orders: FakeOrder[] = [];
  for (let i = 0; i < 120; i++) orders.push(makeOrder(day1));
  for (let i = 0; i < 7; i++) orders.push(makeOrder(day2, { targetWalletAddress: 'wallet-ours' }));
  orders.push(
    makeOrder(day2, { externalReference: 'shared-ref' }),
    makeOrder(day2, { externalReference: 'shared-ref' }),
  );
  orders.push(makeOrder(day2, { orderState: 'PENDING', transactionHash: undefined, orderId: 'o-pending' }));

  let stage: StageContext;
  beforeAll(() => {
    stage = contextFor(ctx.store, {
      wallets: ['wallet-ours'],
      quotes: [{ quoteCurrencyCode: 'EUR', baseCurrencyCode: 'BTC', quoteCurrencyAmount: '100.00' }],
    });
  });

  it('stores every order of the period digit for digit while orders arrive during the scan', async () => {
    let inserted = 0;
    const { api, calls } = fakePartner(orders, {
      onList: (q) => {
        // New orders of day 1 arrive while its first pass pages: each pushes the list down by one.
        if (q.from === day1 && Number(q.offset) > 0 && inserted < 3) {
          orders.push(
            makeOrder(day1, {
              createdAt: `${day1}T23:59:5${inserted}.000000001Z`,
              orderStateUpdatedAt: `${day1}T23:59:5${inserted}.000000001Z`,
            }),
          );
          inserted++;
        }
      },
    });
    const result = await syncPartner(stage, { from: day1, to: '2026-11-22' }, {}, { client: api });
    expect(result.coverage.map((c) => [c.day, c.rows, c.settled])).toEqual([
      [day1, 123, true],
      [day2, 10, true],
    ]);
    expect(result.coverage[0]?.passes.length).toBeGreaterThanOrEqual(2);
    expect(result.coverage[0]?.passes[0]?.duplicates).toBeGreaterThan(0);
    expect(calls.every((q) => q.limit === 50 || q.externalReference !== undefined)).toBe(true);
    const stored = await ctx.store.db.selectFrom('partner_order').selectAll().orderBy('order_id').execute();
    expect(stored).toHaveLength(orders.length);
    for (const o of orders) {
      const row = stored.find((r) => r.order_id === o.orderId);
      expect(row, o.orderId).toBeDefined();
      // numeric reads back as Decimal (trailing zeros dropped): compare values, and the raw text for every digit.
      for (const [col, field] of [
        ['input_amount', 'inputAmount'],
        ['output_amount', 'outputAmount'],
        ['amount_usd', 'amountUsd'],
        ['processing_fee', 'processingFee'],
      ] as const)
        expect(row?.[col]?.toString(), `${o.orderId} ${field}`).toBe(toDecimal(o[field]).toString());
      expect((row?.raw as Record<string, unknown>).outputAmount).toBe(o.outputAmount);
      expect(row?.created_at_text).toBe(o.createdAt);
      expect(row?.order_state_updated_at_text).toBe(o.orderStateUpdatedAt);
    }
    expect(result.snapshots).toEqual({ currencies: true, regions: true, paymentMethods: true });
    const cur = await ctx.store.db.selectFrom('partner_currency').selectAll().orderBy('code').execute();
    expect(
      cur.map((c) => [c.code, c.precision, c.min_buy_amount?.toString() ?? null, c.max_buy_amount?.toString() ?? null]),
    ).toEqual([
      ['BTC', 8, null, null],
      ['EUR', 2, '20', '10000'],
    ]);
    expect(result.quotes).toBe(1);
    const quote = await ctx.store.db.selectFrom('partner_quote').selectAll().executeTakeFirstOrThrow();
    expect(quote.processing_fee_amount?.toString()).toBe('1.99');
    expect(quote.quote_currency_amount.toString()).toBe('100');
    const coverage = await ctx.store.db.selectFrom('sync_coverage').selectAll().orderBy('day').execute();
    expect(coverage.map((c) => [c.day, c.rows, c.settled, c.run_id])).toEqual([
      [day1, 123, true, 'r-test'],
      [day2, 10, true, 'r-test'],
    ]);
  });

  it('changes nothing when run again', async () => {
    const before = await dump(stage);
    const { api } = fakePartner(orders);
    const result = await syncPartner(stage, { from: day1, to: '2026-11-22' }, {}, { client: api });
    expect(result.inserted + result.updated).toBe(0);
    expect(result.snapshots).toEqual({ currencies: false, regions: false, paymentMethods: false });
    expect(await dump(stage)).toEqual(before);
  });

  it('lists by wallet (configured and exchange deposit addresses, with and without :tag)', async () => {
    await ctx.store.db
      .insertInto('exchange_deposit')
      .values({
        deposit_id: 'd1',
        amount: '1',
        currency: 'XRP',
        address: 'rXRPaddr:12345',
        state: 'COMPLETED',
        raw: '{}',
      })
      .execute();
    const xrp = makeOrder('2026-10-01', { targetWalletAddress: 'rXRPaddr', outputCurrency: 'XRP' });
    orders.push(xrp);
    const { api, calls } = fakePartner(orders);
    const result = await syncPartner(stage, null, { walletsOnly: true }, { client: api });
    expect(calls.map((q) => q.walletAddress)).toEqual(['rXRPaddr', 'rXRPaddr:12345', 'wallet-ours']);
    expect(result.wallets).toBe(3);
    expect(result.inserted).toBe(1);
    const row = await ctx.store.db
      .selectFrom('partner_order')
      .select('order_id')
      .where('order_id', '=', xrp.orderId)
      .executeTakeFirst();
    expect(row).toBeDefined();
  });

  it('fetches by external reference, several orders per reference', async () => {
    await ctx.store.db.deleteFrom('partner_order').where('external_reference', '=', 'shared-ref').execute();
    const { api, calls } = fakePartner(orders);
    const result = await syncPartner(
      stage,
      null,
      { externalReferences: ['shared-ref', 'no-such-ref'] },
      { client: api },
    );
    expect(calls).toEqual([{ externalReference: 'shared-ref' }, { externalReference: 'no-such-ref' }]);
    expect(result.inserted).toBe(2);
    expect(result.references).toBe(2);
  });

  it('refreshes stored non-final orders by id: state change to history, 404 recorded', async () => {
    const pending = orders.find((o) => o.orderId === 'o-pending') as FakeOrder;
    pending.orderState = 'COMPLETED';
    pending.orderStateUpdatedAt = '2026-11-21T12:00:00.123456789Z';
    pending.transactionHash = '0xlate';
    const gone = makeOrder('2026-11-01', { orderState: 'WITHDRAWING', orderId: 'o-gone' });
    const { api: seed } = fakePartner([gone]);
    await syncPartner(stage, null, { externalReferences: [String(gone.externalReference)] }, { client: seed });

    const { api } = fakePartner(orders);
    const result = await syncPartner(stage, null, {}, { client: api });
    expect(result.refreshed).toBe(2);
    expect(result.notFound).toBe(1);
    const row = await ctx.store.db
      .selectFrom('partner_order')
      .selectAll()
      .where('order_id', '=', 'o-pending')
      .executeTakeFirstOrThrow();
    expect([row.order_state, row.transaction_hash, row.order_state_updated_at_text]).toEqual([
      'COMPLETED',
      '0xlate',
      '2026-11-21T12:00:00.123456789Z',
    ]);
    const history = await ctx.store.db
      .selectFrom('partner_order_state')
      .select(['order_state', 'source'])
      .where('order_id', '=', 'o-pending')
      .orderBy('order_state')
      .execute();
    expect(history).toEqual([
      { order_state: 'COMPLETED', source: 'refresh' },
      { order_state: 'PENDING', source: 'poll' },
    ]);
    const goneRow = await ctx.store.db
      .selectFrom('partner_order')
      .select('not_found_at')
      .where('order_id', '=', 'o-gone')
      .executeTakeFirstOrThrow();
    expect(goneRow.not_found_at).not.toBeNull();
    // Nothing left to refresh but o-gone (still WITHDRAWING); its 404 is not recorded twice.
    const again = await syncPartner(stage, null, {}, { client: api });
    expect([again.refreshed, again.notFound]).toEqual([1, 1]);
  });
});

describeEachStore('partner sync: invalid records and unsettled days', (ctx) => {
  it('quarantines an invalid order, lands the rest of the page, and resolves it once it validates', async () => {
    const good = makeOrder('2026-11-10');
    const bad = makeOrder('2026-11-10', { inputAmount: 'twelve', orderId: 'o-bad' });
    const orders = [good, bad];
    const stage = contextFor(ctx.store);
    const { api } = fakePartner(orders, {
      currenciesBody:
        '[{"type":"FIAT","code":"USD","precision":2,"minBuyAmount":"10","maxBuyAmount":"5000"},{"type":"WEIRD","code":"XXX","precision":2}]',
    });
    const result = await syncPartner(stage, { from: '2026-11-10', to: '2026-11-11' }, {}, { client: api });
    // One currency and one order (counted once however often it is seen).
    expect(result.quarantined).toBe(2);
    const q = await ctx.store.db.selectFrom('quarantine').selectAll().orderBy('id').execute();
    expect(q.map((r) => [r.entity, r.record_key, r.resolved_at])).toEqual([
      ['partner_currency', 'XXX', null],
      ['partner_order', 'o-bad', null],
    ]);
    expect(q[1]?.reason).toContain('inputAmount: must be a decimal number (got "twelve")');
    const cur = await ctx.store.db.selectFrom('partner_currency').select('code').execute();
    expect(cur.map((c) => c.code)).toEqual(['USD']);
    expect(await ctx.store.db.selectFrom('partner_order').select('order_id').execute()).toEqual([
      { order_id: good.orderId },
    ]);

    bad.inputAmount = '12.00';
    await syncPartner(stage, { from: '2026-11-10', to: '2026-11-11' }, {}, { client: api });
    const resolved = await ctx.store.db
      .selectFrom('quarantine')
      .select('resolved_at')
      .where('record_key', '=', 'o-bad')
      .executeTakeFirstOrThrow();
    expect(resolved.resolved_at).not.toBeNull();
  });

  it('marks a day unsettled when its orders keep changing between passes', async () => {
    // Only a day not over yet can keep changing (a past day is read once): the run starts late on that day.
    const today = { ...contextFor(ctx.store), now: new Date('2026-11-12T23:40:00Z') };
    const orders = Array.from({ length: 60 }, () => makeOrder('2026-11-12'));
    let k = 0;
    const { api } = fakePartner(orders, {
      onList: (q) => {
        if (q.from === '2026-11-12' && Number(q.offset) === 0)
          orders.push(makeOrder('2026-11-12', { createdAt: `2026-11-12T23:00:${String(k++).padStart(2, '0')}Z` }));
      },
    });
    const result = await syncPartner(today, { from: '2026-11-12', to: '2026-11-13' }, {}, { client: api });
    expect(result.coverage[0]?.settled).toBe(false);
    expect(result.coverage[0]?.passes).toHaveLength(4);
    const row = await ctx.store.db
      .selectFrom('sync_coverage')
      .selectAll()
      .where('day', '=', '2026-11-12')
      .executeTakeFirstOrThrow();
    expect(row.settled).toBe(false);
  });

  it('quarantines an order listing answer that is not a JSON array whole and ends that listing', async () => {
    const day = '2026-11-18';
    const orders = Array.from({ length: 60 }, () => makeOrder(day));
    const { api } = fakePartner(orders);
    // The day's second page and a reference's listing answer with something other than a list.
    const client: PartnerClient = {
      ...api,
      listOrders: async (query, signal) =>
        query.externalReference !== undefined
          ? ordersPage(respond('"maintenance"'))
          : Number(query.offset) === 50
            ? ordersPage(respond({ message: 'busy' }))
            : api.listOrders(query, signal),
    };
    const stage = contextFor(ctx.store);
    const result = await syncPartner(stage, { from: day, to: '2026-11-19' }, {}, { client });
    expect([result.pages, result.coverage[0]?.passes.length, result.coverage[0]?.settled]).toEqual([2, 1, false]);
    const refs = await syncPartner(stage, null, { externalReferences: ['ref-x'] }, { client });
    expect([refs.pages, refs.references]).toEqual([1, 0]);
    const q = await ctx.store.db
      .selectFrom('quarantine')
      .select(['endpoint', 'reason', 'raw_text'])
      .where('entity', '=', 'partner_order_page')
      .orderBy('id')
      .execute();
    expect(q.map((r) => [r.endpoint, r.reason, r.raw_text])).toEqual([
      ['/orders', `orders of ${day}: the orders list is not a JSON array`, '{"message":"busy"}'],
      ['/orders', 'orders of externalReference ref-x: the orders list is not a JSON array', '"maintenance"'],
    ]);
    const stored = await ctx.store.db
      .selectFrom('partner_order')
      .select('order_id')
      .where(
        'order_id',
        'in',
        orders.map((o) => o.orderId),
      )
      .execute();
    expect(stored).toHaveLength(50);
  });
});

describeEachStore('partner sync: configured wire names', (ctx) => {
  it('sends the configured date filter names, and flags orders outside the day', async () => {
    const orders = Array.from({ length: 55 }, () => makeOrder('2026-11-14'));
    orders.push(makeOrder('2026-11-15'));
    const { api, calls } = fakePartner(orders);
    const stage = contextFor(ctx.store, {
      params: { offset: 'offset', from: 'since', to: 'until', outputCurrency: 'cur' },
    });
    const result = await syncPartner(stage, { from: '2026-11-14', to: '2026-11-15' }, {}, { client: api });
    expect(calls[0]).toEqual({ since: '2026-11-14', until: '2026-11-15', limit: 50, offset: 0 });
    // The fake knows only "from"/"to": it ignores these filters, so the other day's order shows up.
    expect(result.coverage[0]?.passes[0]?.outsideDay).toBe(1);
  });

  it('stops on a repeated full page (offset parameter ignored) and leaves the day unsettled', async () => {
    const orders = Array.from({ length: 120 }, () => makeOrder('2026-11-16'));
    const { api, calls } = fakePartner(orders);
    const stage = contextFor(ctx.store, {
      params: { offset: 'skip', from: 'from', to: 'to', outputCurrency: 'outputCurrency' },
    });
    const result = await syncPartner(stage, { from: '2026-11-16', to: '2026-11-17' }, {}, { client: api });
    expect(calls.filter((q) => q.from === '2026-11-16')).toHaveLength(2);
    expect(result.coverage[0]?.settled).toBe(false);
  });
});
