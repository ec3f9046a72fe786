import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/load.js';
import { createPartnerApi, PRIVATE_KEY_HEADER, PUBLIC_KEY_HEADER } from '../../src/sources/partner/api.js';

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
    writeFileSync(configPath, JSON.stringify({ partner: { publicRateLimitPerSecond: 2, privateRateLimitPerSecond: 3 } }));
    const config = loadConfig({ env: { PARTNER_API_URL: url, PARTNER_PUBLIC_KEY: 'pub-key', PARTNER_PRIVATE_KEY: 'priv-key', RAMP_RECON_CONFIG: configPath } });
    expect(config.partner.publicRateLimitPerSecond).toBe(2);
    expect(config.partner.privateRateLimitPerSecond).toBe(3);
    const sleeps: number[] = [];
    const api = createPartnerApi(config, pino({ level: 'silent' }), {
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
    expect(hits.map((h) => [h[PUBLIC_KEY_HEADER.toLowerCase()] ?? null, h[PRIVATE_KEY_HEADER.toLowerCase()] ?? null])).toEqual([
      ['pub-key', null],
      ['pub-key', null],
      ['pub-key', 'priv-key'],
      ['pub-key', 'priv-key'],
      ['pub-key', 'priv-key'],
      ['pub-key', null],
      ['pub-key', 'priv-key'],
    ]);
  });
});
