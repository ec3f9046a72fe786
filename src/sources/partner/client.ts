/** HTTP client of the Partner API: public-key and private-key calls, each paced at its own rate limit. */
import type { Config } from '../../config/load.js';
import { apiVariablesText, sourceVariables } from '../../config/variables.js';
import type { Logger } from '../../log/logger.js';
import { rateBudgets, sharedLimiter } from '../../http/rate-groups.js';
import { createHttpClient, type HttpClient, type HttpResponse, type QueryValue } from '../../http/client.js';
import type { RequestMeter } from '../../http/meter.js';
import { AppError, ConfigError } from '../../errors.js';
import type { Page } from '../common/page.js';

/** Paths of the Partner API are appended to PARTNER_API_URL (docs/apis.md). */
export const PARTNER_PREFIX = '/partner-gateway/partner-api/v1';
export const PUBLIC_KEY_HEADER = 'X-Public-API-Key';
export const PRIVATE_KEY_HEADER = 'X-Private-API-Key';
/** Orders per list call: the contract's default and maximum. */
export const ORDERS_PAGE_LIMIT = 50;

/**
 * An order listing answered something other than a JSON array. The sync quarantines the body whole
 * and ends that listing (sync-listing.ts), so the response travels with the error.
 */
export class PartnerShapeError extends AppError {
  constructor(
    readonly endpoint: string,
    readonly response: HttpResponse,
  ) {
    super(
      'PARTNER_SHAPE',
      `Partner API ${endpoint} answered ${response.text.slice(0, 120)} where a JSON array was expected`,
    );
  }
}

/**
 * The Partner API's two HTTP clients: its rate limits are per class of call. Eligibility and quotes
 * take the public key; orders take the public and the private key together (docs/apis.md "Partner
 * API", facts from the operator's public documentation).
 */
export interface PartnerHttp {
  /** Public-key calls: currencies, regions, payment methods, quotes. */
  public: HttpClient;
  /** Private calls, with both keys: orders. */
  private: HttpClient;
}

/**
 * Typed calls of the Partner API over its HTTP clients, bodies read with the lossless JSON parser.
 * Orders come as pages (common/page.ts) of unvalidated records, as the exchange's listings do;
 * reference data and quotes as the response, validated whole by their step. Tests inject their
 * own implementation.
 */
export interface PartnerClient {
  currencies(signal?: AbortSignal): Promise<HttpResponse>;
  regions(signal?: AbortSignal): Promise<HttpResponse>;
  paymentMethods(signal?: AbortSignal): Promise<HttpResponse>;
  quoteBuy(query: Record<string, QueryValue>, signal?: AbortSignal): Promise<HttpResponse>;
  /** PartnerShapeError when the body is not a JSON array. */
  listOrders(query: Record<string, QueryValue>, signal?: AbortSignal): Promise<Page>;
  /** null on 404 (not thrown: a refresh records it); any other body is the page's one record. */
  getOrder(orderId: string, signal?: AbortSignal): Promise<Page | null>;
  close(): Promise<void>;
}

/** The page of an order listing's response (for the client and for the tests' fake clients). */
export function ordersPage(response: HttpResponse): Page {
  const endpoint = 'GET /orders';
  if (!Array.isArray(response.body)) throw new PartnerShapeError(endpoint, response);
  return { endpoint, records: response.body, response };
}

/** The page of an order asked by id, null on 404 (for the client and for the tests' fake clients). */
export function orderPage(response: HttpResponse): Page | null {
  if (response.status === 404) return null;
  return { endpoint: 'GET /orders/{id}', records: [response.body], response };
}

export function createPartnerClient(http: PartnerHttp): PartnerClient {
  return {
    currencies: (signal) => http.public.get('/currencies', { signal }),
    regions: (signal) => http.public.get('/regions', { query: { onlyBuyAllowed: 'false' }, signal }),
    paymentMethods: (signal) => http.public.get('/payment-methods', { signal }),
    quoteBuy: (query, signal) => http.public.get('/quote/buy', { query, signal }),
    listOrders: async (query, signal) => ordersPage(await http.private.get('/orders', { query, signal })),
    getOrder: async (orderId, signal) =>
      orderPage(
        await http.private.get(`/orders/${encodeURIComponent(orderId)}`, {
          signal,
          allowStatus: [404],
          endpoint: '/orders/{id}',
        }),
      ),
    async close() {
      await Promise.all([http.public.close(), http.private.close()]);
    },
  };
}

/** The client the sync uses, built from the config. */
export function partnerClientFromConfig(
  config: Config,
  logger: Logger,
  overrides: { sleep?: (ms: number, signal?: AbortSignal) => Promise<void>; meter?: RequestMeter } = {},
): PartnerClient {
  const { apiUrl, publicKey, privateKey } = config.partner;
  const variables = sourceVariables(config);
  if (!apiUrl || !publicKey || !privateKey)
    throw new ConfigError([
      `environment variables ${apiVariablesText(variables, 'partner')}: required to sync the Partner API`,
    ]);
  const publicHeader = { header: PUBLIC_KEY_HEADER, variable: variables.partner.publicKey };
  const privateHeader = { header: PRIVATE_KEY_HEADER, variable: variables.partner.privateKey };
  const common = {
    api: 'partner' as const,
    baseUrl: `${apiUrl}${PARTNER_PREFIX}`,
    connectTimeoutMs: config.http.connectTimeoutMs,
    bodyTimeoutMs: config.http.bodyTimeoutMs,
    maxResponseBytes: config.http.maxResponseBytes,
    maxRetries: config.http.maxRetries,
    retryBaseMs: config.http.retryBaseMs,
    retryMaxMs: config.http.retryMaxMs,
    urlVariable: variables.partner.url,
    logger: logger.child({ api: 'partner' }),
    sleep: overrides.sleep,
    meter: overrides.meter,
  };
  // The operator's published limits are per class of call: public-key calls 10/s per IP address,
  // private calls 100/s per organisation. Each client paces itself at its own class's limit; the
  // accounts of a multi-account config share the budgets of their rate group (and of the process's IP).
  const budgets = config.multiAccount ? rateBudgets(config.rateGroup) : null;
  return createPartnerClient({
    public: createHttpClient({
      ...common,
      rateLimitPerSecond: config.partner.publicRateLimitPerSecond,
      ...(budgets ? { limiter: sharedLimiter(budgets.partnerPublic, config.partner.publicRateLimitPerSecond) } : {}),
      headers: { [PUBLIC_KEY_HEADER]: publicKey },
      authHeaders: [publicHeader],
    }),
    // Private calls carry both keys: the real service refuses the private key alone with 401. A
    // 401/403 then names both headers (never their values).
    private: createHttpClient({
      ...common,
      rateLimitPerSecond: config.partner.privateRateLimitPerSecond,
      ...(budgets ? { limiter: sharedLimiter(budgets.partnerPrivate, config.partner.privateRateLimitPerSecond) } : {}),
      headers: { [PUBLIC_KEY_HEADER]: publicKey, [PRIVATE_KEY_HEADER]: privateKey },
      authHeaders: [publicHeader, privateHeader],
    }),
  });
}
