/** Simulator: the Exchange API routes, as the exchange interface and the operator facts describe them. */
import { z } from 'zod';
import { Decimal } from '../src/decimal/decimal.js';
import { MAKER_RATE, TAKER_RATE, midPrice, unit, type SymbolDef } from './catalog.js';
import { feeUnits, refreshAggregates } from './generate/exchange.js';
import { parseFx } from './fixed.js';
import { header, intParam, json, type Req, type Res } from './http.js';
import type {
  BalanceView,
  DepositRecord,
  ExchangeOrderRecord,
  FillRecord,
  OrdStatus,
  WithdrawalRecord,
} from './model.js';
import { hash53 } from './prng.js';
import { Raw, dec, exponentText, id, isSmall, styleOf, type Json, type Style } from './wire.js';
import type { FillStore } from './fills.js';
import { hasFills, lowerBound, upperBound, type OrderRow, type World } from './world.js';

export const EXCHANGE_PREFIX = '/v3/exchange';
const ORD_STATUSES: readonly OrdStatus[] = [
  'OPEN',
  'REJECTED',
  'CANCELED',
  'FILLED',
  'PART_FILLED',
  'EXPIRED',
  'PENDING',
];
const LIVE: ReadonlySet<OrdStatus> = new Set(['OPEN', 'PART_FILLED']);

export interface ExchangeHooks {
  onAccounts?: () => void;
  /** Called when an order or withdrawal is created through the API (webhooks, live bookkeeping). */
  onChange?: () => void;
}

/** Spring-style error body, as captured from the real API. */
export function exchangeError(req: Req, status: number, message: string): Res {
  const reason: Record<number, string> = {
    400: 'Bad Request',
    404: 'Not Found',
    405: 'Method Not Allowed',
    429: 'Too Many Requests',
    500: 'Internal Server Error',
    503: 'Service Unavailable',
  };
  return json(status, {
    timestamp: new Date().toISOString(),
    status,
    error: reason[status] ?? 'Error',
    message,
    path: req.fullPath,
  });
}

export function handleExchange(w: World, req: Req, hooks: ExchangeHooks): Res {
  const token = header(req, 'x-api-token');
  if (token === undefined) return json(w.opts.authFailureStatus, { error: 'missing X-API-Token header' });
  if (token !== w.opts.exchangeToken) return json(w.opts.authFailureStatus, { error: 'invalid API token' });
  const p = req.path.split('/').filter(Boolean).map(decodeURIComponent);
  const m = req.method;
  const [a, b, c] = p;
  if (m === 'GET' && (a === 'l2' || a === 'l3') && b && !c) return book(w, req, b, a === 'l3');
  if (m === 'GET' && a === 'tickers') return tickers(w, req, b);
  if (m === 'GET' && a === 'symbols') return symbols(w, req, b);
  if (m === 'GET' && a === 'fees' && !b)
    return json(200, {
      makerRate: new Raw(MAKER_RATE),
      takerRate: new Raw(TAKER_RATE),
      volumeInUSD: new Raw('1254300.55'),
    });
  if (a === 'orders') {
    if (!b && m === 'GET') return listOrders(w, req);
    if (!b && m === 'POST') return createOrder(w, req, hooks);
    if (!b && m === 'DELETE') return cancelAll(w, req);
    if (b && !c && (m === 'GET' || m === 'DELETE')) return oneOrder(w, req, b, m === 'DELETE');
  }
  if (m === 'GET' && a === 'internal' && b === 'orders' && !c) return internalOrders(w, req);
  if (m === 'GET' && a === 'trades' && !b) return trades(w, req);
  if (m === 'GET' && a === 'fills' && !b) return fills(w, req);
  if (m === 'GET' && a === 'accounts') {
    if (!b) {
      hooks.onAccounts?.();
      return json(200, { primary: w.balanceViews().map(balanceJson) });
    }
    if (b && c && !p[3]) {
      const bal = b === 'primary' ? w.balanceViews().find((x) => x.currency === c) : undefined;
      return bal
        ? json(200, balanceJson(bal))
        : exchangeError(req, 404, `no balance for account ${b} and currency ${c}`);
    }
  }
  if (a === 'deposits') {
    if (m === 'GET' && !b) return listDeposits(w, req);
    if (m === 'GET' && b && !c) {
      const d = w.depositById.get(b);
      return d && !d.hidden && !d.unlisted
        ? json(200, depositJson(w, d))
        : exchangeError(req, 404, `deposit ${b} not found`);
    }
    if (m === 'POST' && b && !c) {
      const address = w.addresses[b];
      if (!address)
        return exchangeError(
          req,
          400,
          `deposits of ${b} are not supported: only crypto currencies have deposit addresses`,
        );
      return json(200, { type: b, address });
    }
  }
  if (m === 'GET' && a === 'whitelist') {
    if (!b)
      return json(
        200,
        w.whitelist.map((e) => ({ ...e })),
      );
    if (!c)
      return json(
        200,
        w.whitelist.filter((e) => e.currency === b).map((e) => ({ ...e })),
      );
  }
  if (a === 'withdrawals') {
    if (m === 'GET' && !b) return listWithdrawals(w, req);
    if (m === 'POST' && !b) return createWithdrawal(w, req, hooks);
    if (m === 'GET' && b && !c) {
      const wd = w.withdrawalById.get(b);
      return wd ? json(200, withdrawalJson(w, wd)) : exchangeError(req, 404, `withdrawal ${b} not found`);
    }
  }
  return exchangeError(req, 404, `no such endpoint: ${m} ${req.path}`);
}

