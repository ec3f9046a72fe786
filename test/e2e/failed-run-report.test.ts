import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import ExcelJS from 'exceljs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSandbox } from '../helpers/sandbox.js';
import { addDays, toDay } from '../../src/util/dates.js';
import { createTestStore, storeKinds, type TestStore } from '../helpers/db.js';
import { attachment, header, textPart } from '../helpers/mime.js';
import { mailbox, type Mailbox } from '../helpers/smtp.js';
import { brief, childEnv, freePort, runCli } from './helpers.js';

type Sandbox = Awaited<ReturnType<typeof startSandbox>>;

interface RunJson {
  runId: string;
  status: string;
  report: string | null;
  breaks: Array<{ code: string; key: string }>;
  counts: Record<string, number>;
}

interface RunsRow {
  runId: string;
  status: string;
  failedStage: string | null;
  error: string | null;
  delivered: boolean | null;
  report: string | null;
  stages: Record<string, { status: string }>;
}

/** The Summary sheet's rows as text, first cell to last. */
async function summaryOf(bytes: Buffer): Promise<string[][]> {
  const wb = new ExcelJS.Workbook();
  await wb.xlsx.load(bytes as unknown as ExcelJS.Buffer);
  const sheet = wb.getWorksheet('Summary')!;
  const rows: string[][] = [];
  sheet.eachRow((row) => rows.push((row.values as unknown[]).slice(1).map((v) => (v == null ? '' : String(v)))));
  return rows;
}

