import { describe, expect, it } from 'vitest';
import { configHash, envPrefix, loadConfig, loadGroup, oneAccount, selectAccounts } from '../../src/config/load.js';
import { problemsOf, writeConfig } from '../helpers/config.js';
import { accountState, groupVerdict } from '../../src/report/group.js';
import { openBreakCounts } from '../../src/domain/index.js';

const ACME = {
  ACME_EU_PARTNER_API_URL: 'https://partner.acme.test/',
  ACME_EU_PARTNER_PUBLIC_KEY: 'pk-acme-1234',
  ACME_EU_PARTNER_PRIVATE_KEY: 'sk-acme-5678',
  ACME_EU_EXCHANGE_API_URL: 'https://exchange.acme.test',
  ACME_EU_EXCHANGE_API_TOKEN: 'xt-acme-9012',
};
const GLOBEX = {
  GLOBEX_PARTNER_API_URL: 'https://partner.globex.test',
  GLOBEX_PARTNER_PUBLIC_KEY: 'pk-globex-1234',
  GLOBEX_PARTNER_PRIVATE_KEY: 'sk-globex-5678',
  GLOBEX_EXCHANGE_API_URL: 'https://exchange.globex.test',
  GLOBEX_EXCHANGE_API_TOKEN: 'xt-globex-9012',
};