// ---- market data --------------------------------------------------------------------------

function symbolOr404(w: World, req: Req, code: string): SymbolDef | Res {
  return w.symbol(code) ?? exchangeError(req, 404, `unknown symbol ${code}`);
}

function book(w: World, req: Req, code: string, l3: boolean): Res {
  const def = symbolOr404(w, req, code);
  if ('status' in def) return def;
  const inc = unit(def.priceInc);
  const lot = unit(def.lot);
  const mid = midPrice(def);
  const side = (dir: 1 | -1): Json[] => {
    const out: Json[] = [];
    for (let i = 1; i <= 10; i++) {
      const px = mid.plus(inc.times(i * dir * 2)).toString();
      const qty = lot.times(1000 * i + (hash53(`${code}${i}${dir}`) % 997)).toString();
      if (l3) for (let k = 0; k < 2; k++) out.push({ px, qty, num: 900_000_000 + i * 10 + k + (dir > 0 ? 5 : 0) });
      else out.push({ px, qty, num: 1 + (i % 4) });
    }
    return out;
  };
  return json(200, { symbol: def.symbol, bids: side(-1), asks: side(1) });
}

function tickers(w: World, req: Req, code?: string): Res {
  const t = (def: SymbolDef): Json => {
    const mid = midPrice(def);
    return {
      symbol: def.symbol,
      price_24h: mid.times('0.99').toNearest(unit(def.priceInc)).toString(),
      volume_24h: '1234.5678',
      last_trade_price: mid.toString(),
    };
  };
  if (!code) return json(200, w.symbols.map(t));
  const def = symbolOr404(w, req, code);
  return 'status' in def ? def : json(200, t(def));
}

function symbolJson(def: SymbolDef): Json {
  return {
    base_currency: def.base,
    base_currency_scale: def.baseScale,
    counter_currency: def.counter,
    counter_currency_scale: def.counterScale,
    min_price_increment: def.priceInc[0],
    min_price_increment_scale: def.priceInc[1],
    min_order_size: def.minSize[0],
    min_order_size_scale: def.minSize[1],
    max_order_size: def.maxSize[0],
    max_order_size_scale: def.maxSize[1],
    lot_size: def.lot[0],
    lot_size_scale: def.lot[1],
    status: 'open',
    id: def.id,
    auction_price: 0,
    auction_size: 0,
    auction_time: '',
    imbalance: 0,
  };
}

function symbols(w: World, req: Req, code?: string): Res {
  if (!code) return json(200, Object.fromEntries(w.symbols.map((s) => [s.symbol, symbolJson(s)])));
  const def = symbolOr404(w, req, code);
  return 'status' in def ? def : json(200, symbolJson(def));
}

// ---- shared list helpers ---------------------------------------------------------------------

interface Window {
  from?: number;
  to?: number;
  limit: number;
}

