/** The signed workbook of a period close (docs/closing.md): the period's report with a sign-off block above its
 * Summary, written once under a temporary name and hashed.
 */
import { createHash } from 'node:crypto';
import { chmod, readFile } from 'node:fs/promises';
import ExcelJS from 'exceljs';

export interface SignOff {
  closeId: string;
  account: string;
  period: string;
  by: string;
  at: Date;
  note: string | null;
  digest: string;
}

/** The block's lines, label and value: what the first sheet says before anything else. */
export function signOffLines(s: SignOff): Array<[string, string]> {
  return [
    ['Signed off by', s.by],
    ['Signed at (UTC)', s.at.toISOString()],
    ['Note', s.note ?? ''],
    ['Evidence digest (SHA-256)', s.digest],
    ['Close id', s.closeId],
    ['Account', s.account],
    ['Period', s.period],
    ['Verify', `ramp-recon verify ${s.closeId}`],
  ];
}

/**
 * Writes `report` with the sign-off block above the first sheet's rows to `target` (a temporary name: the caller
 * renames it into place once the close is committed) and returns the SHA-256 of the bytes written.
 */
export async function writeSignedWorkbook(report: string, target: string, s: SignOff, mode: number): Promise<string> {
  const book = new ExcelJS.Workbook();
  await book.xlsx.readFile(report);
  const sheet = book.worksheets[0]!;
  const lines = signOffLines(s);
  sheet.spliceRows(1, 0, ...lines.map(([label, value]) => [label, value]), []);
  for (let row = 1; row <= lines.length; row++) sheet.getCell(row, 1).font = { bold: true };
  // The report's frozen header rows would now freeze the block: the signed copy scrolls freely.
  sheet.views = [];
  await book.xlsx.writeFile(target);
  await chmod(target, mode);
  return sha256File(target);
}

export async function sha256File(path: string): Promise<string> {
  return createHash('sha256')
    .update(await readFile(path))
    .digest('hex');
}
