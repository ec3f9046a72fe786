/** Counts the requests of a run per API and endpoint template. */
import type { ApiName, EndpointRequests, RunRequests } from '../domain/index.js';

export type { EndpointRequests, RunRequests } from '../domain/index.js';
import { jsonNumber } from '../decimal/json.js';

/**
 * The requests of one run, per API and endpoint: what the run cost the services, and what it
 * would take at their published limits (docs/performance.md: at real rates requests are the bottleneck).
 */

export interface RequestTotals {
  requests: number;
  retries: number;
  /** requests / perSecond summed over endpoints (see requestTotals). */
  seconds: number;
}

export interface RequestMeter {
  /** One attempt at `endpoint`; `retry` when it is not the first attempt of its request. */
  count(api: ApiName, endpoint: string, perSecond: number, retry: boolean): void;
  /** A copy of the counts so far. */
  snapshot(): RunRequests;
}

export function createRequestMeter(): RequestMeter {
  const counts: RunRequests = {};
  return {
    count(api, endpoint, perSecond, retry) {
      const byEndpoint = (counts[api] ??= {});
      // One endpoint has one class of call, hence one rate: the first seen stays.
      const e = (byEndpoint[endpoint] ??= { requests: 0, retries: 0, perSecond });
      e.requests += 1;
      if (retry) e.retries += 1;
    },
    snapshot: () => structuredClone(counts),
  };
}

/** "GET /orders/{id}": the method and the path (a template where it holds ids) without its query. */
export function endpointName(method: string, path: string): string {
  const bare = path.split('?')[0] ?? path;
  return `${method} ${bare.startsWith('/') ? bare : `/${bare}`}`;
}

/** Time the endpoint's requests take at its configured rate. */
export function endpointSeconds(e: EndpointRequests): number {
  return e.perSecond > 0 ? e.requests / e.perSecond : 0;
}

/** Milliseconds are the finest a time at a rate limit means (shown and listed; sums use the exact figures). */
export function roundSeconds(seconds: number): number {
  return Math.round(seconds * 1000) / 1000;
}

/**
 * Totals per API and over all APIs. Time at the configured rates is summed, not maxed: each
 * class of call has its own limiter, but the sync makes its calls one after another (reference
 * data, then orders, then quotes; the exchange, then the partner), so the classes never overlap.
 */
export function requestTotals(requests: RunRequests): {
  apis: Partial<Record<ApiName, RequestTotals>>;
  all: RequestTotals;
} {
  const apis: Partial<Record<ApiName, RequestTotals>> = {};
  const all: RequestTotals = { requests: 0, retries: 0, seconds: 0 };
  for (const [api, endpoints] of Object.entries(requests) as Array<[ApiName, Record<string, EndpointRequests>]>) {
    const t: RequestTotals = { requests: 0, retries: 0, seconds: 0 };
    for (const e of Object.values(endpoints)) {
      t.requests += e.requests;
      t.retries += e.retries;
      t.seconds += endpointSeconds(e);
    }
    apis[api] = t;
    all.requests += t.requests;
    all.retries += t.retries;
    all.seconds += t.seconds;
  }
  return { apis, all };
}

/** APIs in a fixed order, endpoints by name: jsonb keeps no key order. */
export function sortedRequests(requests: RunRequests): Array<[ApiName, Array<[string, EndpointRequests]>]> {
  return (Object.keys(requests) as ApiName[])
    .sort((a, b) => API_ORDER.indexOf(a) - API_ORDER.indexOf(b))
    .map((api) => [api, Object.entries(requests[api] ?? {}).sort(([a], [b]) => a.localeCompare(b))]);
}
const API_ORDER: ApiName[] = ['partner', 'exchange'];

/**
 * run.requests as stored (jsonb read through the lossless parser: numbers are LosslessNumber
 * objects) back to plain counts; an entry without counts is left out rather than shown as 0.
 */
export function parseRunRequests(value: unknown): RunRequests {
  const out: RunRequests = {};
  if (!isObject(value)) return out;
  for (const api of API_ORDER) {
    const endpoints = value[api];
    if (!isObject(endpoints)) continue;
    for (const [endpoint, e] of Object.entries(endpoints)) {
      if (!isObject(e)) continue;
      const requests = count(e.requests);
      const retries = count(e.retries);
      const perSecond = count(e.perSecond);
      if (requests === null || retries === null || perSecond === null) continue;
      (out[api] ??= {})[endpoint] = { requests, retries, perSecond };
    }
  }
  return out;
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function count(v: unknown): number | null {
  const n = jsonNumber(v);
  return n !== null && n >= 0 ? n : null;
}
