/** The HTTP client of both APIs: timeouts, retries with backoff, rate limits, lossless JSON. */
import { setTimeout as delay } from 'node:timers/promises';
import { Pool } from 'undici';
import type { Logger } from '../log/logger.js';
import { parseJsonLossless, stringifyJsonLossless } from '../decimal/json.js';
import {
  API_LABEL,
  HttpAuthError,
  HttpNetworkError,
  HttpStatusError,
  HttpTimeoutError,
  InvalidBodyError,
  ResponseTooLargeError,
  type ApiName,
  type AuthHeader,
} from './errors.js';
import { endpointName, type RequestMeter } from './meter.js';

export * from './errors.js';

export interface HttpClientOptions {
  api: ApiName;
  /** Base URL including its path prefix (e.g. http://host/v3/exchange); request paths are appended. */
  baseUrl: string;
  /** Headers sent on every request (auth headers included). Never logged. */
  headers: Record<string, string>;
  /**
   * The auth headers, each with the environment variable that holds its value, so a 401/403 names the header refused
   * and the variable to check (never a value): the account's own (BETA_EXCHANGE_API_TOKEN for account beta).
   */
  authHeaders: readonly AuthHeader[];
  /**
   * The environment variable that says where this API is, as the account reads it, for a request that got no
   * answer.
   */
  urlVariable: string;
  rateLimitPerSecond: number;
  connectTimeoutMs: number;
  /** Limit for the headers to arrive and for each gap between body chunks. */
  bodyTimeoutMs: number;
  maxRetries: number;
  /** A body over this many bytes is an error naming the endpoint (default 64 MiB). */
  maxResponseBytes?: number;
  retryBaseMs: number;
  retryMaxMs: number;
  logger: Logger;
  /** Injected in tests; receives the abort signal when there is one. */
  sleep?: (ms: number, signal?: AbortSignal) => Promise<void>;
  /** Keep-alive connections to the origin. */
  connections?: number;
  /** Source of jitter, injectable for deterministic tests; returns [0, 1). */
  random?: () => number;
  /**
   * A limiter shared with other clients of the same API (e.g. the partner's public-key and
   * private-key clients, whose limit is per IP): createRateLimiter(perSecond, sleep). Default: a
   * limiter of this client's own at rateLimitPerSecond.
   */
  limiter?: RateLimiter;
  /** Counts every attempt per endpoint at rateLimitPerSecond (the run's meter). */
  meter?: RequestMeter;
}

export type RateLimiter = (signal?: AbortSignal) => Promise<void>;

export type QueryValue = string | number | bigint | boolean | null | undefined;

export interface RequestOptions {
  query?: Record<string, QueryValue>;
  headers?: Record<string, string>;
  signal?: AbortSignal;
  /** Non-2xx statuses returned to the caller instead of thrown (e.g. [404] for a lookup by id). */
  allowStatus?: number[];
  /**
   * Parser of a 2xx body instead of the lossless JSON parser (a faster one for bulk pages). It
   * must throw on text that is not JSON, which is then retried like a transport fault.
   */
  parse?: (text: string) => unknown;
  /**
   * The path template the request meter counts this request under when the path holds an id
   * (e.g. '/orders/{id}'); default: the path itself.
   */
  endpoint?: string;
}

export interface PostOptions extends RequestOptions {
  /** Serialized with the lossless JSON writer. */
  body?: unknown;
}

export interface HttpResponse {
  status: number;
  /** Lossless-parsed JSON (numbers are LosslessNumber, or what options.parse returns); null for an empty body. */
  body: unknown;
  text: string;
  url: string;
  /** Wall time of the successful attempt. */
  ms: number;
  attempts: number;
}

export interface HttpStats {
  requests: number;
  retries: number;
}

export interface HttpClient {
  readonly api: ApiName;
  get(path: string, options?: RequestOptions): Promise<HttpResponse>;
  post(path: string, options?: PostOptions): Promise<HttpResponse>;
  /** Attempts made so far (every retry counts as a request). */
  stats(): HttpStats;
  close(): Promise<void>;
}

/** Error codes of undici (and the OS) that mean "the answer did not come in time". */
const TIMEOUT_CODES = new Set([
  'UND_ERR_CONNECT_TIMEOUT',
  'UND_ERR_HEADERS_TIMEOUT',
  'UND_ERR_BODY_TIMEOUT',
  'ETIMEDOUT',
]);
/** Retry-After can ask for a long pause; beyond this the run is better failed and re-run. */
const MAX_RETRY_AFTER_MS = 10 * 60_000;

