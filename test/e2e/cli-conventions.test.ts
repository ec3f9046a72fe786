import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { childEnv, freePort, runCli } from './helpers.js';
import { addDays, toDay } from '../../src/util/dates.js';

describe('CLI conventions: one-line errors that say what to do', () => {
  const dir = mkdtempSync(join(tmpdir(), 'rr-cli-conv-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  const env = childEnv({
    RAMP_RECON_DATA_DIR: join(dir, 'data'),
    REPORTS_DIR: join(dir, 'reports'),
    LOG_LEVEL: 'warn',
  });
  const configFile = (name: string, text: string) => {
    const path = join(dir, name);
    writeFileSync(path, text);
    return path;
  };

  it('--version prints the package version', async () => {
    const r = await runCli(['--version'], env);
    expect(r.code).toBe(0);
    expect(r.stdout.trim()).toMatch(/^\d+\.\d+\.\d+/);
  });

  it('an unknown option or command is one line with the closest one and where the help is; exit 2', async () => {
    const option = await runCli(['run', '--form', '2026-11-01'], env);
    expect(option.code).toBe(2);
    expect(option.stderr).toBe(
      "ramp-recon: error: unknown option '--form' (did you mean --from?); see ramp-recon run --help\n",
    );
    const command = await runCli(['reconcle'], env);
    expect(command.code).toBe(2);
    expect(command.stderr).toBe(
      "ramp-recon: error: unknown command 'reconcle' (did you mean reconcile?); see ramp-recon --help\n",
    );
  });

  it('a period that has not begun is refused in one line, exit 2, by every command that takes one', async () => {
    const tomorrow = addDays(toDay(new Date()), 1);
    for (const command of ['run', 'sync', 'reconcile']) {
      const r = await runCli([command, '--from', tomorrow], env);
      expect(r.code, r.stderr).toBe(2);
      expect(r.stderr).toMatch(
        new RegExp(
          `^ramp-recon: error: --from ${tomorrow} is after today \\(\\d{4}-\\d{2}-\\d{2} UTC\\): that period has not begun, nothing to reconcile\n$`,
        ),
      );
    }
  });

  it('a bad cron, a fee rate as a number and a JSON syntax error name the key, the value and the fix (line and column for JSON)', async () => {
    const bad = await runCli(['config', 'check'], {
      ...env,
      RAMP_RECON_CONFIG: configFile(
        'bad.json',
        JSON.stringify({ schedule: { cron: '0 25 * * *' }, partner: { feeRate: 0.01 } }),
      ),
    });
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('config key schedule.cron: not a valid cron expression');
    expect(bad.stderr).toContain('(got "0 25 * * *")');
    expect(bad.stderr).toContain('config key partner.feeRate: must be a decimal string in quotes, such as "0.01"');
    const syntax = await runCli(['config', 'check'], {
      ...env,
      RAMP_RECON_CONFIG: configFile('syntax.json', '{\n  "account": "x"\n  "partner": {}\n}\n'),
    });
    expect(syntax.code).toBe(2);
    expect(syntax.stderr).toMatch(
      /^ramp-recon: error: config file .*syntax\.json: not valid JSON at line 3, column 3: /,
    );
  });

  it('an unreachable database is named as the database, with the server tried and the fix; exit 1', async () => {
    const port = await freePort();
    const r = await runCli(['runs'], { ...env, DATABASE_URL: `postgres://nobody:pw-secret-1@127.0.0.1:${port}/x` });
    expect(r.code).toBe(1);
    expect(r.stderr).toBe(
      `ramp-recon: failed: database: cannot use PostgreSQL at 127.0.0.1:${port}/x as nobody: connection refused (no server listening there) (connect ECONNREFUSED 127.0.0.1:${port}); check DATABASE_URL and that the server is running (\`ramp-recon doctor\` tries it)\n`,
    );
    expect(r.stderr).not.toContain('pw-secret-1');
  });

  it('--quiet and --verbose cannot be given together', async () => {
    const r = await runCli(['runs', '--quiet', '--verbose'], env);
    expect(r.code).toBe(2);
    expect(r.stderr).toBe('ramp-recon: error: --quiet and --verbose: give one or the other\n');
  });
});

describe('a CLI that starts at once', () => {
  it('--help lists every command with its description without loading any of them, and `help <command>` loads that one', async () => {
    const { COMMAND_INFO } = await import('../../src/cli/commands/info.js');
    const env = childEnv({});
    const root = await runCli(['--help'], env);
    expect(root.code).toBe(0);
    for (const name of Object.keys(COMMAND_INFO)) expect(root.stdout).toMatch(new RegExp(`^  ${name}\\b`, 'm'));
    expect(root.stdout).toContain('-V, --version');
    const one = await runCli(['help', 'report'], env);
    expect(one.code).toBe(0);
    expect(one.stdout).toMatch(/^Usage: ramp-recon report \[options\] \[runId\]/);
    expect(one.stdout).toContain('--csv <dir>');
  });
});
