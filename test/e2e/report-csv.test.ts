/** `report --csv DIR` through the built CLI: one CSV per table sheet, the workbook's rows, exact amounts, and a folder it cannot write named. */
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { basename, join } from 'node:path';
import { parse } from 'csv-parse/sync';
import ExcelJS from 'exceljs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSandbox, type Sandbox } from '../helpers/sandbox.js';
import { addDays, toDay } from '../../src/util/dates.js';
import { storeKinds } from '../helpers/db.js';
import { type CliWorld, brief, openCliWorld, runCli } from './helpers.js';

/**
 * Issue 15 point 7: finance tools that do not read xlsx get each data sheet and the breaks as CSV.
 * The sandbox's ETH has 18 decimals, so partner amounts and balances have more significant digits
 * than Excel keeps: the workbook's "Exact values" column and the CSV must carry the same exact text.
 */
const SANDBOX = { seed: 15, days: 2, ordersPerDay: 8, fillsPerOrder: 2 };
const kind = storeKinds.includes('postgres') ? 'postgres' : 'embedded';
const TABLE_SHEETS = [
  'Breaks',
  'Balances',
  'Partner daily',
  'Exchange daily',
  'Coverage',
  'Partner orders',
  'Exchange orders vs fills',
  'Fills',
  'Deposits',
  'Withdrawals',
];
const EXACT = 'Exact values';

interface ReportJson {
  runId: string;
  path: string;
  sheets: Record<string, number>;
  csv: string[];
}

/** Header texts and data rows (as cell values, header order) of a sheet and its continuation parts. */
function sheetRows(wb: ExcelJS.Workbook, name: string): { headers: string[]; rows: unknown[][] } {
  const parts = wb.worksheets.filter((w) => w.name === name || w.name.startsWith(`${name.slice(0, 26)} (`));
  const headers = (parts[0]!.getRow(1).values as unknown[]).slice(1).map((v) => String(v ?? ''));
  const rows: unknown[][] = [];
  for (const ws of parts)
    for (let r = 2; r <= ws.rowCount; r++) {
      const row = ws.getRow(r);
      rows.push(headers.map((_, i) => row.getCell(i + 1).value));
    }
  return { headers, rows };
}

const significantDigits = (text: string) =>
  text.replace(/^-/, '').replace('.', '').replace(/^0+/, '').replace(/0+$/, '').length;