describe('accounts in the config', () => {
  it('reads each account its own prefixed variables, and the sections it does not set from the top level', () => {
    const group = loadGroup({
      env: {
        ...ACME,
        ...GLOBEX,
        PARTNER_API_URL: 'https://unprefixed.test',
        PARTNER_PRIVATE_KEY: 'x',
        PARTNER_PUBLIC_KEY: 'y',
      },
      configPath: writeConfig({
        partner: { feeRate: '0.01', lookbackDays: 5 },
        tolerances: { usd: '0.02' },
        accounts: [
          { name: 'acme-eu', partner: { wallets: ['0xabc'] }, exchange: { account: 'eu' }, rateGroup: 'acme-org' },
          {
            name: 'globex',
            partner: { feeRate: '0.02' },
            tolerances: { balance: '0.001' },
            email: { to: ['g@x.test'] },
          },
        ],
      }),
    });
    const [acme, globex] = group.accounts.map((a) => a.config);
    expect(group.accounts.map((a) => a.name)).toEqual(['acme-eu', 'globex']);
    expect(group.accounts.map((a) => a.envPrefix)).toEqual(['ACME_EU_', 'GLOBEX_']);
    expect(group.accounts.map((a) => a.emailTo)).toEqual([[], ['g@x.test']]);
    expect(group.settings.multiAccount).toBe(true);
    expect(group.settings).not.toHaveProperty('partner');
    expect(acme!.account).toBe('acme-eu');
    expect(acme!.multiAccount).toBe(true);
    expect(acme!.accountNames).toEqual(['acme-eu', 'globex']);
    expect(acme!.partner).toMatchObject({
      apiUrl: 'https://partner.acme.test',
      publicKey: 'pk-acme-1234',
      privateKey: 'sk-acme-5678',
      feeRate: '0.01',
      wallets: ['0xabc'],
      lookbackDays: 5,
    });
    expect(acme!.exchange).toMatchObject({
      apiUrl: 'https://exchange.acme.test',
      token: 'xt-acme-9012',
      account: 'eu',
    });
    expect(acme!.rateGroup).toBe('acme-org');
    expect(acme!.tolerances.usd).toBe('0.02');
    expect(globex!.partner).toMatchObject({ apiUrl: 'https://partner.globex.test', feeRate: '0.02', wallets: [] });
    expect(globex!.exchange.account).toBe('primary');
    expect(globex!.tolerances).toMatchObject({ usd: '0.02', balance: '0.001' });
    expect(globex!.rateGroup).toBe('globex');
    expect(globex!.accountEmailTo).toEqual(['g@x.test']);
    // a config hash per account: one account's change does not look like another's
    expect(configHash(acme!)).not.toBe(configHash(globex!));
    // every account's secrets are redacted from the shared logs
    expect(group.secrets).toEqual(
      expect.arrayContaining(['pk-acme-1234', 'sk-acme-5678', 'xt-acme-9012', 'pk-globex-1234', 'xt-globex-9012']),
    );
  });

  it('keeps a config without accounts exactly as it was: one account, the unprefixed variables', () => {
    const group = loadGroup({
      env: { PARTNER_API_URL: 'https://p.test', PARTNER_PUBLIC_KEY: 'pk-1234', PARTNER_PRIVATE_KEY: 'sk-1234' },
      configPath: writeConfig({ account: 'solo' }),
    });
    const config = group.accounts[0]!.config;
    expect(group.accounts.map((a) => a.name)).toEqual(['solo']);
    expect(config).toMatchObject({ account: 'solo', multiAccount: false, accountNames: ['solo'] });
    expect(config.partner.apiUrl).toBe('https://p.test');
  });

  it('names the account, the variable and the value of every problem', () => {
    const problems = problemsOf(() =>
      loadConfig({
        env: {
          ACME_PARTNER_API_URL: 'ftp://nope',
          GLOBEX_EXCHANGE_API_URL: 'https://x.test',
          GLOBEX_EXCHANGE_API_TOKEN: '',
        },
        configPath: writeConfig({
          account: 'old',
          accounts: [
            { name: 'acme' },
            { name: 'globex' },
            { name: 'ACME' },
            { name: 'bad name', partner: { feeRate: 1 } },
          ],
        }),
      }),
    );
    expect(problems).toEqual(
      expect.arrayContaining([
        'environment variable ACME_PARTNER_API_URL: must be an http(s) URL (got "ftp://nope")',
        'environment variable GLOBEX_EXCHANGE_API_TOKEN: required when GLOBEX_EXCHANGE_API_URL is set',
        'config key account: not used with accounts (got "old"); each account is named by its accounts[].name',
        'config key accounts.2.name: "ACME" reads the same environment variables (ACME_...) as "acme"; account names must be unique',
        expect.stringMatching(/^config key accounts\.3\.name: must be 1-63 letters.* \(got "bad name"\)$/),
        expect.stringMatching(/^config key accounts\.3\.partner\.feeRate: must be a decimal string in quotes/),
      ]),
    );
  });

  it('a config without accounts is a group of one account, with the unprefixed variables, on the same path', () => {
    const group = loadGroup({
      env: { EXCHANGE_API_URL: 'https://exchange.test', EXCHANGE_API_TOKEN: 'xt-single-1234', SMTP_URL: 'smtp://h:25' },
      configPath: writeConfig({ email: { from: 'r@x.test', to: ['f@x.test'] } }),
    });
    expect(group.accounts).toHaveLength(1);
    const [only] = group.accounts;
    expect(only).toMatchObject({ name: 'default', envPrefix: '', rateGroup: 'default', emailTo: ['f@x.test'] });
    expect(only!.config.exchange.token).toBe('xt-single-1234');
    expect(group.settings).toMatchObject({ multiAccount: false, accountNames: ['default'], smtpUrl: 'smtp://h:25' });
    expect(group.secrets).toContain('xt-single-1234');
    expect(loadConfig({ env: {}, configPath: writeConfig({}) }).account).toBe('default');
  });

  it('--account selects accounts in config order; an unknown one is named with the nearest; one-account commands need one', () => {
    const config = loadGroup({
      env: {},
      configPath: writeConfig({ accounts: [{ name: 'acme' }, { name: 'globex' }, { name: 'initech' }] }),
    });
    expect(selectAccounts(config, undefined).map((a) => a.name)).toEqual(['acme', 'globex', 'initech']);
    expect(selectAccounts(config, ['initech', 'acme']).map((a) => a.name)).toEqual(['acme', 'initech']);
    expect(problemsOf(() => selectAccounts(config, ['globx']))).toEqual([
      '--account: no account "globx" in the config (did you mean globex?); accounts: acme, globex, initech',
    ]);
    expect(oneAccount(config, ['globex']).name).toBe('globex');
    expect(problemsOf(() => oneAccount(config, undefined))).toEqual([
      '--account: this command works on one account; the config has 3 (acme, globex, initech): give --account NAME',
    ]);
    expect(envPrefix('acme-eu.2')).toBe('ACME_EU_2_');
  });
});

describe('the group verdict', () => {
  const none = openBreakCounts([]);
  it('never counts a failed or not-run account as reconciled', () => {
    expect(accountState('succeeded', none)).toBe('reconciled');
    expect(accountState('failed', none)).toBe('failed');
    expect(accountState('running', null)).toBe('not run');
    expect(accountState('pending', null)).toBe('not run');
    expect(accountState('succeeded', null)).toBe('not run');
    expect(groupVerdict([{ state: 'reconciled' }, { state: 'reconciled' }])).toEqual({
      text: 'all 2 accounts reconciled',
      tone: 'ok',
    });
    expect(
      groupVerdict([{ state: 'reconciled' }, { state: 'reconciled' }, { state: 'reconciled' }, { state: 'failed' }]),
    ).toEqual({ text: '3 of 4 accounts reconciled, 1 failed', tone: 'bad' });
    expect(groupVerdict([{ state: 'breaks' }, { state: 'not run' }])).toEqual({
      text: '0 of 2 accounts reconciled, 1 with open breaks, 1 not run',
      tone: 'bad',
    });
  });
});
