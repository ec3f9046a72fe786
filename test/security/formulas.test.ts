/** Issue 43, point 1 end to end: formulas planted in every free-text field of the sandbox's records and of a returned
 * workbook, read back from every output (detail CSV, `report --csv`, the workbook, the e-mail), on each database.
 */
import { mkdtempSync, readFileSync } from 'node:fs';
import { parse } from 'csv-parse/sync';
import { isAbsolute, join, resolve } from 'node:path';
import ExcelJS from 'exceljs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSandbox, type Sandbox } from '../helpers/sandbox.js';
import { mailbox, type Mailbox } from '../helpers/smtp.js';
import { attachment, textPart } from '../helpers/mime.js';
import { storeKinds } from '../helpers/db.js';
import { brief, freePort, openCliWorld, ROOT, runCli, type CliWorld } from '../e2e/helpers.js';
import { recordCase } from './figures.js';
import {
  checkCsvFolder,
  checkMailText,
  checkTexts,
  checkWorkbook,
  PLANTED,
  PLANTED_TEXTS,
  recordFields,
  type FieldCheck,
} from './outputs.js';

const SANDBOX = { seed: 43, days: 2, ordersPerDay: 24, fillsPerOrder: 2, exchangeOrdersPerDay: 12 };

interface RunSummary {
  runId: string;
  status: string;
  report: string;
  detail: string;
}

const abs = (path: string) => (isAbsolute(path) ? path : resolve(ROOT, path));

/**
 * One output's fields recorded, and one case per planted text it holds: neutralised when every field holding it is,
 * unsafe otherwise. A live field that holds no planted text fails the output too.
 */
function judge(output: string, kind: string, check: FieldCheck): void {
  recordFields(`${output} [${kind}]`, check);
  for (const key of Object.keys(PLANTED))
    if (check.seen.has(key))
      recordCase(`formula ${key} in ${output} [${kind}]`, check.live.length === 0 ? 'neutralised' : 'unsafe');
  expect(check.live, `${output}: fields a spreadsheet would run`).toEqual([]);
}

for (const kind of storeKinds)
  describe(`formulas planted in every text field [${kind}]`, { timeout: 300_000 }, () => {
    let sandbox: Sandbox;
    let world: CliWorld | undefined;
    let smtp: Mailbox;
    let env: NodeJS.ProcessEnv;

    beforeAll(async () => {
      // The planted discrepancies give the Breaks sheet a row for each text a returned workbook brings back.
      sandbox = await startSandbox({ ...SANDBOX, discrepancies: true, hostileText: PLANTED_TEXTS, faults: 'none' });
      const port = await freePort();
      smtp = mailbox();
      await smtp.listen(port);
      world = await openCliWorld(kind, 'formulas', sandbox.env, {
        partner: { feeRate: sandbox.partnerFeeRate },
        email: { from: 'recon@example.test', to: ['finance@example.test'] },
      });
      env = { ...world.env, SMTP_URL: `smtp://127.0.0.1:${port}`, LOG_LEVEL: 'warn' };
    });

    afterAll(async () => {
      await smtp?.close();
      await world?.close();
      await sandbox?.close();
    });

    async function cli(args: string[]): Promise<string> {
      const r = await runCli(args, env);
      expect(r.code, `${args.join(' ')}: ${brief(r.stderr)}`).toBe(0);
      return r.stdout;
    }

    it('keeps every planted text from running in the detail CSV, report --csv, the workbook and the e-mail', async () => {
      const run = JSON.parse(await cli(['run', '--json'])) as RunSummary;
      expect(run.status).toBe('succeeded');

      // Every record of the period: each planted text reaches the detail, the negative amount as a number.
      const detail = checkCsvFolder(abs(run.detail));
      expect(detail.files).toBeGreaterThan(3);
      expect([...detail.seen].sort()).toEqual([...Object.keys(PLANTED), 'negative amount'].sort());
      judge('detail CSV', kind, detail);
      recordCase(`negative amount kept a number in the detail CSV [${kind}]`, 'kept');

      const csvDir = mkdtempSync(join(world!.dir, 'csv-'));
      await cli(['report', run.runId, '--csv', csvDir, '--json']);
      const csv = checkCsvFolder(csvDir);
      expect(csv.seen.has('quoted amount')).toBe(false);
      judge('report --csv', kind, csv);

      judge('workbook', kind, await checkWorkbook(abs(run.report)));

      expect(smtp.mails).toHaveLength(1);
      const mail = smtp.mails[0]!;
      judge('e-mail body', kind, checkMailText(textPart(mail, 'text/plain'), textPart(mail, 'text/html')));
      judge('e-mailed workbook', kind, await checkWorkbook(attachment(mail, run.report.split('/').pop()!).bytes));
    });

    it('keeps owners and notes a returned workbook brings in from running in the next CSV and workbook', async () => {
      const { path } = JSON.parse(await cli(['report', '--json'])) as { path: string; runId: string };
      const book = new ExcelJS.Workbook();
      await book.xlsx.readFile(abs(path));
      const sheet = book.getWorksheet('Breaks')!;
      const header = (sheet.getRow(1).values as unknown[]).map((v) => (typeof v === 'string' ? v : ''));
      const [owner, explanation] = ['Owner', 'Explanation'].map((h) => header.indexOf(h));
      expect(owner).toBeGreaterThan(0);
      const texts = Object.values(PLANTED);
      expect(sheet.rowCount - 1, 'a Breaks row per planted text').toBeGreaterThanOrEqual(texts.length);
      texts.forEach((text, i) => {
        const row = sheet.getRow(i + 2);
        row.getCell(owner!).value = text;
        row.getCell(explanation!).value = text;
        row.commit();
      });
      const returned = join(world!.dir, 'returned.xlsx');
      await book.xlsx.writeFile(returned);
      const result = JSON.parse(await cli(['breaks', 'import', returned, '--by', 'finance', '--json'])) as {
        applied: unknown[];
        skipped: unknown[];
      };
      expect(result.skipped).toEqual([]);
      expect(result.applied).toHaveLength(texts.length);

      const next = JSON.parse(await cli(['reconcile', '--json'])) as { runId: string };
      const csvDir = mkdtempSync(join(world!.dir, 'csv-import-'));
      const report = JSON.parse(await cli(['report', next.runId, '--csv', csvDir, '--json'])) as { path: string };
      judge('report --csv after breaks import', kind, checkCsvFolder(csvDir));
      judge('workbook after breaks import', kind, await checkWorkbook(abs(report.path)));
      // The Breaks CSV's owners and notes: each imported text is there, behind the quote.
      const rows = parse(readFileSync(join(csvDir, 'breaks.csv'), 'utf8'), { columns: true }) as Array<
        Record<string, string>
      >;
      const written = rows.flatMap((r) => [r['Owner'] ?? '', r['Last note'] ?? '']).filter(Boolean);
      const imported = checkTexts(written);
      for (const key of Object.keys(PLANTED)) {
        expect(imported.seen.has(key), `${key} among the owners and notes: ${JSON.stringify(written)}`).toBe(true);
        recordCase(
          `owner and note ${key} via breaks import [${kind}]`,
          imported.live.length ? 'unsafe' : 'neutralised',
        );
      }
      expect(imported.live).toEqual([]);
    });
  });
