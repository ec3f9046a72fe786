/** Simulator: the Partner API routes, both keys required on private calls. */
import { Decimal } from '../src/decimal/decimal.js';
import { COUNTRIES, US_STATES, USD_RATES } from './catalog.js';
import { header, intParam, json, type Req, type Res } from './http.js';
import type { PartnerOrderRecord, PartnerOrderView } from './model.js';
import { hash53 } from './prng.js';
import { Raw, type Json } from './wire.js';
import { lowerBound, upperBound, type World } from './world.js';

export const PARTNER_PREFIX = '/partner-gateway/partner-api/v1';
const MAX_LIMIT = 50;
const DAY = /^\d{4}-\d{2}-\d{2}$/;

function error(status: number, type: string, message: string): Res {
  return json(status, { errors: [{ type, message }] });
}

/** Private calls (orders by list or id) need both keys; every other call is public. */
export function isPrivatePartnerPath(path: string): boolean {
  return path === '/orders' || path.startsWith('/orders/');
}

/**
 * Partner API: eligibility and quote with the public key; orders with the public and the private
 * key together, as the operator's authentication page has it (the real service refuses a private
 * call that carries the private key alone).
 */
export function handlePartner(
  w: World,
  req: Req,
  hooks: { onOrdersPage?: (info: { query: URLSearchParams; count: number }) => void },
): Res {
  if (req.method !== 'GET') return error(405, 'METHOD_NOT_ALLOWED', `${req.method} is not supported`);
  const authFailure = checkAuth(w, req, isPrivatePartnerPath(req.path) ? 'private' : 'public');
  if (authFailure) return authFailure;
  if (req.path === '/currencies') return currencies(w);
  if (req.path === '/regions') return regions(req);
  if (req.path === '/payment-methods') return json(200, [{ type: 'CARD', supportedCurrencies: w.opts.fiatCurrencies }]);
  if (req.path === '/quote/buy') return quote(w, req);
  if (req.path === '/orders') {
    const res = listOrders(w, req);
    hooks.onOrdersPage?.({ query: req.query, count: res.count });
    return res.res;
  }
  const m = /^\/orders\/([^/]+)$/.exec(req.path);
  if (m) {
    const o = w.partnerById.get(decodeURIComponent(m[1]!));
    if (!o || o.createdAtMs > w.clock()) return error(404, 'ORDER_NOT_FOUND', 'order not found');
    return json(200, orderJson(w.partnerView(o)));
  }
  return error(404, 'NOT_FOUND', `no such endpoint: ${req.path}`);
}

function checkAuth(w: World, req: Req, need: 'public' | 'private'): Res | undefined {
  const status = w.opts.authFailureStatus;
  const publicKey = header(req, 'x-public-api-key');
  if (publicKey === undefined)
    return error(
      status,
      'UNAUTHORIZED',
      need === 'public'
        ? 'missing X-Public-API-Key header'
        : 'orders require the X-Public-API-Key and X-Private-API-Key headers; X-Public-API-Key is missing',
    );
  if (publicKey !== w.opts.partnerPublicKey) return error(status, 'UNAUTHORIZED', 'invalid X-Public-API-Key');
  if (need === 'public') return undefined;
  const privateKey = header(req, 'x-private-api-key');
  if (privateKey === undefined)
    return error(
      status,
      'UNAUTHORIZED',
      'orders require the X-Public-API-Key and X-Private-API-Key headers; X-Private-API-Key is missing',
    );
  if (privateKey !== w.opts.partnerPrivateKey) return error(status, 'UNAUTHORIZED', 'invalid X-Private-API-Key');
  return undefined;
}

function currencyJson(c: World['partnerCurrencies'][number]): Json {
  if (c.type === 'FIAT') {
    return {
      type: c.type,
      name: c.name,
      code: c.code,
      precision: c.precision,
      minBuyAmount: new Raw(c.minBuyAmount!),
      maxBuyAmount: new Raw(c.maxBuyAmount!),
    };
  }
  return {
    type: c.type,
    name: c.name,
    code: c.code,
    precision: c.precision,
    network: c.network,
    supportsDestinationTag: c.supportsDestinationTag,
    isSupportedInUS: c.isSupportedInUS,
    allowedUSStates: c.allowedUSStates,
  };
}

function currencies(w: World): Res {
  const list = w.partnerCurrencies.map(currencyJson);
  // The contract's sample wraps the objects in one extra array level.
  return json(200, w.opts.currenciesWrapped ? [list] : list);
}

