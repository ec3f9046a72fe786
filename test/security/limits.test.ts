/** Issue 43, points 6 and 7 end to end: keys never over plain http to a remote host, an API answer over the size limit,
 * a returned workbook that is too big or a zip bomb, and reports readable by their owner's group only, on each database.
 */
import { mkdtempSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import JSZip from 'jszip';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSandbox, type Sandbox } from '../helpers/sandbox.js';
import { storeKinds } from '../helpers/db.js';
import { writeConfig } from '../helpers/config.js';
import { brief, childEnv, openCliWorld, runCli, type CliWorld } from '../e2e/helpers.js';
import { recordCase } from './figures.js';

const SANDBOX = { seed: 47, days: 2, ordersPerDay: 10, fillsPerOrder: 2, exchangeOrdersPerDay: 10 };

describe('API keys over plain http', () => {
  const dir = mkdtempSync(join(tmpdir(), 'rr-security-http-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  const env = (extra: Record<string, string>, config: unknown = {}) =>
    childEnv({
      RAMP_RECON_DATA_DIR: join(dir, 'data'),
      REPORTS_DIR: join(dir, 'reports'),
      PARTNER_API_URL: 'https://partner.example.test',
      PARTNER_PUBLIC_KEY: 'pk-limits-1',
      PARTNER_PRIVATE_KEY: 'sk-limits-2',
      EXCHANGE_API_URL: 'https://exchange.example.test/v3/exchange',
      EXCHANGE_API_TOKEN: 'xt-limits-3',
      RAMP_RECON_CONFIG: writeConfig(config),
      ...extra,
    });

  it('refuses http:// to a remote host in config check and run (exit 2, naming the variable), unless allowInsecureHttp', async () => {
    for (const [variable, url] of [
      ['PARTNER_API_URL', 'http://partner.example.test'],
      ['EXCHANGE_API_URL', 'http://10.1.2.3:8080/v3/exchange'],
    ] as const) {
      for (const command of [['config', 'check'], ['run']]) {
        const r = await runCli(command, env({ [variable]: url }));
        expect(r.code, brief(r.stderr)).toBe(2);
        expect(r.stderr).toContain(`environment variable ${variable}: plain http://`);
        recordCase(`${variable} over plain http refused by ${command.join(' ')}`, 'refused');
      }
    }
    const insecure = env({ PARTNER_API_URL: 'http://partner.example.test' }, { allowInsecureHttp: true });
    expect((await runCli(['config', 'check'], insecure)).code).toBe(0);
    const doctor = await runCli(['doctor', '--json', '--timeout-ms', '200'], insecure);
    const { checks } = JSON.parse(doctor.stdout) as { checks: Array<{ part: string; status: string }> };
    expect(checks.find((c) => c.part === 'TLS')?.status).toBe('warn');
    recordCase('allowInsecureHttp accepted, and doctor warns', 'kept');
  });
});

/** Every file under a folder, with its permission bits. */
function modes(dir: string): Array<{ path: string; mode: number }> {
  return readdirSync(dir, { recursive: true, encoding: 'utf8' })
    .map((name) => join(dir, name))
    .filter((path) => statSync(path).isFile())
    .map((path) => ({ path, mode: statSync(path).mode & 0o777 }));
}

/** A zip of one deflated sheet of `bytes` zeros: a few KiB on disk. */
async function zipBomb(path: string, bytes: number): Promise<void> {
  const zip = new JSZip();
  zip.file('[Content_Types].xml', '<Types/>');
  zip.file('xl/worksheets/sheet1.xml', Buffer.alloc(bytes, 0x30));
  writeFileSync(path, await zip.generateAsync({ type: 'nodebuffer', compression: 'DEFLATE' }));
}

for (const kind of storeKinds)
  describe(`limits [${kind}]`, { timeout: 300_000 }, () => {
    let sandbox: Sandbox;
    let world: CliWorld | undefined;
    const limits = { maxImportBytes: 200_000, maxImportUnzippedBytes: 1_000_000 };

    beforeAll(async () => {
      sandbox = await startSandbox({ ...SANDBOX, faults: 'none' });
      world = await openCliWorld(kind, 'limits', sandbox.env, {
        partner: { feeRate: sandbox.partnerFeeRate },
        reports: limits,
      });
    });

    afterAll(async () => {
      await world?.close();
      await sandbox?.close();
    });

    const cli = (args: string[], extra: Record<string, string> = {}) =>
      runCli(args, { ...world!.env, LOG_LEVEL: 'warn', ...extra });

    it('writes every report file with mode 0640, whatever the umask', async () => {
      const run = await cli(['run', '--json', '--no-email']);
      expect(run.code, brief(run.stderr)).toBe(0);
      const { runId } = JSON.parse(run.stdout) as { runId: string };
      const csv = join(world!.dir, 'csv');
      expect((await cli(['report', runId, '--csv', csv])).code).toBe(0);
      const files = [...modes(join(world!.dir, 'reports')), ...modes(csv)];
      expect(files.length).toBeGreaterThan(5);
      expect(files.filter((f) => f.mode !== 0o640)).toEqual([]);
      recordCase(`reports, detail and CSV written 0640 [${kind}]`, 'refused');
    });

    it('refuses a returned workbook over maxImportBytes and a zip bomb before loading it (exit 2)', async () => {
      const big = join(world!.dir, 'big.xlsx');
      writeFileSync(big, randomBytes(limits.maxImportBytes + 1));
      const tooBig = await cli(['breaks', 'import', big, '--by', 'finance']);
      expect(tooBig.code, brief(tooBig.stderr)).toBe(2);
      expect(tooBig.stderr).toMatch(/big\.xlsx is \d+ bytes, over the limit of 200000 \(reports\.maxImportBytes\)/);
      recordCase(`returned workbook over maxImportBytes [${kind}]`, 'refused');

      const bomb = join(world!.dir, 'bomb.xlsx');
      await zipBomb(bomb, 50_000_000);
      const refused = await cli(['breaks', 'import', bomb, '--by', 'finance']);
      expect(refused.code, brief(refused.stderr)).toBe(2);
      expect(refused.stderr).toMatch(/bomb\.xlsx unzips to more than 1000000 bytes \(reports\.maxImportUnzippedBytes/);
      recordCase(`zip bomb as a returned workbook [${kind}]`, 'refused');
    });

    it('fails a run whose API answer is over http.maxResponseBytes, saying which and what to raise', async () => {
      const config = writeConfig({ partner: { feeRate: sandbox.partnerFeeRate }, http: { maxResponseBytes: 1024 } });
      const run = await cli(['run', '--json', '--no-email'], { RAMP_RECON_CONFIG: config });
      expect(run.code, brief(run.stderr)).toBe(1);
      expect((JSON.parse(run.stdout) as { status: string }).status).toBe('failed');
      // The reason goes to stderr, readable: the API, the limit, the endpoint and what to raise.
      expect(run.stderr).toMatch(
        /API sent a response larger than http\.maxResponseBytes \(1024 bytes\) on GET \S+; it was not read \(raise http\.maxResponseBytes/,
      );
      recordCase(`API answer over http.maxResponseBytes [${kind}]`, 'refused');
    });
  });
