import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Writable } from 'node:stream';
import pino from 'pino';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import {
  createHttpClient,
  createRateLimiter,
  HttpAuthError,
  HttpNetworkError,
  HttpStatusError,
  HttpTimeoutError,
  InvalidBodyError,
  parseRetryAfter,
  ResponseTooLargeError,
  type HttpClientOptions,
} from '../../src/http/client.js';
import { isLosslessNumber } from '../../src/decimal/json.js';
import { createRequestMeter } from '../../src/http/meter.js';

const TOKEN = 'sekrit-token-value-123';
type Handler = (req: IncomingMessage, res: ServerResponse, n: number) => void;

let server: Server;
let baseUrl: string;
let handler: Handler = (_req, res) => res.end('{}');
let hits: Array<{ url: string; headers: IncomingMessage['headers'] }> = [];

beforeAll(async () => {
  server = createServer((req, res) => {
    hits.push({ url: req.url ?? '', headers: req.headers });
    handler(req, res, hits.length);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v3/exchange`;
});
afterAll(async () => {
  server.closeAllConnections();
  await new Promise((r) => server.close(r));
});
afterEach(() => {
  hits = [];
});

function logCapture() {
  const lines: string[] = [];
  const dest = new Writable({
    write(chunk, _enc, cb) {
      lines.push(String(chunk));
      cb();
    },
  });
  return { logger: pino({ level: 'debug' }, dest), lines };
}

function client(overrides: Partial<HttpClientOptions> = {}) {
  const sleeps: number[] = [];
  const log = logCapture();
  const c = createHttpClient({
    api: 'exchange',
    baseUrl,
    headers: { 'X-API-Token': TOKEN },
    authHeaders: [{ header: 'X-API-Token', variable: 'EXCHANGE_API_TOKEN' }],
    urlVariable: 'EXCHANGE_API_URL',
    rateLimitPerSecond: 1000,
    connectTimeoutMs: 1000,
    bodyTimeoutMs: 1000,
    maxRetries: 3,
    retryBaseMs: 100,
    retryMaxMs: 1000,
    logger: log.logger,
    sleep: async (ms) => {
      sleeps.push(ms);
    },
    ...overrides,
  });
  return { c, sleeps, lines: log.lines };
}

describe('http client', () => {
  it('sends the auth header, keeps the base path, builds the query and parses losslessly', async () => {
    handler = (_req, res) =>
      res.end('[{"execId": 9007199254740993, "qty": "5.4044E-4", "price": 0.10000000000000000001}]');
    const { c, lines } = client();
    const res = await c.get('/fills', { query: { fromExecId: '9007199254740993', limit: 1000, to: undefined } });
    expect(res.status).toBe(200);
    expect(hits[0]?.url).toBe('/v3/exchange/fills?fromExecId=9007199254740993&limit=1000');
    expect(hits[0]?.headers['x-api-token']).toBe(TOKEN);
    const row = (res.body as Array<Record<string, unknown>>)[0]!;
    expect(isLosslessNumber(row.execId)).toBe(true);
    expect(String(row.execId)).toBe('9007199254740993');
    expect(String(row.price)).toBe('0.10000000000000000001');
    expect(lines.join('')).toContain('"msg":"http request"');
    expect(lines.join('')).not.toContain(TOKEN);
    await c.close();
  });

  it('retries 5xx with growing jittered back-off, then succeeds', async () => {
    handler = (_req, res, n) => {
      if (n < 3) {
        res.statusCode = 500;
        res.end('{"timestamp":1,"status":500,"error":"Internal Server Error","message":"boom","path":"/fills"}');
      } else res.end('[]');
    };
    const { c, sleeps } = client({ random: () => 0.5 });
    const res = await c.get('/fills');
    expect(res.body).toEqual([]);
    expect(hits).toHaveLength(3);
    expect(sleeps).toEqual([75, 150]);
    expect(c.stats()).toEqual({ requests: 3, retries: 2 });
    await c.close();
  });

  it('counts every attempt on the meter by endpoint template, retries apart, at its rate limit', async () => {
    handler = (req, res, n) => {
      if (n === 2) {
        res.statusCode = 503;
        res.end('{}');
      } else res.end(req.url?.includes('/orders/') ? '{}' : '[]');
    };
    const meter = createRequestMeter();
    const { c } = client({ meter, rateLimitPerSecond: 20, random: () => 0 });
    await c.get('/fills', { query: { fromExecId: '5', limit: 1000 } });
    await c.get('/orders/700123', { endpoint: '/orders/{id}' });
    await c.get('/orders/700124', { endpoint: '/orders/{id}', allowStatus: [404] });
    expect(hits).toHaveLength(4);
    expect(meter.snapshot()).toEqual({
      exchange: {
        'GET /fills': { requests: 1, retries: 0, perSecond: 20 },
        'GET /orders/{id}': { requests: 3, retries: 1, perSecond: 20 },
      },
    });
    // The meter and the client's own stats agree: every attempt is a request.
    expect(c.stats()).toEqual({ requests: 4, retries: 1 });
    await c.close();
  });

  it('honours Retry-After on 429', async () => {
    handler = (_req, res, n) => {
      if (n === 1) {
        res.statusCode = 429;
        res.setHeader('Retry-After', '2');
        res.end('{"errors":[{"type":"RATE_LIMIT","message":"slow down"}]}');
      } else res.end('{"ok":true}');
    };
    const { c, sleeps } = client({ random: () => 0 });
    await c.get('/orders');
    expect(sleeps).toEqual([2000]);
    await c.close();
  });

  it('does not retry other 4xx, and returns allowed statuses', async () => {
    handler = (_req, res) => {
      res.statusCode = 404;
      res.end('{"timestamp":1,"status":404,"error":"Not Found","message":"no order","path":"/orders/1"}');
    };
    const { c } = client();
    await expect(c.get('/orders/1')).rejects.toBeInstanceOf(HttpStatusError);
    expect(hits).toHaveLength(1);
    const res = await c.get('/orders/1', { allowStatus: [404] });
    expect(res.status).toBe(404);
    expect((res.body as Record<string, unknown>).error).toBe('Not Found');
    await c.close();
  });

  it('stops on 401 naming the API and the header, never the key', async () => {
    handler = (_req, res) => {
      res.statusCode = 401;
      res.end('{"error":"invalid key"}');
    };
    const { c, lines } = client();
    const err = await c.get('/fills', { query: { limit: 10 } }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(HttpAuthError);
    expect((err as HttpAuthError).code).toBe('HTTP_AUTH');
    expect((err as Error).message).toContain('Exchange API rejected the X-API-Token header (401) on GET /fills');
    expect((err as Error).message).not.toContain(TOKEN);
    expect(lines.join('')).not.toContain(TOKEN);
    expect(hits).toHaveLength(1);
    await c.close();
  });

  it('names the header actually sent for a partner 403', async () => {
    handler = (_req, res) => {
      res.statusCode = 403;
      res.end('{"errors":[{"type":"FORBIDDEN","message":"no"}]}');
    };
    const c = createHttpClient({
      api: 'partner',
      baseUrl: baseUrl.replace('/v3/exchange', ''),
      headers: {},
      authHeaders: [
        { header: 'X-Public-API-Key', variable: 'BETA_PARTNER_PUBLIC_KEY' },
        { header: 'X-Private-API-Key', variable: 'BETA_PARTNER_PRIVATE_KEY' },
      ],
      urlVariable: 'BETA_PARTNER_API_URL',
      rateLimitPerSecond: 10,
      connectTimeoutMs: 1000,
      bodyTimeoutMs: 1000,
      maxRetries: 2,
      retryBaseMs: 1,
      retryMaxMs: 1,
      logger: pino({ level: 'silent' }),
    });
    const err = await c
      .get('/partner-gateway/partner-api/v1/orders', { headers: { 'X-Private-API-Key': 'pk-secret' } })
      .catch((e: unknown) => e);
    expect((err as Error).message).toBe(
      'Partner API rejected the X-Private-API-Key header (403) on GET /partner-gateway/partner-api/v1/orders; check BETA_PARTNER_PRIVATE_KEY',
    );
    await c.close();
  });

  it('retries a truncated JSON body like a transport fault, then fails with InvalidBodyError', async () => {
    handler = (_req, res) => res.end('[{"execId": "1", "qty": "0.5"');
    const { c } = client({ maxRetries: 2 });
    const err = await c.get('/fills').catch((e: unknown) => e);
    expect(err).toBeInstanceOf(InvalidBodyError);
    expect((err as InvalidBodyError).code).toBe('HTTP_INVALID_BODY');
    expect(hits).toHaveLength(3);
    await c.close();
  });

  it('gives 5xx up after maxRetries with HttpStatusError', async () => {
    handler = (_req, res) => {
      res.statusCode = 503;
      res.end('');
    };
    const { c } = client({ maxRetries: 1 });
    const err = await c.get('/fills').catch((e: unknown) => e);
    expect(err).toBeInstanceOf(HttpStatusError);
    expect((err as HttpStatusError).status).toBe(503);
    expect(hits).toHaveLength(2);
    await c.close();
  });

  it('times out a stalled body and retries it', async () => {
    handler = (_req, res, n) => {
      if (n === 1) {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.write('[');
        // never ends: the body timeout must fire
      } else res.end('[]');
    };
    const { c, sleeps } = client({ bodyTimeoutMs: 200 });
    const res = await c.get('/fills');
    expect(res.body).toEqual([]);
    expect(sleeps).toHaveLength(1);
    await c.close();
  });

  it('fails with HttpTimeoutError when every attempt stalls', async () => {
    handler = () => {
      /* no answer at all: headers timeout */
    };
    const { c } = client({ bodyTimeoutMs: 150, maxRetries: 1 });
    const err = await c.get('/fills').catch((e: unknown) => e);
    expect(err).toBeInstanceOf(HttpTimeoutError);
    expect((err as HttpTimeoutError).code).toBe('HTTP_TIMEOUT');
    await c.close();
  });

  it('retries a refused connection, then fails with HttpNetworkError', async () => {
    const probe = createServer();
    await new Promise<void>((r) => probe.listen(0, '127.0.0.1', r));
    const port = (probe.address() as AddressInfo).port;
    await new Promise((r) => probe.close(r));
    const { c, sleeps } = client({ baseUrl: `http://127.0.0.1:${port}/v3/exchange`, maxRetries: 2 });
    const err = await c.get('/fills').catch((e: unknown) => e);
    expect(err).toBeInstanceOf(HttpNetworkError);
    expect(sleeps).toHaveLength(2);
    await c.close();
  });

  it('stops retrying when the signal aborts', async () => {
    handler = (_req, res) => {
      res.statusCode = 500;
      res.end('{}');
    };
    const ac = new AbortController();
    const { c } = client({
      sleep: async () => {
        ac.abort(new Error('stop requested'));
      },
    });
    await expect(c.get('/fills', { signal: ac.signal })).rejects.toThrow('stop requested');
    expect(hits).toHaveLength(1);
    await c.close();
  });

  it('posts JSON bodies', async () => {
    let received = '';
    handler = (req, res) => {
      req.setEncoding('utf8');
      req.on('data', (d: string) => (received += d));
      req.on('end', () => res.end('{"ok":1}'));
    };
    const { c } = client();
    await c.post('/quotes', { body: { amount: '100.10' } });
    expect(received).toBe('{"amount":"100.10"}');
    expect(hits[0]?.headers['content-type']).toBe('application/json');
    await c.close();
  });
});