/** Parses from/to/limit; `max` is the endpoint's cap. A Res on bad input. */
function windowParams(w: World, req: Req, max: number, dflt = 100): Window | Res {
  const from = intParam(req.query, 'from');
  const to = intParam(req.query, 'to');
  const limit = intParam(req.query, 'limit');
  if (from !== undefined && Number.isNaN(from)) return exchangeError(req, 400, 'from must be epoch milliseconds');
  if (to !== undefined && Number.isNaN(to)) return exchangeError(req, 400, 'to must be epoch milliseconds');
  if (limit !== undefined && (Number.isNaN(limit) || limit < 1))
    return exchangeError(req, 400, 'limit must be a positive integer');
  if (limit !== undefined && limit > max && w.opts.limitOverMax === 'error')
    return exchangeError(req, 400, `limit must be at most ${max}`);
  return { from, to, limit: Math.min(limit ?? dflt, max) };
}

/** Index range [lo, hi) of a timestamp-sorted list inside the window, honouring the bound options. */
function timeRange<T extends { timestamp: number }>(w: World, list: readonly T[], win: Window): [number, number] {
  const key = (x: T): number => x.timestamp;
  let lo = 0;
  let hi = list.length;
  if (win.from !== undefined)
    lo = w.opts.exchangeFromBound === 'inclusive' ? lowerBound(list, win.from, key) : upperBound(list, win.from, key);
  if (win.to !== undefined)
    hi = w.opts.exchangeToBound === 'inclusive' ? upperBound(list, win.to, key) : lowerBound(list, win.to, key);
  return [lo, Math.max(lo, hi)];
}

/**
 * Newest first, at most `limit`: scans backwards from hi. Inside one millisecond, ids descend
 * (or ascend with sameMsOrder id-asc), so the records of the boundary millisecond are complete
 * before the page is cut.
 */
function newestFirst<T extends { timestamp: number }>(
  w: World,
  list: readonly T[],
  lo: number,
  hi: number,
  limit: number,
  keep: (x: T) => boolean,
  idOf: (x: T) => string,
): T[] {
  const out: T[] = [];
  for (let i = hi - 1; i >= lo; i--) {
    const x = list[i]!;
    if (out.length >= limit && x.timestamp !== out[out.length - 1]!.timestamp) break;
    if (keep(x)) out.push(x);
  }
  const asc = w.opts.sameMsOrder === 'id-asc';
  out.sort((p, q) => q.timestamp - p.timestamp || (asc ? cmpId(idOf(p), idOf(q)) : cmpId(idOf(q), idOf(p))));
  return out.slice(0, limit);
}

function cmpId(a: string, b: string): number {
  return a.length - b.length || (a < b ? -1 : a > b ? 1 : 0);
}

// ---- orders --------------------------------------------------------------------------------

export function orderJson(o: ExchangeOrderRecord): Json {
  const s = styleOf(o.exOrdId);
  const extra = hash53(o.exOrdId, 11) % 4 === 0;
  return {
    exOrdId: id(o.exOrdId, s),
    clOrdId: o.clOrdId,
    ordType: o.ordType,
    ordStatus: o.ordStatus,
    side: o.side,
    price: o.price === '0.0' ? '0.0' : dec(o.price, s),
    text: o.text,
    symbol: o.symbol,
    lastShares: dec(o.lastShares, s),
    lastPx: dec(o.lastPx, s),
    leavesQty: dec(o.leavesQty, s),
    cumQty: dec(o.cumQty, s),
    avgPx: dec(o.avgPx, s),
    timestamp: o.timestamp,
    // Fields the contract does not list appear on real responses.
    ...(extra ? { expireDate: 20991231, fee: '0', mktOrdId: id(String(Number(o.exOrdId) + 7), s) } : {}),
  };
}

function listOrders(w: World, req: Req): Res {
  const win = windowParams(w, req, w.opts.exchangeOrdersCap);
  if ('status' in win) return win;
  const status = req.query.get('status');
  if (status !== null && !ORD_STATUSES.includes(status as OrdStatus))
    return exchangeError(req, 400, `status must be one of ${ORD_STATUSES.join(', ')}`);
  const symbol = req.query.get('symbol');
  const [lo, hi] = timeRange(w, w.exOrders, win);
  const keep = (o: OrderRow): boolean =>
    !o.hidden &&
    (symbol === null || o.symbol === symbol) &&
    (status !== null ? o.ordStatus === status : LIVE.has(o.ordStatus));
  return json(200, newestFirst(w, w.exOrders, lo, hi, win.limit, keep, (o) => o.exOrdId).map(orderJson));
}

