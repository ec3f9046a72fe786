import { describe, expect, it } from 'vitest';
import { loadConfig, maskedConfig, configHash } from '../../src/config/load.js';
import { problemsOf, writeConfig } from '../helpers/config.js';

describe('loadConfig', () => {
  it('applies the documented defaults with an empty environment', () => {
    const config = loadConfig({ env: {}, cwd: '/srv/rr' });
    expect(config.account).toBe('default');
    expect(config.partner.params).toEqual({
      offset: 'offset',
      from: 'from',
      to: 'to',
      outputCurrency: 'outputCurrency',
    });
    expect(config.exchange.withdrawalDebitStates).toEqual(['PENDING', 'COMPLETED']);
    expect(config.exchange.feeCurrency).toBe('counter');
    expect(config.exchange.account).toBe('primary');
    expect(config.tolerances.usd).toBe('0.01');
    expect(config.staleAfterHours).toEqual({ partnerOrder: 24, deposit: 24, withdrawal: 24 });
    expect(config.schedule).toEqual({ cron: '0 2 * * *', timezone: 'UTC', deadlineMinutes: 240 });
    expect(config.workers).toEqual({ concurrency: 1, retryLimit: 2, retryDelaySeconds: 30, heartbeatSeconds: 30 });
    expect(config.partner.lookbackDays).toBe(3);
    expect(config.database).toEqual({ url: undefined, dataDir: '/srv/rr/data' });
    expect(config.reportsDir).toBe('/srv/rr/reports');
    expect(Object.isFrozen(config.partner.params)).toBe(true);
  });

  it('reports a bad key, a bad URL and a missing secret together, naming key and value', () => {
    const path = writeConfig({ partner: { feeRate: '1%', walets: [] } });
    const problems = problemsOf(() =>
      loadConfig({
        env: { RAMP_RECON_CONFIG: path, PARTNER_API_URL: 'not a url', EXCHANGE_API_URL: 'https://x/v3/exchange' },
      }),
    );
    expect(problems).toEqual([
      'environment variable PARTNER_API_URL: must be an http(s) URL (got "not a url")',
      'config key partner.feeRate: must be a decimal string such as "0.01" (got "1%")',
      'config key partner.walets: unknown key (did you mean partner.wallets?)',
      'environment variable EXCHANGE_API_TOKEN: required when EXCHANGE_API_URL is set',
    ]);
  });

  it('never prints the value of a secret, and masks secrets in the effective config', () => {
    const config = loadConfig({
      env: {
        PARTNER_API_URL: 'http://localhost:4010',
        PARTNER_PUBLIC_KEY: 'pub-secret-1',
        PARTNER_PRIVATE_KEY: 'priv-secret-2',
        EXCHANGE_API_URL: 'http://localhost:4010/v3/exchange',
        EXCHANGE_API_TOKEN: 'tok-secret-3',
        SMTP_URL: 'smtp://user:smtp-secret-4@localhost:2525',
      },
      configPath: writeConfig({ email: { from: 'recon@example.com', to: ['finance@example.com'] } }),
    });
    const text = JSON.stringify(maskedConfig(config));
    for (const secret of ['pub-secret-1', 'priv-secret-2', 'tok-secret-3', 'smtp-secret-4'])
      expect(text).not.toContain(secret);
    expect(text).toContain('smtp://user:********@localhost:2525');
    expect(configHash(config)).toMatch(/^[0-9a-f]{16}$/);
  });

  it('requires email.from and email.to with SMTP_URL, and says the file is missing', () => {
    expect(problemsOf(() => loadConfig({ env: { SMTP_URL: 'smtp://localhost:25' } }))).toEqual([
      'config key email.from / email.to: required when SMTP_URL is set',
    ]);
    expect(problemsOf(() => loadConfig({ env: {}, configPath: '/nonexistent/rr.json' }))).toEqual([
      'config file /nonexistent/rr.json: not found',
    ]);
  });
});
