/** Report files hold personal data: written with reports.fileMode (default 0640), whatever the process's umask. */
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { CsvExport } from '../../src/report/csv.js';
import { writeDetail } from '../../src/report/detail.js';
import { reportFileMode, writeWorkbook } from '../../src/report/write-workbook.js';
import type { SheetSpec } from '../../src/report/cells.js';

const dir = mkdtempSync(join(tmpdir(), 'rr-file-mode-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const table: SheetSpec = { name: 'Orders', columns: [{ header: 'Customer', kind: 'text' }] };
const rows = () => [{ cells: ['Jane Doe'] }];
const modeOf = (path: string) => statSync(path).mode & 0o777;

describe('report file modes', () => {
  it('reads reports.fileMode as octal, 0640 by default', () => {
    expect(reportFileMode(undefined)).toBe(0o640);
    expect(reportFileMode('0600')).toBe(0o600);
    expect(reportFileMode('640')).toBe(0o640);
  });

  it('writes the workbook, the CSV export and the detail files 0640 under a permissive umask', async () => {
    const umask = process.umask(0o000);
    try {
      const csv = await CsvExport.open(join(dir, 'csv'));
      const book = join(dir, 'report.xlsx');
      await writeWorkbook(book, csv.tee([{ spec: table, rows: rows() }]));
      const [csvFile] = await csv.finish();
      const detail = await writeDetail(join(dir, 'report_detail'), [{ spec: table, rows: rows() }], {
        sources: [{ spec: table, rows: rows() }],
      });
      expect(modeOf(book)).toBe(0o640);
      expect(modeOf(csvFile!.path)).toBe(0o640);
      expect(detail.files.map((f) => modeOf(f.path))).toEqual([0o640]);
      expect(modeOf(detail.workbook!.path)).toBe(0o640);
    } finally {
      process.umask(umask);
    }
  });

  it('takes another mode when configured', async () => {
    const book = join(dir, 'private.xlsx');
    await writeWorkbook(book, [{ spec: table, rows: rows() }], { fileMode: 0o600 });
    expect(modeOf(book)).toBe(0o600);
  });
});
