/** Secrets never printed, and keys never sent in clear text: `config check` and `doctor` as a user runs them. */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { childEnv, runCli } from './helpers.js';

const dir = mkdtempSync(join(tmpdir(), 'rr-secrets-tls-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const SECRETS = ['db-user-pass-1', 'db-query-pass-2', 'ssl-key-pass-3', 'smtp-pass-4', 'pk-secret-5', 'sk-secret-6'];
const SECRETS_TOO = ['xt-secret-7', 'url-token-8'];

function config(body: unknown): string {
  const path = join(dir, `config-${Math.random().toString(36).slice(2)}.json`);
  writeFileSync(path, JSON.stringify(body));
  return path;
}

function env(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  return childEnv({
    RAMP_RECON_DATA_DIR: join(dir, 'data'),
    REPORTS_DIR: join(dir, 'reports'),
    DATABASE_URL:
      'postgres://recon:db-user-pass-1@127.0.0.1:1/recon?password=db-query-pass-2&sslpassword=ssl-key-pass-3',
    SMTP_URL: 'smtp://mailer:smtp-pass-4@127.0.0.1:1',
    PARTNER_API_URL: 'http://127.0.0.1:1',
    PARTNER_PUBLIC_KEY: 'pk-secret-5',
    PARTNER_PRIVATE_KEY: 'sk-secret-6',
    EXCHANGE_API_URL: 'http://localhost:1/v3/exchange?token=url-token-8',
    EXCHANGE_API_TOKEN: 'xt-secret-7',
    LOG_LEVEL: 'warn',
    RAMP_RECON_CONFIG: config({ email: { from: 'recon@example.test', to: ['finance@example.test'] } }),
    ...extra,
  });
}

describe('secrets in config check', () => {
  it('masks the URL passwords, the credential query parameters and the keys', async () => {
    const r = await runCli(['config', 'check'], env());
    expect(r.code).toBe(0);
    for (const secret of [...SECRETS, ...SECRETS_TOO]) expect(r.stdout + r.stderr).not.toContain(secret);
    const shown = JSON.parse(r.stdout) as {
      database: { url: string };
      smtpUrl: string;
      exchange: { apiUrl: string };
      partner: { apiUrl: string };
    };
    expect(shown.database.url).toBe(
      'postgres://recon:********@127.0.0.1:1/recon?password=********&sslpassword=********',
    );
    expect(shown.smtpUrl).toBe('smtp://mailer:********@127.0.0.1:1');
    expect(shown.exchange.apiUrl).toBe('http://localhost:1/v3/exchange?token=********');
    // a URL without a credential is shown as written
    expect(shown.partner.apiUrl).toBe('http://127.0.0.1:1');
  });
});

describe('keys over plain http', () => {
  it('refuses http:// to a remote host, naming each variable (prefixed per account) and asking for https (exit 2)', async () => {
    const single = await runCli(['config', 'check'], env({ PARTNER_API_URL: 'http://partner.example.test/api' }));
    expect(single.code).toBe(2);
    expect(single.stderr).toContain(
      'environment variable PARTNER_API_URL: plain http:// to partner.example.test would send the API keys in clear ' +
        'text; use https://partner.example.test/api (or, for a test setup only, the config key allowInsecureHttp: true)',
    );
    const multi = await runCli(
      ['config', 'check'],
      env({
        RAMP_RECON_CONFIG: config({ accounts: [{ name: 'beta' }] }),
        BETA_EXCHANGE_API_URL: 'http://10.0.0.7:8080',
        BETA_EXCHANGE_API_TOKEN: 'xt-secret-7',
      }),
    );
    expect(multi.code).toBe(2);
    expect(multi.stderr).toContain('environment variable BETA_EXCHANGE_API_URL: plain http:// to 10.0.0.7');
    expect(multi.stderr).not.toContain('xt-secret-7');
  });

  it('accepts http:// to loopback, and to a remote host with allowInsecureHttp, which doctor warns about', async () => {
    const insecure = env({
      PARTNER_API_URL: 'http://partner.example.test',
      RAMP_RECON_CONFIG: config({ allowInsecureHttp: true, email: { from: 'r@x.test', to: ['f@x.test'] } }),
    });
    expect((await runCli(['config', 'check'], insecure)).code).toBe(0);
    const doctor = await runCli(['doctor', '--json', '--timeout-ms', '500'], insecure);
    const { checks } = JSON.parse(doctor.stdout) as { checks: Array<{ part: string; status: string; text: string }> };
    expect(checks.find((c) => c.part === 'TLS')).toMatchObject({
      status: 'warn',
      text: 'allowInsecureHttp is true: API keys over plain http:// and SMTP without TLS to remote hosts are accepted',
    });
    for (const secret of [...SECRETS, ...SECRETS_TOO]) expect(doctor.stdout + doctor.stderr).not.toContain(secret);
  }, 60_000);
});