describe('rate limiter and Retry-After', () => {
  it('allows a burst of one second, then spaces requests', async () => {
    const sleeps: number[] = [];
    const acquire = createRateLimiter(5, async (ms) => {
      sleeps.push(ms);
    });
    for (let i = 0; i < 7; i++) await acquire();
    expect(sleeps.length).toBe(2);
    expect(sleeps[0]).toBeGreaterThan(150);
    expect(sleeps[0]).toBeLessThanOrEqual(200);
  });

  it('can be shared by two clients of one API', async () => {
    handler = (_req, res) => res.end('{}');
    const sleeps: number[] = [];
    const limiter = createRateLimiter(2, async (ms) => {
      sleeps.push(ms);
    });
    const a = client({ limiter }).c;
    const b = client({ limiter }).c;
    await a.get('/x');
    await b.get('/x');
    await a.get('/x');
    expect(sleeps).toHaveLength(1);
    await a.close();
    await b.close();
  });

  it('parses seconds and HTTP dates', () => {
    expect(parseRetryAfter('3')).toBe(3000);
    expect(parseRetryAfter('Sun, 22 Nov 2026 02:00:10 GMT', Date.parse('2026-11-22T02:00:00Z'))).toBe(10_000);
    expect(parseRetryAfter('soon')).toBeUndefined();
    expect(parseRetryAfter(undefined)).toBeUndefined();
  });
});

