import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import ExcelJS from 'exceljs';
import { describe, expect, it } from 'vitest';
import { Decimal } from '../../src/decimal/decimal.js';
import { openBreakCounts } from '../../src/domain/index.js';
import { recordChanges, type CloseChange, type ClosedPeriodChanges } from '../../src/domain/evidence.js';
import { withUsdImpact } from '../../src/report/adjustment-impact.js';
import { buildDigest } from '../../src/report/digest.js';
import { messageSubject } from '../../src/report/email.js';
import { groupDigest, groupSummaryRows, type GroupAccount } from '../../src/report/group.js';
import { groupMessage, groupSubject } from '../../src/report/group-mail.js';
import { Precision } from '../../src/report/precision.js';
import {
  changeRow,
  CLOSED_CHANGES_TITLE,
  EVERY_CLOSED_CHANGE_TITLE,
  FIRST_PAGE_CHANGES,
} from '../../src/report/summary-closed-periods.js';
import { SUMMARY_FIRST_PAGE, summaryRows, summarySpec, type SummaryInput } from '../../src/report/summary-sheet.js';
import { writeWorkbook } from '../../src/report/write-workbook.js';
import { closedPeriodsChanged } from '../../src/report/summary-closed-periods.js';
import { UsdRates } from '../../src/report/usd-rates.js';
import { makeRun } from '../helpers/report-factories.js';

const RATES = new UsdRates({
  balances: [
    { currency: 'USD', rate: new Decimal(1) },
    { currency: 'EUR', rate: new Decimal('1.08') },
  ],
});
const fill = (qty: string, price: string, symbol = 'ETH-USD') =>
  JSON.stringify({ exec_id: 7, qty: Number(qty), price: Number(price), symbol, raw: { qty } });
const valued = (stream: Parameters<typeof recordChanges>[0], before: string | null, after: string | null) =>
  withUsdImpact(stream, before, after, recordChanges(stream, '7', before, after), RATES).map((c) => [
    c.field,
    c.usdImpact?.toFixed() ?? null,
  ]);

describe('the USD impact of a change to a signed record', () => {
  it("shares a fill's notional between qty and price so that they add up to after - before", () => {
    // 0.6 x 3100 - 0.5 x 3000 = 360: qty at the old price (0.1 x 3000), then the price at the new qty (0.6 x 100)
    expect(valued('fill', fill('0.5', '3000'), fill('0.6', '3100'))).toEqual([
      ['price', '60'],
      ['qty', '300'],
      ['raw.qty', null],
    ]);
  });

  it('moves the whole money of a record added to the period or gone from it', () => {
    expect(valued('fill', null, fill('0.25', '2000'))).toEqual([['*', '500']]);
    expect(valued('fill', fill('0.25', '2000'), null)).toEqual([['*', '-500']]);
  });

  it('values an amount in its currency, and a field that moves no money or a currency without a rate as none', () => {
    const deposit = (amount: string, currency: string, state: string) =>
      JSON.stringify({ deposit_id: 'd', amount: Number(amount), currency, state });
    expect(valued('deposit', deposit('10', 'EUR', 'UNCONFIRMED'), deposit('12', 'EUR', 'COMPLETED'))).toEqual([
      ['amount', '2.16'],
      ['state', null],
    ]);
    expect(valued('deposit', deposit('10', 'XYZ', 'PENDING'), deposit('12', 'XYZ', 'PENDING'))).toEqual([
      ['amount', null],
    ]);
    // the same amount in another currency: the rate's difference
    expect(valued('withdrawal', deposit('10', 'USD', 'PENDING'), deposit('10', 'EUR', 'PENDING'))).toEqual([
      ['currency', '0.8'],
    ]);
  });
});

