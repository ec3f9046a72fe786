/** Every hint names the variable the account really reads: BETA_EXCHANGE_API_URL for account beta of `accounts`. */
import { createServer } from 'node:net';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig, loadGroup, requireSources, type Config } from '../../src/config/load.js';
import { apiVariablesText, sourceVariables } from '../../src/config/variables.js';
import { exchangeClientFromConfig } from '../../src/sources/exchange/client.js';
import { partnerClientFromConfig } from '../../src/sources/partner/client.js';
import { HttpAuthError, HttpNetworkError } from '../../src/http/errors.js';
import { startSandbox } from '../helpers/sandbox.js';
import { problemsOf, writeConfig } from '../helpers/config.js';

type Sandbox = Awaited<ReturnType<typeof startSandbox>>;
const silent = pino({ level: 'silent' });

/** An unprefixed source variable where the prefixed one is meant: "EXCHANGE_API_URL" not preceded by "BETA_". */
const UNPREFIXED =
  /(?<![A-Z0-9_])(PARTNER_API_URL|PARTNER_PUBLIC_KEY|PARTNER_PRIVATE_KEY|EXCHANGE_API_URL|EXCHANGE_API_TOKEN)/;

/** A port that refuses connections: listened on, then closed. */
async function closedPort(): Promise<number> {
  const probe = createServer();
  await new Promise<void>((r) => probe.listen(0, '127.0.0.1', r));
  const { port } = probe.address() as { port: number };
  await new Promise<void>((r) => probe.close(() => r()));
  return port;
}

describe('the variables an account reads', () => {
  it('are unprefixed for a single-account config and prefixed by the name for each account of `accounts`', () => {
    expect(sourceVariables({ multiAccount: false, account: 'default' })).toEqual({
      partner: { url: 'PARTNER_API_URL', publicKey: 'PARTNER_PUBLIC_KEY', privateKey: 'PARTNER_PRIVATE_KEY' },
      exchange: { url: 'EXCHANGE_API_URL', token: 'EXCHANGE_API_TOKEN' },
    });
    const beta = sourceVariables({ multiAccount: true, account: 'beta-eu' });
    expect(beta.exchange).toEqual({ url: 'BETA_EU_EXCHANGE_API_URL', token: 'BETA_EU_EXCHANGE_API_TOKEN' });
    expect(apiVariablesText(beta, 'partner')).toBe(
      'BETA_EU_PARTNER_API_URL, BETA_EU_PARTNER_PUBLIC_KEY and BETA_EU_PARTNER_PRIVATE_KEY',
    );
  });
});

