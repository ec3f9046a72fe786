import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { gunzipSync } from 'node:zlib';
import { parse } from 'csv-parse/sync';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import ExcelJS from 'exceljs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestStore, storeKinds, type TestStore } from '../helpers/db.js';
import { startSandbox, type Sandbox } from '../helpers/sandbox.js';
import { loadConfig, type Config } from '../../src/config/load.js';
import { runPipeline } from '../../src/pipeline/run.js';
import { writeReport } from '../../src/stages/report.js';
import { silentLogger } from '../../src/log/logger.js';
import { addDays, toDay } from '../../src/util/dates.js';
import { BREAKS_HEADER } from '../../src/report/breaks-sheet.js';
import { checkBreaksFigures } from '../helpers/number-format.js';

/**
 * Issue 15 "Must show": on a sandbox run with one planted case of every rule, the Breaks sheet
 * read back with exceljs: each key's hyperlink points at a row of its data sheet whose key column
 * holds exactly that key (also when the data sheets continue on "<name> (2)"), colour is on the
 * severity cell only (the fill-in cells are light yellow by design), the contract headers are
 * there, the fill-in columns are unlocked with the yes/no drop-down, and the sheet prints one page
 * wide in landscape.
 */
const SANDBOX = { seed: 21, days: 3, ordersPerDay: 8, fillsPerOrder: 2 };

/** The column holding each data sheet's key (Coverage: source:stream:day from three columns). */
const KEY_COLUMN: Record<string, string> = {
  'Partner orders': 'Order id',
  'Exchange orders vs fills': 'Exchange order id',
  Fills: 'Exec id',
  Deposits: 'Deposit id',
  Withdrawals: 'Withdrawal id',
  Balances: 'Currency',
};

const CONTRACT = ['Rule code', 'Key', 'Amounts as reported', 'Status', 'Owner', 'Explanation', 'Explained?'];
const EDITABLE = ['Owner', 'Explanation', 'Explained?'];

function headers(ws: ExcelJS.Worksheet): string[] {
  return (ws.getRow(1).values as unknown[]).slice(1).map((v) => String(v ?? ''));
}

function cellText(v: ExcelJS.CellValue): string {
  if (v instanceof Date) return v.toISOString().slice(0, 10);
  if (v && typeof v === 'object' && 'text' in v) return String(v.text);
  return String(v ?? '');
}

/** The key a data sheet's row holds, read by the sheet's key column header. */
function keyAt(wb: ExcelJS.Workbook, sheet: string, row: number): string | null {
  const ws = wb.getWorksheet(sheet);
  if (!ws) return null;
  const base = sheet.replace(/ \(\d+\)$/, '');
  const h = headers(ws);
  const r = ws.getRow(row);
  if (base === 'Coverage')
    return ['Source', 'Stream', 'Day (UTC)'].map((name) => cellText(r.getCell(h.indexOf(name) + 1).value)).join(':');
  const col = h.indexOf(KEY_COLUMN[base] ?? '');
  return col < 0 ? null : cellText(r.getCell(col + 1).value);
}

interface Link {
  code: string;
  key: string;
  target: string | null;
}

/** Each Breaks row's code, key text and hyperlink target; checks the links land on their key. */
function checkLinks(wb: ExcelJS.Workbook): Link[] {
  const ws = wb.getWorksheet('Breaks')!;
  const h = headers(ws);
  const links: Link[] = [];
  for (let r = 2; r <= ws.rowCount; r++) {
    const row = ws.getRow(r);
    const code = String(row.getCell(h.indexOf('Rule code') + 1).value);
    const value = row.getCell(h.indexOf('Key') + 1).value;
    if (value && typeof value === 'object' && 'hyperlink' in value) {
      const m = /^#'((?:[^']|'')+)'!A(\d+)$/.exec(value.hyperlink);
      expect(m, value.hyperlink).not.toBeNull();
      const sheet = m![1]!.replace(/''/g, "'");
      expect(keyAt(wb, sheet, Number(m![2])), `${code} ${value.text} -> ${value.hyperlink}`).toBe(value.text);
      links.push({ code, key: value.text, target: sheet });
    } else {
      links.push({ code, key: String(value), target: null });
    }
  }
  return links;
}