describe(`report --csv [${kind}]`, { timeout: 300_000 }, () => {
  let sandbox: Sandbox;
  let world: CliWorld | undefined;
  let runId = '';
  const today = toDay(new Date());

  beforeAll(async () => {
    sandbox = await startSandbox({ ...SANDBOX, discrepancies: true, live: false, faults: 'none' });
    world = await openCliWorld(kind, 'csv', sandbox.env, { partner: { feeRate: sandbox.partnerFeeRate } });
    const run = await runCli(
      ['run', '--from', addDays(today, -SANDBOX.days), '--to', addDays(today, 1), '--json', '--no-email'],
      { ...world.env, LOG_LEVEL: 'warn' },
    );
    expect(run.code, brief(run.stderr)).toBe(0);
    runId = (JSON.parse(run.stdout) as { runId: string }).runId;
  });

  afterAll(async () => {
    await world?.close();
    await sandbox?.close();
  });

  it('writes one CSV per sheet but the Summary, with the sheet header and rows, amounts exact, times ISO 8601 UTC', async () => {
    const dir = join(world!.dir, 'csv out');
    const result = await runCli(['report', runId, '--csv', dir, '--json'], world!.env);
    expect(result.code, brief(result.stderr)).toBe(0);
    const out = JSON.parse(result.stdout) as ReportJson;
    expect(out.runId).toBe(runId);
    expect(out.csv.map((p) => basename(p))).toEqual([
      'breaks.csv',
      'balances.csv',
      'partner-daily.csv',
      'exchange-daily.csv',
      'coverage.csv',
      'partner-orders.csv',
      'exchange-orders-vs-fills.csv',
      'fills.csv',
      'deposits.csv',
      'withdrawals.csv',
    ]);
    for (const p of out.csv) expect(p.startsWith(dir) && existsSync(p), p).toBe(true);
    // nothing left under a temporary name
    expect(readdirSync(dir).filter((n) => n.endsWith('.partial'))).toEqual([]);

    const wb = new ExcelJS.Workbook();
    await wb.xlsx.readFile(out.path);
    let exactChecked = 0;
    let longChecked = 0;
    TABLE_SHEETS.forEach((name, i) => {
      const raw = readFileSync(out.csv[i]!, 'utf8');
      expect(raw.charCodeAt(0), `${name}: no byte-order mark`).not.toBe(0xfeff);
      expect(raw.endsWith('\r\n'), `${name}: CRLF records`).toBe(true);
      const records = parse(raw, { relaxColumnCount: false }) as string[][];
      const { headers, rows } = sheetRows(wb, name);
      const csvHeaders = headers.filter((h) => h !== EXACT);
      expect(records[0], name).toEqual(csvHeaders);
      // the same rows as the sheet, in its order
      expect(records.length - 1, name).toBe(rows.length);
      const exactAt = headers.indexOf(EXACT);
      rows.forEach((row, r) => {
        const rec = records[r + 1]!;
        // every amount the workbook could not show exactly is in the CSV to the last digit
        const exact = exactAt >= 0 && typeof row[exactAt] === 'string' ? (row[exactAt] as string).split('; ') : [];
        for (const entry of exact) {
          const [header, text] = entry.split(' = ') as [string, string];
          expect(rec[csvHeaders.indexOf(header)], `${name} row ${r + 2} ${header}`).toBe(text);
          exactChecked += 1;
          if (significantDigits(text) > 15) longChecked += 1;
        }
        // numbers the workbook holds exactly read back as the same numbers
        headers.forEach((h, c) => {
          const v = row[c];
          if (h === EXACT || exact.some((e) => e.startsWith(`${h} = `))) return;
          const field = rec[csvHeaders.indexOf(h)]!;
          if (typeof v === 'number') expect(Number(field), `${name} row ${r + 2} ${h}`).toBe(v);
          if (v instanceof Date)
            expect(field, `${name} row ${r + 2} ${h}`).toMatch(/^\d{4}-\d\d-\d\d(T\d\d:\d\d:\d\d\.\d{3}Z)?$/);
        });
      });
    });
    expect(exactChecked).toBeGreaterThan(0);
    // an amount of more than 15 significant digits, kept exactly
    expect(longChecked).toBeGreaterThan(0);

    const fills = parse(readFileSync(out.csv[TABLE_SHEETS.indexOf('Fills')]!, 'utf8'), { columns: true }) as Array<
      Record<string, string>
    >;
    expect(fills.length).toBeGreaterThan(0);
    for (const f of fills) expect(f['Time (UTC)']).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
    const daily = parse(readFileSync(out.csv[TABLE_SHEETS.indexOf('Partner daily')]!, 'utf8'), {
      columns: true,
    }) as Array<Record<string, string>>;
    for (const d of daily) expect(d['Day (UTC)']).toMatch(/^\d{4}-\d\d-\d\d$/);
  });

  it('prints the workbook, detail folder and CSV paths, one a line', async () => {
    const dir = join(world!.dir, 'csv-plain');
    const result = await runCli(['report', runId, '--csv', dir], world!.env);
    expect(result.code, brief(result.stderr)).toBe(0);
    const lines = result.stdout.trim().split('\n');
    expect(lines[0]).toMatch(/\.xlsx$/);
    expect(lines[1]).toBe(lines[0]!.replace(/\.xlsx$/, '_detail'));
    expect(existsSync(lines[1]!)).toBe(true);
    expect(lines.slice(2).map((p) => basename(p))).toContain('breaks.csv');
    expect(lines.slice(2).every((p) => p.startsWith(dir) && existsSync(p))).toBe(true);
  });

  it('fails with exit 2 naming the folder when it cannot be written', async () => {
    const file = join(world!.dir, 'not-a-folder');
    writeFileSync(file, 'x');
    const result = await runCli(['report', runId, '--csv', join(file, 'csv')], world!.env);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain(join(file, 'csv'));
    expect(result.stdout).toBe('');
  });
});
