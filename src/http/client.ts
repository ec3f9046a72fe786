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
  /** The environment variable that says where this API is, as the account reads it, for a request that got no answer. */
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

export function createHttpClient(options: HttpClientOptions): HttpClient {
  const base = new URL(options.baseUrl);
  const basePath = base.pathname.replace(/\/+$/, '');
  const pool = new Pool(base.origin, {
    connections: options.connections ?? 4,
    connect: { timeout: options.connectTimeoutMs },
    headersTimeout: options.bodyTimeoutMs,
    bodyTimeout: options.bodyTimeoutMs,
    keepAliveTimeout: 10_000,
  });
  const sleep = options.sleep ?? ((ms: number, signal?: AbortSignal) => delay(ms, undefined, { signal }));
  const random = options.random ?? Math.random;
  const log = options.logger;
  const maxResponseBytes = options.maxResponseBytes ?? DEFAULT_MAX_RESPONSE_BYTES;
  const limiter = options.limiter ?? createRateLimiter(options.rateLimitPerSecond, sleep);
  const stats: HttpStats = { requests: 0, retries: 0 };
  // Scheme, host and port of the API, for errors: what was tried, never a credential or a query.
  const origin = base.origin;

  function buildPath(path: string, query?: Record<string, QueryValue>): string {
    const qs = new URLSearchParams();
    for (const [k, v] of Object.entries(query ?? {})) if (v !== undefined && v !== null) qs.append(k, String(v));
    const q = qs.toString();
    return `${basePath}${path.startsWith('/') ? path : `/${path}`}${q ? `?${q}` : ''}`;
  }

  function refusedHeaders(headers: Record<string, string>): readonly AuthHeader[] {
    const present = new Set(Object.keys(headers).map((h) => h.toLowerCase()));
    const used = options.authHeaders.filter((h) => present.has(h.header.toLowerCase()));
    return used.length ? used : options.authHeaders;
  }

  async function attempt(
    method: 'GET' | 'POST',
    fullPath: string,
    path: string,
    headers: Record<string, string>,
    body: string | undefined,
    req: RequestOptions,
    n: number,
  ): Promise<Attempt> {
    const started = performance.now();
    stats.requests++;
    let status: number;
    let text: string;
    let retryAfter: string | undefined;
    try {
      const res = await pool.request({ method, path: fullPath, headers, body, signal: req.signal });
      status = res.statusCode;
      const ra = res.headers['retry-after'];
      retryAfter = Array.isArray(ra) ? ra[0] : ra;
      const read = await readCapped(res.body, res.headers['content-length'], maxResponseBytes);
      if (read === null)
        return { kind: 'fail', error: new ResponseTooLargeError(options.api, method, path, maxResponseBytes) };
      text = read;
    } catch (err) {
      if (req.signal?.aborted) return { kind: 'fail', error: abortReason(req.signal) };
      const code = (err as { code?: string }).code ?? '';
      if (code === 'UND_ERR_DESTROYED' || code === 'UND_ERR_CLOSED') return { kind: 'fail', error: err as Error };
      const ms = Math.round(performance.now() - started);
      log.debug(
        { api: options.api, method, path: fullPath, attempt: n, ms, code, err: { message: (err as Error).message } },
        'http network error',
      );
      const timeout = TIMEOUT_CODES.has(code);
      return {
        kind: 'retry',
        reason: code || (err as Error).message,
        fail: () =>
          timeout
            ? new HttpTimeoutError(options.api, method, path, n, err, options.urlVariable, origin)
            : new HttpNetworkError(options.api, method, path, n, err, options.urlVariable, origin),
      };
    }
    const ms = Math.round(performance.now() - started);
    log.debug({ api: options.api, method, path: fullPath, status, ms, attempt: n, bytes: text.length }, 'http request');

    const allowed = req.allowStatus?.includes(status) ?? false;
    if (status === 401 || status === 403) {
      if (!allowed)
        return { kind: 'fail', error: new HttpAuthError(options.api, status, method, path, refusedHeaders(headers)) };
    }
    const url = `${base.origin}${fullPath}`;
    if (status >= 200 && status < 300) {
      if (text.trim() === '') return { kind: 'ok', response: { status, body: null, text, url, ms, attempts: n } };
      try {
        return {
          kind: 'ok',
          response: { status, body: (req.parse ?? parseJsonLossless)(text), text, url, ms, attempts: n },
        };
      } catch {
        // A truncated or non-JSON success body is a transport fault (proxy, cut connection): retry it.
        return {
          kind: 'retry',
          reason: 'invalid JSON body',
          fail: () => new InvalidBodyError(options.api, method, path, text, n),
        };
      }
    }
    if (allowed) return { kind: 'ok', response: { status, body: tryParse(text), text, url, ms, attempts: n } };
    if (status === 429 || status >= 500) {
      return {
        kind: 'retry',
        reason: `status ${status}`,
        retryAfterMs: parseRetryAfter(retryAfter),
        fail: () => new HttpStatusError(options.api, status, method, path, text.slice(0, 500), n),
      };
    }
    return { kind: 'fail', error: new HttpStatusError(options.api, status, method, path, text.slice(0, 500), n) };
  }

  async function request(method: 'GET' | 'POST', path: string, req: PostOptions = {}): Promise<HttpResponse> {
    const fullPath = buildPath(path, req.query);
    const headers: Record<string, string> = { accept: 'application/json', ...options.headers, ...(req.headers ?? {}) };
    let body: string | undefined;
    if (method === 'POST' && req.body !== undefined) {
      body = stringifyJsonLossless(req.body);
      headers['content-type'] = 'application/json';
    }
    const logPath = fullPath.slice(basePath.length);
    const endpoint = endpointName(method, req.endpoint ?? path);
    for (let n = 1; ; n++) {
      if (req.signal?.aborted) throw abortReason(req.signal);
      await limiter(req.signal);
      options.meter?.count(options.api, endpoint, options.rateLimitPerSecond, n > 1);
      const result = await attempt(method, fullPath, logPath.split('?')[0] ?? logPath, headers, body, req, n);
      if (result.kind === 'ok') return result.response;
      if (result.kind === 'fail') throw result.error;
      if (n > options.maxRetries) throw result.fail();
      const backoff = Math.min(options.retryMaxMs, options.retryBaseMs * 2 ** (n - 1));
      // "Equal jitter": at least half the back-off, so retries of many clients spread without collapsing to zero.
      let wait = Math.round(backoff / 2 + random() * (backoff / 2));
      if (result.retryAfterMs !== undefined)
        wait = Math.min(MAX_RETRY_AFTER_MS, Math.max(result.retryAfterMs, 0) + Math.round(random() * 100));
      stats.retries++;
      // At warn: a run that waits on retries says so (with the attempt and the wait), not only at debug.
      log.warn(
        {
          api: options.api,
          method,
          path: logPath,
          attempt: n,
          reason: result.reason,
          waitMs: wait,
          retryAfterMs: result.retryAfterMs,
        },
        `${API_LABEL[options.api]} ${method} ${logPath.split('?')[0]}: ${result.reason}; retry ${n} of ${options.maxRetries} in ${(wait / 1000).toFixed(1)} s`,
      );
      await sleep(wait, req.signal);
      if (req.signal?.aborted) throw abortReason(req.signal);
    }
  }

  return {
    api: options.api,
    get: (path, req) => request('GET', path, req),
    post: (path, req) => request('POST', path, req),
    stats: () => ({ ...stats }),
    async close() {
      await pool.close();
    },
  };
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
