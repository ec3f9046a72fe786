import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import ExcelJS from 'exceljs';
import JSZip from 'jszip';
import { afterAll, describe, expect, it } from 'vitest';
import { readReturnedWorkbook, RETURNED_COLUMNS, WorkbookImportError } from '../../src/report/read-workbook.js';
import { parseAmountsText, planRow, sameAmounts } from '../../src/workflow/index.js';
import { amountsAsReported } from '../../src/domain/index.js';
import { NO_WORKFLOW } from '../../src/domain/index.js';

const dir = mkdtempSync(join(tmpdir(), 'rr-read-workbook-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** A returned workbook as finance might send it back: columns by header (any order), a linked key, a numeric key, rich text. */
async function returned(
  name: string,
  headers: string[],
  rows: ExcelJS.CellValue[][],
  runId: string | null = 'r20261121T020000Z-abc123',
): Promise<string> {
  const wb = new ExcelJS.Workbook();
  const summary = wb.addWorksheet('Summary');
  summary.addRow(['ramp-recon reconciliation']);
  if (runId) summary.addRow(['Run id', runId]);
  const sheet = wb.addWorksheet('Breaks');
  sheet.addRow(headers);
  for (const r of rows) sheet.addRow(r);
  const path = join(dir, name);
  await wb.xlsx.writeFile(path);
  return path;
}

describe('reading a returned workbook (src/report/read-workbook.ts)', () => {
  const headers = [
    'Severity',
    'Explained?',
    'Key',
    'Rule code',
    'Owner',
    'Amounts as reported',
    'Explanation',
    'Status',
  ];

  it('finds the contract columns by header, reads run id, links, numbers and rich text, and hashes the file', async () => {
    const path = await returned('ok.xlsx', headers, [
      [
        'high',
        'yes',
        { text: 'o-1', hyperlink: "#'Partner orders'!A7" },
        'P_FEE_USD',
        ' alice ',
        '1.00 | 1.50 | 0.50 | EUR',
        { richText: [{ text: 'rounding ' }, { text: 'agreed' }] },
        'open',
      ],
      ['high', null, 900, 'E_FILL_ORPHAN', null, ' | 0.5 |  | BTC', null, 'open'],
      [null, null, null, null, 'nobody'],
    ]);
    const book = await readReturnedWorkbook(path);
    expect(book.runId).toBe('r20261121T020000Z-abc123');
    expect(book.sha256).toMatch(/^[0-9a-f]{64}$/);
    expect(book.rows).toEqual([
      {
        row: 2,
        code: 'P_FEE_USD',
        key: 'o-1',
        amounts: '1.00 | 1.50 | 0.50 | EUR',
        owner: 'alice',
        explanation: 'rounding agreed',
        explained: 'yes',
      },
      {
        row: 3,
        code: 'E_FILL_ORPHAN',
        key: '900',
        amounts: ' | 0.5 |  | BTC',
        owner: null,
        explanation: null,
        explained: null,
      },
    ]);
    // The same bytes, the same hash: the import applies a file once.
    expect((await readReturnedWorkbook(path)).sha256).toBe(book.sha256);
  });

  it('refuses what is not a ramp-recon workbook, saying why (exit 2)', async () => {
    const noRun = await returned('norun.xlsx', headers, [], null);
    await expect(readReturnedWorkbook(noRun)).rejects.toThrow(/Summary sheet has no "Run id" row/);
    const noColumn = await returned(
      'nocol.xlsx',
      headers.filter((h) => h !== 'Explained?'),
      [],
    );
    await expect(readReturnedWorkbook(noColumn)).rejects.toThrow(/has no column "Explained\?"/);
    const text = join(dir, 'text.xlsx');
    writeFileSync(text, 'not a zip');
    const err = await readReturnedWorkbook(text).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(WorkbookImportError);
    expect((err as WorkbookImportError).exitCode).toBe(2);
    await expect(readReturnedWorkbook(join(dir, 'missing.xlsx'))).rejects.toThrow(/cannot read/);
  });
});

describe('import limits: refused before the workbook is loaded', () => {
  /** A zip of one deflated entry of `bytes` zeros: a few KiB on disk. */
  async function bomb(name: string, bytes: number): Promise<string> {
    const zip = new JSZip();
    zip.file('[Content_Types].xml', '<Types/>');
    zip.file('xl/worksheets/sheet1.xml', Buffer.alloc(bytes, 0x30));
    const path = join(dir, name);
    writeFileSync(path, await zip.generateAsync({ type: 'nodebuffer', compression: 'DEFLATE' }));
    return path;
  }

  it('refuses a file over maxBytes, naming its size and the key', async () => {
    const path = await returned('big.xlsx', ['Code'], []);
    const err = await readReturnedWorkbook(path, { maxBytes: 1024, maxUnzippedBytes: 10_000_000 }).catch(
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(WorkbookImportError);
    expect((err as Error).message).toMatch(
      /^.*big\.xlsx is \d+ bytes, over the limit of 1024 \(reports\.maxImportBytes\)$/,
    );
  });

  it('refuses a zip whose entries unzip to more than maxUnzippedBytes (a zip bomb)', async () => {
    const path = await bomb('bomb.xlsx', 5_000_000);
    const err = await readReturnedWorkbook(path, { maxBytes: 1_000_000, maxUnzippedBytes: 1_000_000 }).catch(
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(WorkbookImportError);
    expect((err as Error).message).toMatch(
      /bomb\.xlsx unzips to more than 1000000 bytes \(reports\.maxImportUnzippedBytes: 5000008 bytes or more\); it was not loaded$/,
    );
  });

  it('refuses an entry that declares a small size and inflates to more, counted as it streams', async () => {
    const path = await bomb('liar.xlsx', 5_000_000);
    const bytes = readFileSync(path);
    // The big entry's uncompressed size in the central directory (offset 24) says 8 bytes.
    const signature = Buffer.from([0x50, 0x4b, 0x01, 0x02]);
    for (let at = bytes.indexOf(signature); at >= 0; at = bytes.indexOf(signature, at + 4))
      if (bytes.readUInt32LE(at + 24) === 5_000_000) bytes.writeUInt32LE(8, at + 24);
    writeFileSync(path, bytes);
    await expect(readReturnedWorkbook(path, { maxBytes: 1_000_000, maxUnzippedBytes: 1_000_000 })).rejects.toThrow(
      /liar\.xlsx unzips to more than 1000000 bytes/,
    );
  });

  it('reads a workbook within the limits', async () => {
    const path = await returned('fine.xlsx', Object.values(RETURNED_COLUMNS), [], 'r1');
    const book = await readReturnedWorkbook(path, { maxBytes: 1_000_000, maxUnzippedBytes: 1_000_000 });
    expect(book.runId).toBe('r1');
  });
});

describe('what a returned row asks for (planRow)', () => {
  const row = {
    row: 2,
    code: 'P_FEE_USD',
    key: 'o-1',
    amounts: '1 | 2 | 1 | EUR',
    owner: null,
    explanation: null,
    explained: null,
  };
  const explained = {
    ...NO_WORKFLOW,
    status: 'explained' as const,
    owner: 'alice',
    explanation: 'agreed',
    lastNote: 'agreed',
  };

  it('records only what changes state', () => {
    expect(planRow({ ...row, owner: 'alice', explanation: 'agreed', explained: 'yes' }, explained)).toEqual({
      actions: [],
    });
    expect(planRow({ ...row, owner: 'bob', explanation: 'agreed', explained: 'YES' }, explained)).toEqual({
      actions: [{ kind: 'assigned', owner: 'bob' }],
    });
    expect(planRow({ ...row, explanation: 'new reason', explained: 'yes' }, explained)).toEqual({
      actions: [{ kind: 'acknowledged', reason: 'new reason' }],
    });
    expect(planRow({ ...row, explanation: 'agreed', explained: 'no' }, explained)).toEqual({
      actions: [{ kind: 'unacknowledged' }],
    });
    expect(planRow({ ...row, explanation: 'checking with the partner' }, NO_WORKFLOW)).toEqual({
      actions: [{ kind: 'noted', text: 'checking with the partner' }],
    });
    // The pre-filled explanation of a reopened break is not news.
    expect(
      planRow({ ...row, explanation: 'agreed' }, { ...explained, status: 'unexplained', lastNote: 'later note' }),
    ).toEqual({ actions: [] });
    expect(planRow({ ...row, explained: 'yes' }, NO_WORKFLOW)).toEqual({
      skip: 'Explained? is yes but the Explanation is empty',
    });
    expect(planRow({ ...row, explained: 'ok' }, NO_WORKFLOW)).toEqual({
      skip: 'Explained? must be yes or no (got "ok")',
    });
  });

  it('compares amounts as reported, ages of stale breaks aside', () => {
    const b = { expected: null, actual: '0.5', difference: null, currency: 'BTC' };
    expect(parseAmountsText(amountsAsReported(b))).toEqual(b);
    expect(parseAmountsText(amountsAsReported(b).trim())).toEqual(b);
    expect(parseAmountsText('1 | 2')).toBeNull();
    const then = { expected: '24', actual: '30.5', difference: '6.5', currency: 'BTC' };
    const now = { ...then, actual: '55', difference: '31' };
    expect(sameAmounts('E_STALE', then, now)).toBe(true);
    expect(sameAmounts('E_STALE', then, { ...now, expected: '48' })).toBe(false);
    expect(sameAmounts('E_FEE_RATE', then, now)).toBe(false);
    expect(sameAmounts('E_FEE_RATE', then, { ...then })).toBe(true);
  });
});