type Attempt =
  | { kind: 'ok'; response: HttpResponse }
  | { kind: 'retry'; reason: string; retryAfterMs?: number; fail: () => Error }
  | { kind: 'fail'; error: Error };

/** What one client's requests share: the options it was made with, its connections, limiter and counters. */
interface Client {
  options: HttpClientOptions;
  pool: Pool;
  /** The base URL's path prefix, without a trailing slash. */
  basePath: string;
  /** Scheme, host and port of the API, for errors: what was tried, never a credential or a query. */
  origin: string;
  sleep: (ms: number, signal?: AbortSignal) => Promise<void>;
  random: () => number;
  maxResponseBytes: number;
  limiter: RateLimiter;
  stats: HttpStats;
}

/** One request as sent on every attempt. */
interface Call {
  method: 'GET' | 'POST';
  /** The path with the base prefix and the query, as sent. */
  fullPath: string;
  /** The request's own path without its query: what errors and retry warnings name. */
  path: string;
  headers: Record<string, string>;
  body: string | undefined;
  req: RequestOptions;
}

export function createHttpClient(options: HttpClientOptions): HttpClient {
  const base = new URL(options.baseUrl);
  const sleep = options.sleep ?? ((ms: number, signal?: AbortSignal) => delay(ms, undefined, { signal }));
  const client: Client = {
    options,
    pool: new Pool(base.origin, {
      connections: options.connections ?? 4,
      connect: { timeout: options.connectTimeoutMs },
      headersTimeout: options.bodyTimeoutMs,
      bodyTimeout: options.bodyTimeoutMs,
      keepAliveTimeout: 10_000,
    }),
    basePath: base.pathname.replace(/\/+$/, ''),
    origin: base.origin,
    sleep,
    random: options.random ?? Math.random,
    maxResponseBytes: options.maxResponseBytes ?? DEFAULT_MAX_RESPONSE_BYTES,
    limiter: options.limiter ?? createRateLimiter(options.rateLimitPerSecond, sleep),
    stats: { requests: 0, retries: 0 },
  };
  return {
    api: options.api,
    get: (path, req) => request(client, 'GET', path, req),
    post: (path, req) => request(client, 'POST', path, req),
    stats: () => ({ ...client.stats }),
    async close() {
      await client.pool.close();
    },
  };
}

/** Sends a request until it succeeds, fails for good, or has used its retries (waiting between attempts). */
async function request(
  client: Client,
  method: 'GET' | 'POST',
  path: string,
  req: PostOptions = {},
): Promise<HttpResponse> {
  const { options } = client;
  const call = callOf(client, method, path, req);
  const endpoint = endpointName(method, req.endpoint ?? path);
  for (let n = 1; ; n++) {
    if (req.signal?.aborted) throw abortReason(req.signal);
    await client.limiter(req.signal);
    options.meter?.count(options.api, endpoint, options.rateLimitPerSecond, n > 1);
    const result = await attempt(client, call, n);
    if (result.kind === 'ok') return result.response;
    if (result.kind === 'fail') throw result.error;
    if (n > options.maxRetries) throw result.fail();
    const wait = retryWait(client, n, result.retryAfterMs);
    client.stats.retries++;
    logRetry(client, call, n, result, wait);
    await client.sleep(wait, req.signal);
    if (req.signal?.aborted) throw abortReason(req.signal);
  }
}

function callOf(client: Client, method: 'GET' | 'POST', path: string, req: PostOptions): Call {
  const fullPath = buildPath(client.basePath, path, req.query);
  const headers: Record<string, string> = {
    accept: 'application/json',
    ...client.options.headers,
    ...(req.headers ?? {}),
  };
  let body: string | undefined;
  if (method === 'POST' && req.body !== undefined) {
    body = stringifyJsonLossless(req.body);
    headers['content-type'] = 'application/json';
  }
  const logPath = fullPath.slice(client.basePath.length);
  return { method, fullPath, path: logPath.split('?')[0] ?? logPath, headers, body, req };
}

function buildPath(basePath: string, path: string, query?: Record<string, QueryValue>): string {
  const qs = new URLSearchParams();
  for (const [k, v] of Object.entries(query ?? {})) if (v !== undefined && v !== null) qs.append(k, String(v));
  const q = qs.toString();
  return `${basePath}${path.startsWith('/') ? path : `/${path}`}${q ? `?${q}` : ''}`;
}

