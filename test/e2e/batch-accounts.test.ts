import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import ExcelJS from 'exceljs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSandboxAccounts, type SandboxAccounts } from '../helpers/sandbox.js';
import type { Store } from '../../src/store/db/database.js';
import { addDays, toDay } from '../../src/util/dates.js';
import { createTestStore, storeKinds, withCliStore, type TestStore } from '../helpers/db.js';
import { attachment, header, textPart } from '../helpers/mime.js';
import { mailbox, type Mailbox } from '../helpers/smtp.js';
import { brief, childEnv, freePort, runCli } from './helpers.js';

/**
 * Issue 26's promise: three accounts in one database, one of whose Exchange API is down. The batch runs all three;
 * the other two reconcile with exactly their own planted breaks (no break, row or cursor of one account in another's);
 * the group workbook and its one e-mail name the failed account and its error; the exit code is 1.
 */
const ACCOUNTS = ['acme', 'globex', 'initech'] as const;
const DAYS = 3;

interface BatchJson {
  batchId: string;
  status: string;
  verdict: string;
  report: string;
  delivery: { status: string } | null;
  accounts: Array<{
    account: string;
    status: string;
    runId: string | null;
    failedStage: string | null;
    error: string | null;
    summary: {
      account: string;
      breaks: Array<{ code: string; key: string; account: string }>;
    } | null;
  }>;
}

