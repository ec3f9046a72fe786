import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SMTPServer } from 'smtp-server';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSandbox } from '../helpers/sandbox.js';
import { createTestStore, storeKinds, type TestStore } from '../helpers/db.js';
import { brief, childEnv, freePort, runCli } from './helpers.js';

type Sandbox = Awaited<ReturnType<typeof startSandbox>>;
interface Check {
  part: string;
  status: string;
  text: string;
  fix?: string;
}

describe.each(storeKinds)('ramp-recon doctor [%s]', (kind) => {
  let sandbox: Sandbox;
  let pg: TestStore | undefined;
  let smtp: SMTPServer;
  let smtpPort: number;
  let busy: Server;
  let busyPort: number;
  let dir: string;
  let env: NodeJS.ProcessEnv;

  beforeAll(async () => {
    sandbox = await startSandbox({
      seed: 3,
      days: 1,
      ordersPerDay: 2,
      fillsPerOrder: 1,
      discrepancies: false,
      live: false,
      faults: 'none',
    });
    if (kind === 'postgres') pg = await createTestStore('postgres');
    smtpPort = await freePort();
    // The test SMTP server wants a login, as a real relay does: doctor must authenticate without sending.
    smtp = new SMTPServer({
      // Its EHLO states SIZE 5000000, as a relay with a limit does: doctor reports it.
      size: 5_000_000,
      authOptional: false,
      disabledCommands: ['STARTTLS'],
      onAuth: (auth, _session, cb) =>
        auth.username === 'recon' && auth.password === 'mail-secret-42'
          ? cb(null, { user: 'recon' })
          : cb(new Error('invalid login')),
      onData: (_stream, _session, cb) => cb(new Error('doctor must not send mail')),
    });
    await new Promise<void>((r) => smtp.listen(smtpPort, '127.0.0.1', r));
    busy = createServer();
    await new Promise<void>((r) => busy.listen(0, '127.0.0.1', r));
    busyPort = (busy.address() as { port: number }).port;
    dir = mkdtempSync(join(tmpdir(), `rr-doctor-${kind}-`));
    env = childEnv({
      ...sandbox.env,
      RAMP_RECON_DATA_DIR: join(dir, 'data'),
      REPORTS_DIR: join(dir, 'reports'),
      DATABASE_URL: pg?.url,
      SMTP_URL: `smtp://recon:mail-secret-42@127.0.0.1:${smtpPort}`,
      LOG_LEVEL: 'warn',
    });
  }, 120_000);

  afterAll(async () => {
    await new Promise<void>((r) => smtp?.close(() => r()));
    await new Promise<void>((r) => busy?.close(() => r()));
    await sandbox?.close();
    await pg?.drop();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  const config = (body: unknown) => {
    const path = join(dir, `config-${Math.random().toString(36).slice(2)}.json`);
    writeFileSync(path, JSON.stringify(body));
    return path;
  };
  const doctor = async (
    extraEnv: Record<string, string | undefined>,
    body: unknown = { email: { from: 'recon@example.com', to: ['finance@example.com'] } },
  ) => {
    const result = await runCli(['doctor', '--json', '--timeout-ms', '3000'], {
      ...env,
      ...extraEnv,
      RAMP_RECON_CONFIG: config(body),
    });
    const parsed = JSON.parse(result.stdout || '{}') as { ok: boolean; checks: Check[] };
    return { ...result, ...parsed, part: (name: string) => parsed.checks.find((c) => c.part === name) };
  };

  it('says ok for the database, both APIs (their keys accepted), SMTP (authenticated, no mail sent) and a free webhook port', async () => {
    const port = await freePort();
    const r = await doctor(
      {},
      {
        email: { from: 'recon@example.com', to: ['finance@example.com'], maxMessageBytes: 4_000_000 },
        webhooks: { port, host: '127.0.0.1' },
      },
    );
    expect(r.code, brief(r.stderr)).toBe(0);
    expect(r.ok).toBe(true);
    expect(r.checks.map((c) => `${c.part}:${c.status}`)).toEqual(
      expect.arrayContaining([
        'config:ok',
        'reports folder:ok',
        'database:ok',
        'partner API:ok',
        'exchange API:ok',
        'SMTP:ok',
        'webhook port:ok',
      ]),
    );
    // The server TEST_DATABASE_URL names, wherever it listens.
    const server = kind === 'postgres' ? new URL(process.env.TEST_DATABASE_URL!) : null;
    const at = server
      ? `${server.hostname}${server.port ? `:${server.port}` : ''}`.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')
      : '';
    expect(r.part('database')?.text).toMatch(
      server
        ? new RegExp(`PostgreSQL at ${at}.*connected, \\d+ migrations applied, run lock free`)
        : /embedded database .*connected/,
    );
    expect(r.part('partner API')?.text).toMatch(/public key accepted .*private key accepted/);
    expect(r.part('SMTP')?.text).toMatch(/connected and authenticated \(no mail sent\)/);
    expect(r.part('SMTP')?.text).toMatch(
      /the relay accepts messages up to 5000000 bytes \(SIZE\); email\.maxMessageBytes 4000000$/,
    );
    expect(r.stdout).not.toContain('mail-secret-42');
    // What to register with the partner: plain HTTP here (no TLS files), any path accepted with one account.
    expect(r.part('webhook URL')).toMatchObject({
      status: 'ok',
      text: `register http://127.0.0.1:${port}/webhooks/default with the partner (any path is accepted with one account; plain HTTP here: the partner delivers over HTTPS only, so register your TLS proxy with this path)`,
    });

    // The default limit (10 MB) is above the relay's: a warning with the value to set, not a failure.
    const over = await doctor({}, { email: { from: 'recon@example.com', to: ['finance@example.com'] } });
    expect(over.code, brief(over.stderr)).toBe(0);
    expect(over.part('SMTP')).toMatchObject({
      status: 'warn',
      fix: expect.stringMatching(/^set email\.maxMessageBytes to at most 5000000/),
    });
  }, 90_000);

  it('names the part that fails and what to do: a closed database port, a closed API port, a refused API key, a wrong SMTP password, a port in use; exit 2', async () => {
    const closed = await freePort();
    const r = await doctor(
      {
        DATABASE_URL: `postgres://nobody:db-secret-99@127.0.0.1:${closed}/x`,
        EXCHANGE_API_TOKEN: 'wrong-token-123',
        PARTNER_API_URL: `http://127.0.0.1:${closed}`,
        SMTP_URL: `smtp://recon:wrong-pass-77@127.0.0.1:${smtpPort}`,
      },
      {
        email: { from: 'recon@example.com', to: ['finance@example.com'] },
        webhooks: { port: busyPort, host: '127.0.0.1' },
      },
    );
    expect(r.code).toBe(2);
    expect(r.ok).toBe(false);
    expect(r.part('database')).toMatchObject({ status: 'fail', fix: expect.stringContaining('DATABASE_URL') });
    expect(r.part('database')?.text).toMatch(
      new RegExp(`PostgreSQL at 127\\.0\\.0\\.1:${closed}/x as nobody: connection refused`),
    );
    expect(r.part('exchange API')).toMatchObject({
      status: 'fail',
      fix: expect.stringContaining('EXCHANGE_API_TOKEN'),
    });
    expect(r.part('exchange API')?.text).toMatch(/Exchange API rejected the X-API-Token header/i);
    expect(r.part('partner API')).toMatchObject({ status: 'fail', fix: expect.stringContaining('PARTNER_API_URL') });
    expect(r.part('partner API')?.text).toMatch(
      new RegExp(`^Partner API at http://127\\.0\\.0\\.1:${closed} unreachable on GET /currencies`),
    );
    expect(r.part('SMTP')).toMatchObject({ status: 'fail', fix: expect.stringContaining('SMTP_URL') });
    expect(r.part('webhook port')).toMatchObject({ status: 'warn', text: `127.0.0.1:${busyPort} is in use` });
    for (const secret of ['db-secret-99', 'wrong-token-123', 'wrong-pass-77'])
      expect(r.stdout + r.stderr).not.toContain(secret);

    const text = await runCli(['doctor', '--timeout-ms', '3000'], {
      ...env,
      DATABASE_URL: `postgres://nobody@127.0.0.1:${closed}/x`,
      SMTP_URL: undefined,
      RAMP_RECON_CONFIG: config({}),
    });
    expect(text.code).toBe(2);
    expect(text.stdout).toMatch(
      /^fail\s+database\s+PostgreSQL at 127\.0\.0\.1:\d+\/x as nobody: connection refused .*; fix: check DATABASE_URL/m,
    );
    expect(text.stdout).toMatch(/problems?: .*database/);
  }, 60_000);

  it("prints each account's webhook URL of a multi-account config, https with the TLS files set", async () => {
    const port = await freePort();
    const [cert, key] = ['cert.pem', 'key.pem'].map((f) => {
      const path = join(dir, f);
      writeFileSync(path, 'not read by doctor beyond being readable');
      return path;
    });
    const r = await doctor(
      {},
      {
        accounts: [{ name: 'acme' }, { name: 'acme-eu' }, { name: 'globex' }],
        email: { from: 'recon@example.com', to: ['finance@example.com'] },
        webhooks: { port, host: '127.0.0.1', tlsCertFile: cert, tlsKeyFile: key },
      },
    );
    const urls = r.checks.filter((c) => c.part.startsWith('webhook URL'));
    expect(urls).toEqual(
      ['acme', 'acme-eu', 'globex'].map((name) => ({
        part: `webhook URL [${name}]`,
        status: 'ok',
        text: `register https://127.0.0.1:${port}/webhooks/${name} with the partner for ${name}'s organisation`,
        ms: expect.any(Number),
      })),
    );
    expect(r.part('webhook port')).toMatchObject({
      status: 'ok',
      text: `127.0.0.1:${port} can be listened on (HTTPS)`,
    });

    // No webhooks section: no URL to register, and the port check says why.
    const none = await doctor(
      {},
      { accounts: [{ name: 'acme' }], email: { from: 'recon@example.com', to: ['f@example.com'] } },
    );
    expect(none.checks.filter((c) => c.part.startsWith('webhook URL'))).toEqual([]);
    expect(none.part('webhook port')).toMatchObject({ status: 'skip' });
  }, 60_000);

  it('two accounts: beta unreachable, then beta refused, each fix names the BETA_ variable it read, never the unprefixed one', async () => {
    const closed = await freePort();
    const accounts = {
      accounts: [{ name: 'alpha' }, { name: 'beta' }],
      email: { from: 'recon@example.com', to: ['finance@example.com'] },
    };
    // alpha is the sandbox, beta's exchange is at a closed port; no unprefixed source variable is set at all
    const prefixed = (prefix: string, over: Record<string, string> = {}) =>
      Object.fromEntries(
        ['PARTNER_API_URL', 'PARTNER_PUBLIC_KEY', 'PARTNER_PRIVATE_KEY', 'EXCHANGE_API_URL', 'EXCHANGE_API_TOKEN'].map(
          (name) => [`${prefix}${name}`, over[name] ?? sandbox.env[name]],
        ),
      );
    const unprefixed = Object.fromEntries(Object.keys(prefixed('')).map((name) => [name, undefined]));
    const unreachable = await doctor(
      {
        ...unprefixed,
        ...prefixed('ALPHA_'),
        ...prefixed('BETA_', { EXCHANGE_API_URL: `http://127.0.0.1:${closed}/v3/exchange` }),
      },
      accounts,
    );
    expect(unreachable.code, brief(unreachable.stderr)).toBe(2);
    expect(unreachable.part('exchange API [alpha]')?.status).toBe('ok');
    expect(unreachable.part('exchange API [beta]')).toMatchObject({
      status: 'fail',
      fix: 'check BETA_EXCHANGE_API_URL and the network',
    });
    expect(unreachable.part('exchange API [beta]')?.text).toMatch(/unreachable on GET \/accounts after 1 attempt:/);

    const refused = await doctor(
      {
        ...unprefixed,
        ...prefixed('ALPHA_'),
        ...prefixed('BETA_', { EXCHANGE_API_TOKEN: 'beta-wrong-token-55' }),
      },
      accounts,
    );
    expect(refused.code, brief(refused.stderr)).toBe(2);
    expect(refused.part('exchange API [beta]')).toMatchObject({ status: 'fail', fix: 'check BETA_EXCHANGE_API_TOKEN' });
    expect(refused.part('exchange API [beta]')?.text).toMatch(/Exchange API rejected the X-API-Token header \(401\)/);
    for (const r of [unreachable, refused]) {
      const beta = JSON.stringify(r.checks.filter((c) => c.part.endsWith('[beta]')));
      expect(beta).not.toMatch(/(?<![A-Z0-9_])(EXCHANGE_API_URL|EXCHANGE_API_TOKEN|PARTNER_[A-Z_]+)/);
    }
    expect(refused.stdout + refused.stderr).not.toContain('beta-wrong-token-55');
  }, 60_000);

  it('`config check --connect` runs the same checks', async () => {
    const r = await runCli(['config', 'check', '--connect', '--timeout-ms', '3000'], {
      ...env,
      RAMP_RECON_CONFIG: config({ email: { from: 'recon@example.com', to: ['finance@example.com'] } }),
    });
    expect(r.code, brief(r.stderr)).toBe(0);
    expect(r.stdout).toMatch(/^ok\s+database\s/m);
    expect(r.stdout).toMatch(/^ok\s+exchange API\s/m);
    expect(r.stdout).toMatch(/all checks passed/);
  }, 60_000);
});