function regions(req: Req): Res {
  const v = req.query.get('onlyBuyAllowed');
  if (v !== null && v !== 'true' && v !== 'false')
    return error(400, 'INVALID_PARAMETER', 'onlyBuyAllowed must be true or false');
  const only = v !== 'false';
  return json(200, {
    countries: COUNTRIES.filter((c) => !only || c.isBuyAllowed),
    usStates: US_STATES.filter((s) => !only || s.isBuyAllowed),
  });
}

function quote(w: World, req: Req): Res {
  const q = req.query;
  const quoteCode = q.get('quoteCurrencyCode');
  const baseCode = q.get('baseCurrencyCode');
  const amountText = q.get('quoteCurrencyAmount');
  if (!quoteCode || !baseCode || !amountText)
    return error(400, 'INVALID_PARAMETER', 'quoteCurrencyCode, baseCurrencyCode and quoteCurrencyAmount are required');
  const fiat = w.partnerCurrencies.find((c) => c.code === quoteCode);
  const crypto = w.partnerCurrencies.find((c) => c.code === baseCode);
  if (!fiat || fiat.type !== 'FIAT')
    return error(400, 'INVALID_PARAMETER', `quoteCurrencyCode ${quoteCode} is not an enabled fiat currency`);
  if (!crypto || crypto.type !== 'CRYPTO')
    return error(400, 'INVALID_PARAMETER', `baseCurrencyCode ${baseCode} is not an enabled crypto currency`);
  if (!/^\d+(\.\d+)?$/.test(amountText))
    return error(400, 'INVALID_PARAMETER', 'quoteCurrencyAmount must be a positive decimal');
  const amount = new Decimal(amountText);
  if (amount.lte(0)) return error(400, 'INVALID_PARAMETER', 'quoteCurrencyAmount must be positive');
  if (amount.decimalPlaces() > fiat.precision)
    return error(400, 'INVALID_PARAMETER', `quoteCurrencyAmount has more than ${fiat.precision} decimals`);
  if (amount.lt(fiat.minBuyAmount!) || amount.gt(fiat.maxBuyAmount!))
    return error(
      400,
      'AMOUNT_OUT_OF_RANGE',
      `quoteCurrencyAmount must be between ${fiat.minBuyAmount} and ${fiat.maxBuyAmount}`,
    );
  const cc = q.get('countryCode');
  if (cc !== null && !/^[A-Z]{2}$/.test(cc))
    return error(400, 'INVALID_PARAMETER', 'countryCode must be exactly 2 letters');
  const pm = q.get('paymentMethod') ?? 'CARD';
  const processing = amount
    .times(pm === 'CARD' ? '0.0299' : '0.0249')
    .toDecimalPlaces(fiat.precision, Decimal.ROUND_HALF_UP);
  const partner = amount.times(w.opts.partnerFeeRate).toDecimalPlaces(fiat.precision, Decimal.ROUND_HALF_UP);
  const network = new Decimal('1.50');
  const price = new Decimal(USD_RATES[crypto.code]!)
    .times('1.004')
    .div(USD_RATES[fiat.code]!)
    .toDecimalPlaces(fiat.precision, Decimal.ROUND_HALF_UP);
  const net = amount.minus(processing).minus(partner).minus(network);
  const base = Decimal.max(0, net).div(price).toDecimalPlaces(crypto.precision, Decimal.ROUND_DOWN);
  return json(200, {
    quoteCurrencyAmount: amount.toFixed(fiat.precision),
    quoteCurrencyCode: fiat.code,
    quoteCurrency: [currencyJson(fiat)],
    baseCurrencyAmount: base.toFixed(crypto.precision),
    baseCurrencyCode: crypto.code,
    baseCurrency: [currencyJson(crypto)],
    price: price.toFixed(fiat.precision),
    processingFeeAmount: processing.toFixed(fiat.precision),
    partnerFeeAmount: partner.toFixed(fiat.precision),
    networkFeeAmount: network.toFixed(fiat.precision),
    totalAmount: amount.toFixed(fiat.precision),
    paymentMethod: pm,
  });
}

/**
 * List orders: newest first by createdAt; filters by externalReference (all matches, no
 * limit), walletAddress, output currency and creation day [from, to); limit (max 50) and offset.
 */
