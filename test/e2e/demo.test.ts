import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { isAbsolute, join } from 'node:path';
import ExcelJS from 'exceljs';
import { afterAll, describe, expect, it } from 'vitest';
import { clocked } from '../helpers/clock.js';
import { ROOT, childEnv } from './helpers.js';

/** The Balances sheet's amount columns (Exact values and the dates are not amounts). */
const BALANCE_AMOUNTS = [
  'Opening',
  'Deposits',
  'Withdrawals',
  'Bought',
  'Sold',
  'Fees',
  'Expected closing',
  'Actual closing',
  'Residual',
  'Available',
  'USD value',
];

interface Split {
  total: number;
  inPeriod: number;
  carriedOver: number;
}
interface DemoSummary {
  breaks: Array<{ code: string; key: string }>;
  breakCounts: Split & {
    explained: number;
    severity: Record<'high' | 'medium' | 'low', Split>;
    rules: Array<Split & { code: string }>;
  };
}

describe('npm run demo', () => {
  const cwd = mkdtempSync(join(tmpdir(), 'rr-demo-'));
  afterAll(() => rmSync(cwd, { recursive: true, force: true }));

  it('runs against the local sandbox on the embedded database and leaves a workbook whose Breaks sheet lists the planted discrepancies', async () => {
    // Run from an empty folder: the demo's data/demo and reports/ land there, not in the checkout.
    const demo = clocked(join(ROOT, 'dist', 'sandbox', 'demo', 'main.js'), childEnv({}));
    const child = spawn(process.execPath, demo.argv, {
      cwd,
      env: demo.env,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    const code = await new Promise<number | null>((r) => child.on('close', r));
    expect(code, `${stdout}\n${stderr}`).toBe(0);

    const caught = /planted discrepancies caught: (\d+) of (\d+)/.exec(stdout);
    expect(caught, stdout).not.toBeNull();
    expect(Number(caught![2])).toBeGreaterThan(10);
    expect(caught![1]).toBe(caught![2]);
    const open = Number(/open breaks: (\d+)/.exec(stdout)?.[1]);
    // "completed" (every account ran) and "reconciled" (no unexplained break) are never confused: the batch line says both
    for (const label of ['run 1', 'run 2']) {
      expect(stdout).toMatch(
        new RegExp(`^${label}: account acme: run \\S+ completed: not reconciled: \\d+ open breaks`, 'm'),
      );
      expect(stdout).toMatch(
        new RegExp(
          `^${label}: batch \\S+ completed: both accounts ran to the end; 0 of 2 accounts reconciled, 2 with open breaks \\(reconciled: no unexplained open break\\)`,
          'm',
        ),
      );
    }
    expect(stdout).not.toMatch(/succeeded/);
    // Issue 45 point 8: read as a newcomer would, the lines agree with each other. The batch line counts the account
    // lines above it: "reconciled" and "with open breaks" as they say.
    const batch2 =
      /^run 2: batch \S+ completed: both accounts ran to the end; (\d+) of 2 accounts reconciled, (\d+) with open breaks/m.exec(
        stdout,
      );
    const accountLines = stdout.split('\n').filter((l) => /^run 2: account \w+: run \S+ completed: /.test(l));
    expect(accountLines).toHaveLength(2);
    expect(accountLines.filter((l) => / completed: reconciled/.test(l))).toHaveLength(Number(batch2![1]));
    expect(accountLines.filter((l) => / completed: not reconciled: /.test(l))).toHaveLength(Number(batch2![2]));
    // run 2 finding more than run 1 is said before it, with why
    expect(stdout).toMatch(
      /^run 2: .*second balance snapshot lets the balance roll-forward \(E_BALANCE_ROLL\) be checked/m,
    );
    // the planted count of the sandbox line is the one the caught line is read against
    const plantedAcme = Number(/acme \((\d+) planted discrepancies\)/.exec(stdout)?.[1]);
    expect(stdout).toContain(
      `(the demo checks ${caught![2]} of the ${plantedAcme} planted: P_WEBHOOK_GAP is checked only`,
    );
    // the headline figures: the money at stake as every USD figure is written
    expect(stdout).toMatch(
      /^money at stake: shortfalls USD -[\d,]+\.\d{2}, surpluses USD [\d,]+\.\d{2}, \d+ open breaks? without a USD figure$/m,
    );

    const printed = /^workbook: (.+\.xlsx)$/m.exec(stdout)?.[1] ?? '';
    const path = isAbsolute(printed) ? printed : join(cwd, printed);
    expect(path.startsWith(join(cwd, 'reports'))).toBe(true);
    expect(existsSync(path)).toBe(true);
    const workbook = new ExcelJS.Workbook();
    await workbook.xlsx.readFile(path);
    const breaks = workbook.getWorksheet('Breaks');
    const codes: string[] = [];
    breaks?.eachRow((row, n) => {
      if (n > 1) codes.push((row.values as unknown[]).map((v) => String(v ?? '')).join('|'));
    });
    expect(codes).toHaveLength(open);
    for (const code of ['P_FEE_USD', 'X_DEPOSIT_MISSING', 'E_FILL_QTY', 'E_BALANCE_ROLL', 'E_WITHDRAWAL_BENEFICIARY'])
      expect(
        codes.some((c) => c.includes(code)),
        code,
      ).toBe(true);

    // Issue 15 "Must show", on the demo's own workbook and JSON summary.
    const jsonPrinted = /^summary: +(.+\.summary\.json)$/m.exec(stdout)?.[1] ?? '';
    const json = JSON.parse(
      readFileSync(isAbsolute(jsonPrinted) ? jsonPrinted : join(cwd, jsonPrinted), 'utf8'),
    ) as DemoSummary;
    expect(json.breaks).toHaveLength(open);

    // 1. Every Balances amount and every Summary total / balance-table amount is a number cell.
    const balances = workbook.getWorksheet('Balances')!;
    const balanceHeaders = (balances.getRow(1).values as unknown[]).map((v) => String(v ?? ''));
    const amountColumns = balanceHeaders.flatMap((h, i) => (BALANCE_AMOUNTS.includes(h) ? [i] : []));
    expect(amountColumns.length).toBe(BALANCE_AMOUNTS.length);
    let balanceNumbers = 0;
    balances.eachRow((row, n) => {
      if (n === 1) return;
      for (const i of amountColumns) {
        const v = row.getCell(i).value;
        if (v === null || v === undefined) continue;
        expect(typeof v, `Balances row ${n} ${balanceHeaders[i]}: ${String(v)}`).toBe('number');
        balanceNumbers++;
      }
    });
    expect(balanceNumbers).toBeGreaterThan(20);
    const summary = workbook.getWorksheet('Summary')!;
    const rows: unknown[][] = [];
    summary.eachRow({ includeEmpty: true }, (row, n) => (rows[n - 1] = (row.values as unknown[]).slice(1)));
    const tables = rows.flatMap((r, i) =>
      typeof r?.[0] === 'string' && /^(Totals: |Balances per currency)/.test(r[0]) ? [i] : [],
    );
    expect(tables.length).toBe(4);
    let totalNumbers = 0;
    for (const start of tables) {
      for (let i = start + 2; i < rows.length && rows[i]?.some((c) => c !== null && c !== undefined); i++) {
        // A label or a currency code may be text; an amount never is.
        for (const v of rows[i]!.slice(1)) {
          if (typeof v === 'number') totalNumbers++;
          else if (typeof v === 'string')
            expect(v, `${String(rows[start]![0])}: "${v}" is an amount written as text`).not.toMatch(
              /^-?[\d,]+(\.\d+)?$/,
            );
        }
      }
    }
    expect(totalNumbers).toBeGreaterThan(30);

    // 2. Each break's Key links to a row of its data sheet that holds that key.
    const header = (breaks!.getRow(1).values as unknown[]).map((v) => String(v ?? ''));
    const keyColumn = header.indexOf('Key');
    let links = 0;
    breaks!.eachRow((row, n) => {
      if (n === 1) return;
      const cell = row.getCell(keyColumn).value as { text?: string; hyperlink?: string } | string;
      if (typeof cell !== 'object' || !cell?.hyperlink) return;
      const target = /^#'((?:[^']|'')+)'!A(\d+)$/.exec(cell.hyperlink);
      expect(target, cell.hyperlink).not.toBeNull();
      const sheet = workbook.getWorksheet(target![1]!.replace(/''/g, "'"));
      const values = (sheet!.getRow(Number(target![2])).values as unknown[]).map((v) => String(v ?? ''));
      expect(values, `${cell.text} -> ${cell.hyperlink}`).toContain(cell.text);
      links++;
    });
    // Every planted break has its record in the demo's period, so each is linked.
    expect(links).toBe(json.breaks.filter((b) => !['S_QUARANTINE', 'S_COVERAGE'].includes(b.code)).length);

    // 3. The Summary's counts equal the JSON's: per severity and per rule.
    const at = rows.findIndex((r) => r?.[0] === 'Open breaks');
    const bySeverity = new Map(rows.slice(at + 2, at + 6).map((r) => [String(r[0]), r.slice(1, 5)]));
    const c = json.breakCounts;
    expect(bySeverity.get('total')).toEqual([c.total, c.inPeriod, c.carriedOver, c.explained]);
    for (const sev of ['high', 'medium', 'low'] as const)
      expect(bySeverity.get(sev)?.slice(0, 3)).toEqual([
        c.severity[sev].total,
        c.severity[sev].inPeriod,
        c.severity[sev].carriedOver,
      ]);
    const ruleAt = rows.findIndex((r) => r?.[0] === 'Open breaks by rule');
    const ruleRows = rows.slice(ruleAt + 2, ruleAt + 2 + c.rules.length).map((r) => [r[0], r[2], r[3], r[4]]);
    expect(ruleRows).toEqual(c.rules.map((r) => [r.code, r.total, r.inPeriod, r.carriedOver]));
  }, 180_000);
});
