import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/load.js';
import { partnerClientFromConfig, PRIVATE_KEY_HEADER, PUBLIC_KEY_HEADER } from '../../src/sources/partner/client.js';
import { createRequestMeter } from '../../src/http/meter.js';
import { HttpAuthError } from '../../src/http/errors.js';
import { startSandbox } from '../helpers/sandbox.js';

let server: Server;
let url: string;
const hits: Array<IncomingMessage['headers']> = [];

beforeAll(async () => {
  server = createServer((req, res) => {
    hits.push(req.headers);
    res.setHeader('content-type', 'application/json');
    res.end(req.url?.includes('/orders') ? '[]' : '{}');
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(async () => {
  server.closeAllConnections();
  await new Promise((r) => server.close(r));
});

describe('Partner API client', () => {
  it('sends the public key on every call and both keys on private calls; each class of call has its own rate limit', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'rr-partner-api-'));
    const configPath = join(dir, 'config.json');
    writeFileSync(
      configPath,
      JSON.stringify({ partner: { publicRateLimitPerSecond: 2, privateRateLimitPerSecond: 3 } }),
    );
    const config = loadConfig({
      env: {
        PARTNER_API_URL: url,
        PARTNER_PUBLIC_KEY: 'pub-key',
        PARTNER_PRIVATE_KEY: 'priv-key',
        RAMP_RECON_CONFIG: configPath,
      },
    });
    expect(config.partner.publicRateLimitPerSecond).toBe(2);
    expect(config.partner.privateRateLimitPerSecond).toBe(3);
    const sleeps: number[] = [];
    const api = partnerClientFromConfig(config, pino({ level: 'silent' }), {
      sleep: async (ms) => {
        sleeps.push(ms);
      },
    });
    try {
      // Public calls: a burst of two (one second's worth at 2/s), then the third waits.
      await api.currencies();
      await api.regions();
      expect(sleeps).toHaveLength(0);
      // Private calls draw on their own budget of three, untouched by the public calls.
      await api.listOrders({ limit: 50 });
      await api.getOrder('42');
      await api.listOrders({ limit: 50 });
      expect(sleeps).toHaveLength(0);
      await api.paymentMethods();
      expect(sleeps).toHaveLength(1);
      expect(sleeps[0]).toBeGreaterThan(0);
      expect(sleeps[0]).toBeLessThanOrEqual(500);
      await api.getOrder('43');
      expect(sleeps).toHaveLength(2);
      expect(sleeps[1]).toBeGreaterThan(0);
      expect(sleeps[1]).toBeLessThanOrEqual(334);
    } finally {
      await api.close();
    }
    expect(
      hits.map((h) => [h[PUBLIC_KEY_HEADER.toLowerCase()] ?? null, h[PRIVATE_KEY_HEADER.toLowerCase()] ?? null]),
    ).toEqual([
      ['pub-key', null],
      ['pub-key', null],
      ['pub-key', 'priv-key'],
      ['pub-key', 'priv-key'],
      ['pub-key', 'priv-key'],
      ['pub-key', null],
      ['pub-key', 'priv-key'],
    ]);
  });

  it('a private call the server refuses names the Partner API and both headers, never a key', async () => {
    const sb = await startSandbox({
      days: 1,
      ordersPerDay: 3,
      exchangeOrdersPerDay: 1,
      depositsPerDay: 0,
      withdrawalsPerDay: 0,
      now: new Date('2026-11-21T12:00:00Z'),
    });
    const wrongPublic = 'pk_wrong_public_9876';
    const config = loadConfig({ env: { ...sb.env, PARTNER_PUBLIC_KEY: wrongPublic } });
    const api = partnerClientFromConfig(config, pino({ level: 'silent' }));
    try {
      const listed = await api.listOrders({ limit: 50 }).catch((e: unknown) => e);
      const byId = await api.getOrder(sb.data.partnerOrders()[0]!.orderId).catch((e: unknown) => e);
      for (const err of [listed, byId]) {
        expect(err).toBeInstanceOf(HttpAuthError);
        const e = err as HttpAuthError;
        expect([e.api, e.status, e.headerNames]).toEqual(['partner', 401, [PUBLIC_KEY_HEADER, PRIVATE_KEY_HEADER]]);
        expect(e.message).toMatch(
          /^Partner API rejected the X-Public-API-Key \/ X-Private-API-Key headers \(401\) on GET \/orders.*; check PARTNER_PUBLIC_KEY and PARTNER_PRIVATE_KEY$/,
        );
        const text = `${e.message} ${JSON.stringify(e)} ${e.stack ?? ''}`;
        for (const secret of [wrongPublic, sb.env.PARTNER_PRIVATE_KEY!, sb.env.PARTNER_PUBLIC_KEY!])
          expect(text).not.toContain(secret);
      }
    } finally {
      await api.close();
      await sb.close();
    }
  });

  it('meters each call under its endpoint template at its class rate', async () => {
    const config = loadConfig({
      env: { PARTNER_API_URL: url, PARTNER_PUBLIC_KEY: 'pub-key', PARTNER_PRIVATE_KEY: 'priv-key' },
    });
    const meter = createRequestMeter();
    const api = partnerClientFromConfig(config, pino({ level: 'silent' }), { meter });
    try {
      await api.getOrder('42');
      await api.getOrder('43');
      await api.listOrders({ limit: 50 });
      await api.currencies();
    } finally {
      await api.close();
    }
    expect(meter.snapshot()).toEqual({
      partner: {
        'GET /orders/{id}': { requests: 2, retries: 0, perSecond: 100 },
        'GET /orders': { requests: 1, retries: 0, perSecond: 100 },
        'GET /currencies': { requests: 1, retries: 0, perSecond: 10 },
      },
    });
  });
});