/**
 * The wait before retry n: "equal jitter" (at least half the back-off, so retries of many clients spread without
 * collapsing to zero), or what Retry-After asked for, capped.
 */
function retryWait(client: Client, n: number, retryAfterMs: number | undefined): number {
  const { retryBaseMs, retryMaxMs } = client.options;
  const backoff = Math.min(retryMaxMs, retryBaseMs * 2 ** (n - 1));
  // drawn also when Retry-After decides: an injected source of jitter sees the same draws either way
  const jittered = Math.round(backoff / 2 + client.random() * (backoff / 2));
  if (retryAfterMs === undefined) return jittered;
  return Math.min(MAX_RETRY_AFTER_MS, Math.max(retryAfterMs, 0) + Math.round(client.random() * 100));
}

/** At warn: a run that waits on retries says so (with the attempt and the wait), not only at debug. */
function logRetry(client: Client, call: Call, n: number, result: Extract<Attempt, { kind: 'retry' }>, wait: number) {
  const { api, maxRetries } = client.options;
  const logPath = call.fullPath.slice(client.basePath.length);
  const { method } = call;
  const seconds = (wait / 1000).toFixed(1);
  client.options.logger.warn(
    { api, method, path: logPath, attempt: n, reason: result.reason, waitMs: wait, retryAfterMs: result.retryAfterMs },
    `${API_LABEL[api]} ${method} ${call.path}: ${result.reason}; retry ${n} of ${maxRetries} in ${seconds} s`,
  );
}

/** One attempt: the answer read (up to the size limit), then judged by its status. */
async function attempt(client: Client, call: Call, n: number): Promise<Attempt> {
  const started = performance.now();
  client.stats.requests++;
  const sent = await send(client, call, n, started);
  if ('kind' in sent) return sent;
  const ms = Math.round(performance.now() - started);
  const { api, logger } = client.options;
  const { method, fullPath } = call;
  logger.debug(
    { api, method, path: fullPath, status: sent.status, ms, attempt: n, bytes: sent.text.length },
    'http request',
  );
  return judge(client, call, n, { ...sent, ms });
}

interface Answer {
  status: number;
  text: string;
  retryAfter: string | undefined;
}

/** The answer's status, body and Retry-After; or, when none came, whether to retry (network, timeout) or fail. */
async function send(client: Client, call: Call, n: number, started: number): Promise<Answer | Attempt> {
  const { api, urlVariable } = client.options;
  const { method, fullPath, path, headers, body, req } = call;
  try {
    const res = await client.pool.request({ method, path: fullPath, headers, body, signal: req.signal });
    const ra = res.headers['retry-after'];
    const read = await readCapped(res.body, res.headers['content-length'], client.maxResponseBytes);
    if (read === null)
      return { kind: 'fail', error: new ResponseTooLargeError(api, method, path, client.maxResponseBytes) };
    return { status: res.statusCode, text: read, retryAfter: Array.isArray(ra) ? ra[0] : ra };
  } catch (err) {
    if (req.signal?.aborted) return { kind: 'fail', error: abortReason(req.signal) };
    const code = (err as { code?: string }).code ?? '';
    if (code === 'UND_ERR_DESTROYED' || code === 'UND_ERR_CLOSED') return { kind: 'fail', error: err as Error };
    const ms = Math.round(performance.now() - started);
    client.options.logger.debug(
      { api, method, path: fullPath, attempt: n, ms, code, err: { message: (err as Error).message } },
      'http network error',
    );
    const timeout = TIMEOUT_CODES.has(code);
    return {
      kind: 'retry',
      reason: code || (err as Error).message,
      fail: () =>
        timeout
          ? new HttpTimeoutError(api, method, path, n, err, urlVariable, client.origin)
          : new HttpNetworkError(api, method, path, n, err, urlVariable, client.origin),
    };
  }
}

/**
 * An answer by its status: 2xx parsed (a body that is not JSON is retried like a transport fault), an allowed status
 * returned, 401/403 an auth error naming the headers refused, 429 and 5xx retried, the rest failed.
 */
