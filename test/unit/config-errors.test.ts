import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/load.js';
import { lineColumn } from '../../src/config/json-syntax.js';
import { ConfigError } from '../../src/errors.js';
import { closest } from '../../src/util/suggest.js';

function problemsFor(text: string): string[] {
  const dir = mkdtempSync(join(tmpdir(), 'rr-config-errors-'));
  const path = join(dir, 'config.json');
  writeFileSync(path, text);
  try {
    loadConfig({ env: {}, configPath: path });
  } catch (err) {
    if (err instanceof ConfigError) return err.problems;
    throw err;
  }
  throw new Error('expected a ConfigError');
}

describe('config errors a person can act on', () => {
  it('a JSON syntax error names the line and the column', () => {
    const problems = problemsFor('{\n  "partner": {\n    "feeRate": "0.01",\n  }\n}\n');
    expect(problems).toHaveLength(1);
    expect(problems[0]).toMatch(/config file .*config\.json: not valid JSON at line 4, column 3: /);
  });

  it('an empty file is a syntax error at line 1, column 1, reported once', () => {
    expect(problemsFor('')).toEqual([expect.stringMatching(/not valid JSON at line 1, column 1/)]);
  });

  it('a fee rate written as a JSON number is asked for in quotes, with the value', () => {
    const problems = problemsFor(JSON.stringify({ partner: { feeRate: 0.01 } }));
    expect(problems).toEqual([
      'config key partner.feeRate: must be a decimal string in quotes, such as "0.01" (a JSON number can lose digits) (got 0.01)',
    ]);
  });

  it('an unknown key gets the closest known key, at its own level', () => {
    const problems = problemsFor(
      JSON.stringify({ tolerance: {}, partner: { walets: [] }, schedule: { cronn: '0 2 * * *' } }),
    );
    expect(problems).toContain('config key tolerance: unknown key (did you mean tolerances?)');
    expect(problems).toContain('config key partner.walets: unknown key (did you mean partner.wallets?)');
    expect(problems).toContain('config key schedule.cronn: unknown key (did you mean schedule.cron?)');
  });

  it('an unknown key with nothing close lists the known keys', () => {
    const [problem] = problemsFor(JSON.stringify({ email: { zzzzzz: 1 } }));
    expect(problem).toBe('config key email.zzzzzz: unknown key (known keys of email: from, to, maxMessageBytes)');
  });

  it('rejects the cron expression and time zone that `schedule` would reject, so `config check` agrees with it', () => {
    const problems = problemsFor(JSON.stringify({ schedule: { cron: '0 25 * * *', timezone: 'Mars/Olympus' } }));
    expect(problems).toHaveLength(2);
    expect(problems[0]).toMatch(
      /^config key schedule\.cron: not a valid cron expression .*hour 25.* \(got "0 25 \* \* \*"\)$/,
    );
    expect(problems[1]).toBe(
      'config key schedule.timezone: not an IANA time zone such as "UTC" or "Europe/Berlin" (got "Mars/Olympus")',
    );
  });

  it('accepts a valid six-field cron in a real time zone', () => {
    const dir = mkdtempSync(join(tmpdir(), 'rr-config-ok-'));
    const path = join(dir, 'c.json');
    writeFileSync(path, JSON.stringify({ schedule: { cron: '30 15 2 * * 1-5', timezone: 'Europe/Berlin' } }));
    expect(loadConfig({ env: {}, configPath: path }).schedule.timezone).toBe('Europe/Berlin');
  });
});

describe('webhook receiver keys (issue 43)', () => {
  it('refuses webhooks.trustProxy in one line that names webhooks.trustedProxies, as a config error (exit 2)', () => {
    const dir = mkdtempSync(join(tmpdir(), 'rr-config-errors-'));
    const path = join(dir, 'config.json');
    writeFileSync(path, JSON.stringify({ webhooks: { trustProxy: true } }));
    let error: unknown;
    try {
      loadConfig({ env: {}, configPath: path });
    } catch (err) {
      error = err;
    }
    expect(error).toBeInstanceOf(ConfigError);
    expect((error as ConfigError).exitCode).toBe(2);
    expect((error as ConfigError).problems).toEqual([
      'config key webhooks.trustProxy: removed: it believed X-Forwarded-For from any client; list the addresses or CIDR ranges of your proxies in webhooks.trustedProxies instead, such as "trustedProxies": ["10.0.0.5"] (got true)',
    ]);
    // Even false: the key is gone, not only its dangerous value.
    expect(problemsFor(JSON.stringify({ webhooks: { trustProxy: false } }))).toEqual([
      expect.stringMatching(/^config key webhooks\.trustProxy: removed: .*webhooks\.trustedProxies.* \(got false\)$/),
    ]);
  });

  it('reads trustedProxies and allowedIps as addresses or CIDR ranges, refusing anything else with the value', () => {
    expect(
      problemsFor(JSON.stringify({ webhooks: { trustedProxies: ['10.0.0.0/8', 'proxy.internal', '10.0.0.0/40'] } })),
    ).toEqual([
      'config key webhooks.trustedProxies.1: must be an IP address or a CIDR range such as "10.0.0.0/8" (got "proxy.internal")',
      'config key webhooks.trustedProxies.2: the prefix length after "/" must be 0 to 32 for an IPv4 range (got "10.0.0.0/40")',
    ]);
    expect(problemsFor(JSON.stringify({ webhooks: { allowedIps: ['34.76.54.194', 'sender'] } }))).toEqual([
      'config key webhooks.allowedIps.1: must be an IP address or a CIDR range such as "10.0.0.0/8" (got "sender")',
    ]);
  });

  it('defaults to no trusted proxy and ten minutes of clock skew', () => {
    const dir = mkdtempSync(join(tmpdir(), 'rr-config-errors-'));
    const path = join(dir, 'config.json');
    writeFileSync(path, JSON.stringify({ webhooks: { trustedProxies: ['::ffff:10.0.0.1', 'fd00::/8'] } }));
    const webhooks = loadConfig({ env: {}, configPath: path }).webhooks;
    expect(webhooks?.trustedProxies).toEqual(['::ffff:10.0.0.1', 'fd00::/8']);
    expect(webhooks?.maxClockSkewSeconds).toBe(600);
    expect(problemsFor(JSON.stringify({ webhooks: { maxClockSkewSeconds: -1 } }))).toEqual([
      expect.stringMatching(/^config key webhooks\.maxClockSkewSeconds: .* \(got -1\)$/),
    ]);
  });
});

describe('closest', () => {
  it('finds typos and transpositions, not unrelated words', () => {
    expect(closest('rn', ['run', 'runs', 'sync'])).toBe('run');
    expect(closest('reconcle', ['run', 'reconcile', 'report'])).toBe('reconcile');
    expect(closest('form', ['from', 'to'])).toBe('from');
    expect(closest('xyzzy', ['run', 'report'])).toBeNull();
  });
});

describe('lineColumn', () => {
  it('counts lines and columns from 1', () => {
    expect(lineColumn('ab\ncd', 0)).toEqual({ line: 1, column: 1 });
    expect(lineColumn('ab\ncd', 4)).toEqual({ line: 2, column: 2 });
  });
});