function listOrders(w: World, req: Req): { res: Res; count: number } {
  const q = req.query;
  const names = w.opts.partnerParams;
  const limitRaw = intParam(q, 'limit');
  const offset = intParam(q, names.offset) ?? 0;
  const fromDay = q.get(names.from);
  const toDay = q.get(names.to);
  const bad = (m: string): { res: Res; count: number } => ({ res: error(400, 'INVALID_PARAMETER', m), count: 0 });
  if (limitRaw !== undefined && (Number.isNaN(limitRaw) || limitRaw < 1))
    return bad('limit must be a positive integer');
  if (limitRaw !== undefined && limitRaw > MAX_LIMIT && w.opts.limitOverMax === 'error')
    return bad(`limit must be at most ${MAX_LIMIT}`);
  if (Number.isNaN(offset) || offset < 0) return bad(`${names.offset} must be a non-negative integer`);
  if (fromDay !== null && !DAY.test(fromDay)) return bad(`${names.from} must be a date YYYY-MM-DD`);
  if (toDay !== null && !DAY.test(toDay)) return bad(`${names.to} must be a date YYYY-MM-DD`);
  const limit = Math.min(limitRaw ?? MAX_LIMIT, MAX_LIMIT);
  const extRef = q.get('externalReference');
  const wallet = q.get('walletAddress');
  const outCur = q.get(names.outputCurrency);
  const clock = w.clock();
  const toInclusive = w.opts.partnerToBound === 'inclusive';
  const match = (o: PartnerOrderRecord): boolean => {
    if (o.createdAtMs > clock) return false;
    if (extRef !== null && o.externalReference !== extRef) return false;
    if (wallet !== null && o.targetWalletAddress !== wallet) return false;
    if (outCur !== null && o.outputCurrency !== outCur) return false;
    const day = o.createdAt.slice(0, 10);
    if (fromDay !== null && day < fromDay) return false;
    if (toDay !== null && (toInclusive ? day > toDay : day >= toDay)) return false;
    return true;
  };
  const out: PartnerOrderView[] = [];
  const take = extRef !== null ? Number.POSITIVE_INFINITY : limit;
  const skip = extRef !== null ? 0 : offset;
  const list = w.partnerOrders;
  // The list is sorted by creation time: the clock and a day filter bound the scan by binary search,
  // so a page costs its own orders, not a walk over every newer order (a real API answers from an index).
  let end = upperBound(list, clock, (o) => o.createdAtMs);
  if (toDay !== null)
    end = Math.min(end, toInclusive ? upperBound(list, toDay, dayOf) : lowerBound(list, toDay, dayOf));
  const start = fromDay !== null ? lowerBound(list, fromDay, dayOf) : 0;
  // With no other filter every order in [start, end) matches: the offset is a jump.
  const contiguous = extRef === null && wallet === null && outCur === null;
  let skipped = contiguous ? skip : 0;
  for (let i = end - 1 - skipped; i >= start && out.length < take; i--) {
    const o = list[i]!;
    if (!match(o)) continue;
    if (skipped < skip) {
      skipped++;
      continue;
    }
    out.push(w.partnerView(o, clock));
  }
  return { res: json(200, out.map(orderJson)), count: out.length };
}

const dayOf = (o: PartnerOrderRecord): string => o.createdAt.slice(0, 10);

/** Amounts are decimal strings in the samples and numbers in the event schema: both appear. */
export function orderJson(v: PartnerOrderView): Json {
  const asNumber = hash53(v.orderId, 3) % 5 === 0;
  const amt = (s: string | undefined): Json => (s === undefined ? undefined : asNumber ? new Raw(s) : s);
  return {
    orderId: v.orderId,
    externalReference: v.externalReference,
    subPartnerId: v.subPartnerId,
    orderType: v.orderType,
    createdAt: v.createdAt,
    orderState: v.orderState,
    orderStateUpdatedAt: v.orderStateUpdatedAt,
    paymentMethod: v.paymentMethod,
    inputCurrency: v.inputCurrency,
    inputAmount: amt(v.inputAmount),
    outputCurrency: v.outputCurrency,
    outputAmount: amt(v.outputAmount),
    amountUsd: amt(v.amountUsd),
    processingFee: amt(v.processingFee),
    processingFeeUsd: amt(v.processingFeeUsd),
    partnerFee: amt(v.partnerFee),
    partnerFeeUsd: amt(v.partnerFeeUsd),
    networkFee: amt(v.networkFee),
    networkFeeUsd: amt(v.networkFeeUsd),
    userId: v.userId,
    targetWalletAddress: v.targetWalletAddress,
    transactionHash: v.transactionHash,
  };
}