function judge(client: Client, call: Call, n: number, answer: Answer & { ms: number }): Attempt {
  const { api } = client.options;
  const { method, path, req } = call;
  const { status, text, ms } = answer;
  const allowed = req.allowStatus?.includes(status) ?? false;
  if ((status === 401 || status === 403) && !allowed)
    return { kind: 'fail', error: new HttpAuthError(api, status, method, path, refusedHeaders(client, call.headers)) };
  const response = (body: unknown): Attempt => ({
    kind: 'ok',
    response: { status, body, text, url: `${client.origin}${call.fullPath}`, ms, attempts: n },
  });
  if (status >= 200 && status < 300) {
    if (text.trim() === '') return response(null);
    try {
      return response((req.parse ?? parseJsonLossless)(text));
    } catch {
      // A truncated or non-JSON success body is a transport fault (proxy, cut connection): retry it.
      return {
        kind: 'retry',
        reason: 'invalid JSON body',
        fail: () => new InvalidBodyError(api, method, path, text, n),
      };
    }
  }
  if (allowed) return response(tryParse(text));
  const statusError = () => new HttpStatusError(api, status, method, path, text.slice(0, 500), n);
  if (status === 429 || status >= 500)
    return {
      kind: 'retry',
      reason: `status ${status}`,
      retryAfterMs: parseRetryAfter(answer.retryAfter),
      fail: statusError,
    };
  return { kind: 'fail', error: statusError() };
}

/** The auth headers this request sent (all of them when it sent none of them): what a 401/403 names. */
function refusedHeaders(client: Client, headers: Record<string, string>): readonly AuthHeader[] {
  const present = new Set(Object.keys(headers).map((h) => h.toLowerCase()));
  const used = client.options.authHeaders.filter((h) => present.has(h.header.toLowerCase()));
  return used.length ? used : client.options.authHeaders;
}

function tryParse(text: string): unknown {
  if (text.trim() === '') return null;
  try {
    return parseJsonLossless(text);
  } catch {
    return text;
  }
}

function abortReason(signal: AbortSignal): Error {
  const reason: unknown = signal.reason;
  if (reason instanceof Error) return reason;
  const err = new Error('the operation was aborted');
  err.name = 'AbortError';
  return err;
}

/** Retry-After is either delta-seconds or an HTTP date. */
export function parseRetryAfter(value: string | undefined, now = Date.now()): number | undefined {
  if (value === undefined) return undefined;
  const v = value.trim();
  if (/^\d+(\.\d+)?$/.test(v)) return Math.round(Number(v) * 1000);
  const at = Date.parse(v);
  return Number.isNaN(at) ? undefined : Math.max(0, at - now);
}

/**
 * Token bucket of `perSecond` tokens, holding at most one second's worth: a short burst is allowed,
 * the sustained rate never exceeds the limit. Callers queue in order of arrival.
 */
export function createRateLimiter(
  perSecond: number,
  sleep: (ms: number, signal?: AbortSignal) => Promise<void> = (ms, signal) => delay(ms, undefined, { signal }),
): RateLimiter {
  const capacity = Math.max(1, perSecond);
  const interval = 1000 / perSecond;
  let tokens = capacity;
  let last = performance.now();
  let tail: Promise<void> = Promise.resolve();
  return (signal) => {
    const run = async () => {
      const now = performance.now();
      tokens = Math.min(capacity, tokens + (now - last) / interval);
      last = now;
      if (tokens < 1) {
        const wait = Math.ceil((1 - tokens) * interval);
        await sleep(wait, signal);
        const after = performance.now();
        tokens = Math.min(capacity, tokens + (after - last) / interval);
        last = after;
        // An injected no-op sleep (tests) must not leave the bucket negative forever.
        tokens = Math.max(tokens, 1);
      }
      tokens -= 1;
    };
    const next = tail.then(run, run);
    tail = next.catch(() => {});
    return next;
  };
}

export const DEFAULT_MAX_RESPONSE_BYTES = 64 * 1024 * 1024;

/**
 * A response body as text, or null when it is over `limit` bytes (said by its Content-Length, or counted as it
 * arrives): the rest is never read, and the connection is dropped.
 */
async function readCapped(
  body: AsyncIterable<Buffer> & { destroy(): unknown; on(event: 'error', listener: () => void): unknown },
  contentLength: string | string[] | undefined,
  limit: number,
): Promise<string | null> {
  const declared = Number(Array.isArray(contentLength) ? contentLength[0] : contentLength);
  if (Number.isFinite(declared) && declared > limit) {
    // The abort it raises is ours: not an unhandled error.
    body.on('error', () => {});
    body.destroy();
    return null;
  }
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of body) {
    size += chunk.length;
    if (size > limit) {
      body.destroy();
      return null;
    }
    chunks.push(chunk);
  }
  return Buffer.concat(chunks, size).toString('utf8');
}
