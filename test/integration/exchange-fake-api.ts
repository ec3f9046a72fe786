import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/**
 * A small in-process Exchange API for the sync's tests (until and besides the sandbox): the
 * contract's endpoints, limits and 404s, with switches for what the contract leaves open
 * (fills page order, bound semantics) and for faults.
 */

export interface FakeFill {
  exOrdId: string;
  tradeId: string;
  execId: string;
  side: 'BUY' | 'SELL';
  symbol: string;
  price: string;
  qty: string;
  fee: string;
  timestamp: number;
}
export interface FakeOrder {
  exOrdId: string;
  clOrdId: string;
  ordType: string;
  ordStatus: string;
  side: string;
  symbol: string;
  price: string;
  cumQty: string;
  leavesQty: string;
  avgPx: string;
  timestamp: number;
}
export interface FakeDeposit {
  depositId: string;
  amount: string;
  currency: string;
  address: string;
  txHash: string;
  state: string;
  timestamp: number;
}
export interface FakeWithdrawal {
  withdrawalId: string;
  amount: string;
  fee: string;
  currency: string;
  beneficiary: string;
  state: string;
  timestamp: number;
}

export interface FakeData {
  fills: FakeFill[];
  orders: FakeOrder[];
  deposits: FakeDeposit[];
  withdrawals: FakeWithdrawal[];
  /** Order ids answered only by GET /orders/{id} (not in lists). */
  hiddenOrders: Set<string>;
  /** Raw JSON text replacing a record in list responses, by key (GET by id still answers the record). */
  malformed: Map<string, string>;
  /** Raw JSON text replacing a record in GET by id answers, by key. */
  malformedById: Map<string, string>;
}

export interface FakeOptions {
  fillsOrder: 'newest-first' | 'oldest-first';
  /** Bounds: fromExecId/toExecId and from/to inclusive (true) or exclusive (false). */
  inclusive: boolean;
  /** Every n-th request fails with a fault (0: never). */
  faultEvery: number;
  /** Send numbers as JSON numbers (else strings). */
  numbersAsNumbers: boolean;
  /** Cut /deposits and /withdrawals answers silently at this many records, keeping the oldest (0: never). */
  paymentsCut: number;
}

export interface FakeExchange {
  url: string;
  token: string;
  data: FakeData;
  options: FakeOptions;
  requests: string[];
  close(): Promise<void>;
}

const T0 = Date.parse('2026-11-01T00:00:00Z');

/** Deterministic data: fills across days with shared milliseconds and exponent-notation quantities. */
export function makeData(nFills: number, nOrders = Math.ceil(nFills / 3)): FakeData {
  let s = 42;
  const rnd = () => ((s = (s * 1103515245 + 12345) % 2147483648), s / 2147483648);
  const orders: FakeOrder[] = [];
  const statuses = ['FILLED', 'FILLED', 'PART_FILLED', 'CANCELED', 'OPEN', 'FILLED'];
  let t = T0;
  for (let i = 0; i < nOrders; i++) {
    // Bursts: 130 orders in one millisecond around the middle (more than one page), pairs otherwise.
    if (!(i > nOrders / 2 && i <= nOrders / 2 + 130) && i % 2 === 0) t += 1 + Math.floor(rnd() * 600_000);
    orders.push({
      exOrdId: String(900_000_000_000 + i * 7),
      clOrdId: `c${i}`,
      ordType: 'LIMIT',
      ordStatus: statuses[i % statuses.length]!,
      side: i % 2 ? 'SELL' : 'BUY',
      symbol: i % 3 ? 'BTC-USD' : 'ETH-USD',
      price: `${20000 + (i % 97)}.5`,
      cumQty: '0.3',
      leavesQty: '0',
      avgPx: `${20000 + (i % 97)}.5`,
      timestamp: t,
    });
  }
  const fills: FakeFill[] = [];
  let exec = 9_007_199_254_740_000n; // beyond 2^53: a JS number would lose the last digits
  for (let i = 0; i < nFills; i++) {
    exec += BigInt(1 + Math.floor(rnd() * 3));
    const o = orders[Math.min(orders.length - 1, Math.floor(i / 3))]!;
    fills.push({
      exOrdId: o.exOrdId,
      tradeId: i % 50 === 0 ? '1' : String(5_000_000 + i),
      execId: exec.toString(),
      side: o.side as 'BUY' | 'SELL',
      symbol: o.symbol,
      price: i % 40 === 0 ? '0.0' : `${20000 + (i % 89)}.123456789012345678`,
      qty: i % 7 === 0 ? '5.4044E-4' : '0.1',
      fee: '0.000000000000000001',
      timestamp: o.timestamp + (i % 3),
    });
  }
  const deposits: FakeDeposit[] = [];
  const withdrawals: FakeWithdrawal[] = [];
  for (let i = 0; i < 150; i++) {
    deposits.push({
      depositId: `d-${1000 + i}`,
      amount: i % 5 === 0 ? '1.000000000000000001' : '250.5',
      currency: i % 2 ? 'ETH' : 'BTC',
      address: `0xabc${i % 4}:memo${i % 2}`,
      txHash: `0xtx${i}`,
      state: i % 10 === 0 ? 'UNCONFIRMED' : 'COMPLETED',
      timestamp: T0 + i * 3_600_000,
    });
    if (i < 40)
      withdrawals.push({
        withdrawalId: `w-${i}`,
        amount: '0.5',
        fee: '0.0005',
        currency: 'BTC',
        beneficiary: `wl-${i % 3}`,
        state: i % 8 === 0 ? 'PENDING' : 'COMPLETED',
        timestamp: T0 + i * 7_200_000 + 17,
      });
  }
  return {
    fills,
    orders,
    deposits,
    withdrawals,
    hiddenOrders: new Set(),
    malformed: new Map(),
    malformedById: new Map(),
  };
}

