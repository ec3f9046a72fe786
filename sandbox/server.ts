/** Simulator: one node:http server mounting both APIs, with seeded faults. */
import type { AddressInfo } from 'node:net';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { exchangeError, handleExchange, EXCHANGE_PREFIX, type ExchangeHooks } from './exchange-routes.js';
import type { FaultProfile } from './faults.js';
import { json, type Req, type Res } from './http.js';
import { handlePartner, isPrivatePartnerPath, PARTNER_PREFIX } from './partner-routes.js';
import { createRng, type Rng } from './prng.js';

/**
 * What serves one request: the APIs and control routes of the account it addresses. With several
 * accounts behind one server (accounts.ts) each method picks the account from the request.
 */
export interface ServerHandlers {
  partner(req: Req): Res;
  exchange(req: Req): Res;
  control(req: Req): Res | Promise<Res>;
  /** Runs before every API request that is served (live mode: bring the world up to the clock). */
  beforeRequest(req: Req): void;
  faults(req: Req): FaultProfile;
  /** The fault draws and public-call counters the request counts against: its account's. */
  faultState(req: Req): FaultState;
  onRequest?: (req: Req) => void;
}

/**
 * One account's seeded fault stream and its partner public-call counters (per client IP): an
 * account sees the same faults for the same requests, whatever other accounts are asked.
 */
export interface FaultState {
  rng: Rng;
  publicCalls: Map<string, { second: number; count: number }>;
}

export function createFaultState(seed: number): FaultState {
  return { rng: createRng(seed, 'faults'), publicCalls: new Map() };
}

/**
 * One node:http server for both APIs, mounted at the contract paths. Faults are drawn per
 * request from a seeded stream, so a run with the same requests sees the same faults.
 */
export function createSandboxServer(h: ServerHandlers): Server {
  return createServer((inc, out) => {
    const chunks: Buffer[] = [];
    inc.on('data', (c: Buffer) => chunks.push(c));
    inc.on('end', () => {
      void serve(inc, out, Buffer.concat(chunks).toString('utf8')).catch((err: unknown) => {
        if (!out.headersSent) {
          out.writeHead(500, { 'content-type': 'application/json' });
          out.end(JSON.stringify({ error: `sandbox failure: ${(err as Error).message}` }));
        } else out.destroy();
      });
    });
  });

  async function serve(inc: IncomingMessage, out: ServerResponse, body: string): Promise<void> {
    const url = new URL(inc.url ?? '/', 'http://sandbox');
    const fullPath = url.pathname;
    const base = { method: inc.method ?? 'GET', fullPath, query: url.searchParams, headers: inc.headers, body };
    if (fullPath.startsWith('/_sandbox/'))
      return send(out, await h.control({ ...base, path: fullPath.slice('/_sandbox'.length) }));
    let api: 'partner' | 'exchange';
    let path: string;
    if (fullPath.startsWith(`${PARTNER_PREFIX}/`)) {
      api = 'partner';
      path = fullPath.slice(PARTNER_PREFIX.length);
    } else if (fullPath.startsWith(`${EXCHANGE_PREFIX}/`)) {
      api = 'exchange';
      path = fullPath.slice(EXCHANGE_PREFIX.length);
    } else return send(out, json(404, { error: `nothing at ${fullPath}` }));
    const req: Req = { ...base, path };
    h.onRequest?.(req);
    const f = h.faults(req);
    const state = h.faultState(req);
    if (
      api === 'partner' &&
      f.publicRateLimitPerSecond > 0 &&
      !isPrivatePartnerPath(path) &&
      inc.headers['x-public-api-key'] !== undefined
    ) {
      // The documented public-key limit: N requests per second per client IP, then 429 + Retry-After.
      // Private calls carry the public key too but have their own, organisation-wide limit.
      const second = Math.floor(Date.now() / 1000);
      const ip = inc.socket.remoteAddress ?? '?';
      const seen = state.publicCalls.get(ip);
      const count = seen && seen.second === second ? seen.count + 1 : 1;
      state.publicCalls.set(ip, { second, count });
      if (count > f.publicRateLimitPerSecond) {
        return send(out, {
          ...json(429, {
            errors: [{ type: 'RATE_LIMITED', message: `more than ${f.publicRateLimitPerSecond} requests per second` }],
          }),
          headers: { 'content-type': 'application/json', 'retry-after': '1' },
        });
      }
    }
    const r = state.rng.next();
    let acc = 0;
    const hit = (p: number): boolean => {
      acc += p;
      return p > 0 && r < acc;
    };
    const errorRes = (status: number, message: string): Res =>
      api === 'partner'
        ? json(status, { errors: [{ type: status === 429 ? 'RATE_LIMITED' : 'SERVER_ERROR', message }] })
        : exchangeError(req, status, message);
    if (hit(f.rateLimited)) {
      const res = errorRes(429, 'too many requests');
      return send(out, { ...res, headers: { ...res.headers, 'retry-after': String(f.retryAfterSeconds) } });
    }
    if (hit(f.serverError500)) return send(out, errorRes(500, 'internal error'));
    if (hit(f.serverError503)) return send(out, errorRes(503, 'service unavailable'));
    const slow = hit(f.slow);
    const truncated = hit(f.truncated);
    h.beforeRequest(req);
    const res = api === 'partner' ? h.partner(req) : h.exchange(req);
    if (slow) await new Promise((resolve) => setTimeout(resolve, f.slowMs));
    if (truncated && res.body.length > 2) {
      // Promise the whole body, send half, then drop the connection: the client sees a cut body.
      const bytes = Buffer.from(res.body);
      out.writeHead(res.status, { ...res.headers, 'content-length': String(bytes.length) });
      out.write(bytes.subarray(0, Math.floor(bytes.length / 2)), () => out.destroy());
      return;
    }
    send(out, res);
  }
}

/** Listens on host:port (0: any free port); resolves with the server's http://host:port. */
export async function listen(server: Server, port: number, host: string): Promise<string> {
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => resolve());
  });
  return `http://${host}:${(server.address() as AddressInfo).port}`;
}

/** Stops listening and drops the open connections. */
export async function closeServer(server: Server): Promise<void> {
  await new Promise<void>((resolve) => {
    server.close(() => resolve());
    server.closeAllConnections();
  });
}

function send(out: ServerResponse, res: Res): void {
  if (out.destroyed) return;
  const bytes = Buffer.from(res.body);
  out.writeHead(res.status, { ...res.headers, 'content-length': String(bytes.length) });
  out.end(bytes);
}

export type { ExchangeHooks };
export { handleExchange, handlePartner };
