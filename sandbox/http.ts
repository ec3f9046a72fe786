/** Simulator: small helpers for query parameters and JSON answers. */
import type { IncomingHttpHeaders } from 'node:http';
import { writeJson, type Json } from './wire.js';

export interface Req {
  method: string;
  /** Path below the API prefix, e.g. "/orders/123". */
  path: string;
  /** Full path, for error bodies. */
  fullPath: string;
  query: URLSearchParams;
  headers: IncomingHttpHeaders;
  body: string;
}

export interface Res {
  status: number;
  body: string;
  headers?: Record<string, string>;
}

export function json(status: number, value: Json): Res {
  return { status, body: writeJson(value), headers: { 'content-type': 'application/json' } };
}

export function header(req: Req, name: string): string | undefined {
  const v = req.headers[name.toLowerCase()];
  return Array.isArray(v) ? v[0] : v;
}

/** Parses an optional integer query parameter; undefined when absent, NaN when malformed. */
export function intParam(q: URLSearchParams, name: string): number | undefined {
  const v = q.get(name);
  if (v === null || v === '') return undefined;
  return /^-?\d+$/.test(v) ? Number(v) : Number.NaN;
}