describe('response size limit', () => {
  it('refuses a body over maxResponseBytes, chunked (no Content-Length), naming the endpoint and the limit', async () => {
    handler = (_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      // 8 chunks of 1 KiB: over the 4 KiB limit on the fifth, without a Content-Length to say so first
      for (let i = 0; i < 8; i++) res.write(`${' '.repeat(1023)}\n`);
      res.end('{}');
    };
    const { c } = client({ maxResponseBytes: 4096 });
    const err = await c.get('/fills').catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ResponseTooLargeError);
    expect((err as Error).message).toBe(
      'Exchange API sent a response larger than http.maxResponseBytes (4096 bytes) on GET /fills; it was not read ' +
        '(raise http.maxResponseBytes if such a page is expected)',
    );
    // not retried: the same page would be as large again
    expect(hits).toHaveLength(1);
  });

  it('refuses a body whose Content-Length is over the limit before reading it, and reads one at the limit', async () => {
    handler = (_req, res) => {
      const body = JSON.stringify({ pad: 'x'.repeat(5000) });
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) });
      res.end(body);
    };
    const small = client({ maxResponseBytes: 2048 });
    await expect(small.c.get('/orders')).rejects.toThrow(
      /larger than http\.maxResponseBytes \(2048 bytes\) on GET \/orders/,
    );
    const exact = client({ maxResponseBytes: 5011 });
    const res = await exact.c.get('/orders');
    expect((res.body as { pad: string }).pad).toHaveLength(5000);
  });
});
