import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import ExcelJS from 'exceljs';
import JSZip from 'jszip';
import { afterAll, describe, expect, it } from 'vitest';
import { Decimal } from '../../src/decimal/decimal.js';
import {
  openBreakCounts,
  type BalanceRollRec,
  type ReportedBreak,
  type RollFigures,
  type RunInfo,
} from '../../src/domain/index.js';
import { Precision } from '../../src/report/precision.js';
import { printScale } from '../../src/report/cells.js';
import { summaryRows, summarySpec, type SummaryInput } from '../../src/report/summary-sheet.js';
import { spanWords } from '../../src/report/summary-balances.js';
import { UsdRates } from '../../src/report/usd-rates.js';
import { writeWorkbook } from '../../src/report/write-workbook.js';
import { balanceRollFindings } from '../../src/rules/balance-roll.js';
import { makeBreak, makeRun } from '../helpers/report-factories.js';

const NOW = new Date('2026-12-01T03:00:00Z');
const RATES = new UsdRates({ balances: [{ currency: 'BTC', rate: new Decimal('50000') }] });
const d = (v: string) => new Decimal(v);

/** A BTC roll-forward between two snapshots (no flows, a residual of 0.001). */
const roll = (openingAt: string, closingAt: string): BalanceRollRec => ({
  currency: 'BTC',
  opening: d('1'),
  deposits: d('0'),
  withdrawals: d('0'),
  bought: d('0'),
  sold: d('0'),
  fees: d('0'),
  expectedClosing: d('1'),
  actualClosing: d('1.001'),
  residual: d('0.001'),
  firstDivergentDay: null,
  openingAt: new Date(openingAt),
  closingAt: new Date(closingAt),
});

// A month, seven breaks that move money (USD: the difference is the impact), one that moves none.
const run = makeRun({ periodFrom: '2026-11-01', periodTo: '2026-12-01' });
const usd = (key: string, difference: string, overrides: Partial<ReportedBreak> = {}) =>
  makeBreak({ key, difference, ...overrides });
const breaks = [
  usd('o1', '-5', { severity: 'high' }),
  usd('o2', '-900'),
  usd('o3', '40', { inPeriod: false }),
  usd('o4', '700', { severity: 'low' }),
  usd('o5', '-0.5'),
  usd('o6', '-60'),
  usd('o7', '20'),
  makeBreak({ code: 'E_STALE', key: 'dep-1', entity: 'deposit', unit: 'hours', currency: 'BTC', difference: '30' }),
];

function input(rolls: BalanceRollRec[], openBreaks: ReportedBreak[] = breaks, r: RunInfo = run): SummaryInput {
  return {
    run: r,
    openBreaks,
    counts: openBreakCounts(openBreaks),
    changes: { previous: null, opened: [], reopened: [], resolved: [], stillOpen: 0 },
    totals: { partner: [], fills: [], deposits: [], withdrawals: [] },
    assumptions: [],
    precision: Precision.empty(),
    now: NOW,
    rates: RATES,
    balanceRolls: rolls,
  };
}

const firstCells = (rows: ReturnType<typeof summaryRows>) => rows.map((r) => r.cells[0]);
const startingWith = (rows: ReturnType<typeof summaryRows>, text: string) =>
  rows.findIndex((r) => typeof r.cells[0] === 'string' && r.cells[0].startsWith(text));

describe('the balance table says what it covers', () => {
  it('names the snapshots and their span, and warns when it is much shorter than the period', () => {
    const rows = summaryRows(input([roll('2026-11-30T23:59:56Z', '2026-11-30T23:59:59Z')]));
    const at = startingWith(rows, 'Balances per currency');
    expect(rows[at]!.cells[0]).toBe(
      'Balances per currency: roll-forward from the snapshot of 2026-11-30 23:59:56 UTC to that of ' +
        '2026-11-30 23:59:59 UTC (3 seconds)',
    );
    expect(rows[at + 1]!.cells[0]).toBe(
      'The two snapshots are 3 seconds apart: this table does not cover the period 2026-11-01 to 2026-11-30',
    );
  });

  it('gives no warning when the snapshots span most of the period', () => {
    const rows = summaryRows(input([roll('2026-10-31T23:59:58Z', '2026-11-30T23:59:59Z')]));
    const at = startingWith(rows, 'Balances per currency');
    expect(rows[at]!.cells[0]).toMatch(/\(30 days 0 h\)$/);
    expect(firstCells(rows).some((c) => typeof c === 'string' && c.includes('does not cover'))).toBe(false);
  });

  it('says spans in words', () => {
    expect([3_000, 12 * 60_000, 5.5 * 3_600_000, 86_401_000].map(spanWords)).toEqual([
      '3 seconds',
      '12 min',
      '5 h 30 min',
      '1 day 0 h',
    ]);
  });

  it('E_BALANCE_ROLL names the snapshots by their times, not their ids', () => {
    const [finding] = balanceRollFindings(
      [
        [
          {
            ...roll('2026-11-24T23:59:58Z', '2026-11-25T23:59:59Z'),
            openingAt: new Date('2026-11-24T23:59:58Z'),
            closingAt: new Date('2026-11-25T23:59:59Z'),
            openingSnapshotId: '1',
            closingSnapshotId: '3',
            depositsByState: d('0'),
            withdrawalsByState: d('0'),
            opening: d('1'),
            expectedClosing: d('1'),
            actualClosing: d('1.001'),
            residual: d('0.001'),
            deposits: d('0'),
            withdrawals: d('0'),
            bought: d('0'),
            sold: d('0'),
            fees: d('0'),
            days: [],
          } satisfies RollFigures,
        ],
      ],
      d('0'),
    );
    const check = finding!.failures[0]!.check;
    expect(check).toContain('between the snapshot of 2026-11-24 23:59:58 UTC and that of 2026-11-25 23:59:59 UTC');
    expect(check).not.toMatch(/snapshots 1 and 3/);
  });
});

