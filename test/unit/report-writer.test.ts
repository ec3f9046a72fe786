import { mkdtempSync } from 'node:fs';
import { PassThrough } from 'node:stream';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import ExcelJS from 'exceljs';
import { describe, expect, it } from 'vitest';
import { Decimal } from '../../src/decimal/decimal.js';
import { amount, day, excelAmount, numberFormat, type Row, type SheetSpec } from '../../src/report/cells.js';
import { TEXT_MARKER_HEADER, drainOrTimeout, writeWorkbook } from '../../src/report/write-workbook.js';

const dir = mkdtempSync(join(tmpdir(), 'rr-report-writer-'));

describe('excelAmount', () => {
  it('writes up to 15 significant digits as a number at the currency precision', () => {
    expect(excelAmount({ kind: 'amount', value: new Decimal('1234.5'), dp: 2 })).toEqual({ type: 'number', value: 1234.5, numFmt: numberFormat(2) });
    // 15 digits exactly: still a number, and the double holds it exactly
    const fifteen = excelAmount({ kind: 'amount', value: new Decimal('1234567.12345678'), dp: 8 });
    expect(fifteen).toMatchObject({ type: 'number', value: 1234567.12345678 });
  });
  it('never hides a value digit behind the currency format', () => {
    expect(excelAmount({ kind: 'amount', value: new Decimal('0.123'), dp: 2 })).toMatchObject({ numFmt: numberFormat(3) });
  });
  it('keeps a value with more than 15 significant digits as full text', () => {
    expect(excelAmount({ kind: 'amount', value: new Decimal('1.234567890123456789'), dp: 18 })).toEqual({
      type: 'text',
      text: '1.234567890123456789',
      reason: '19 significant digits',
    });
  });
});

describe('writeWorkbook', () => {
  const spec: SheetSpec = {
    name: 'Things',
    columns: [
      { header: 'Day', kind: 'day' },
      { header: 'Id', kind: 'id' },
      { header: 'Amount', kind: 'amount' },
      { header: 'When (UTC)', kind: 'datetime' },
    ],
    dataBars: [2],
  };
  const rows = (n: number): Row[] =>
    Array.from({ length: n }, (_, i) => ({
      cells: [day('2026-11-01'), `id-${i}`, amount(new Decimal(i === 1 ? '0.100000000000000000001' : `${i}.5`), 2), new Date(Date.UTC(2026, 10, 1, 12, 0, i))],
      tone: i === 2 ? 'break' : undefined,
    }));

  it('writes header, formats, dates, text amounts and continues past the row limit', async () => {
    const path = join(dir, 'things.xlsx');
    const counts = await writeWorkbook(path, [{ spec, rows: rows(7) }], { maxRowsPerSheet: 4 });
    expect(counts).toEqual({ Things: 3, 'Things (2)': 3, 'Things (3)': 1 });
    const wb = new ExcelJS.Workbook();
    await wb.xlsx.readFile(path);
    expect(wb.worksheets.map((w) => w.name)).toEqual(['Things', 'Things (2)', 'Things (3)']);
    const ws = wb.getWorksheet('Things')!;
    expect(ws.getRow(1).values).toEqual([undefined, 'Day', 'Id', 'Amount', 'When (UTC)', TEXT_MARKER_HEADER]);
    expect(ws.views[0]).toMatchObject({ state: 'frozen', ySplit: 1 });
    expect(ws.autoFilter).toBeTruthy();
    expect(ws.getCell('A2').value).toEqual(new Date('2026-11-01T00:00:00Z'));
    expect(ws.getCell('A2').numFmt).toBe('yyyy-mm-dd');
    expect(ws.getCell('C2').value).toBe(0.5);
    expect(ws.getCell('C2').numFmt).toBe(numberFormat(2));
    expect(ws.getCell('C3').value).toBe('0.100000000000000000001');
    expect(ws.getCell('E3').value).toBe('Amount (21 significant digits)');
    expect(ws.getCell('D2').value).toEqual(new Date('2026-11-01T12:00:00Z'));
    expect(ws.getCell('B4').fill).toMatchObject({ fgColor: { argb: 'FFFFC7CE' } });
    const ws2 = wb.getWorksheet('Things (2)')!;
    expect(ws2.getCell('B1').value).toBe('Id');
    expect(ws2.getCell('B2').value).toBe('id-3');
    expect(ws.getColumn(2).width).toBeGreaterThanOrEqual('Id'.length);
    // data bars over the whole data range, without a dangling x14 extension reference
    const cf = (ws as unknown as { conditionalFormattings: Array<{ ref: string; rules: Array<{ type: string }> }> }).conditionalFormattings;
    expect(cf.map((c) => [c.ref, c.rules[0]!.type])).toEqual([['C2:C4', 'dataBar']]);
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
    expect({ drain: stream.listenerCount('drain'), error: stream.listenerCount('error') }).toEqual({ drain: 0, error: 0 });
  });
});
