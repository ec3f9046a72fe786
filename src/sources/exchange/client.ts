/** HTTP client of the Exchange API: one method per endpoint, bodies read losslessly. */
import type { Config } from '../../config/load.js';
import { apiVariablesText, sourceVariables } from '../../config/variables.js';
import type { Logger } from '../../log/logger.js';
import { rateBudgets, sharedLimiter } from '../../http/rate-groups.js';
import { createHttpClient, type HttpClient, type HttpResponse, type QueryValue } from '../../http/client.js';
import type { RequestMeter } from '../../http/meter.js';
import { AppError } from '../../errors.js';
import type { Page } from '../common/page.js';
import { parseJsonMarked, parseJsonMarkedExact } from './wire.js';

/** The contract's limits (docs/apis.md "Exchange API"). */
export const FILLS_PAGE_LIMIT = 1000;
/**
 * What /orders and /trades pages ask for: the operator's published spec allows 1..1000, the
 * contract says at most 100. The page a server really returns is learned (WindowStream.cap), and
 * the contract's 100 is the floor of its cap: a server answers at least 100 when asked for more.
 */
export const ORDERS_PAGE_LIMIT = 1000;
export const ORDERS_CONTRACT_LIMIT = 100;

export const AUTH_HEADER = 'X-API-Token';

/** A list endpoint answered something other than a JSON array (or object where one is due). */
export class ExchangeShapeError extends AppError {
  constructor(
    readonly endpoint: string,
    readonly expected: string,
    readonly bodyExcerpt: string,
  ) {
    super(
      'EXCHANGE_SHAPE',
      `Exchange API ${endpoint} answered ${bodyExcerpt.slice(0, 120)} where ${expected} was expected`,
    );
  }
}

export interface FillsQuery {
  fromExecId?: string;
  toExecId?: string;
  from?: number;
  to?: number;
  limit: number;
}

export interface WindowQuery {
  /** Without from and to: the whole list (the open orders of a status). */
  from?: number;
  to?: number;
  status?: string;
  symbol?: string;
  limit?: number;
}

/**
 * Typed calls of the Exchange API over the shared HTTP client. Bodies are read with
 * parseJsonMarked (numbers kept as exact text, see wire.ts). Each returns the response's
 * records unvalidated: validation is per record (schemas.ts), so one bad record never costs
 * its page.
 */
export interface ExchangeClient {
  fills(q: FillsQuery, signal?: AbortSignal): Promise<Page>;
  orders(q: WindowQuery, signal?: AbortSignal): Promise<Page>;
  trades(q: WindowQuery, signal?: AbortSignal): Promise<Page>;
  deposits(q: WindowQuery, signal?: AbortSignal): Promise<Page>;
  withdrawals(q: WindowQuery, signal?: AbortSignal): Promise<Page>;
  /** null on 404. */
  orderById(id: string, signal?: AbortSignal): Promise<Page | null>;
  depositById(id: string, signal?: AbortSignal): Promise<Page | null>;
  withdrawalById(id: string, signal?: AbortSignal): Promise<Page | null>;
  accounts(signal?: AbortSignal): Promise<HttpResponse>;
  fees(signal?: AbortSignal): Promise<HttpResponse>;
  symbols(signal?: AbortSignal): Promise<HttpResponse>;
  whitelist(signal?: AbortSignal): Promise<HttpResponse>;
  tickers(signal?: AbortSignal): Promise<HttpResponse>;
  readonly http: HttpClient;
  close(): Promise<void>;
}

export function createExchangeClient(http: HttpClient): ExchangeClient {
  async function list(
    path: string,
    query: Record<string, QueryValue>,
    signal?: AbortSignal,
    parse: (text: string) => unknown = parseJsonMarked,
  ): Promise<Page> {
    const response = await http.get(path, { query, signal, parse });
    if (!Array.isArray(response.body)) throw new ExchangeShapeError(`GET ${path}`, 'a JSON array', response.text);
    return { endpoint: `GET ${path}`, records: response.body, response };
  }
  async function byId(path: string, signal?: AbortSignal): Promise<Page | null> {
    const template = path.replace(/\/[^/]+$/, '/{id}');
    const response = await http.get(path, { signal, allowStatus: [404], parse: parseJsonMarked, endpoint: template });
    if (response.status === 404) return null;
    if (!response.body || typeof response.body !== 'object' || Array.isArray(response.body))
      throw new ExchangeShapeError(`GET ${path}`, 'a JSON object', response.text);
    return { endpoint: `GET ${template}`, records: [response.body], response };
  }
  const window = (q: WindowQuery) => ({ from: q.from, to: q.to, status: q.status, symbol: q.symbol, limit: q.limit });
  return {
    http,
    // Fills pages keep their raw records in the page text (stored from it by position). A repeated key is refused
    // with another value, as the lossless parser refuses it, where parseJsonMarked would keep the last one silently.
    fills: (q, signal) =>
      list(
        '/fills',
        { fromExecId: q.fromExecId, toExecId: q.toExecId, from: q.from, to: q.to, limit: q.limit },
        signal,
        parseJsonMarkedExact,
      ),
    orders: (q, signal) => list('/orders', window(q), signal),
    trades: (q, signal) => list('/trades', window(q), signal),
    deposits: (q, signal) => list('/deposits', { from: q.from, to: q.to }, signal),
    withdrawals: (q, signal) => list('/withdrawals', { from: q.from, to: q.to }, signal),
    orderById: (id, signal) => byId(`/orders/${encodeURIComponent(id)}`, signal),
    depositById: (id, signal) => byId(`/deposits/${encodeURIComponent(id)}`, signal),
    withdrawalById: (id, signal) => byId(`/withdrawals/${encodeURIComponent(id)}`, signal),
    accounts: (signal) => http.get('/accounts', { signal, parse: parseJsonMarked }),
    fees: (signal) => http.get('/fees', { signal, parse: parseJsonMarked }),
    symbols: (signal) => http.get('/symbols', { signal, parse: parseJsonMarked }),
    whitelist: (signal) => http.get('/whitelist', { signal, parse: parseJsonMarked }),
    tickers: (signal) => http.get('/tickers', { signal, parse: parseJsonMarked }),
    close: () => http.close(),
  };
}

/** The client the sync uses, built from the config. */
export function exchangeClientFromConfig(
  config: Config,
  logger: Logger,
  overrides: { sleep?: (ms: number, signal?: AbortSignal) => Promise<void>; meter?: RequestMeter } = {},
): ExchangeClient {
  const variables = sourceVariables(config);
  if (!config.exchange.apiUrl || !config.exchange.token) {
    throw new AppError(
      'EXCHANGE_NOT_CONFIGURED',
      `${apiVariablesText(variables, 'exchange')} are required to sync the Exchange API`,
      2,
    );
  }
  return createExchangeClient(
    createHttpClient({
      api: 'exchange',
      baseUrl: config.exchange.apiUrl,
      headers: { [AUTH_HEADER]: config.exchange.token },
      authHeaders: [{ header: AUTH_HEADER, variable: variables.exchange.token }],
      urlVariable: variables.exchange.url,
      rateLimitPerSecond: config.exchange.rateLimitPerSecond,
      // the accounts of one exchange login (rate group) share its budget
      ...(config.multiAccount
        ? {
            limiter: sharedLimiter(rateBudgets(config.rateGroup).exchange, config.exchange.rateLimitPerSecond),
          }
        : {}),
      ...config.http,
      logger,
      sleep: overrides.sleep,
      meter: overrides.meter,
    }),
  );
}