for (const kind of storeKinds) {
  describe(`Breaks sheet a person can work [${kind}]`, { timeout: 300_000 }, () => {
    let sandbox: Sandbox;
    let test: TestStore;
    let config: Config;
    let dir: string;
    let runId: string;
    let path: string;
    const logger = silentLogger();
    const today = toDay(new Date());
    const period = { from: addDays(today, -SANDBOX.days), to: addDays(today, 1) };

    beforeAll(async () => {
      test = await createTestStore(kind);
      dir = mkdtempSync(join(tmpdir(), 'rr-breaks-sheet-'));
      sandbox = await startSandbox({ ...SANDBOX, discrepancies: true, live: false, faults: 'none' });
      config = loadConfig({ env: { ...sandbox.env, REPORTS_DIR: join(dir, 'reports') } });
      // Two runs: the second has two balance snapshots, so the planted roll-forward break is found too.
      for (let i = 0; i < 2; i++) {
        const r = await runPipeline({ store: test.store, config, logger }, { period, trigger: 'cli', email: false });
        expect(r.status, r.error).toBe('succeeded');
        runId = r.runId;
        path = r.reportPath!;
      }
    }, 300_000);

    afterAll(async () => {
      await sandbox?.close();
      await test?.drop();
      if (dir) rmSync(dir, { recursive: true, force: true });
    });

    it("links each break's key to the row of its data sheet that holds that key", async () => {
      const wb = new ExcelJS.Workbook();
      await wb.xlsx.readFile(path);
      const links = checkLinks(wb);
      expect(links.length).toBeGreaterThan(10);
      // Every planted case whose entity is in the period has its link (E_STALE and P_STALE records may be older).
      const linked = new Map(links.map((l) => [`${l.code} ${l.key}`, l.target]));
      const expectSheet: Record<string, string> = {
        P_FEE_USD: 'Partner orders',
        X_DEPOSIT_MISSING: 'Partner orders',
        E_FILL_QTY: 'Exchange orders vs fills',
        E_FEE_RATE: 'Fills',
        E_FILL_ORPHAN: 'Fills',
        E_BALANCE_ROLL: 'Balances',
        E_WITHDRAWAL_BENEFICIARY: 'Withdrawals',
      };
      const planted = sandbox.expectedBreaks();
      for (const [code, sheet] of Object.entries(expectSheet)) {
        const cases = planted.filter((b) => b.code === code);
        expect(cases.length, code).toBeGreaterThan(0);
        for (const b of cases) expect(linked.get(`${b.code} ${b.key}`), `${b.code} ${b.key}`).toBe(sheet);
      }
    });

    it('keeps the links right when the data sheets continue on "<name> (2)"', async () => {
      // Another folder: the same run's workbook name would replace the one the other tests read.
      const ctx = {
        store: test.store,
        config: { ...config, reportsDir: join(dir, 'split') },
        logger,
        runId,
        now: new Date(),
      };
      const small = await writeReport(ctx, runId, { maxRowsPerSheet: 4 });
      const wb = new ExcelJS.Workbook();
      await wb.xlsx.readFile(small.path);
      expect(wb.worksheets.map((w) => w.name)).toContain('Partner orders (2)');
      const links = checkLinks(wb);
      expect(links.some((l) => l.target && / \(\d+\)$/.test(l.target))).toBe(true);
      // Breaks continue too: every part has the contract headers.
      for (const ws of wb.worksheets.filter((w) => w.name.startsWith('Breaks')))
        expect(headers(ws)).toEqual(expect.arrayContaining(CONTRACT));
    });

    it('colours the severity cell only, has the contract headers, unlocked fill-in columns with the drop-down, and prints one page wide', async () => {
      const wb = new ExcelJS.Workbook();
      await wb.xlsx.readFile(path);
      const ws = wb.getWorksheet('Breaks')!;
      const h = headers(ws);
      expect(h).toEqual(expect.arrayContaining(Object.values(BREAKS_HEADER)));
      for (const name of CONTRACT)
        expect(
          h.filter((x) => x === name),
          name,
        ).toHaveLength(1);
      // fitToPage on, or Excel prints at 100% whatever fitToWidth says
      expect(ws.pageSetup).toMatchObject({ orientation: 'landscape', fitToPage: true, fitToWidth: 1, fitToHeight: 0 });
      // Fifteen visible columns: what a person acts on and the workflow; the rest hidden, in the file ("Exact values"
      // shown when a figure needs it, below).
      const visible = h.filter((x, i) => !ws.getColumn(i + 1).hidden && x !== 'Exact values');
      expect(visible).toEqual([
        'Severity',
        'Rule code',
        'Key',
        'What happened',
        'Expected',
        'Actual',
        'Difference',
        'USD impact',
        'This period?',
        'Closed period',
        'Age (days)',
        'Owner',
        'Last note',
        'Explanation',
        'Explained?',
      ]);
      expect(h.filter((_, i) => ws.getColumn(i + 1).hidden)).toEqual([
        'Rule',
        'Unit',
        'USD valuation',
        'First seen (UTC)',
        'Status',
        'Amounts as reported',
        'Detail',
      ]);
      // "Exact values" shows when a figure has more digits than a number cell keeps, and only then
      const exact = h.indexOf('Exact values') + 1;
      let needed = false;
      for (let r = 2; r <= ws.rowCount; r++) needed ||= Boolean(ws.getRow(r).getCell(exact).value);
      expect(ws.getColumn(exact).hidden).toBe(!needed);
      // Codes and keys never cut: each column is at least as wide as its longest value.
      for (const name of ['Rule code', 'Key']) {
        const col = h.indexOf(name) + 1;
        let longest = 0;
        for (let r = 2; r <= ws.rowCount; r++)
          longest = Math.max(longest, cellText(ws.getRow(r).getCell(col).value).length);
        expect(ws.getColumn(col).width!, name).toBeGreaterThanOrEqual(longest);
      }

      const severity = h.indexOf('Severity') + 1;
      const editable = EDITABLE.map((name) => h.indexOf(name) + 1);
      const fills: Record<string, number> = {};
      for (let r = 2; r <= ws.rowCount; r++) {
        const row = ws.getRow(r);
        for (let c = 1; c <= h.length; c++) {
          const cell = row.getCell(c);
          const fill = (cell.fill as ExcelJS.FillPattern | undefined)?.fgColor?.argb;
          if (c === severity) {
            expect(fill, `severity of row ${r}`).toBeTruthy();
          } else if (editable.includes(c)) {
            expect(fill, `${h[c - 1]} of row ${r}`).toBe('FFFFFFCC');
            expect(cell.protection?.locked, `${h[c - 1]} of row ${r}`).toBe(false);
          } else if (fill) {
            fills[h[c - 1]!] = (fills[h[c - 1]!] ?? 0) + 1;
          }
        }
        const explained = row.getCell(h.indexOf('Explained?') + 1);
        expect(explained.dataValidation, `Explained? of row ${r}`).toMatchObject({
          type: 'list',
          formulae: ['"yes,no"'],
        });
        const status = String(row.getCell(h.indexOf('Status') + 1).value);
        expect(['open', 'explained']).toContain(status);
        // Amounts as reported: expected | actual | difference | currency, as the JSON summary has them
        expect(String(row.getCell(h.indexOf('Amounts as reported') + 1).value).split(' | ')).toHaveLength(4);
      }
      expect(fills).toEqual({});
      // Severity colours differ by severity (high is dark red, low light yellow)
      const tones = new Map<string, string>();
      for (let r = 2; r <= ws.rowCount; r++) {
        const row = ws.getRow(r);
        tones.set(
          String(row.getCell(severity).value),
          (row.getCell(severity).fill as ExcelJS.FillPattern).fgColor!.argb!,
        );
      }
      expect(tones.get('high')).toBe('FFC00000');
      expect(new Set(tones.values()).size).toBe(tones.size);
    });

    it('shows each figure with its unit, never 0 when it is not, in a column as wide as it shows (issue 45)', async () => {
      const wb = new ExcelJS.Workbook();
      await wb.xlsx.readFile(path);
      const ws = wb.getWorksheet('Breaks')!;
      const checked = checkBreaksFigures(ws);
      expect(checked.length).toBeGreaterThan(20);
      // the stale-data break's figures are hours, not money
      expect(checked.some((c) => / h$/.test(c.text))).toBe(true);
    });

    it('says what happened in words, with the unit and the USD impact', async () => {
      const wb = new ExcelJS.Workbook();
      await wb.xlsx.readFile(path);
      const ws = wb.getWorksheet('Breaks')!;
      const h = headers(ws);
      const rows = [];
      for (let r = 2; r <= ws.rowCount; r++) {
        const row = ws.getRow(r);
        rows.push(Object.fromEntries(h.map((name, i) => [name, row.getCell(i + 1).value])));
      }
      if (process.env.DUMP_BREAKS) for (const r of rows) console.log(JSON.stringify(r));
      const fee = rows.find((r) => r['Rule code'] === 'P_FEE_USD')!;
      expect(fee.Rule).toBe('Partner fee USD twin');
      expect(fee.Unit).toBe('USD');
      expect(String(fee['What happened'])).toMatch(/^Partner fee USD twin off by -?\d+\.\d+ USD on order \S+/);
      // USD 1:1, rounded to the cent, signed like the difference
      expect(fee['USD impact']).toBeCloseTo(Number(fee.Difference), 2);
      expect(Math.sign(Number(fee['USD impact']))).toBe(Math.sign(Number(fee.Difference)));
      // how it was valued, read back from the row: the amount, in USD (no conversion)
      expect(fee['USD valuation']).toMatch(/^-?\d+(\.\d+)? USD, in USD$/);
      const stale = rows.find((r) => r['Rule code'] === 'E_STALE')!;
      expect(stale.Unit).toBe('hours');
      // an age moves no money: said so, never a blank
      expect(stale['USD impact']).toBe('no money');
      expect(stale['USD valuation']).toMatch(/^no money: an age/);
      expect(String(stale['What happened'])).toMatch(
        /^(Deposit|Withdrawal) \S+ \(\w+\) (UNCONFIRMED|PENDING) for \d+(\.\d)? hours \(limit 24\)/,
      );
      for (const r of rows) {
        expect(String(r['What happened']), String(r['Rule code'])).toContain(cellText(r.Key as ExcelJS.CellValue));
        expect(String(r.Detail ?? '')).not.toMatch(/^\{/);
      }
    });

    it('mails the records breaks point at with those that explain them; the detail holds every record of the period', async () => {
      const ctx = {
        store: test.store,
        config: { ...config, reportsDir: join(dir, 'detail') },
        logger,
        runId,
        now: new Date(),
      };
      const written = await writeReport(ctx, runId, { detail: true });
      expect(written.detail.dir).toBe(written.path.replace(/\.xlsx$/, '_detail'));
      expect(written.detail.files.map((f) => basename(f.path))).toEqual([
        'partner-orders.csv.gz',
        'exchange-orders-vs-fills.csv.gz',
        'fills.csv.gz',
        'deposits.csv.gz',
        'withdrawals.csv.gz',
      ]);
      const mailed = new ExcelJS.Workbook();
      await mailed.xlsx.readFile(written.path);
      const full = new ExcelJS.Workbook();
      await full.xlsx.readFile(written.detail.workbook!.path);
      expect(mailed.worksheets.map((w) => w.name)).toEqual([
        'Summary',
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
      ]);
      // Links land on their key in both workbooks.
      expect(checkLinks(full).filter((l) => l.target).length).toBeGreaterThan(10);
      const mailedLinks = checkLinks(mailed);
      for (const l of checkLinks(full))
        if (l.target && l.target in KEY_COLUMN)
          expect(mailedLinks.find((m) => m.code === l.code && m.key === l.key)?.target).toBe(l.target);

      /** A sheet's rows as header -> text. */
      const table = (wb: ExcelJS.Workbook, name: string) => {
        const ws = wb.getWorksheet(name)!;
        const h = headers(ws);
        const rows: Array<Record<string, string>> = [];
        for (let r = 2; r <= ws.rowCount; r++)
          rows.push(Object.fromEntries(h.map((x, i) => [x, cellText(ws.getRow(r).getCell(i + 1).value)])));
        return rows;
      };
      // Every record of the period: each gzip CSV has the detail workbook's rows, key for key, in its order.
      for (const f of written.detail.files) {
        const records = parse(gunzipSync(readFileSync(f.path)).toString('utf8'), { columns: true }) as Array<
          Record<string, string>
        >;
        const sheet = table(full, f.sheet);
        expect(records.length, f.sheet).toBe(f.rows);
        expect(sheet.length, f.sheet).toBe(f.rows);
        const key = KEY_COLUMN[f.sheet]!;
        expect(records.map((r) => r[key])).toEqual(sheet.map((r) => r[key]));
      }
      const fillsInPeriod = written.detail.files.find((f) => f.sheet === 'Fills')!.rows;
      expect(fillsInPeriod).toBeGreaterThan(20);

      // The mailed data sheets: a row carries an open break, or explains one that does.
      const has = (r: Record<string, string>) => r['Open breaks'] !== '';
      const fills = table(mailed, 'Fills');
      const orders = table(mailed, 'Exchange orders vs fills');
      expect(fills.length).toBeLessThan(fillsInPeriod);
      expect(fills.filter(has).length).toBeGreaterThan(0);
      const ordersWithBreaks = new Set(orders.filter(has).map((o) => o['Exchange order id']));
      const ordersOfFillBreaks = new Set(fills.filter(has).map((f) => f['Exchange order id']));
      for (const f of fills) expect(has(f) || ordersWithBreaks.has(f['Exchange order id']!), f['Exec id']).toBe(true);
      for (const o of orders)
        expect(has(o) || ordersOfFillBreaks.has(o['Exchange order id']!), o['Exchange order id']).toBe(true);
      // an order with a break comes with every fill of it the detail holds
      const detailFills = table(full, 'Fills');
      for (const id of ordersWithBreaks)
        for (const f of detailFills.filter((x) => x['Exchange order id'] === id))
          expect(
            fills.some((x) => x['Exec id'] === f['Exec id']),
            `fill ${f['Exec id']} of order ${id}`,
          ).toBe(true);
      const partner = table(mailed, 'Partner orders');
      const deposits = table(mailed, 'Deposits');
      const hashesOf = (rows: Array<Record<string, string>>) =>
        new Set(
          rows
            .filter(has)
            .map((r) => r['Transaction hash'])
            .filter(Boolean),
        );
      const [partnerHashes, depositHashes] = [hashesOf(partner), hashesOf(deposits)];
      for (const p of partner) expect(has(p) || depositHashes.has(p['Transaction hash']!), p['Order id']).toBe(true);
      for (const d of deposits) expect(has(d) || partnerHashes.has(d['Transaction hash']!), d['Deposit id']).toBe(true);
      for (const w of table(mailed, 'Withdrawals')) expect(has(w), w['Withdrawal id']).toBe(true);

      // The Summary says where the detail is; its file table counts the rows.
      const summary = mailed.getWorksheet('Summary')!;
      const texts: string[] = [];
      summary.eachRow((row) => row.eachCell((c) => texts.push(cellText(c.value))));
      expect(texts).toContain(written.detail.dir);
      expect(texts).toContain('fills.csv.gz');
      // the detail workbook says it holds every record (not the mailed workbook's words about break records)
      const fullTexts: string[] = [];
      full.getWorksheet('Summary')!.eachRow((row) => row.eachCell((c) => fullTexts.push(cellText(c.value))));
      expect(fullTexts).toContain(`on the data sheets here, and as gzip CSV in ${written.detail.dir}`);
      expect(fullTexts.some((t) => t.startsWith('the data sheets here list the records open breaks'))).toBe(false);
      expect(written.digest.detailDir).toBe(written.detail.dir);
    });
  });
}