function trades(w: World, req: Req): Res {
  const win = windowParams(w, req, w.opts.exchangeOrdersCap);
  if ('status' in win) return win;
  const symbol = req.query.get('symbol');
  const [lo, hi] = timeRange(w, w.exOrders, win);
  const keep = (o: OrderRow): boolean => !o.hidden && hasFills(o) && (symbol === null || o.symbol === symbol);
  return json(200, newestFirst(w, w.exOrders, lo, hi, win.limit, keep, (o) => o.exOrdId).map(orderJson));
}

function internalOrders(w: World, req: Req): Res {
  const from = intParam(req.query, 'from');
  const after = req.query.get('orderId');
  const limit = Math.min(intParam(req.query, 'limit') ?? 100, 100);
  if ((from !== undefined && Number.isNaN(from)) || Number.isNaN(limit) || (after !== null && !/^\d+$/.test(after)))
    return exchangeError(req, 400, 'invalid from, orderId or limit');
  const out: OrderRow[] = [];
  for (const o of w.exOrders) {
    if (out.length >= limit) break;
    if (o.hidden || (from !== undefined && o.timestamp < from) || (after !== null && cmpId(o.exOrdId, after) <= 0))
      continue;
    out.push(o);
  }
  const last = out[out.length - 1];
  return json(200, { nextOrderId: last ? id(last.exOrdId, 'number') : 0, orders: out.map(orderJson) });
}

function oneOrder(w: World, req: Req, exOrdId: string, cancel: boolean): Res {
  const o = w.exOrderById.get(exOrdId);
  if (!o || o.hidden) return exchangeError(req, 404, `order ${exOrdId} not found`);
  if (!cancel) return json(200, orderJson(o));
  if (LIVE.has(o.ordStatus)) o.ordStatus = 'CANCELED';
  return { status: 200, body: '' };
}

function cancelAll(w: World, req: Req): Res {
  const symbol = req.query.get('symbol');
  for (const o of w.exOrders)
    if (LIVE.has(o.ordStatus) && !o.hidden && (symbol === null || o.symbol === symbol)) o.ordStatus = 'CANCELED';
  return { status: 200, body: '' };
}

const decimalText = z
  .union([z.string(), z.number()])
  .transform((v) => String(v))
  .pipe(z.string().regex(/^\d+(\.\d+)?$/));
const baseOrder = z.object({
  clOrdId: z.string().regex(/^[A-Za-z0-9]{1,20}$/, 'clOrdId: max 20 characters, alphanumeric only'),
  ordType: z.enum(['MARKET', 'LIMIT', 'STOP', 'STOPLIMIT']),
  symbol: z.string(),
  side: z.enum(['BUY', 'SELL']),
  orderQty: decimalText,
  timeInForce: z.enum(['GTC', 'IOC', 'FOK', 'GTD']).optional(),
  price: decimalText.optional(),
  expireDate: z.number().int().optional(),
  minQty: decimalText.optional(),
  stopPx: decimalText.optional(),
});

function parseBody(req: Req): unknown {
  try {
    return JSON.parse(req.body || 'null');
  } catch {
    return undefined;
  }
}

/**
 * POST /orders: LIMIT orders rest OPEN; MARKET orders fill at once at the mid price (one taker
 * fill), which moves the balance like any generated fill. Stamped at the sandbox clock.
 */