describe("the Summary's first printed page", () => {
  const dir = mkdtempSync(join(tmpdir(), 'rr-summary-print-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('lists the largest five open breaks by absolute USD impact, with code, record, impact and age', () => {
    const rows = summaryRows(input([]));
    const at = startingWith(rows, 'Largest 5 open breaks by USD impact');
    expect(at).toBeGreaterThan(0);
    const listed = rows.slice(at + 2, at + 7);
    expect(listed.map((r) => r.cells[0])).toEqual(Array(5).fill('P_FEE_USD'));
    expect(listed.map((r) => String((r.cells[1] as { value: Decimal }).value))).toEqual([
      '-900',
      '700',
      '-60',
      '40',
      '20',
    ]);
    // age in days from first seen (2026-10-30 02:00) to the run (2026-12-01 03:00)
    expect(listed[0]!.cells[2]).toBe(32);
    expect(listed[0]!.cells[6]).toMatch(/o2$/);
    expect(rows[at + 7]!.cells[0]).toBe(
      '2 more with a USD figure, 0 without one, 1 that move no money: the Breaks sheet lists every open break',
    );
  });

  it('prints A4 landscape one page wide, the verdict, money at stake, severities and largest breaks above a break', async () => {
    const path = join(dir, 'summary.xlsx');
    await writeWorkbook(path, [
      { spec: summarySpec, rows: summaryRows(input([roll('2026-11-30T23:59:56Z', '2026-11-30T23:59:59Z')])) },
    ]);
    const wb = new ExcelJS.Workbook();
    await wb.xlsx.readFile(path);
    const sheet = wb.getWorksheet('Summary')!;
    expect(sheet.pageSetup).toMatchObject({
      orientation: 'landscape',
      paperSize: 9,
      margins: { left: 0.4, right: 0.4, top: 0.5, bottom: 0.5 },
    });
    // an explicit scale, never "fit to": Excel ignores manual page breaks under "fit to"
    expect(sheet.pageSetup.fitToPage).toBeFalsy();
    const widths = sheet.columns.map((c) => c.width ?? 0);
    const scale = sheet.pageSetup.scale ?? 100;
    expect(scale).toBe(printScale(widths, summarySpec.print!));
    // one page wide (A4 landscape less the margins, 96 dpi) and readable: no smaller than 60%
    expect(widths.reduce((sum, w) => sum + 7.5 * w + 5, 0) * (scale / 100)).toBeLessThanOrEqual((11.69 - 0.8) * 96);
    expect(scale).toBeGreaterThanOrEqual(60);
    // exceljs does not read row breaks back: the sheet's XML has them
    const zip = await JSZip.loadAsync(readFileSync(path));
    const xml = await zip.file('xl/worksheets/sheet1.xml')!.async('string');
    const breakRows = [...xml.matchAll(/<brk id="(\d+)"[^>]*man="1"/g)].map((m) => Number(m[1]));
    expect(breakRows).toHaveLength(1);
    const pageEnd = breakRows[0]!;

    const rowOf = (text: string) => {
      let found = 0;
      sheet.eachRow((row, n) => {
        const v = row.getCell(1).value;
        if (!found && typeof v === 'string' && v.startsWith(text)) found = n;
      });
      expect(found, text).toBeGreaterThan(0);
      return found;
    };
    expect(rowOf('NOT RECONCILED')).toBe(1);
    // the shortfalls' total, white on dark red: no [Red] in its format, which would paint it the colour of its fill
    const shortfall = sheet.getRow(rowOf('Shortfalls')).getCell(2);
    expect(shortfall.fill).toMatchObject({ fgColor: { argb: 'FFC00000' } });
    expect(shortfall.font?.color?.argb).toBe('FFFFFFFF');
    expect(shortfall.numFmt).not.toContain('[Red]');
    expect(shortfall.value).toBe(-965.5);
    const severities = rowOf('Severity');
    expect(sheet.getRow(severities - 1).getCell(1).value).toBe('Open breaks');
    for (const text of ['Money at stake (USD)', 'Severity', 'total', 'Largest 5 open breaks by USD impact'])
      expect(rowOf(text), text).toBeLessThanOrEqual(pageEnd);
    // the top five and the line under them end the page; the reference tables follow it
    expect(rowOf('2 more with a USD figure')).toBe(pageEnd);
    for (const text of ['Open breaks by rule', 'Balances per currency', 'Run'])
      expect(rowOf(text), text).toBeGreaterThan(pageEnd);
    // a readable first page: A4 landscape holds it at the scale one page wide gives
    expect(pageEnd).toBeLessThanOrEqual(40);
  });
});

describe('printScale', () => {
  const a4 = { paperSize: 9, margins: { left: 0.5, right: 0.5, top: 0.5, bottom: 0.5, header: 0.3, footer: 0.3 } };
  it('is 100 when the columns fit, the fraction of the printable width otherwise', () => {
    expect(printScale([20, 20], a4)).toBe(100);
    // (11.69 - 1) in x 96 dpi = 1026.24 px for 2 x (7.5 x 100 + 5) = 1510 px: 67%
    expect(printScale([100, 100], a4)).toBe(67);
    // Letter is narrower: (11 - 1) x 96 = 960 px
    expect(printScale([100, 100], { ...a4, paperSize: 1 })).toBe(63);
  });
  it('never goes below 10%', () => {
    expect(
      printScale(
        Array.from({ length: 100 }, () => 255),
        a4,
      ),
    ).toBe(10);
  });
});