export const FAKE_NOW = new Date(T0 + 40 * 86_400_000);

function encode(record: object, asNumbers: boolean): string {
  return JSON.stringify(record, (k, v: unknown) => v).replace(
    /"(price|qty|fee|amount|cumQty|leavesQty|avgPx|execId|exOrdId|tradeId)":"([0-9.E-]+)"/g,
    (m, key: string, val: string) => (asNumbers ? `"${key}":${val}` : m),
  );
}

export async function startFakeExchange(data: FakeData, opts: Partial<FakeOptions> = {}): Promise<FakeExchange> {
  const options: FakeOptions = {
    fillsOrder: 'newest-first',
    inclusive: true,
    faultEvery: 0,
    numbersAsNumbers: true,
    paymentsCut: 0,
    ...opts,
  };
  const token = 'fake-token-abcdef';
  const requests: string[] = [];
  let n = 0;
  const server: Server = createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://x');
    requests.push(`${url.pathname}${url.search}`);
    n++;
    const send = (status: number, body: string) => {
      res.writeHead(status, { 'content-type': 'application/json' });
      res.end(body);
    };
    if (req.headers['x-api-token'] !== token) return send(401, '{"error":"API key is missing or invalid"}');
    if (options.faultEvery && n % options.faultEvery === 0) {
      const kind = (n / options.faultEvery) % 3;
      if (kind === 0)
        return send(500, '{"timestamp":1,"status":500,"error":"Internal Server Error","message":"x","path":"/"}');
      if (kind === 1) {
        res.writeHead(429, { 'retry-after': '0', 'content-type': 'application/json' });
        return res.end('{}');
      }
      return send(200, '[{"execId": 1, "qty": "0.'); // truncated body
    }
    const path = url.pathname.replace(/^\/v3\/exchange/, '');
    const q = url.searchParams;
    const num = (k: string) => (q.has(k) ? Number(q.get(k)) : undefined);
    const inRange = (t: number, from?: number, to?: number) =>
      (from === undefined || (options.inclusive ? t >= from : t > from)) &&
      (to === undefined || (options.inclusive ? t <= to : t < to));
    const list = <T extends object>(items: T[], key: (x: T) => string) =>
      '[' + items.map((x) => data.malformed.get(key(x)) ?? encode(x, options.numbersAsNumbers)).join(',') + ']';
    const limit = Math.min(num('limit') ?? 100, path === '/fills' ? 1000 : 100);

    if (path === '/fills') {
      const from = q.get('fromExecId');
      const to = q.get('toExecId');
      let set = data.fills.filter((f) => {
        const id = BigInt(f.execId);
        if (from !== null && (options.inclusive ? id < BigInt(from) : id <= BigInt(from))) return false;
        if (to !== null && (options.inclusive ? id > BigInt(to) : id >= BigInt(to))) return false;
        return inRange(f.timestamp, num('from'), num('to'));
      });
      set = options.fillsOrder === 'oldest-first' ? set.slice(0, limit) : set.slice(-limit).reverse();
      return send(
        200,
        list(set, (f) => f.execId),
      );
    }
    if (path === '/orders' || path === '/trades') {
      const status = q.get('status');
      let set = data.orders.filter(
        (o) => !data.hiddenOrders.has(o.exOrdId) && inRange(o.timestamp, num('from'), num('to')),
      );
      if (path === '/orders') set = set.filter((o) => (status ? o.ordStatus === status : o.ordStatus === 'OPEN'));
      else set = set.filter((o) => o.ordStatus === 'FILLED' || o.ordStatus === 'PART_FILLED');
      if (q.get('symbol')) set = set.filter((o) => o.symbol === q.get('symbol'));
      return send(
        200,
        list(set.slice(-limit).reverse(), (o) => o.exOrdId),
      );
    }
    const byId = path.match(/^\/(orders|deposits|withdrawals)\/(.+)$/);
    if (byId) {
      const id = decodeURIComponent(byId[2]!);
      const rec =
        byId[1] === 'orders'
          ? data.orders.find((o) => o.exOrdId === id)
          : byId[1] === 'deposits'
            ? data.deposits.find((d) => d.depositId === id)
            : data.withdrawals.find((w) => w.withdrawalId === id);
      if (!rec)
        return send(404, `{"timestamp":1,"status":404,"error":"Not Found","message":"not found","path":"${path}"}`);
      return send(200, data.malformedById.get(id) ?? encode(rec, options.numbersAsNumbers));
    }
    // Oldest first, as the data is kept; a cut keeps the head of that list.
    const cut = <T>(items: T[]) => (options.paymentsCut ? items.slice(0, options.paymentsCut) : items);
    if (path === '/deposits')
      return send(
        200,
        list(cut(data.deposits.filter((d) => inRange(d.timestamp, num('from'), num('to')))), (d) => d.depositId),
      );
    if (path === '/withdrawals')
      return send(
        200,
        list(cut(data.withdrawals.filter((w) => inRange(w.timestamp, num('from'), num('to')))), (w) => w.withdrawalId),
      );
    if (path === '/accounts')
      return send(
        200,
        '{"primary":[{"currency":"BTC","balance":"1.5","available":"1.25","balance_local":30000.12,"available_local":"25000.10","rate":"20000.08"},' +
          '{"currency":"ETH","balance":"10.000000000000000001","available":"10","balance_local":"30000","available_local":"30000","rate":"3000"}],"other":[]}',
      );
    if (path === '/fees') return send(200, '{"makerRate":"0.001","takerRate":0.002,"volumeInUSD":"12345.67"}');
    if (path === '/symbols')
      return send(
        200,
        '{"BTC-USD":{"base_currency":"BTC","base_currency_scale":8,"counter_currency":"USD","counter_currency_scale":2,"min_price_increment":1,"min_price_increment_scale":1,"min_order_size":50,"min_order_size_scale":8,"max_order_size":0,"max_order_size_scale":8,"lot_size":1,"lot_size_scale":8,"status":"open","id":1},' +
          '"ETH-USD":{"base_currency":"ETH","base_currency_scale":8,"counter_currency":"USD","counter_currency_scale":2,"min_price_increment":1,"min_price_increment_scale":2,"min_order_size":1,"min_order_size_scale":3,"max_order_size":100,"max_order_size_scale":0,"lot_size":1,"lot_size_scale":8,"status":"open","id":2}}',
      );
    if (path === '/whitelist')
      return send(
        200,
        '[{"whitelistId":"wl-0","name":"cold","currency":"BTC"},{"whitelistId":"wl-1","name":"ops","currency":"BTC"}]',
      );
    if (path === '/tickers')
      return send(200, '[{"symbol":"BTC-USD","price_24h":"20000.1","volume_24h":"12.5","last_trade_price":"20001"}]');
    return send(404, '{"error":"no route"}');
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v3/exchange`;
  return {
    url,
    token,
    data,
    options,
    requests,
    async close() {
      server.closeAllConnections();
      await new Promise((r) => server.close(r));
    },
  };
}

/**
 * A config file for syncs against the fake exchange: history from 2026-10-01, no rate limit to
 * speak of, and retries in milliseconds (the fake's faults are retried at once).
 */
export function fakeExchangeConfigFile(prefix: string): string {
  const file = join(mkdtempSync(join(tmpdir(), prefix)), 'config.json');
  writeFileSync(
    file,
    JSON.stringify({
      exchange: { historyStart: '2026-10-01', rateLimitPerSecond: 1000 },
      http: { retryBaseMs: 1, retryMaxMs: 5, maxRetries: 8, connectTimeoutMs: 2000, bodyTimeoutMs: 5000 },
    }),
  );
  return file;
}
