import { spawn } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  accountNameProblems,
  envPrefix,
  startSandbox,
  startSandboxAccounts,
  NO_FAULTS,
  type Sandbox,
  type SandboxAccounts,
} from '../helpers/sandbox.js';
import { clocked } from '../helpers/clock.js';
import { resolveOptions } from '../../sandbox/build.js';
import { generateHistory } from '../../sandbox/generate/span.js';
import { World } from '../../sandbox/world.js';

const PARTNER = '/partner-gateway/partner-api/v1';
const now = new Date('2026-11-21T12:00:00Z');
const small = { now, days: 3, ordersPerDay: 30, exchangeOrdersPerDay: 12, depositsPerDay: 2, withdrawalsPerDay: 2 };

let group: SandboxAccounts;
beforeAll(async () => {
  group = await startSandboxAccounts({
    ...small,
    seed: 11,
    accounts: [
      { name: 'acme-eu', discrepancies: true },
      { name: 'globex' },
      // Its own seed and public key; a status for wrong keys that the first account does not use.
      { name: 'initech', seed: 99, partnerPublicKey: 'pk_custom', discrepancies: true, authFailureStatus: 403 },
    ],
  });
});
afterAll(async () => group?.close());

function partnerHeaders(sb: Sandbox): Record<string, string> {
  return { 'X-Public-API-Key': sb.env.PARTNER_PUBLIC_KEY!, 'X-Private-API-Key': sb.env.PARTNER_PRIVATE_KEY! };
}

async function partnerOrderIds(url: string, headers: Record<string, string>): Promise<string[]> {
  const ids: string[] = [];
  for (let offset = 0; ; offset += 50) {
    const res = await fetch(`${url}${PARTNER}/orders?limit=50&offset=${offset}`, { headers });
    expect(res.status).toBe(200);
    const page = (await res.json()) as Array<{ orderId: string }>;
    ids.push(...page.map((o) => String(o.orderId)));
    if (page.length < 50) return ids;
  }
}

async function fillKeys(url: string, token: string): Promise<string[]> {
  const res = await fetch(`${url}/v3/exchange/fills?limit=1000`, { headers: { 'X-API-Token': token } });
  expect(res.status).toBe(200);
  const fills = (await res.json()) as Array<{ execId: unknown; timestamp: number; symbol: string }>;
  return fills.map((f) => `${String(f.execId)}@${f.timestamp}:${f.symbol}`).reverse();
}

const control = async (path: string, method = 'GET'): Promise<{ status: number; body: any }> => {
  const res = await fetch(`${group.url}/_sandbox${path}`, { method });
  return { status: res.status, body: await res.json() };
};