for (const kind of storeKinds)
  describe(
    `a night the Exchange API is down: the failed run still reports and e-mails [${kind}]`,
    { timeout: 240_000 },
    () => {
      let sandbox: Sandbox;
      let pg: TestStore | undefined;
      let dir: string;
      let env: NodeJS.ProcessEnv;
      let relay: Mailbox;
      let down: number;
      const today = toDay(new Date());
      const periodArgs = ['--from', addDays(today, -2), '--to', addDays(today, -1)];

      beforeAll(async () => {
        sandbox = await startSandbox({
          seed: 7,
          days: 2,
          ordersPerDay: 5,
          fillsPerOrder: 2,
          discrepancies: true,
          live: false,
          faults: 'none',
        });
        dir = mkdtempSync(join(tmpdir(), `rr-e2e-failed-${kind}-`));
        writeFileSync(
          join(dir, 'config.json'),
          JSON.stringify({
            partner: { feeRate: sandbox.partnerFeeRate ?? '0.01' },
            email: { from: 'recon@example.com', to: ['finance-ops@example.com'] },
            // the API that is down fails after its retries, quickly
            http: { maxRetries: 1, retryBaseMs: 50, retryMaxMs: 100, connectTimeoutMs: 2_000 },
          }),
        );
        if (kind === 'postgres') pg = await createTestStore('postgres');
        const port = await freePort();
        relay = mailbox();
        await relay.listen(port);
        down = await freePort();
        env = childEnv({
          ...sandbox.env,
          RAMP_RECON_CONFIG: join(dir, 'config.json'),
          RAMP_RECON_DATA_DIR: join(dir, 'data'),
          REPORTS_DIR: join(dir, 'reports'),
          DATABASE_URL: pg?.url,
          SMTP_URL: `smtp://127.0.0.1:${port}`,
          LOG_LEVEL: 'warn',
        });
      });

      afterAll(async () => {
        await relay?.close();
        await sandbox?.close();
        await pg?.drop();
        if (dir) rmSync(dir, { recursive: true, force: true });
      });

      it('exits 1, sends exactly one e-mail saying FAILED in sync.exchange with the failure workbook, and the run stays failed', async () => {
        // A night that worked: the breaks and records the failed night reports as last known.
        const good = await runCli(['run', ...periodArgs, '--json', '--no-email'], env);
        expect(good.code, brief(good.stderr)).toBe(0);
        const before = JSON.parse(good.stdout) as RunJson;
        expect(before.breaks.length).toBeGreaterThan(0);
        expect(relay.mails).toHaveLength(0);

        // The next night nothing listens at the Exchange API.
        const failedEnv = { ...env, EXCHANGE_API_URL: `http://127.0.0.1:${down}/v3/exchange` };
        const failed = await runCli(['run', ...periodArgs, '--json'], failedEnv);
        expect(failed.code, brief(failed.stderr)).toBe(1);
        const summary = JSON.parse(failed.stdout) as RunJson;
        expect(summary.status).toBe('failed');
        expect(failed.stderr).toMatch(
          new RegExp(`run ${summary.runId} failed in stage sync\\.exchange: .*Exchange API`),
        );
        // --json names the failure workbook
        expect(summary.report).toMatch(new RegExp(`${summary.runId}\\.xlsx$`));
        expect(existsSync(summary.report!)).toBe(true);
        // the open breaks are the first night's, unchanged: as last known
        expect(summary.breaks.map((b) => `${b.code} ${b.key}`).sort()).toEqual(
          before.breaks.map((b) => `${b.code} ${b.key}`).sort(),
        );

        expect(relay.mails).toHaveLength(1);
        const mail = relay.mails[0]!;
        const period = addDays(today, -2);
        expect(header(mail, 'To')).toBe('finance-ops@example.com');
        expect(header(mail, 'Subject')).toBe(
          `ramp-recon ${period}: FAILED in sync.exchange, not reconciled (last known: ${before.breaks.length} open breaks)`,
        );
        const text = textPart(mail, 'text/plain');
        expect(text).toMatch(
          new RegExp(
            `^What failed: run ${summary.runId} failed in stage sync\\.exchange: .*Exchange API.*127\\.0\\.0\\.1:${down}`,
            'm',
          ),
        );
        expect(text).toContain('What to do: `ramp-recon runs` shows the run');
        expect(text).toContain(`\`ramp-recon run --from ${periodArgs[1]} --to ${periodArgs[3]}\``);
        expect(text).toContain(`Open breaks as last known: ${before.breaks.length} (`);
        expect(text).not.toContain(sandbox.env.EXCHANGE_API_TOKEN!);
        const name = basename(summary.report!);
        const workbook = attachment(mail, name).bytes;
        expect(workbook.equals(readFileSync(summary.report!))).toBe(true);

        // The attached workbook's Summary says the run failed, where, why, and what the database holds.
        const rows = await summaryOf(workbook);
        expect(rows[0]![0]).toBe(`FAILED in sync.exchange: ${period} not reconciled`);
        const value = (label: string) => rows.find((r) => r[0] === label)?.[1];
        expect(value('Run failed in stage')).toBe('sync.exchange');
        expect(value('Why')).toMatch(/Exchange API/);
        expect(value('Status')).toMatch(/^failed in sync\.exchange: .*Exchange API/);
        expect(value('Open breaks')).toMatch(/^as last known: left open by earlier runs, not judged by this run/);
        expect(rows.some((r) => r[0]!.startsWith('Open breaks (as last known'))).toBe(true);
        expect(
          rows.some((r) => r[0] === 'Counts (records the database holds for the period; this run did not count them)'),
        ).toBe(true);
        expect(value('Partner orders (created in period)')).toBe(String(before.counts.partnerOrders));
        expect(value('Exchange fills')).toBe(String(before.counts.fills));

        // The run row: failed in its stage with its error; its report and deliver stages recorded.
        const listed = await runCli(['runs', '--json', '--limit', '1'], env);
        expect(listed.code, listed.stderr).toBe(0);
        const [row] = JSON.parse(listed.stdout) as RunsRow[];
        expect(row).toMatchObject({
          runId: summary.runId,
          status: 'failed',
          failedStage: 'sync.exchange',
          delivered: true,
          report: summary.report,
        });
        expect(row!.error).toMatch(/Exchange API/);
        expect(Object.entries(row!.stages).map(([stage, s]) => `${stage} ${s.status}`)).toEqual([
          'sync.exchange failed',
          'report succeeded',
          'deliver succeeded',
        ]);
      });
    },
  );
