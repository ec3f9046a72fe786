/** The exceljs edge back in: reads a returned workbook's run id and the filled-in columns of its Breaks sheet into
 * plain rows.
 */
import { createHash } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import ExcelJS from 'exceljs';
import { AppError, EXIT } from '../errors.js';
import type { ReturnedRow } from '../domain/index.js';
import { BREAKS_HEADER } from './breaks-sheet.js';
import { zipLimitProblem, type ZipLimits } from './zip-limits.js';

/** A returned workbook that cannot be imported (not an .xlsx, not ours, a column missing): exit 2, saying which. */
export class WorkbookImportError extends AppError {
  constructor(message: string) {
    super('WORKBOOK_IMPORT', message, EXIT.usage);
  }
}

export interface ReturnedWorkbook {
  /** The Summary's `Run id`: the run whose workbook this is. */
  runId: string;
  /** Of the file's bytes: one file is imported once. */
  sha256: string;
  rows: ReturnedRow[];
}

/** The Breaks sheet's columns the import reads, by their header text (the shared contract; order does not matter). */
export const RETURNED_COLUMNS = {
  code: BREAKS_HEADER.code,
  key: BREAKS_HEADER.key,
  amounts: BREAKS_HEADER.amounts,
  owner: BREAKS_HEADER.owner,
  explanation: BREAKS_HEADER.explanation,
  explained: BREAKS_HEADER.explained,
} as const;

const BREAKS_SHEET = /^Breaks( \(\d+\))?$/;

/** A cell's value as text: strings, numbers, dates, rich text, hyperlinks and formula results; null when empty. */
export function cellText(value: ExcelJS.CellValue): string | null {
  if (value === null || value === undefined) return null;
  if (typeof value === 'string') return value;
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  if (value instanceof Date) return value.toISOString();
  if (typeof value === 'object') {
    if ('richText' in value && Array.isArray(value.richText)) return value.richText.map((t) => t.text).join('');
    if ('text' in value && value.text !== undefined) return cellText(value.text as ExcelJS.CellValue);
    if ('result' in value) return cellText((value.result ?? null) as ExcelJS.CellValue);
    if ('error' in value) return null;
  }
  return String(value as unknown);
}

const trimmed = (v: ExcelJS.CellValue): string | null => {
  const t = cellText(v)?.trim();
  return t ? t : null;
};

/** The defaults of reports.maxImportBytes and reports.maxImportUnzippedBytes. */
export const DEFAULT_IMPORT_LIMITS: ZipLimits = { maxBytes: 50 * 1024 * 1024, maxUnzippedBytes: 500 * 1024 * 1024 };

/**
 * Reads a returned workbook: its run id and every row of its Breaks sheet(s) that names a break. A file over the
 * limits (its size, what it unzips to) is refused before it is loaded.
 */
export async function readReturnedWorkbook(
  path: string,
  limits: ZipLimits = DEFAULT_IMPORT_LIMITS,
): Promise<ReturnedWorkbook> {
  let bytes: Buffer;
  try {
    const problem = await zipLimitProblem(path, limits);
    if (problem) throw new WorkbookImportError(problem);
    bytes = await readFile(path);
  } catch (err) {
    if (err instanceof WorkbookImportError) throw err;
    throw new WorkbookImportError(`cannot read ${path}: ${(err as Error).message}`);
  }
  const wb = new ExcelJS.Workbook();
  try {
    await wb.xlsx.load(bytes as unknown as ArrayBuffer);
  } catch (err) {
    throw new WorkbookImportError(`${path} is not an .xlsx workbook: ${(err as Error).message}`);
  }
  return {
    runId: runIdOf(wb, path),
    sha256: createHash('sha256').update(bytes).digest('hex'),
    rows: breakRowsOf(wb, path),
  };
}

function runIdOf(wb: ExcelJS.Workbook, path: string): string {
  const summary = wb.getWorksheet('Summary');
  let runId: string | null = null;
  summary?.eachRow((row) => {
    if (runId === null && trimmed(row.getCell(1).value) === 'Run id') runId = trimmed(row.getCell(2).value);
  });
  if (!runId)
    throw new WorkbookImportError(`${path} is not a ramp-recon workbook: its Summary sheet has no "Run id" row`);
  return runId;
}

function breakRowsOf(wb: ExcelJS.Workbook, path: string): ReturnedRow[] {
  const sheets = wb.worksheets.filter((s) => BREAKS_SHEET.test(s.name));
  if (sheets.length === 0)
    throw new WorkbookImportError(`${path} is not a ramp-recon workbook: it has no Breaks sheet`);
  const rows: ReturnedRow[] = [];
  for (const sheet of sheets) {
    const header = new Map<string, number>();
    sheet.getRow(1).eachCell((cell, col) => {
      const name = trimmed(cell.value);
      if (name !== null && !header.has(name)) header.set(name, col);
    });
    const col = Object.fromEntries(
      Object.entries(RETURNED_COLUMNS).map(([field, name]) => {
        const at = header.get(name);
        if (at === undefined)
          throw new WorkbookImportError(
            `${path}: sheet "${sheet.name}" has no column "${name}" (a ramp-recon Breaks sheet has ${Object.values(
              RETURNED_COLUMNS,
            )
              .map((n) => `"${n}"`)
              .join(', ')})`,
          );
        return [field, at];
      }),
    ) as Record<keyof typeof RETURNED_COLUMNS, number>;
    sheet.eachRow((row, n) => {
      if (n === 1) return;
      const code = trimmed(row.getCell(col.code).value);
      const key = trimmed(row.getCell(col.key).value);
      if (!code || !key) return;
      // The amounts are compared as written: not trimmed (an empty expected starts the text with " | ").
      rows.push({
        row: n,
        code,
        key,
        amounts: cellText(row.getCell(col.amounts).value),
        owner: trimmed(row.getCell(col.owner).value),
        explanation: trimmed(row.getCell(col.explanation).value),
        explained: trimmed(row.getCell(col.explained).value),
      });
    });
  }
  return rows;
}