describe('startSandboxAccounts', () => {
  it('gives each account its seed, its keys and its prefixed variables', () => {
    expect(Object.keys(group.accounts)).toEqual(['acme-eu', 'globex', 'initech']);
    expect(group.names).toEqual(['acme-eu', 'globex', 'initech']);
    expect(group.accounts['acme-eu']!.options.seed).toBe(11);
    expect(group.accounts.globex!.options.seed).toBe(12);
    expect(group.accounts.initech!.options.seed).toBe(99);
    const url = group.url;
    expect(group.env).toEqual({
      ACME_EU_PARTNER_API_URL: url,
      ACME_EU_PARTNER_PUBLIC_KEY: 'pk_acme_eu_public',
      ACME_EU_PARTNER_PRIVATE_KEY: 'sk_acme_eu_private',
      ACME_EU_EXCHANGE_API_URL: `${url}/v3/exchange`,
      ACME_EU_EXCHANGE_API_TOKEN: 'xt_acme_eu_token',
      GLOBEX_PARTNER_API_URL: url,
      GLOBEX_PARTNER_PUBLIC_KEY: 'pk_globex_public',
      GLOBEX_PARTNER_PRIVATE_KEY: 'sk_globex_private',
      GLOBEX_EXCHANGE_API_URL: `${url}/v3/exchange`,
      GLOBEX_EXCHANGE_API_TOKEN: 'xt_globex_token',
      INITECH_PARTNER_API_URL: url,
      INITECH_PARTNER_PUBLIC_KEY: 'pk_custom',
      INITECH_PARTNER_PRIVATE_KEY: 'sk_initech_private',
      INITECH_EXCHANGE_API_URL: `${url}/v3/exchange`,
      INITECH_EXCHANGE_API_TOKEN: 'xt_initech_token',
    });
    const globex = group.accounts.globex!;
    expect(globex.url).toBe(url);
    expect(globex.env).toEqual({
      PARTNER_API_URL: url,
      PARTNER_PUBLIC_KEY: 'pk_globex_public',
      PARTNER_PRIVATE_KEY: 'sk_globex_private',
      EXCHANGE_API_URL: `${url}/v3/exchange`,
      EXCHANGE_API_TOKEN: 'xt_globex_token',
    });
  });

  it("serves each account's records to its own keys", async () => {
    const served: Record<string, { orders: string[]; fills: string[] }> = {};
    for (const [name, sb] of Object.entries(group.accounts)) {
      const orders = await partnerOrderIds(group.url, partnerHeaders(sb));
      const fills = await fillKeys(group.url, sb.env.EXCHANGE_API_TOKEN!);
      const data = sb.data;
      expect(orders.length).toBeGreaterThan(0);
      expect(orders.sort()).toEqual(
        data
          .partnerOrders()
          .map((o) => o.orderId)
          .sort(),
      );
      expect(fills.length).toBe(data.fills().length);
      expect(fills).toEqual(data.fills().map((f) => `${f.execId}@${f.timestamp}:${f.symbol}`));
      served[name] = { orders, fills };
    }
    expect(served.globex!.fills).not.toEqual(served['acme-eu']!.fills);
    expect(served.initech!.fills).not.toEqual(served['acme-eu']!.fills);
    expect(group.accounts.globex!.data.partnerOrderRecords()).not.toEqual(
      group.accounts['acme-eu']!.data.partnerOrderRecords(),
    );
  });

  it("refuses a key of no account as the first account refuses a wrong key; mixed accounts' keys too", async () => {
    const acme = group.accounts['acme-eu']!;
    const globex = group.accounts.globex!;
    const badPartner = await fetch(`${group.url}${PARTNER}/orders?limit=5`, {
      headers: { 'X-Public-API-Key': 'pk_nobody', 'X-Private-API-Key': 'sk_nobody' },
    });
    expect(badPartner.status).toBe(401);
    expect(await badPartner.json()).toEqual({
      errors: [{ type: 'UNAUTHORIZED', message: 'invalid X-Public-API-Key' }],
    });
    const noKey = await fetch(`${group.url}${PARTNER}/currencies`);
    expect(noKey.status).toBe(401);
    const badToken = await fetch(`${group.url}/v3/exchange/fills?limit=5`, { headers: { 'X-API-Token': 'xt_nobody' } });
    expect(badToken.status).toBe(401);
    expect(await badToken.json()).toEqual({ error: 'invalid API token' });
    // acme's public key with globex's private key: acme's check refuses the private key.
    const mixed = await fetch(`${group.url}${PARTNER}/orders?limit=5`, {
      headers: {
        'X-Public-API-Key': acme.env.PARTNER_PUBLIC_KEY!,
        'X-Private-API-Key': globex.env.PARTNER_PRIVATE_KEY!,
      },
    });
    expect(mixed.status).toBe(401);
    expect(((await mixed.json()) as any).errors[0].message).toBe('invalid X-Private-API-Key');
    // initech answers its own wrong private key with its own status.
    const initech = await fetch(`${group.url}${PARTNER}/orders?limit=5`, {
      headers: { 'X-Public-API-Key': 'pk_custom', 'X-Private-API-Key': 'sk_wrong' },
    });
    expect(initech.status).toBe(403);
  });

  it('keeps expected breaks per account, served by control routes with ?account=', async () => {
    const acme = group.accounts['acme-eu']!.expectedBreaks();
    const initech = group.accounts.initech!.expectedBreaks();
    expect(acme.length).toBeGreaterThanOrEqual(19);
    expect(initech.length).toBeGreaterThanOrEqual(19);
    expect(group.accounts.globex!.expectedBreaks()).toEqual([]);
    expect(initech).not.toEqual(acme);
    expect((await control('/expected-breaks')).body).toEqual(acme);
    expect((await control('/expected-breaks?account=acme-eu')).body).toEqual(acme);
    expect((await control('/expected-breaks?account=initech')).body).toEqual(initech);
    expect((await control('/expected-breaks?account=globex')).body).toEqual([]);
  });

  it('addresses the right world with control routes', async () => {
    expect(await control('/accounts')).toEqual({ status: 200, body: ['acme-eu', 'globex', 'initech'] });
    expect((await control('/env?account=globex')).body).toEqual(group.accounts.globex!.env);
    const unknown = await control('/expected-breaks?account=hooli');
    expect(unknown.status).toBe(404);
    expect(unknown.body.error).toMatch(/no sandbox account "hooli" \(accounts: acme-eu, globex, initech\)/);

    // Fixing a code on initech leaves acme's case of the same code planted.
    const code = 'E_FEE_RATE';
    const count = (sb: Sandbox): number => sb.expectedBreaks().filter((b) => b.code === code).length;
    const acmeBefore = count(group.accounts['acme-eu']!);
    expect(acmeBefore).toBeGreaterThan(0);
    expect(count(group.accounts.initech!)).toBeGreaterThan(0);
    expect(await control(`/fix?code=${code}&account=initech`, 'POST')).toEqual({ status: 200, body: { fixed: code } });
    expect(count(group.accounts.initech!)).toBe(0);
    expect(count(group.accounts['acme-eu']!)).toBe(acmeBefore);

    // Elapsing globex's clock moves only globex's.
    const clocks = Object.fromEntries(Object.entries(group.accounts).map(([n, sb]) => [n, sb.data.clock()]));
    const hour = 3_600_000;
    const elapsed = await control(`/elapse?ms=${hour}&account=globex`, 'POST');
    expect(elapsed).toEqual({ status: 200, body: { clock: clocks.globex! + hour } });
    expect(group.accounts.globex!.data.clock()).toBe(clocks.globex! + hour);
    expect(group.accounts['acme-eu']!.data.clock()).toBe(clocks['acme-eu']);
    expect(group.accounts.initech!.data.clock()).toBe(clocks.initech);
  });

  it("calls each account's request hooks for its own requests only", async () => {
    const seen: string[] = [];
    const offs = Object.entries(group.accounts).map(([name, sb]) =>
      sb.onRequest((info) => seen.push(`${name} ${info.api} ${info.path}`)),
    );
    try {
      await fetch(`${group.url}/v3/exchange/accounts`, { headers: { 'X-API-Token': 'xt_initech_token' } });
      await fetch(`${group.url}${PARTNER}/currencies`, { headers: { 'X-Public-API-Key': 'pk_globex_public' } });
      await fetch(`${group.url}/v3/exchange/fills`, { headers: { 'X-API-Token': 'xt_nobody' } });
    } finally {
      for (const off of offs) off();
    }
    expect(seen).toEqual(['initech exchange /accounts', 'globex partner /currencies', 'acme-eu exchange /fills']);
  });

  it('rejects names that collide and keys two accounts share', async () => {
    expect(envPrefix('acme-eu')).toBe('ACME_EU_');
    expect(envPrefix('Globex.us 2')).toBe('GLOBEX_US_2_');
    expect(accountNameProblems(['acme', 'globex'])).toEqual([]);
    await expect(startSandboxAccounts({ ...small, accounts: [{ name: 'a-b' }, { name: 'A_B' }] })).rejects.toThrow(
      'sandbox accounts: account names "a-b" and "A_B" map to the same variable prefix A_B_',
    );
    await expect(startSandboxAccounts({ ...small, accounts: [{ name: 'x' }, { name: 'x' }] })).rejects.toThrow(
      /account name "x" is given twice/,
    );
    await expect(startSandboxAccounts({ ...small, accounts: [{ name: ' ' }] })).rejects.toThrow(/empty/);
    await expect(startSandboxAccounts({ ...small, accounts: [] })).rejects.toThrow(/no account names/);
    await expect(
      startSandboxAccounts({
        ...small,
        accounts: [
          { name: 'x', exchangeToken: 'same' },
          { name: 'y', exchangeToken: 'same' },
        ],
      }),
    ).rejects.toThrow('sandbox accounts: "x" and "y" have the same exchange token "same"');
    await expect(
      startSandboxAccounts({ ...small, accounts: [{ name: 'x' }, { name: 'y', days: 1, discrepancies: true }] }),
    ).rejects.toThrow(/sandbox account "y": sandbox: --discrepancies needs --days 2/);
  });
});

