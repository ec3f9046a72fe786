import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import ExcelJS from 'exceljs';
import { afterAll, describe, expect, it } from 'vitest';
import { GROUP_SUMMARY, groupDigest, groupSummaryRows, groupSummarySpec } from '../../src/report/group.js';
import { colourLegend } from '../../src/report/group-colours.js';
import { writeWorkbook } from '../../src/report/write-workbook.js';
import { account, counts, digestWith } from '../helpers/group-accounts.js';

/** The group workbook as written: a Group summary with one failed account, read back by exceljs. */
describe('the group workbook with one failed account', () => {
  const dir = mkdtempSync(join(tmpdir(), 'rr-group-workbook-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  // acme: an unexplained high break (red); globex: unexplained medium ones (amber); hooli: clean (green); initech failed
  const accounts = [
    account(
      'acme',
      'succeeded',
      counts({ high: { n: 1 }, low: { n: 2, explained: 1 } }),
      digestWith('1200.50', '9000.00'),
    ),
    account('globex', 'succeeded', counts({ medium: { n: 2 } }), digestWith('80.25', '1000.10')),
    account('hooli', 'succeeded', counts({}), digestWith('0', '500.00')),
    account('initech', 'failed', null, null),
  ];

  async function written(): Promise<ExcelJS.Worksheet> {
    const digest = groupDigest({
      batchId: 'b20261121T020000Z-abc123',
      periodFrom: '2026-11-20',
      periodTo: '2026-11-20',
      partial: false,
      accounts,
      attachmentName: 'g.xlsx',
      now: new Date('2026-11-21T03:00:00Z'),
    });
    const path = join(dir, 'group.xlsx');
    await writeWorkbook(path, [{ spec: groupSummarySpec, rows: groupSummaryRows(digest, accounts) }]);
    const wb = new ExcelJS.Workbook();
    await wb.xlsx.readFile(path);
    return wb.getWorksheet(GROUP_SUMMARY)!;
  }

  const lineOf = (sheet: ExcelJS.Worksheet, first: string) => {
    let found: ExcelJS.Row | undefined;
    sheet.eachRow((row) => {
      if (row.getCell(1).value === first) found = row;
    });
    expect(found, first).toBeDefined();
    return found!;
  };
  const fill = (cell: ExcelJS.Cell) => (cell.fill as ExcelJS.FillPattern | undefined)?.fgColor?.argb;

  it('the Total line sums the accounts that completed and names the failed one as left out', async () => {
    const sheet = await written();
    const total = lineOf(sheet, 'Total');
    expect(total.getCell(2).value).toBe('Total of 3 of 4 accounts (initech failed: left out)');
    // open breaks, high, medium, low, unexplained; shortfalls, surpluses (USD), breaks without a USD figure; closing
    // USD, as numbers
    expect([3, 4, 5, 6, 7, 8, 9, 10, 11].map((i) => total.getCell(i).value)).toEqual([
      5, 1, 2, 2, 4, -1280.75, 0, 0, 10500.1,
    ]);
    expect(lineOf(sheet, 'initech').getCell(8).value).toBeNull();
  });

  it("each account line's fill is its colour's fill on the legend, and the legend says what that colour means", async () => {
    const sheet = await written();
    const legend = new Map(
      colourLegend().map((l) => {
        const row = lineOf(sheet, l.colour);
        expect(row.getCell(2).value).toBe(l.means);
        return [l.colour, fill(row.getCell(1))];
      }),
    );
    expect([...legend.values()]).toEqual(['FFC00000', 'FFFFC000', 'FFC6EFCE']);
    for (const [name, colour] of [
      ['acme', 'red'],
      ['globex', 'amber'],
      ['hooli', 'green'],
      ['initech', 'red'],
    ] as const) {
      const row = lineOf(sheet, name);
      expect([fill(row.getCell(1)), fill(row.getCell(2))], name).toEqual([legend.get(colour), legend.get(colour)]);
    }
    expect(String(lineOf(sheet, 'initech').getCell(2).value)).toBe('FAILED in sync.exchange: Exchange API unreachable');
    // the verdict line: the worst account's colour
    expect(fill(sheet.getRow(1).getCell(1))).toBe(legend.get('red'));
  });
});