function createOrder(w: World, req: Req, hooks: ExchangeHooks): Res {
  const parsed = baseOrder.safeParse(parseBody(req));
  if (!parsed.success)
    return exchangeError(
      req,
      400,
      parsed.error.issues.map((i) => `${i.path.join('.') || 'body'}: ${i.message}`).join('; '),
    );
  const body = parsed.data;
  const def = w.symbol(body.symbol);
  if (!def) return exchangeError(req, 400, `unknown symbol ${body.symbol}`);
  if (body.ordType !== 'MARKET' && body.ordType !== 'LIMIT')
    return exchangeError(req, 400, `${body.ordType} orders are not supported by the sandbox`);
  const qty = new Decimal(body.orderQty);
  const lot = unit(def.lot);
  if (!qty.mod(lot).isZero())
    return exchangeError(req, 400, `orderQty must be a multiple of the lot size ${lot.toString()}`);
  if (qty.lt(unit(def.minSize)) || (def.maxSize[0] > 0 && qty.gt(unit(def.maxSize))))
    return exchangeError(req, 400, 'orderQty outside the symbol size limits');
  if (body.ordType === 'LIMIT') {
    if (body.price === undefined) return exchangeError(req, 400, 'price is required for LIMIT orders');
    if (!new Decimal(body.price).mod(unit(def.priceInc)).isZero())
      return exchangeError(req, 400, 'price must be a multiple of the price increment');
  }
  const ts = Math.max(w.clock(), w.generatedUntil);
  const exOrdId = String(w.seq.exOrd++);
  const order: OrderRow = {
    exOrdId,
    clOrdId: body.clOrdId,
    ordType: body.ordType,
    ordStatus: body.ordType === 'MARKET' ? 'FILLED' : 'OPEN',
    side: body.side,
    symbol: def.symbol,
    price: body.ordType === 'MARKET' ? '0.0' : new Decimal(body.price!).toString(),
    leavesQty: qty.toString(),
    cumQty: '0',
    timestamp: ts,
    fillFrom: w.fills.length,
    fillCount: 0,
  };
  if (body.ordType === 'MARKET') {
    const ticks = midPrice(def).div(unit(def.priceInc)).toNumber();
    const lots = qty.div(lot).toNumber();
    w.fills.push({
      execId: w.seq.exec++,
      exOrdId: Number(exOrdId),
      tradeId: ++w.seq.trade,
      timestamp: ts,
      lots,
      ticks,
      feeUnits: feeUnits(def, lots, ticks, parseFx(TAKER_RATE)),
      symbol: w.symbols.indexOf(def),
      side: body.side,
    });
    order.fillCount = 1;
    refreshAggregates(w, order);
  }
  w.exOrders.push(order);
  w.exOrderById.set(exOrdId, order);
  w.generatedUntil = ts;
  hooks.onChange?.();
  return json(200, orderJson(order));
}

// ---- fills ---------------------------------------------------------------------------------

export function fillJson(f: FillRecord): Json {
  const s = styleOf(f.execId);
  const extra = hash53(f.execId, 13) % 5 === 0;
  return {
    exOrdId: id(f.exOrdId, s),
    tradeId: id(f.tradeId, s),
    execId: id(f.execId, s),
    side: f.side,
    symbol: f.symbol,
    price: dec(f.price, s),
    qty: dec(f.qty, s),
    fee: dec(f.fee, s),
    timestamp: f.timestamp,
    ...(extra ? { liquidity: hash53(f.execId) % 2 ? 'MAKER' : 'TAKER', clOrdId: `x${f.exOrdId.slice(-6)}` } : {}),
  };
}

/**
 * /fills: newest first, at most 1000. With fromExecId the page is the `limit` fills from that
 * execId onwards (the oldest of them), ordered by the `fillsOrder` option; toExecId lists
 * backwards from an execId. from/to bound the timestamps.
 */
