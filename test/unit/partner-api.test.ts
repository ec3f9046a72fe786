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
  it('sends each key only where the contract asks for it, and both keys share one rate limit', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'rr-partner-api-'));
    const configPath = join(dir, 'config.json');
    writeFileSync(configPath, JSON.stringify({ partner: { rateLimitPerSecond: 2 } }));
    const config = loadConfig({ env: { PARTNER_API_URL: url, PARTNER_PUBLIC_KEY: 'pub-key', PARTNER_PRIVATE_KEY: 'priv-key', RAMP_RECON_CONFIG: configPath } });
    expect(config.partner.rateLimitPerSecond).toBe(2);
    const sleeps: number[] = [];
    const api = createPartnerApi(config, pino({ level: 'silent' }), {
      sleep: async (ms) => {
        sleeps.push(ms);
      },
    });
    try {
      // A burst of two (one second's worth), then every further call waits, whichever key it uses.
      await api.currencies();
      await api.listOrders({ limit: 50 });
      expect(sleeps).toHaveLength(0);
      await api.regions();
      await api.getOrder('42');
      expect(sleeps).toHaveLength(2);
      expect(sleeps.every((ms) => ms > 0 && ms <= 500)).toBe(true);
    } finally {
      await api.close();
    }
    expect(hits.map((h) => [h[PUBLIC_KEY_HEADER.toLowerCase()] ?? null, h[PRIVATE_KEY_HEADER.toLowerCase()] ?? null])).toEqual([
      ['pub-key', null],
      [null, 'priv-key'],
      ['pub-key', null],
      [null, 'priv-key'],
    ]);
  });
});