describe('one account, as before', () => {
  it('startSandbox with the default options serves the world those options build', async () => {
    const sb = await startSandbox({ now });
    try {
      expect(sb.env.PARTNER_PUBLIC_KEY).toBe('pk_sandbox_public_0001');
      expect(sb.env.PARTNER_PRIVATE_KEY).toBe('sk_sandbox_private_0001');
      expect(sb.env.EXCHANGE_API_TOKEN).toBe('xt_sandbox_token_0001');
      const w = new World(resolveOptions({ now }));
      generateHistory(w);
      const direct = Array.from({ length: w.fills.length }, (_, i) => w.fills.at(i));
      expect(direct.length).toBeGreaterThan(500);
      expect(sb.data.fills().slice(0, 5)).toEqual(direct.slice(0, 5));
      expect(sb.data.fills()).toEqual(direct);
      expect(sb.data.partnerOrderRecords()).toEqual(w.partnerOrders);
      // Served over HTTP: the newest (up to 1000) fills and every visible partner order are the world's.
      const fills = await fillKeys(sb.url, sb.env.EXCHANGE_API_TOKEN!);
      expect(fills.length).toBe(Math.min(1000, direct.length));
      expect(fills).toEqual(direct.slice(-fills.length).map((f) => `${f.execId}@${f.timestamp}:${f.symbol}`));
      const visible = w.partnerOrders.filter((o) => o.createdAtMs <= w.clock()).map((o) => o.orderId);
      expect((await partnerOrderIds(sb.url, partnerHeaders(sb))).sort()).toEqual(visible.sort());

      // An account of a group with the same options (and the default seed) holds the same data.
      const solo = await startSandboxAccounts({ now, accounts: [{ name: 'solo' }] });
      try {
        const one = solo.accounts.solo!.data;
        expect(one.fills()).toEqual(sb.data.fills());
        expect(one.partnerOrderRecords()).toEqual(sb.data.partnerOrderRecords());
        expect(one.exchangeOrders()).toEqual(sb.data.exchangeOrders());
        expect(one.deposits()).toEqual(sb.data.deposits());
        expect(one.withdrawals()).toEqual(sb.data.withdrawals());
        expect(one.balances()).toEqual(sb.data.balances());
      } finally {
        await solo.close();
      }
    } finally {
      await sb.close();
    }
  });

  it("draws an account's faults from its own seeded stream, as a sandbox of its own", async () => {
    const faults = { ...NO_FAULTS, serverError500: 0.3, rateLimited: 0.2 };
    const opts = { ...small, days: 2, ordersPerDay: 5, exchangeOrdersPerDay: 5, seed: 21, faults };
    const single = await startSandbox(opts);
    const pair = await startSandboxAccounts({ ...opts, accounts: [{ name: 'a' }, { name: 'b' }] });
    try {
      const statuses = async (url: string, token: string): Promise<number> =>
        (await fetch(`${url}/v3/exchange/fills?limit=2`, { headers: { 'X-API-Token': token } })).status;
      const alone: number[] = [];
      const grouped: number[] = [];
      for (let i = 0; i < 30; i++) {
        alone.push(await statuses(single.url, single.env.EXCHANGE_API_TOKEN!));
        // b's requests between a's draw from b's stream, not a's.
        if (i % 3 === 0) await statuses(pair.url, 'xt_b_token');
        grouped.push(await statuses(pair.url, 'xt_a_token'));
      }
      expect(new Set(alone)).toEqual(new Set([200, 429, 500]));
      expect(grouped).toEqual(alone);
    } finally {
      await pair.close();
      await single.close();
    }
  });
});

