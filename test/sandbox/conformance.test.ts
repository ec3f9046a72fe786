import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isLosslessNumber, parseJsonLossless } from '../../src/decimal/json.js';
import { toDecimal } from '../../src/decimal/decimal.js';
import { startSandbox, type Sandbox } from '../helpers/sandbox.js';

const NOW = new Date('2026-11-21T15:30:00Z');
let sb: Sandbox;
let P: string;
let X: string;
let pub: Record<string, string>;
let priv: Record<string, string>;
let tok: Record<string, string>;

beforeAll(async () => {
  sb = await startSandbox({
    seed: 5,
    days: 4,
    ordersPerDay: 70,
    exchangeOrdersPerDay: 120,
    fillsPerOrder: 3,
    discrepancies: true,
    now: NOW,
  });
  P = `${sb.env.PARTNER_API_URL}/partner-gateway/partner-api/v1`;
  X = sb.env.EXCHANGE_API_URL!;
  pub = { 'X-Public-API-Key': sb.env.PARTNER_PUBLIC_KEY! };
  // Private calls carry both keys, as the real service requires.
  priv = { ...pub, 'X-Private-API-Key': sb.env.PARTNER_PRIVATE_KEY! };
  tok = { 'X-API-Token': sb.env.EXCHANGE_API_TOKEN! };
});
afterAll(async () => sb?.close());

async function get(
  url: string,
  headers: Record<string, string> = {},
  init: RequestInit = {},
): Promise<{ status: number; body: any; text: string; headers: Headers }> {
  const res = await fetch(url, { headers, ...init });
  const text = await res.text();
  return { status: res.status, body: text ? parseJsonLossless(text) : undefined, text, headers: res.headers };
}
const s = (v: unknown): string => (isLosslessNumber(v) ? (v as { value: string }).value : String(v));
const n = (v: unknown): number => Number(s(v));