const change = (id: string, usd: string | null, overrides: Partial<CloseChange> = {}): CloseChange => ({
  stream: 'fill',
  id,
  field: 'qty',
  before: '0.5',
  after: '0.6',
  usdImpact: usd === null ? null : new Decimal(usd),
  runId: 'run-2',
  seenAt: new Date('2026-11-17T02:00:00Z'),
  ...overrides,
});
const close = (changes: CloseChange[], count = changes.length): ClosedPeriodChanges => ({
  closeId: 'c20261116T090000Z-abc123',
  account: 'default',
  period: { from: '2026-11-01', to: '2026-12-01' },
  by: 'alice',
  at: new Date('2026-12-02T09:00:00Z'),
  count,
  usdTotal: new Decimal('-1234.5'),
  changes,
});
const run = makeRun({ periodFrom: '2026-12-05', periodTo: '2026-12-06' });
const input = (closedPeriods: ClosedPeriodChanges[]): SummaryInput => ({
  run,
  openBreaks: [],
  counts: openBreakCounts([]),
  changes: { previous: null, opened: [], reopened: [], resolved: [], stillOpen: 0 },
  totals: { partner: [], fills: [], deposits: [], withdrawals: [] },
  assumptions: [],
  precision: Precision.empty(),
  now: new Date('2026-12-06T03:00:00Z'),
  closedPeriods,
});
const texts = (rows: ReturnType<typeof summaryRows>) =>
  rows.map((r) => r.cells.map((c) => (c && typeof c === 'object' && 'value' in c ? String(c.value) : c)));