describe('ramp-recon sandbox --accounts (CLI)', () => {
  const cli = (args: string[]) => {
    const run = clocked('node_modules/vite-node/vite-node.mjs', process.env);
    return spawn(process.execPath, [...run.argv, 'src/cli/main.ts', 'sandbox', ...args], {
      cwd: process.cwd(),
      env: run.env,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
  };

  it("prints every account's prefixed exports and a config of the accounts", async () => {
    const child = cli(['--port', '0', '--days', '2', '--orders-per-day', '10', '--accounts', 'acme-eu,globex']);
    let out = '';
    child.stdout.on('data', (c: Buffer) => (out += c.toString()));
    const exited = new Promise<number | null>((r) => child.once('exit', (code) => r(code)));
    try {
      for (let i = 0; i < 600 && !out.includes('# globex: fills'); i++) await new Promise((r) => setTimeout(r, 100));
      const env: Record<string, string> = {};
      for (const m of out.matchAll(/^export ([A-Z_]+)=(.*)$/gm)) env[m[1]!] = m[2]!;
      expect(Object.keys(env)).toEqual(
        ['ACME_EU_', 'GLOBEX_'].flatMap((p) =>
          [
            'PARTNER_API_URL',
            'PARTNER_PUBLIC_KEY',
            'PARTNER_PRIVATE_KEY',
            'EXCHANGE_API_URL',
            'EXCHANGE_API_TOKEN',
          ].map((k) => p + k),
        ),
      );
      expect(env.GLOBEX_EXCHANGE_API_TOKEN).toBe('xt_globex_token');
      expect(env.ACME_EU_PARTNER_PUBLIC_KEY).toBe('pk_acme_eu_public');
      expect(out).toContain(
        '# suggested config: {"accounts":[{"name":"acme-eu","partner":{"feeRate":"0.01"}},{"name":"globex","partner":{"feeRate":"0.01"}}]}',
      );
      const accounts = await fetch(`${env.GLOBEX_PARTNER_API_URL}/_sandbox/accounts`);
      expect(await accounts.json()).toEqual(['acme-eu', 'globex']);
      const fills = await fetch(`${env.GLOBEX_EXCHANGE_API_URL}/fills?limit=2`, {
        headers: { 'X-API-Token': env.GLOBEX_EXCHANGE_API_TOKEN! },
      });
      expect(((await fills.json()) as unknown[]).length).toBe(2);
      child.kill('SIGTERM');
      expect([0, 143]).toContain(await exited);
    } finally {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    }
  });

  it('rejects empty and colliding names with exit code 2, naming the flag', async () => {
    const child = cli(['--accounts', 'acme,,ACME']);
    let err = '';
    child.stderr.on('data', (c: Buffer) => (err += c.toString()));
    expect(await new Promise<number | null>((r) => child.once('exit', (c) => r(c)))).toBe(2);
    expect(err).toContain('--accounts: an account name is empty (got "acme,,ACME")');
    expect(err).toContain(
      '--accounts: account names "acme" and "ACME" map to the same variable prefix ACME_ (got "acme,,ACME")',
    );
  });
});
