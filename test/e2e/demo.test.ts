import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { isAbsolute, join } from 'node:path';
import ExcelJS from 'exceljs';
import { afterAll, describe, expect, it } from 'vitest';
import { ROOT, childEnv } from './helpers.js';

describe('npm run demo', () => {
  const cwd = mkdtempSync(join(tmpdir(), 'rr-demo-'));
  afterAll(() => rmSync(cwd, { recursive: true, force: true }));

  it('runs against the local sandbox on the embedded database and leaves a workbook whose Breaks sheet lists the planted discrepancies', async () => {
    // Run from an empty folder: the demo's data/demo and reports/ land there, not in the checkout.
    const child = spawn(process.execPath, [join(ROOT, 'dist', 'sandbox', 'demo', 'main.js')], { cwd, env: childEnv({}), stdio: ['ignore', 'pipe', 'pipe'] });
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
    expect(stdout).toMatch(/run 1: run \S+ succeeded/);
    expect(stdout).toMatch(/run 2: run \S+ succeeded/);

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
    for (const code of ['P_FEE_USD', 'X_DEPOSIT_MISSING', 'E_FILL_QTY', 'E_BALANCE_ROLL', 'E_WITHDRAWAL_BENEFICIARY']) expect(codes.some((c) => c.includes(code)), code).toBe(true);
  }, 180_000);
});