function fills(w: World, req: Req): Res {
  const win = windowParams(w, req, 1000);
  if ('status' in win) return win;
  const fromExec = w.opts.fillsIgnoreExecIds ? null : req.query.get('fromExecId');
  const toExec = w.opts.fillsIgnoreExecIds ? null : req.query.get('toExecId');
  if ((fromExec !== null && !/^\d+$/.test(fromExec)) || (toExec !== null && !/^\d+$/.test(toExec)))
    return exchangeError(req, 400, 'fromExecId and toExecId must be integers');
  const symbol = req.query.get('symbol');
  const f = w.fills;
  const fromExclusive = w.opts.exchangeFromBound === 'exclusive';
  const toInclusive = w.opts.exchangeToBound === 'inclusive';
  const timeLo = win.from !== undefined ? f.indexOfTime(win.from, fromExclusive) : 0;
  const timeHi = win.to !== undefined ? f.indexOfTime(win.to, toInclusive) : f.length;
  const incl = w.opts.execIdBound === 'inclusive';
  const execLo = fromExec !== null ? f.indexOfExec(Number(fromExec), !incl) : 0;
  const execHi = toExec !== null ? f.indexOfExec(Number(toExec), incl) : f.length;
  const lo = Math.max(timeLo, execLo);
  const hi = Math.min(timeHi, execHi);
  // Fills published late sit out of time order (FillStore.republished): each is judged by its own time.
  const inWindow = (t: number): boolean =>
    (win.from === undefined || (fromExclusive ? t > win.from : t >= win.from)) &&
    (win.to === undefined || (toInclusive ? t <= win.to : t < win.to));
  const keep = (i: number): boolean =>
    f.served(i) &&
    (symbol === null || f.def(i).symbol === symbol) &&
    (!f.republished.has(i) || inWindow(f.timestamp[i]!));
  // Their execIds are above every fill in [lo, hi): they follow it.
  const late = [...f.republished].filter((i) => i >= hi && i >= execLo && i < execHi && keep(i)).sort((a, b) => a - b);
  const out: number[] = [];
  if (fromExec !== null) {
    for (let i = lo; i < hi && out.length < win.limit; i++) if (keep(i)) out.push(i);
    for (const i of late) if (out.length < win.limit) out.push(i);
    if (w.opts.fillsOrder === 'newest-first') out.reverse();
  } else {
    for (let k = late.length - 1; k >= 0 && out.length < win.limit; k--) out.push(late[k]!);
    for (let i = hi - 1; i >= lo && out.length < win.limit; i--) if (keep(i)) out.push(i);
  }
  const texts: string[] = new Array<string>(out.length);
  for (let k = 0; k < out.length; k++) texts[k] = fillText(f, out[k]!);
  return json(200, new Raw(`[${texts.join(',')}]`));
}

/** A decimal's JSON text in a style: the text of writeJson(dec(text, style)). */
function decText(text: string, style: Style): string {
  if (style === 'number') return text;
  if (style === 'exponent' && isSmall(text)) return `"${exponentText(text)}"`;
  return `"${text}"`;
}

/**
 * writeJson(fillJson(f.at(i))) without the intermediate record and objects: the ids are digit
 * strings and the decimals plain texts, so they need no escaping. wire.test.ts checks it
 * against the straightforward formatter on every fill of a seed, planted cases and fixes included.
 */
export function fillText(f: FillStore, i: number): string {
  const execId = String(f.execId[i]);
  const exOrdId = String(f.exOrdId[i]);
  const tradeId = String(f.tradeId[i]);
  const s = styleOf(execId);
  const q = s === 'number' ? '' : '"';
  const head = `{"exOrdId":${q}${exOrdId}${q},"tradeId":${q}${tradeId}${q},"execId":${q}${execId}${q},"side":${f.side[i] === 0 ? '"BUY"' : '"SELL"'},"symbol":${JSON.stringify(f.def(i).symbol)},"price":${decText(f.priceText(i), s)},"qty":${decText(f.qtyText(i), s)},"fee":${decText(f.feeText(i), s)},"timestamp":${tsText(f.timestamp[i]!)}`;
  if (hash53(execId, 13) % 5 !== 0) return `${head}}`;
  return `${head},"liquidity":${hash53(execId) % 2 ? '"MAKER"' : '"TAKER"'},"clOrdId":${JSON.stringify(`x${exOrdId.slice(-6)}`)}}`;
}

function tsText(t: number): string {
  if (!Number.isSafeInteger(t)) throw new TypeError(`non-integer JS number ${t} on the wire: use Raw`);
  return String(t);
}

// ---- payments ------------------------------------------------------------------------------

function balanceJson(b: BalanceView): Json {
  const s = styleOf(b.currency, 5);
  const st = s === 'exponent' ? 'string' : s;
  return {
    currency: b.currency,
    balance: dec(b.balance, st),
    available: dec(b.available, st),
    balance_local: dec(b.balance_local, st),
    available_local: dec(b.available_local, st),
    rate: dec(b.rate, st),
  };
}