for (const kind of storeKinds)
  describe(`a batch of three accounts, one Exchange API down [${kind}]`, { timeout: 300_000 }, () => {
    let sandbox: SandboxAccounts;
    let pg: TestStore | undefined;
    let dir: string;
    let env: NodeJS.ProcessEnv;
    let relay: Mailbox;
    let batch: BatchJson;
    let code: number | null;
    let stderr: string;
    const today = toDay(new Date());
    const period = ['--from', addDays(today, -DAYS), '--to', addDays(today, 1)];
    const key = (b: { code: string; key: string }) => `${b.code} ${b.key}`;

    /** The database the CLI wrote: the test's Postgres schema, or the embedded data folder once the CLI has ended. */
    const withDb = <T>(fn: (store: Store) => Promise<T>): Promise<T> => withCliStore(pg, join(dir, 'data'), fn);

    beforeAll(async () => {
      sandbox = await startSandboxAccounts({
        days: DAYS,
        ordersPerDay: 8,
        fillsPerOrder: 2,
        discrepancies: true,
        live: false,
        faults: 'none',
        accounts: ACCOUNTS.map((name, i) => ({ name, seed: 40 + i })),
      });
      dir = mkdtempSync(join(tmpdir(), `rr-e2e-batch-${kind}-`));
      if (kind === 'postgres') pg = await createTestStore('postgres');
      const smtpPort = await freePort();
      relay = mailbox();
      await relay.listen(smtpPort);
      const down = await freePort();
      writeFileSync(
        join(dir, 'config.json'),
        JSON.stringify({
          accounts: ACCOUNTS.map((name) => ({
            name,
            partner: { feeRate: sandbox.accounts[name]!.partnerFeeRate },
          })),
          email: { from: 'recon@example.com', to: ['group-finance@example.com'] },
          // the account whose API is down fails after its retries, quickly
          http: { maxRetries: 1, retryBaseMs: 50, retryMaxMs: 100, connectTimeoutMs: 2_000 },
        }),
      );
      env = childEnv({
        ...sandbox.env,
        // initech's Exchange API: nothing listens there
        INITECH_EXCHANGE_API_URL: `http://127.0.0.1:${down}/v3/exchange`,
        RAMP_RECON_CONFIG: join(dir, 'config.json'),
        RAMP_RECON_DATA_DIR: join(dir, 'data'),
        REPORTS_DIR: join(dir, 'reports'),
        DATABASE_URL: pg?.url,
        SMTP_URL: `smtp://127.0.0.1:${smtpPort}`,
        LOG_LEVEL: 'warn',
      });
      const run = await runCli(['run', ...period, '--json'], env);
      code = run.code;
      stderr = run.stderr;
      batch = JSON.parse(run.stdout) as BatchJson;
    });

    afterAll(async () => {
      await relay?.close();
      await sandbox?.close();
      await pg?.drop();
      if (dir) rmSync(dir, { recursive: true, force: true });
    });

    it('runs all three: the two up reconcile, the one down fails in sync.exchange, and the exit code is 1', () => {
      expect(code, brief(stderr)).toBe(1);
      expect(batch.status).toBe('failed');
      expect(batch.accounts.map((a) => [a.account, a.status])).toEqual([
        ['acme', 'succeeded'],
        ['globex', 'succeeded'],
        ['initech', 'failed'],
      ]);
      const initech = batch.accounts[2]!;
      expect(initech.failedStage).toBe('sync.exchange');
      expect(initech.error).toMatch(/Exchange API/);
      expect(stderr).toMatch(/account initech failed: run \S+ failed in stage sync\.exchange/);
    });

    it('each account up has exactly its own planted breaks, each named with its account', () => {
      for (const name of ['acme', 'globex'] as const) {
        const a = batch.accounts.find((x) => x.account === name)!;
        expect(a.summary?.account).toBe(name);
        // one balance snapshot so far: the roll-forward opens its series and is not checked yet; no webhook receiver
        // is configured, so the webhook gap is not judged
        const planted = sandbox.accounts[name]!.expectedBreaks().filter(
          (b) => b.code !== 'E_BALANCE_ROLL' && b.code !== 'P_WEBHOOK_GAP',
        );
        expect(planted.length).toBeGreaterThan(10);
        expect(a.summary!.breaks.map(key).sort(), name).toEqual(planted.map(key).sort());
        expect(new Set(a.summary!.breaks.map((b) => b.account))).toEqual(new Set([name]));
      }
      // the two worlds differ: the comparison above could not pass by one account seeing the other's data
      const acme = sandbox.accounts.acme!.data.fills().map((f) => f.execId);
      const globex = sandbox.accounts.globex!.data.fills().map((f) => f.execId);
      expect(acme).not.toEqual(globex);
    });

    it("keeps every account's rows, cursors and breaks under its own name", async () => {
      await withDb(async ({ db }) => {
        for (const name of ['acme', 'globex'] as const) {
          const stored = await db
            .selectFrom('exchange_fill')
            .select('exec_id')
            .where('account', '=', name)
            .orderBy('exec_id')
            .execute();
          const served = sandbox.accounts[name]!.data.fills().map((f) => f.execId);
          expect(stored.map((r) => r.exec_id).sort(), name).toEqual([...served].sort());
          const orders = await db.selectFrom('partner_order').select('order_id').where('account', '=', name).execute();
          expect(orders.map((o) => o.order_id).sort(), name).toEqual(
            sandbox.accounts[name]!.data.partnerOrders()
              .map((o) => o.orderId)
              .sort(),
          );
        }
        // the account that failed in its exchange sync has no exchange row, cursor or reconciled break
        const initechFills = await db
          .selectFrom('exchange_fill')
          .select('exec_id')
          .where('account', '=', 'initech')
          .execute();
        expect(initechFills).toEqual([]);
        const cursors = await db.selectFrom('sync_cursor').select(['account', 'source']).execute();
        expect(cursors.filter((c) => c.account === 'initech' && c.source === 'exchange')).toEqual([]);
        const accounts = await db.selectFrom('break').select('account').distinct().execute();
        expect(accounts.map((a) => a.account).sort()).toEqual(['acme', 'globex']);
        const runs = await db.selectFrom('run').select(['account', 'batch_id']).execute();
        expect(runs.map((r) => r.account).sort()).toEqual(['acme', 'globex', 'initech']);
        expect(new Set(runs.map((r) => r.batch_id))).toEqual(new Set([batch.batchId]));
        const rows = await db
          .selectFrom('batch_account')
          .select(['account', 'status', 'attempts'])
          .where('batch_id', '=', batch.batchId)
          .orderBy('position')
          .execute();
        expect(rows.map((r) => [r.account, r.status, Number(r.attempts)])).toEqual([
          ['acme', 'succeeded', 1],
          ['globex', 'succeeded', 1],
          ['initech', 'failed', 1],
        ]);
      });
    });

    it('writes one group workbook whose Group summary names the failed account and its error, in red', async () => {
      expect(batch.verdict).toBe('0 of 3 accounts reconciled, 2 with open breaks, 1 failed');
      const wb = new ExcelJS.Workbook();
      await wb.xlsx.readFile(batch.report);
      expect(wb.worksheets.map((w) => w.name)).toEqual(['Group summary', 'Breaks', 'Balances']);
      const sheet = wb.getWorksheet('Group summary')!;
      const rows: string[][] = [];
      sheet.eachRow((row) => rows.push((row.values as unknown[]).slice(1).map((v) => (v == null ? '' : String(v)))));
      expect(rows[0]![0]).toBe('0 OF 3 ACCOUNTS RECONCILED, 2 WITH OPEN BREAKS, 1 FAILED');
      const line = (name: string) => {
        let found: ExcelJS.Row | undefined;
        sheet.eachRow((row) => {
          if (row.getCell(1).value === name) found = row;
        });
        return found!;
      };
      // columns by their header: the table grows columns (money at stake is three)
      const columnOf = (header: string) => {
        let at = 0;
        line('Account').eachCell((cell, n) => {
          if (cell.value === header) at = n;
        });
        expect(at, header).toBeGreaterThan(0);
        return at;
      };
      const initech = line('initech');
      expect(String(initech.getCell(2).value)).toMatch(/^FAILED in sync\.exchange: .*Exchange API/);
      // red, as the legend says of a failed account: its line stands out, and its figures are blank (never clean)
      const fill = (row: ExcelJS.Row, i: number) => (row.getCell(i).fill as ExcelJS.FillPattern).fgColor?.argb;
      const red = line('red');
      expect(String(red.getCell(2).value)).toMatch(/^failed, not run/);
      expect([fill(initech, 1), fill(initech, 2)]).toEqual([fill(red, 1), fill(red, 1)]);
      expect(fill(red, 1)).toBe('FFC00000');
      expect(initech.getCell(3).value).toBeNull();
      for (const name of ['acme', 'globex']) {
        const row = line(name);
        const own = batch.accounts.find((a) => a.account === name)!;
        expect(row.getCell(3).value, name).toBe(own.summary!.breaks.length);
        expect(row.getCell(columnOf('Run')).value, name).toBe(own.runId);
        // the planted breaks include unexplained high ones: red too, as the legend and the status say
        expect(String(row.getCell(2).value), name).toMatch(/unexplained, [1-9]\d* of high severity\)$/);
        expect(fill(row, 1), name).toBe(fill(red, 1));
      }
      // the Total line: the two that ran, initech named as left out; their open breaks summed
      const total = line('Total');
      expect(total.getCell(2).value).toBe('Total of 2 of 3 accounts (initech failed: left out)');
      expect(total.getCell(3).value).toBe(
        batch.accounts[0]!.summary!.breaks.length + batch.accounts[1]!.summary!.breaks.length,
      );
      // the Breaks sheet: every open break of the accounts that ran, behind its account
      const breaks = wb.getWorksheet('Breaks')!;
      const byAccount = new Map<string, number>();
      breaks.eachRow((row, n) => {
        if (n === 1) return expect(row.getCell(1).value).toBe('Account');
        const name = String(row.getCell(1).value);
        byAccount.set(name, (byAccount.get(name) ?? 0) + 1);
      });
      expect(Object.fromEntries(byAccount)).toEqual({
        acme: batch.accounts[0]!.summary!.breaks.length,
        globex: batch.accounts[1]!.summary!.breaks.length,
      });
    });

    it('sends one e-mail for the batch to the group, naming the verdict, the failed account and its error', () => {
      expect(batch.delivery?.status).toBe('sent');
      expect(relay.mails).toHaveLength(1);
      const mail = relay.mails[0]!;
      expect(header(mail, 'To')).toBe('group-finance@example.com');
      expect(header(mail, 'Subject')).toMatch(
        /^ramp-recon group .*: 0 of 3 accounts reconciled, 2 with open breaks, 1 failed$/,
      );
      const text = textPart(mail, 'text/plain');
      expect(text).toMatch(/^initech: FAILED in sync\.exchange: .*Exchange API/m);
      expect(text).toMatch(/^acme: not reconciled: \d+ open breaks/m);
      expect(text).toMatch(/^Total of 2 of 3 accounts \(initech failed: left out\): \d+ open breaks/m);
      const name = batch.report.split('/').pop()!;
      expect(name).toMatch(/^ramp-recon-group_/);
      expect(attachment(mail, name).bytes.subarray(0, 2).toString()).toBe('PK');
    });

    it('`runs` shows the batch with each account, and --account runs one account as a batch of its own', async () => {
      const runs = await runCli(['runs', '--json'], env);
      expect(runs.code, runs.stderr).toBe(0);
      const listed = JSON.parse(runs.stdout) as {
        batches: Array<{ batchId: string; accounts: Array<{ account: string; status: string; worker: string }> }>;
        runs: Array<{ account: string; batchId: string }>;
      };
      expect(listed.batches[0]!.batchId).toBe(batch.batchId);
      expect(listed.batches[0]!.accounts.map((a) => `${a.account} ${a.status}`)).toEqual([
        'acme succeeded',
        'globex succeeded',
        'initech failed',
      ]);
      expect(listed.batches[0]!.accounts[0]!.worker).toMatch(/:\d+$/);
      expect(listed.runs.map((r) => r.account).sort()).toEqual(['acme', 'globex', 'initech']);

      const one = await runCli(['run', ...period, '--account', 'globex', '--json', '--no-email'], env);
      expect(one.code, brief(one.stderr)).toBe(0);
      const onlyGlobex = JSON.parse(one.stdout) as BatchJson;
      expect(onlyGlobex.accounts.map((a) => a.account)).toEqual(['globex']);
      expect(onlyGlobex.verdict).toBe('0 of 1 account reconciled, 1 with open breaks');
      // the printed lines: the batch completed (its account ran), which is not "reconciled"
      const printed = await runCli(['run', ...period, '--account', 'globex', '--no-email'], env);
      expect(printed.code, brief(printed.stderr)).toBe(0);
      expect(printed.stdout).toMatch(
        /^batch \S+ completed: its account ran to the end; 0 of 1 account reconciled, 1 with open breaks \(reconciled: no unexplained open break\)$/m,
      );
      expect(printed.stdout).toMatch(/^ {2}globex +run \S+ completed: not reconciled: \d+ open breaks \(/m);

      const unknown = await runCli(['breaks', 'list', '--account', 'globx'], env);
      expect(unknown.code).toBe(2);
      expect(unknown.stderr).toMatch(/--account: no account "globx" in the config \(did you mean globex\?\)/);
      const needsOne = await runCli(['breaks', 'list'], env);
      expect(needsOne.code).toBe(2);
      expect(needsOne.stderr).toMatch(/the config has 3 \(acme, globex, initech\): give --account NAME/);
    });
  });
