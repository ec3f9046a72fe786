import { mkdtempSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { PassThrough } from 'node:stream';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import ExcelJS from 'exceljs';
import { describe, expect, it } from 'vitest';
import { Decimal } from '../../src/decimal/decimal.js';
import {
  DATETIME_FORMAT,
  amount,
  day,
  numberFormat,
  textWidth,
  type Row,
  type SheetSpec,
} from '../../src/report/cells.js';
import { CsvExport } from '../../src/report/csv.js';
import {
  EXACT_NOTE_PREFIX,
  EXACT_VALUES_HEADER,
  drainOrTimeout,
  writeWorkbook,
} from '../../src/report/write-workbook.js';

const dir = mkdtempSync(join(tmpdir(), 'rr-report-writer-'));

describe('writeWorkbook', () => {
  const spec: SheetSpec = {
    name: 'Things',
    columns: [
      { header: 'Day', kind: 'day' },
      { header: 'Id', kind: 'id' },
      { header: 'Amount', kind: 'amount' },
      { header: 'When (UTC)', kind: 'datetime' },
    ],
  };
  const rows = (n: number): Row[] =>
    Array.from({ length: n }, (_, i) => ({
      cells: [
        day('2026-11-01'),
        `id-${i}`,
        amount(new Decimal(i === 1 ? '0.100000000000000000001' : `${i}.5`), 2),
        new Date(Date.UTC(2026, 10, 1, 12, 0, i, i === 0 ? 0 : 123)),
      ],
      tone: i === 2 ? 'break' : undefined,
    }));

  it('writes header, formats, dates, exact values and continues past the row limit', async () => {
    const path = join(dir, 'things.xlsx');
    const counts = await writeWorkbook(path, [{ spec, rows: rows(7) }], { maxRowsPerSheet: 4 });
    expect(counts).toEqual({ Things: 3, 'Things (2)': 3, 'Things (3)': 1 });
    const wb = new ExcelJS.Workbook();
    await wb.xlsx.readFile(path);
    expect(wb.worksheets.map((w) => w.name)).toEqual(['Things', 'Things (2)', 'Things (3)']);
    const ws = wb.getWorksheet('Things')!;
    expect(ws.getRow(1).values).toEqual([undefined, 'Day', 'Id', 'Amount', 'When (UTC)', EXACT_VALUES_HEADER]);
    expect(ws.views[0]).toMatchObject({ state: 'frozen', ySplit: 1 });
    expect(ws.autoFilter).toBeTruthy();
    expect(ws.getCell('A2').value).toEqual(new Date('2026-11-01T00:00:00Z'));
    expect(ws.getCell('A2').numFmt).toBe('yyyy-mm-dd');
    expect(ws.getCell('C2').value).toBe(0.5);
    expect(ws.getCell('C2').numFmt).toBe(numberFormat(2));
    // 21 significant digits: a number (rounded to Excel's 15) at the same format, the exact text beside it
    expect(ws.getCell('C3').value).toBe(0.1);
    expect(ws.getCell('C3').type).toBe(ExcelJS.ValueType.Number);
    expect(ws.getCell('C3').numFmt).toBe(numberFormat(2));
    expect(ws.getCell('E3').value).toBe('Amount = 0.100000000000000000001');
    expect(ws.getCell('E2').value).toBeNull();
    // one date-time format on every row, with or without milliseconds
    expect(ws.getCell('D2').value).toEqual(new Date('2026-11-01T12:00:00Z'));
    expect([ws.getCell('D2').numFmt, ws.getCell('D3').numFmt]).toEqual([DATETIME_FORMAT, DATETIME_FORMAT]);
    expect(DATETIME_FORMAT).toBe('yyyy-mm-dd hh:mm:ss.000');
    expect(ws.getCell('B4').fill).toMatchObject({ fgColor: { argb: 'FFFFC7CE' } });
    const ws2 = wb.getWorksheet('Things (2)')!;
    expect(ws2.getCell('B1').value).toBe('Id');
    expect(ws2.getCell('B2').value).toBe('id-3');
    expect(ws.getColumn(2).width).toBeGreaterThanOrEqual('Id'.length);
    // the date-time column fits its format, the exact-values column its text
    expect(ws.getColumn(4).width).toBeGreaterThanOrEqual(DATETIME_FORMAT.length + 1);
    expect(ws.getColumn(5).width).toBeGreaterThanOrEqual('Amount = 0.100000000000000000001'.length);
    // no data bars over the digits
    const cf = (ws as unknown as { conditionalFormattings?: unknown[] }).conditionalFormattings ?? [];
    expect(cf).toEqual([]);
  });

  it('writes a Summary (free layout) amount as a number with the exact text in a cell note; widens for numbers and for a text with a cell beside it, never for a text alone', async () => {
    const report: SheetSpec = {
      name: 'Summary',
      layout: 'report',
      columns: [
        { header: 'Item', kind: 'text', width: 10 },
        { header: 'Value', kind: 'text', width: 10 },
      ],
    };
    const path = join(dir, 'summary.xlsx');
    await writeWorkbook(path, [
      {
        spec: report,
        rows: [
          { cells: ['ETH', amount(new Decimal('1234567.123456789012345678'), 18)] },
          { cells: ['a long label cut by the cell beside it', amount(new Decimal('12.5'), 2)] },
          { cells: ['a longer text alone in its row runs on into the empty cells beside it'] },
        ],
      },
    ]);
    const wb = new ExcelJS.Workbook();
    await wb.xlsx.readFile(path);
    const ws = wb.getWorksheet('Summary')!;
    expect(ws.getCell('B1').type).toBe(ExcelJS.ValueType.Number);
    expect(ws.getCell('B1').value).toBe(1234567.12345679);
    expect(ws.getCell('B1').numFmt).toBe(numberFormat(18));
    expect(String(ws.getCell('B1').note)).toContain(`${EXACT_NOTE_PREFIX}1234567.123456789012345678`);
    expect(ws.getCell('B2').note).toBeUndefined();
    // "1,234,567.123456789012345678" must not show as ###; the label beside a number is not cut, the text alone
    // does not widen its column
    expect(ws.getColumn(2).width).toBeGreaterThanOrEqual('1,234,567.123456789012345678'.length + 1);
    expect(ws.getColumn(1).width).toBe(Math.ceil(textWidth('a long label cut by the cell beside it') + 1.5));
  });
});

describe('CsvExport', () => {
  const table: SheetSpec = {
    name: 'Partner daily',
    columns: [
      { header: 'Day (UTC)', kind: 'day' },
      { header: 'Amount, EUR', kind: 'amount' },
    ],
  };
  const summary: SheetSpec = { name: 'Summary', layout: 'report', columns: [{ header: 'Item', kind: 'text' }] };

  it("writes each table sheet's rows, as the workbook writer takes them, to its CSV file; the Summary has none", async () => {
    const out = join(dir, 'csv');
    const csv = await CsvExport.open(out);
    async function* rows(): AsyncGenerator<Row> {
      yield { cells: [day('2026-11-01'), amount(new Decimal('1234567.123456789012345678'), 2)] };
      yield { cells: [day('2026-11-02'), null] };
    }
    const counts = await writeWorkbook(
      join(dir, 'with-csv.xlsx'),
      csv.tee([
        { spec: summary, rows: [{ cells: ['x'] }] },
        { spec: table, rows: rows() },
      ]),
    );
    expect(counts['Partner daily']).toBe(2);
    const files = await csv.finish();
    expect(files).toEqual([{ sheet: 'Partner daily', path: join(out, 'partner-daily.csv'), rows: 2 }]);
    expect(readdirSync(out)).toEqual(['partner-daily.csv']);
    expect(readFileSync(join(out, 'partner-daily.csv'), 'utf8')).toBe(
      'Day (UTC),"Amount, EUR"\r\n2026-11-01,1234567.123456789012345678\r\n2026-11-02,\r\n',
    );
  });

  it('leaves no CSV file behind when the workbook cannot be written', async () => {
    const out = join(dir, 'csv-failed');
    const csv = await CsvExport.open(out);
    async function* failing(): AsyncGenerator<Row> {
      yield { cells: [day('2026-11-01'), null] };
      throw new Error('database gone');
    }
    await expect(writeWorkbook(join(dir, 'failed.xlsx'), csv.tee([{ spec: table, rows: failing() }]))).rejects.toThrow(
      'database gone',
    );
    await csv.abort();
    expect(readdirSync(out)).toEqual([]);
  });

  it('names the folder it cannot write to', async () => {
    const file = join(dir, 'a-file');
    writeFileSync(file, 'x');
    await expect(CsvExport.open(join(file, 'csv'))).rejects.toThrow(join(file, 'csv'));
  });
});

describe('drainOrTimeout', () => {
  it('leaves no listener on a stream that stays full, however often it times out', async () => {
    const stream = new PassThrough({ highWaterMark: 1 });
    stream.write('x');
    const before = { drain: stream.listenerCount('drain'), error: stream.listenerCount('error') };
    for (let i = 0; i < 12; i++) await drainOrTimeout(stream, 1);
    expect({ drain: stream.listenerCount('drain'), error: stream.listenerCount('error') }).toEqual(before);
  });

  it('resolves on drain', async () => {
    const stream = new PassThrough({ highWaterMark: 1 });
    stream.write('x');
    const waited = drainOrTimeout(stream, 60_000);
    stream.read();
    await waited;
    expect({ drain: stream.listenerCount('drain'), error: stream.listenerCount('error') }).toEqual({
      drain: 0,
      error: 0,
    });
  });
});