describe('partner API', () => {
  it('auth: public key for eligibility, public and private key together for orders, documented error bodies', async () => {
    expect((await get(`${P}/currencies`, pub)).status).toBe(200);
    const missing = await get(`${P}/currencies`);
    expect(missing.status).toBe(401);
    expect(missing.body.errors[0]).toMatchObject({ type: expect.any(String), message: expect.any(String) });
    expect((await get(`${P}/currencies`, { 'X-Public-API-Key': 'nope' })).status).toBe(401);
    expect((await get(`${P}/orders`, pub)).status).toBe(401);
    expect((await get(`${P}/orders/x`, pub)).status).toBe(401);
    expect((await get(`${P}/orders`, { ...pub, 'X-Private-API-Key': 'nope' })).status).toBe(401);
    expect((await get(`${P}/orders`, priv)).status).toBe(200);
  });

  it('auth: a private call with the private key alone is refused 401, as the real service does', async () => {
    const privateOnly = { 'X-Private-API-Key': sb.env.PARTNER_PRIVATE_KEY! };
    const id = sb.data.partnerOrders()[0]!.orderId;
    for (const path of ['/orders', `/orders/${id}`]) {
      const alone = await get(`${P}${path}`, privateOnly);
      expect(alone.status, path).toBe(401);
      expect(alone.body.errors).toEqual([
        { type: 'UNAUTHORIZED', message: expect.stringContaining('X-Public-API-Key') },
      ]);
      expect((await get(`${P}${path}`, { ...privateOnly, 'X-Public-API-Key': 'nope' })).status, path).toBe(401);
      expect((await get(`${P}${path}`, priv)).status, path).toBe(200);
    }
    sb.setOption('authFailureStatus', 403);
    try {
      expect((await get(`${P}/orders`, privateOnly)).status).toBe(403);
    } finally {
      sb.setOption('authFailureStatus', 401);
    }
  });

  it('reference data: wrapped currencies, regions with onlyBuyAllowed, payment methods', async () => {
    const cur = await get(`${P}/currencies`, pub);
    expect(Array.isArray(cur.body[0])).toBe(true);
    const eur = cur.body[0].find((c: any) => c.code === 'EUR');
    expect(eur).toMatchObject({ type: 'FIAT' });
    expect(n(eur.precision)).toBe(2);
    expect(s(eur.minBuyAmount)).toBe('20');
    const eth = cur.body[0].find((c: any) => c.code === 'ETH');
    expect(eth).toMatchObject({ type: 'CRYPTO', network: 'ethereum' });
    expect(n(eth.precision)).toBe(18);
    const only = await get(`${P}/regions`, pub);
    const all = await get(`${P}/regions?onlyBuyAllowed=false`, pub);
    expect(only.body.countries.every((c: any) => c.isBuyAllowed)).toBe(true);
    expect(all.body.countries.length).toBeGreaterThan(only.body.countries.length);
    expect(all.body.usStates.some((c: any) => !c.isBuyAllowed)).toBe(true);
    expect((await get(`${P}/payment-methods`, pub)).body[0].type).toBe('CARD');
  });

  it('buy quote and its validation', async () => {
    const q = await get(`${P}/quote/buy?quoteCurrencyCode=EUR&baseCurrencyCode=BTC&quoteCurrencyAmount=100`, pub);
    expect(q.status).toBe(200);
    expect(q.body).toMatchObject({
      quoteCurrencyCode: 'EUR',
      baseCurrencyCode: 'BTC',
      partnerFeeAmount: '1.00',
      totalAmount: '100.00',
    });
    expect(Array.isArray(q.body.quoteCurrency)).toBe(true);
    for (const bad of [
      'quoteCurrencyCode=BTC&baseCurrencyCode=ETH&quoteCurrencyAmount=100',
      'quoteCurrencyCode=EUR&baseCurrencyCode=BTC&quoteCurrencyAmount=100.001',
      'quoteCurrencyCode=EUR&baseCurrencyCode=BTC&quoteCurrencyAmount=5',
      'quoteCurrencyCode=EUR&baseCurrencyCode=BTC',
    ]) {
      const r = await get(`${P}/quote/buy?${bad}`, pub);
      expect(r.status, bad).toBe(400);
      expect(r.body.errors).toHaveLength(1);
    }
  });

  it('lists newest first, limit default and max 50', async () => {
    const r = await get(`${P}/orders`, priv);
    expect(r.body).toHaveLength(50);
    const keys = r.body.map((o: any) => o.createdAt);
    const all = sb.data.partnerOrders();
    expect(r.body[0].orderId).toBe(all[all.length - 1]!.orderId);
    expect(new Date(keys[0]).getTime()).toBeGreaterThanOrEqual(new Date(keys[49]).getTime());
    expect((await get(`${P}/orders?limit=80`, priv)).body).toHaveLength(50);
    expect((await get(`${P}/orders?limit=7`, priv)).body).toHaveLength(7);
    expect((await get(`${P}/orders?limit=0`, priv)).status).toBe(400);
    expect((await get(`${P}/orders?limit=abc`, priv)).status).toBe(400);
  });

  it('pages one day by offset with from (inclusive) and to (exclusive)', async () => {
    // What the API shows at NOW, in the sandbox's order (by creation time).
    const all = () => sb.data.partnerOrders().filter((o) => Date.parse(o.createdAt) <= NOW.getTime());
    const day = '2026-11-19';
    const seen: string[] = [];
    for (let offset = 0; ; offset += 50) {
      const page = await get(`${P}/orders?from=${day}&to=2026-11-20&limit=50&offset=${offset}`, priv);
      seen.push(...page.body.map((o: any) => o.orderId));
      for (const o of page.body) expect(o.createdAt.slice(0, 10)).toBe(day);
      if (page.body.length < 50) break;
    }
    const expected = sb.data
      .partnerOrders()
      .filter((o) => o.createdAt.startsWith(day))
      .map((o) => o.orderId);
    expect(seen.length).toBe(70);
    // Newest first, every order once across the pages.
    expect(seen).toEqual([...expected].reverse());
    // Only one bound: from the day on, or before the next day.
    const since = await get(`${P}/orders?from=2026-11-20&limit=50&offset=3`, priv);
    const after = all()
      .filter((o) => o.createdAt >= '2026-11-20')
      .map((o) => o.orderId);
    expect(since.body.map((o: any) => o.orderId)).toEqual([...after].reverse().slice(3, 53));
    const before = await get(`${P}/orders?to=2026-11-19&limit=50&offset=10`, priv);
    const older = all()
      .filter((o) => o.createdAt < '2026-11-19')
      .map((o) => o.orderId);
    expect(before.body.map((o: any) => o.orderId)).toEqual([...older].reverse().slice(10, 60));
    expect((await get(`${P}/orders?from=2026-11-19&to=2026-11-19`, priv)).body).toHaveLength(0);
    expect((await get(`${P}/orders?from=19-11-2026`, priv)).status).toBe(400);
    sb.setOption('partnerToBound', 'inclusive');
    expect((await get(`${P}/orders?from=2026-11-19&to=2026-11-19`, priv)).body).toHaveLength(50);
    sb.setOption('partnerToBound', 'exclusive');
  });

  it('filters by walletAddress, externalReference, outputCurrency', async () => {
    const all = sb.data.partnerOrders();
    const wallet = all.find(
      (o) => all.filter((x) => x.targetWalletAddress === o.targetWalletAddress).length > 1,
    )!.targetWalletAddress;
    const byWallet = await get(`${P}/orders?walletAddress=${encodeURIComponent(wallet)}&limit=50`, priv);
    expect(byWallet.body.length).toBe(Math.min(50, all.filter((o) => o.targetWalletAddress === wallet).length));
    expect(byWallet.body.every((o: any) => o.targetWalletAddress === wallet)).toBe(true);
    const ref = all[3]!.externalReference;
    const byRef = await get(`${P}/orders?externalReference=${ref}&limit=1&offset=5`, priv);
    expect(byRef.body.map((o: any) => o.orderId)).toEqual(
      all
        .filter((o) => o.externalReference === ref)
        .map((o) => o.orderId)
        .reverse(),
    );
    const usdc = await get(`${P}/orders?outputCurrency=USDC`, priv);
    expect(usdc.body.length).toBeGreaterThan(0);
    expect(usdc.body.every((o: any) => o.outputCurrency === 'USDC')).toBe(true);
  });

  it('get by id: 200 with the order, 404 with the error body', async () => {
    const o = sb.data.partnerOrders()[10]!;
    const r = await get(`${P}/orders/${o.orderId}`, priv);
    expect(r.body.orderId).toBe(o.orderId);
    expect(s(r.body.inputAmount)).toBe(o.inputAmount);
    const missing = await get(`${P}/orders/does-not-exist`, priv);
    expect(missing.status).toBe(404);
    expect(missing.body.errors[0].message).toMatch(/not found/);
  });

  it('wire quirks: nanosecond timestamps, amounts as strings and numbers, 18-decimal ETH', async () => {
    const texts: string[] = [];
    for (let offset = 0; offset < 300; offset += 50) texts.push((await get(`${P}/orders?offset=${offset}`, priv)).text);
    const text = texts.join('');
    expect(text).toMatch(/"createdAt":"[^"]+\.\d{9}Z"/);
    expect(text).toMatch(/"inputAmount":\d/);
    expect(text).toMatch(/"inputAmount":"/);
    expect(text).toMatch(/"outputAmount":"?\d+\.\d{18}"?/);
  });

  it('orders inserted while a client pages shift the offset pages (hook)', async () => {
    const seen: string[] = [];
    const off = sb.onPartnerOrdersPage(({ page }) => {
      if (page % 2 === 0) sb.addPartnerOrders(3);
    });
    for (let offset = 0; offset < 150; offset += 50)
      seen.push(...(await get(`${P}/orders?offset=${offset}`, priv)).body.map((o: any) => o.orderId));
    off();
    expect(new Set(seen).size).toBeLessThan(seen.length);
  });
});

describe('exchange API', () => {
  it('auth: X-API-Token required, UnauthorizedError body', async () => {
    const r = await get(`${X}/fees`);
    expect(r.status).toBe(401);
    expect(typeof r.body.error).toBe('string');
    expect((await get(`${X}/fees`, { 'X-API-Token': 'bad' })).status).toBe(401);
    expect((await get(`${X}/fees`, tok)).status).toBe(200);
  });

  it('market data, symbols, fees', async () => {
    const sym = await get(`${X}/symbols`, tok);
    expect(sym.body['BTC-USD']).toMatchObject({ base_currency: 'BTC', counter_currency: 'USD' });
    expect(n(sym.body['BTC-USD'].min_price_increment)).toBe(5);
    expect(n(sym.body['BTC-USD'].min_price_increment_scale)).toBe(1);
    expect(n((await get(`${X}/symbols/ETH-USD`, tok)).body.counter_currency_scale)).toBe(2);
    expect((await get(`${X}/symbols/NOPE-USD`, tok)).status).toBe(404);
    const l2 = await get(`${X}/l2/BTC-USD`, tok);
    expect(l2.body.bids.length).toBeGreaterThan(0);
    expect((await get(`${X}/l3/BTC-USD`, tok)).body.asks.length).toBe(20);
    expect((await get(`${X}/tickers`, tok)).body.length).toBe(5);
    expect((await get(`${X}/tickers/ETH-BTC`, tok)).body.symbol).toBe('ETH-BTC');
    const fees = await get(`${X}/fees`, tok);
    expect(s(fees.body.makerRate)).toBe('0.0014');
  });

  it('404 bodies have timestamp, status, error, message, path', async () => {
    const r = await get(`${X}/orders/999`, tok);
    expect(r.status).toBe(404);
    expect(Object.keys(r.body).sort()).toEqual(['error', 'message', 'path', 'status', 'timestamp']);
    expect(r.body.path).toBe('/v3/exchange/orders/999');
    expect((await get(`${X}/deposits/nope`, tok)).status).toBe(404);
    expect((await get(`${X}/withdrawals/nope`, tok)).status).toBe(404);
  });

  it('/orders: live orders by default, historic with status, newest first, at most 100', async () => {
    const live = await get(`${X}/orders`, tok);
    expect(live.body.length).toBeGreaterThan(0);
    expect(live.body.every((o: any) => o.ordStatus === 'OPEN' || o.ordStatus === 'PART_FILLED')).toBe(true);
    const filled = await get(`${X}/orders?status=FILLED&limit=500`, tok);
    expect(filled.body).toHaveLength(100);
    const ts = filled.body.map((o: any) => n(o.timestamp));
    expect([...ts].sort((a, b) => b - a)).toEqual(ts);
    expect((await get(`${X}/orders?status=NOPE`, tok)).status).toBe(400);
  });

  it('/orders and /trades: the real cap is an option (100 as the contract, 1000 as the published spec), a larger limit capped or refused', async () => {
    sb.setOption('exchangeOrdersCap', 1000);
    try {
      const filled = sb.data.exchangeOrders().filter((o) => o.ordStatus === 'FILLED').length;
      expect(filled).toBeGreaterThan(100);
      expect((await get(`${X}/orders?status=FILLED&limit=1000`, tok)).body).toHaveLength(Math.min(filled, 1000));
      expect((await get(`${X}/orders?status=FILLED&limit=5000`, tok)).body).toHaveLength(Math.min(filled, 1000));
      expect((await get(`${X}/trades?limit=150`, tok)).body).toHaveLength(150);
      sb.setOption('limitOverMax', 'error');
      expect((await get(`${X}/orders?status=FILLED&limit=1001`, tok)).status).toBe(400);
      expect((await get(`${X}/orders?status=FILLED&limit=1000`, tok)).status).toBe(200);
    } finally {
      sb.setOption('limitOverMax', 'cap');
      sb.setOption('exchangeOrdersCap', 100);
    }
    expect((await get(`${X}/trades?limit=150`, tok)).body).toHaveLength(100);
  });

  it('/deposits and /withdrawals: paymentsAnswerCap cuts an answer silently, keeping the newest', async () => {
    const deps = sb.data.deposits();
    const wds = sb.data.withdrawals();
    sb.setOption('paymentsAnswerCap', 5);
    try {
      const cut = await get(`${X}/deposits`, tok);
      expect(cut.status).toBe(200);
      expect(cut.body.map((d: any) => d.depositId)).toEqual(
        deps
          .slice(-5)
          .reverse()
          .map((d) => d.depositId),
      );
      expect((await get(`${X}/withdrawals`, tok)).body.map((d: any) => d.withdrawalId)).toEqual(
        wds
          .slice(-5)
          .reverse()
          .map((d) => d.withdrawalId),
      );
      const t = deps[20]!.timestamp;
      const upTo = deps.filter((d) => d.timestamp <= t);
      expect((await get(`${X}/deposits?from=0&to=${t + 1}`, tok)).body.map((d: any) => d.depositId)).toEqual(
        upTo
          .slice(-5)
          .reverse()
          .map((d) => d.depositId),
      );
    } finally {
      sb.setOption('paymentsAnswerCap', undefined);
    }
    expect((await get(`${X}/deposits`, tok)).body).toHaveLength(deps.length);
  });

  it('/orders paged by timestamp windows recovers every historic order, under each bound option', async () => {
    const want = sb.data
      .exchangeOrders()
      .filter((o) => o.ordStatus === 'FILLED')
      .map((o) => o.exOrdId);
    for (const toBound of ['exclusive', 'inclusive'] as const) {
      sb.setOption('exchangeToBound', toBound);
      const got = new Set<string>();
      let to = sb.data.clock() + 1;
      for (let guard = 0; guard < 500; guard++) {
        const page = await get(`${X}/orders?status=FILLED&limit=100&from=0&to=${to}`, tok);
        for (const o of page.body) got.add(s(o.exOrdId));
        if (page.body.length < 100) break;
        const last = n(page.body[page.body.length - 1].timestamp);
        // The page may cut its oldest millisecond: the next window includes that millisecond again (dedupe by id).
        to = toBound === 'exclusive' ? last + 1 : last;
      }
      expect(got.size, toBound).toBe(want.length);
    }
    sb.setOption('exchangeToBound', 'exclusive');
  });

  it('/trades lists orders with fills; /orders/{id} and 404 for the orphan', async () => {
    const t = await get(`${X}/trades?limit=100`, tok);
    expect(t.body.length).toBe(100);
    expect(t.body.every((o: any) => toDecimal(o.cumQty).gt(0))).toBe(true);
    const o = sb.data.exchangeOrders()[5]!;
    const one = await get(`${X}/orders/${o.exOrdId}`, tok);
    expect(s(one.body.exOrdId)).toBe(o.exOrdId);
    const orphan = sb.expectedBreaks().find((b) => b.code === 'E_FILL_ORPHAN')!;
    const fill = sb.data.fills().find((f) => f.execId === orphan.key)!;
    expect((await get(`${X}/orders/${fill.exOrdId}`, tok)).status).toBe(404);
  });

  it('/fills: newest first, limit 1000, fromExecId in both orders, toExecId, bounds', async () => {
    const fills = sb.data.fills();
    const page = await get(`${X}/fills?limit=5000`, tok);
    expect(page.body).toHaveLength(Math.min(1000, fills.length));
    expect(s(page.body[0].execId)).toBe(fills[fills.length - 1]!.execId);
    expect((await get(`${X}/fills`, tok)).body).toHaveLength(100);
    const start = fills[10]!.execId;
    const fwd = await get(`${X}/fills?fromExecId=${start}&limit=5`, tok);
    expect(fwd.body.map((f: any) => s(f.execId))).toEqual(
      fills
        .slice(10, 15)
        .map((f) => f.execId)
        .reverse(),
    );
    sb.setOption('fillsOrder', 'oldest-first');
    const asc = await get(`${X}/fills?fromExecId=${start}&limit=5`, tok);
    expect(asc.body.map((f: any) => s(f.execId))).toEqual(fills.slice(10, 15).map((f) => f.execId));
    sb.setOption('execIdBound', 'exclusive');
    expect(s((await get(`${X}/fills?fromExecId=${start}&limit=5`, tok)).body[0].execId)).toBe(fills[11]!.execId);
    sb.setOption('execIdBound', 'inclusive');
    sb.setOption('fillsOrder', 'newest-first');
    const back = await get(`${X}/fills?toExecId=${fills[20]!.execId}&limit=3`, tok);
    expect(back.body.map((f: any) => s(f.execId))).toEqual([fills[20]!, fills[19]!, fills[18]!].map((f) => f.execId));
    // Paging forward by execId from the start gets every fill exactly once.
    const got: string[] = [];
    let from = fills[0]!.execId;
    for (;;) {
      const p = await get(`${X}/fills?fromExecId=${from}&limit=1000`, tok);
      const ids = p.body.map((f: any) => s(f.execId)).filter((x: string) => !got.includes(x));
      got.push(...ids);
      if (p.body.length < 1000) break;
      from = p.body
        .map((f: any) => s(f.execId))
        .sort()
        .pop();
    }
    expect(got.length).toBe(fills.length);
    const t = fills[30]!.timestamp;
    const win = await get(`${X}/fills?from=${t}&to=${t + 1}&limit=1000`, tok);
    expect(win.body.map((f: any) => s(f.execId)).sort()).toEqual(
      fills
        .filter((f) => f.timestamp === t)
        .map((f) => f.execId)
        .sort(),
    );
  });

  it('wire quirks: ids and decimals as numbers and strings, exponent notation, extra fields, many fills per millisecond', async () => {
    const text = (await get(`${X}/fills?limit=1000`, tok)).text;
    expect(text).toMatch(/"execId":\d/);
    expect(text).toMatch(/"execId":"\d/);
    expect(text).toMatch(/"qty":"\d\.\d+E-\d"/);
    expect(text).toMatch(/"liquidity":/);
    const ms = new Map<number, number>();
    for (const f of sb.data.fills()) ms.set(f.timestamp, (ms.get(f.timestamp) ?? 0) + 1);
    expect(Math.max(...ms.values())).toBeGreaterThan(3);
    expect((await get(`${X}/orders?status=FILLED&limit=100`, tok)).text).toMatch(/"price":"0\.0"/);
  });

  it('accounts: BalanceMap and per currency', async () => {
    const a = await get(`${X}/accounts`, tok);
    expect(a.body.primary.length).toBeGreaterThan(3);
    const one = await get(`${X}/accounts/primary/BTC`, tok);
    expect(one.body.currency).toBe('BTC');
    expect((await get(`${X}/accounts/other/BTC`, tok)).status).toBe(404);
    expect((await get(`${X}/accounts/primary/DOGE`, tok)).status).toBe(404);
  });

  it('deposits: list with bounds, by id, address; whitelist; withdrawals list, by id, create', async () => {
    const deps = sb.data.deposits();
    const list = await get(`${X}/deposits`, tok);
    expect(list.body.length).toBe(deps.length);
    const t = deps[5]!.timestamp;
    const win = await get(`${X}/deposits?from=${t}&to=${t + 1}`, tok);
    expect(win.body.map((d: any) => d.depositId)).toContain(deps[5]!.depositId);
    expect((await get(`${X}/deposits/${deps[5]!.depositId}`, tok)).body.depositId).toBe(deps[5]!.depositId);
    const addr = await get(`${X}/deposits/XRP`, tok, { method: 'POST' });
    expect(addr.body.address).toMatch(/:\d+$/);
    expect((await get(`${X}/deposits/USD`, tok, { method: 'POST' })).status).toBe(400);
    const wl = await get(`${X}/whitelist`, tok);
    const btcWl = await get(`${X}/whitelist/BTC`, tok);
    expect(btcWl.body.every((e: any) => e.currency === 'BTC')).toBe(true);
    expect(wl.body.length).toBeGreaterThan(btcWl.body.length);
    const wds = await get(`${X}/withdrawals`, tok);
    expect(wds.body.length).toBe(sb.data.withdrawals().length);
    const wid = sb.data.withdrawals()[0]!.withdrawalId;
    expect((await get(`${X}/withdrawals/${wid}`, tok)).body.withdrawalId).toBe(wid);
    const post = (body: unknown): Promise<{ status: number; body: any }> =>
      get(
        `${X}/withdrawals`,
        { ...tok, 'content-type': 'application/json' },
        { method: 'POST', body: JSON.stringify(body) },
      );
    const created = await post({ amount: '0.01', currency: 'BTC', beneficiary: btcWl.body[0].whitelistId });
    expect(created.status).toBe(200);
    expect(created.body.state).toBe('PENDING');
    expect((await post({ amount: '0.01', currency: 'BTC', beneficiary: 'nope' })).status).toBe(400);
    expect(
      (await post({ amount: '0.01', sendMax: true, currency: 'BTC', beneficiary: btcWl.body[0].whitelistId })).status,
    ).toBe(400);
  });

  it('POST, DELETE orders', async () => {
    const post = (body: unknown): Promise<{ status: number; body: any }> =>
      get(
        `${X}/orders`,
        { ...tok, 'content-type': 'application/json' },
        { method: 'POST', body: JSON.stringify(body) },
      );
    const limit = await post({
      clOrdId: 'abc123',
      ordType: 'LIMIT',
      symbol: 'BTC-USD',
      side: 'BUY',
      orderQty: '0.01',
      price: '50000.5',
    });
    expect(limit.status).toBe(200);
    expect(limit.body.ordStatus).toBe('OPEN');
    const mkt = await post({ clOrdId: 'm1', ordType: 'MARKET', symbol: 'ETH-USD', side: 'SELL', orderQty: '0.5' });
    expect(mkt.body.ordStatus).toBe('FILLED');
    expect(
      (
        await post({
          clOrdId: 'bad-id!',
          ordType: 'LIMIT',
          symbol: 'BTC-USD',
          side: 'BUY',
          orderQty: '0.01',
          price: '50000',
        })
      ).status,
    ).toBe(400);
    expect(
      (
        await post({
          clOrdId: 'x',
          ordType: 'LIMIT',
          symbol: 'BTC-USD',
          side: 'BUY',
          orderQty: '0.01',
          price: '50000.2',
        })
      ).status,
    ).toBe(400);
    const id = s(limit.body.exOrdId);
    expect((await get(`${X}/orders/${id}`, tok, { method: 'DELETE' })).status).toBe(200);
    expect((await get(`${X}/orders/${id}`, tok)).body.ordStatus).toBe('CANCELED');
    expect((await get(`${X}/orders`, tok, { method: 'DELETE' })).status).toBe(200);
    expect((await get(`${X}/orders`, tok)).body).toHaveLength(0);
  });

  it('internal orders page by orderId', async () => {
    const p1 = await get(`${X}/internal/orders?limit=10`, tok);
    expect(p1.body.orders).toHaveLength(10);
    const p2 = await get(`${X}/internal/orders?limit=10&orderId=${s(p1.body.nextOrderId)}`, tok);
    expect(s(p2.body.orders[0].exOrdId)).not.toBe(s(p1.body.orders[9].exOrdId));
  });

  it('expected breaks over HTTP', async () => {
    const r = await get(`${sb.url}/_sandbox/expected-breaks`);
    expect(r.body).toEqual(sb.expectedBreaks());
  });
});