export function depositJson(w: World, d: DepositRecord): Json {
  const v = w.depositView(d);
  const s = styleOf(d.depositId);
  if (d.malformed) {
    // A record that cannot validate: amount is not a number (the rest of the page is fine).
    return {
      depositId: v.depositId,
      amount: 'NaN.0',
      currency: v.currency,
      address: v.address,
      txHash: v.txHash,
      state: v.state,
      timestamp: v.timestamp,
    };
  }
  return {
    depositId: v.depositId,
    amount: dec(v.amount, s),
    currency: v.currency,
    address: v.address,
    txHash: v.txHash,
    state: v.state,
    timestamp: v.timestamp,
  };
}

function listDeposits(w: World, req: Req): Res {
  const win = windowParams(w, req, Number.MAX_SAFE_INTEGER, Number.MAX_SAFE_INTEGER);
  if ('status' in win) return win;
  const [lo, hi] = timeRange(w, w.deposits, win);
  const out: Json[] = [];
  const cap = w.opts.paymentsAnswerCap ?? Infinity;
  for (let i = hi - 1; i >= lo && out.length < cap; i--)
    if (!w.deposits[i]!.hidden && !w.deposits[i]!.unlisted) out.push(depositJson(w, w.deposits[i]!));
  return json(200, out);
}

export function withdrawalJson(w: World, wd: WithdrawalRecord): Json {
  const v = w.withdrawalView(wd);
  const s = styleOf(wd.withdrawalId);
  return {
    withdrawalId: v.withdrawalId,
    amount: dec(v.amount, s),
    fee: dec(v.fee, s),
    currency: v.currency,
    beneficiary: v.beneficiary,
    state: v.state,
    timestamp: v.timestamp,
  };
}

function listWithdrawals(w: World, req: Req): Res {
  const win = windowParams(w, req, Number.MAX_SAFE_INTEGER, Number.MAX_SAFE_INTEGER);
  if ('status' in win) return win;
  const [lo, hi] = timeRange(w, w.withdrawals, win);
  const out: Json[] = [];
  const cap = w.opts.paymentsAnswerCap ?? Infinity;
  for (let i = hi - 1; i >= lo && out.length < cap; i--) out.push(withdrawalJson(w, w.withdrawals[i]!));
  return json(200, out);
}

const createWithdrawalBody = z
  .object({
    amount: decimalText.optional(),
    currency: z.string(),
    beneficiary: z.string(),
    sendMax: z.boolean().optional(),
  })
  .refine(
    (b) => (b.sendMax ? b.amount === undefined : b.amount !== undefined),
    'give amount, or sendMax without amount',
  );

function createWithdrawal(w: World, req: Req, hooks: ExchangeHooks): Res {
  const parsed = createWithdrawalBody.safeParse(parseBody(req));
  if (!parsed.success)
    return exchangeError(
      req,
      400,
      parsed.error.issues.map((i) => `${i.path.join('.') || 'body'}: ${i.message}`).join('; '),
    );
  const body = parsed.data;
  if (!w.whitelist.some((e) => e.whitelistId === body.beneficiary && e.currency === body.currency))
    return exchangeError(req, 400, `beneficiary ${body.beneficiary} is not whitelisted for ${body.currency}`);
  const fee = new Decimal(w.withdrawalFee(body.currency));
  const balance = w.balances().get(body.currency) ?? new Decimal(0);
  const amount = body.sendMax ? Decimal.max(0, balance.minus(fee)) : new Decimal(body.amount!);
  if (amount.plus(fee).gt(balance)) return exchangeError(req, 400, 'insufficient balance');
  const ts = Math.max(w.clock(), w.generatedUntil);
  const wd: WithdrawalRecord = {
    withdrawalId: `W${w.seq.withdrawal++}`,
    amount: amount.toString(),
    fee: fee.toString(),
    currency: body.currency,
    beneficiary: body.beneficiary,
    timestamp: ts,
    timeline: [
      { state: 'PENDING', atMs: ts },
      { state: 'COMPLETED', atMs: ts + 600_000 },
    ],
  };
  w.addWithdrawal(wd);
  w.generatedUntil = ts;
  hooks.onChange?.();
  return json(200, withdrawalJson(w, wd));
}
