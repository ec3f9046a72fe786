/** HTTP client of the Partner API: public-key and private-key calls, each paced at its own rate limit. */
import type { Config } from '../../config/load.js';
import type { Logger } from '../../log/logger.js';
import { createHttpClient, type HttpClient, type HttpResponse, type QueryValue } from '../../http/client.js';
import type { RequestMeter } from '../../http/meter.js';
import { ConfigError } from '../../errors.js';

/** Paths of the Partner API are appended to PARTNER_API_URL (docs/apis.md). */
export const PARTNER_PREFIX = '/partner-gateway/partner-api/v1';
export const PUBLIC_KEY_HEADER = 'X-Public-API-Key';
export const PRIVATE_KEY_HEADER = 'X-Private-API-Key';
/** Orders per list call: the contract's default and maximum. */
export const ORDERS_PAGE_LIMIT = 50;

export interface GetOptions {
  query?: Record<string, QueryValue>;
  signal?: AbortSignal;
  allowStatus?: number[];
}

/**
 * The Partner API's HTTP client as the sync uses it. Eligibility and quotes take the public key; orders take
 * the public and the private key together (docs/apis.md "Partner API", facts from the operator's public
 * documentation"). Tests inject their own implementation.
 */
export interface PartnerClient {
  currencies(signal?: AbortSignal): Promise<HttpResponse>;
  regions(signal?: AbortSignal): Promise<HttpResponse>;
  paymentMethods(signal?: AbortSignal): Promise<HttpResponse>;
  quoteBuy(query: Record<string, QueryValue>, signal?: AbortSignal): Promise<HttpResponse>;
  listOrders(query: Record<string, QueryValue>, signal?: AbortSignal): Promise<HttpResponse>;
  /** 404 is returned (not thrown): a refresh records it. */
  getOrder(orderId: string, signal?: AbortSignal): Promise<HttpResponse>;
  close(): Promise<void>;
}

export function createPartnerClient(
  config: Config,
  logger: Logger,
  overrides: { sleep?: (ms: number, signal?: AbortSignal) => Promise<void>; meter?: RequestMeter } = {},
): PartnerClient {
  const { apiUrl, publicKey, privateKey } = config.partner;
  if (!apiUrl || !publicKey || !privateKey)
    throw new ConfigError([
      'environment variables PARTNER_API_URL, PARTNER_PUBLIC_KEY and PARTNER_PRIVATE_KEY: required to sync the ' +
        'Partner API',
    ]);
  const common = {
    api: 'partner' as const,
    baseUrl: `${apiUrl}${PARTNER_PREFIX}`,
    connectTimeoutMs: config.http.connectTimeoutMs,
    bodyTimeoutMs: config.http.bodyTimeoutMs,
    maxRetries: config.http.maxRetries,
    retryBaseMs: config.http.retryBaseMs,
    retryMaxMs: config.http.retryMaxMs,
    logger: logger.child({ api: 'partner' }),
    sleep: overrides.sleep,
    meter: overrides.meter,
  };
  // The operator's published limits are per class of call: public-key calls 10/s per IP address,
  // private calls 100/s per organisation. Each client paces itself at its own class's limit.
  const pub: HttpClient = createHttpClient({
    ...common,
    rateLimitPerSecond: config.partner.publicRateLimitPerSecond,
    headers: { [PUBLIC_KEY_HEADER]: publicKey },
    authHeaders: [PUBLIC_KEY_HEADER],
  });
  // Private calls carry both keys: the real service refuses the private key alone with 401. A
  // 401/403 then names both headers (never their values).
  const priv: HttpClient = createHttpClient({
    ...common,
    rateLimitPerSecond: config.partner.privateRateLimitPerSecond,
    headers: { [PUBLIC_KEY_HEADER]: publicKey, [PRIVATE_KEY_HEADER]: privateKey },
    authHeaders: [PUBLIC_KEY_HEADER, PRIVATE_KEY_HEADER],
  });
  return {
    currencies: (signal) => pub.get('/currencies', { signal }),
    regions: (signal) => pub.get('/regions', { query: { onlyBuyAllowed: 'false' }, signal }),
    paymentMethods: (signal) => pub.get('/payment-methods', { signal }),
    quoteBuy: (query, signal) => pub.get('/quote/buy', { query, signal }),
    listOrders: (query, signal) => priv.get('/orders', { query, signal }),
    getOrder: (orderId, signal) =>
      priv.get(`/orders/${encodeURIComponent(orderId)}`, { signal, allowStatus: [404], endpoint: '/orders/{id}' }),
    async close() {
      await Promise.all([pub.close(), priv.close()]);
    },
  };
}