describe('"Closed periods changed since sign-off" on the Summary', () => {
  it('is a section of the first page', () => {
    expect(SUMMARY_FIRST_PAGE.flat()).toContain(closedPeriodsChanged);
    const rows = summaryRows(input([close([change('11', '60')])]));
    const at = rows.findIndex((r) => r.cells[0] === CLOSED_CHANGES_TITLE);
    const pageEnd = rows.findIndex((r) => r.pageBreakAfter);
    expect(at).toBeGreaterThan(0);
    expect(at).toBeLessThan(pageEnd);
  });

  it('names the period, who signed it, the close, its changes and each change with its record id', () => {
    const rows = texts(closedPeriodsChanged({ ...input([close([change('11', '60')])]) } as never));
    expect(rows).toEqual([
      [CLOSED_CHANGES_TITLE, null, null, null, null, null, null],
      [
        '2026-11-01 to 2026-11-30',
        'signed by alice',
        '2026-12-02 09:00:00',
        '1 change',
        '-1234.5',
        null,
        'close c20261116T090000Z-abc123',
      ],
      ['Field', 'Before', 'After', 'USD impact', 'First seen (UTC)', '', 'Record'],
      ['qty', '0.5', '0.6', '60', '2026-11-17 02:00:00', null, 'fill 11'],
      [expect.stringMatching(/^Records of a signed-off period that changed since sign-off/)],
    ]);
  });

  it('lists the first page changes and points to the full list beyond them', () => {
    const many = Array.from({ length: FIRST_PAGE_CHANGES + 3 }, (_, i) => change(String(100 + i), String(-i)));
    const rows = texts(summaryRows(input([close(many)])));
    const first = rows.findIndex((r) => r[0] === CLOSED_CHANGES_TITLE);
    const records = (from: number) =>
      rows.slice(from).filter((r) => typeof r[6] === 'string' && r[6].startsWith('fill '));
    expect(
      records(first)
        .slice(0, FIRST_PAGE_CHANGES)
        .map((r) => r[6]),
    ).toEqual(many.slice(0, FIRST_PAGE_CHANGES).map((c) => `fill ${c.id}`));
    expect(rows.some((r) => r[0] === `... and 3 more: listed under "${EVERY_CLOSED_CHANGE_TITLE}" below`)).toBe(true);
    const every = rows.findIndex((r) => r[0] === EVERY_CLOSED_CHANGE_TITLE);
    expect(every).toBeGreaterThan(first);
    expect(records(every)).toHaveLength(FIRST_PAGE_CHANGES + 3);
  });

  it("says why a change has no USD impact, keeps a sender's formula as text, and cuts a whole document", () => {
    const row = (c: CloseChange) => changeRow(c).cells;
    expect(row(change('1', null, { field: 'state', before: 'PENDING', after: '=HYPERLINK("x")' }))).toEqual([
      'state',
      'PENDING',
      '=HYPERLINK("x")',
      'no money',
      '2026-11-17 02:00:00',
      null,
      'fill 1',
    ]);
    expect(row(change('1', null))[3]).toBe('no USD figure');
    const doc = JSON.stringify({ exec_id: 1, raw: 'x'.repeat(200) });
    const added = row(change('1', '5', { field: '*', before: null, after: doc }));
    expect(added.slice(0, 3)).toEqual(['new record', '(absent)', '{"exec_id":1,"raw"...']);
  });

  it('keeps the Summary at its column widths, so that its print scale holds', async () => {
    const long = 'order_state_updated_at_text_of_a_sender_'.repeat(3);
    const c = close(
      [change('8ec9e4d6-fbe8-4cc2-899c-c00d178dad3c', '-1234567.89', { field: long, before: long, after: long })],
      1,
    );
    const dir = mkdtempSync(join(tmpdir(), 'closed-periods-'));
    const widthsOf = async (closes: ClosedPeriodChanges[]) => {
      const path = join(dir, `summary-${closes.length}.xlsx`);
      await writeWorkbook(path, [{ spec: summarySpec, rows: summaryRows(input(closes)) }]);
      const wb = new ExcelJS.Workbook();
      await wb.xlsx.readFile(path);
      return wb.getWorksheet('Summary')!.columns.map((col) => col.width);
    };
    try {
      expect(await widthsOf([{ ...c, by: 'Jane Doe of the finance team' }])).toEqual(await widthsOf([]));
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('has nothing to say without a changed close', () => {
    expect(closedPeriodsChanged(input([close([], 0)]) as never)).toEqual([]);
    expect(closedPeriodsChanged(input([]) as never)).toEqual([]);
  });
});

describe('the e-mail subjects say a closed period changed', () => {
  const digest = (closes: ClosedPeriodChanges[]) =>
    buildDigest({
      run: { ...run, status: 'succeeded' },
      openBreaks: [],
      counts: openBreakCounts([]),
      rates: RATES,
      now: new Date('2026-12-06T03:00:00Z'),
      attachmentName: 'x.xlsx',
      closedPeriods: closes,
    });

  it('in the account e-mail, and not without a change', () => {
    const changed = digest([close([change('11', '60')])]);
    expect(changed.closedPeriods).toEqual([
      expect.objectContaining({ closeId: 'c20261116T090000Z-abc123', changes: 1, usdTotal: '-1234.5' }),
    ]);
    expect(messageSubject(changed, openBreakCounts([]))).toMatch(/ - closed period changed since sign-off$/);
    const unchanged = digest([close([], 0)]);
    expect(unchanged.closedPeriods).toBeUndefined();
    expect(messageSubject(unchanged, openBreakCounts([]))).not.toMatch(/closed period/);
  });

  it('in the group e-mail and the Group summary, naming the accounts and each changed close', () => {
    const account = (name: string, closes: ClosedPeriodChanges[]): GroupAccount => ({
      account: name,
      state: 'reconciled',
      status: 'succeeded',
      counts: openBreakCounts([]),
      digest: digest(closes),
      runId: `run-${name}`,
      reportPath: null,
      failedStage: null,
      error: null,
    });
    const groupInput = {
      batchId: 'b1',
      periodFrom: '2026-12-05',
      periodTo: '2026-12-06',
      partial: false,
      attachmentName: 'group.xlsx',
      now: new Date('2026-12-06T03:00:00Z'),
    };
    const g = groupDigest({
      ...groupInput,
      accounts: [account('acme', [close([change('11', '60')])]), account('globex', [])],
    });
    expect(groupSubject(g)).toMatch(/ - closed period changed since sign-off \(acme\)$/);
    // acme stays reconciled; its line alone would not say that a signed-off period moved
    const words =
      'acme: 2026-11-01 to 2026-11-30 (close c20261116T090000Z-abc123, signed by alice): 1 change, USD -1,234.50';
    expect(g.closedPeriodLines).toEqual([words]);
    const sheet = groupSummaryRows(g, []).map((r) => r.cells.filter((c) => c !== null).map(String));
    expect(sheet).toContainEqual([
      'Closed period changed since sign-off',
      `${words}; every change on the account's own Summary (prior-period adjustments)`,
    ]);
    const mail = groupMessage(g);
    expect(mail.text).toContain(`Closed period changed since sign-off: ${words}\n`);
    expect(mail.html).toContain('Closed period changed since sign-off: acme: 2026-11-01 to 2026-11-30');
    const quiet = groupDigest({ ...groupInput, accounts: [account('globex', [])] });
    expect(quiet.closedPeriodLines).toBeUndefined();
    expect(groupMessage(quiet).text).not.toMatch(/Closed period/);
  });
});