describe('hints of a two-account config name the account variables', () => {
  let sandbox: Sandbox;
  let alpha: Config;
  let beta: Config;
  let down: number;

  beforeAll(async () => {
    sandbox = await startSandbox({ days: 1, ordersPerDay: 1, live: false, faults: 'none' });
    down = await closedPort();
    const configPath = writeConfig({
      accounts: [{ name: 'alpha' }, { name: 'beta' }],
      http: { maxRetries: 0, connectTimeoutMs: 2000, bodyTimeoutMs: 2000 },
    });
    [alpha, beta] = loadGroup({
      configPath,
      env: {
        ALPHA_EXCHANGE_API_URL: sandbox.env.EXCHANGE_API_URL,
        ALPHA_EXCHANGE_API_TOKEN: sandbox.env.EXCHANGE_API_TOKEN,
        // beta's exchange: nothing listens there; beta's partner: the sandbox, with a public key it refuses
        BETA_EXCHANGE_API_URL: `http://127.0.0.1:${down}/v3/exchange`,
        BETA_EXCHANGE_API_TOKEN: 'beta-token-1234',
        BETA_PARTNER_API_URL: sandbox.env.PARTNER_API_URL,
        BETA_PARTNER_PUBLIC_KEY: 'pk-wrong-5678',
        BETA_PARTNER_PRIVATE_KEY: sandbox.env.PARTNER_PRIVATE_KEY,
      },
    }).accounts.map((a) => a.config) as [Config, Config];
  }, 60_000);
  afterAll(async () => {
    await sandbox?.close();
  });

  it('an unreachable Exchange API says "check BETA_EXCHANGE_API_URL", and "after 1 attempt"', async () => {
    const client = exchangeClientFromConfig(beta, silent);
    try {
      const err = await client.accounts().catch((e: unknown) => e);
      expect(err).toBeInstanceOf(HttpNetworkError);
      const e = err as HttpNetworkError;
      expect(e.hint).toBe('check BETA_EXCHANGE_API_URL and the network');
      expect(e.message).toMatch(
        new RegExp(
          `^Exchange API at http://127\\.0\\.0\\.1:${down} unreachable on GET /accounts after 1 attempt: .*; check BETA_EXCHANGE_API_URL and the network`,
        ),
      );
      expect(e.message).not.toMatch(UNPREFIXED);
    } finally {
      await client.close();
    }
  });

  it('a refused public key says "check BETA_PARTNER_PUBLIC_KEY"; both keys refused on a private call name both', async () => {
    const client = partnerClientFromConfig(beta, silent);
    try {
      const pub = (await client.currencies().catch((e: unknown) => e)) as HttpAuthError;
      expect(pub).toBeInstanceOf(HttpAuthError);
      expect(pub.hint).toBe('check BETA_PARTNER_PUBLIC_KEY');
      expect(pub.message).toMatch(
        /rejected the X-Public-API-Key header \(401\) on GET \/currencies; check BETA_PARTNER_PUBLIC_KEY$/,
      );
      const priv = (await client.getOrder('x-1').catch((e: unknown) => e)) as HttpAuthError;
      expect(priv).toBeInstanceOf(HttpAuthError);
      expect(priv.hint).toBe('check BETA_PARTNER_PUBLIC_KEY and BETA_PARTNER_PRIVATE_KEY');
      for (const e of [pub, priv]) {
        expect(e.message).not.toMatch(UNPREFIXED);
        expect(e.message).not.toContain('pk-wrong-5678');
      }
    } finally {
      await client.close();
    }
  });

  it('a source an account lacks is named with its prefix, by `requireSources` and by the client', () => {
    expect(problemsOf(() => requireSources(alpha, ['partner', 'exchange']))).toEqual([
      'environment variable ALPHA_PARTNER_API_URL: required (with ALPHA_PARTNER_PUBLIC_KEY and ALPHA_PARTNER_PRIVATE_KEY) ' +
        'to sync the Partner API of account alpha',
    ]);
    expect(problemsOf(() => partnerClientFromConfig(alpha, silent))).toEqual([
      'environment variables ALPHA_PARTNER_API_URL, ALPHA_PARTNER_PUBLIC_KEY and ALPHA_PARTNER_PRIVATE_KEY: required ' +
        'to sync the Partner API',
    ]);
  });

  it('a single-account config names the unprefixed variables', async () => {
    const single = loadConfig({
      configPath: writeConfig({ http: { maxRetries: 0, connectTimeoutMs: 2000 } }),
      env: { EXCHANGE_API_URL: `http://127.0.0.1:${down}/v3/exchange`, EXCHANGE_API_TOKEN: 'token-1234' },
    });
    const client = exchangeClientFromConfig(single, silent);
    try {
      const err = (await client.accounts().catch((e: unknown) => e)) as HttpNetworkError;
      expect(err.hint).toBe('check EXCHANGE_API_URL and the network');
    } finally {
      await client.close();
    }
    expect(() =>
      exchangeClientFromConfig({ ...single, exchange: { ...single.exchange, apiUrl: undefined } }, silent),
    ).toThrow('EXCHANGE_API_URL and EXCHANGE_API_TOKEN are required to sync the Exchange API');
  });
});
