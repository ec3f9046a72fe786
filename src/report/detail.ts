/** The detail of a run: every record of its period, one gzip CSV per data sheet, in a folder beside the workbook. */
import { createWriteStream } from 'node:fs';
import { chmod, mkdir, rename, rm, stat } from 'node:fs/promises';
import { basename, join } from 'node:path';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { createGzip } from 'node:zlib';
import { ReportError } from '../errors.js';
import { allSettledOrThrow } from '../util/side-by-side.js';
import type { Row, SheetSpec } from './cells.js';
import { csvFileName, csvHeader, csvLine } from './csv.js';
import { DEFAULT_REPORT_FILE_MODE, writeWorkbook, type SheetSource } from './write-workbook.js';
import { partialPath } from './partials.js';

/**
 * The mailed workbook lists only the records open breaks point at; finance (and an auditor) find every record of the
 * period here: the same rows and columns as the full data sheets, as RFC 4180 CSV (exact decimal text, ISO 8601 UTC
 * times: see csv.ts), each file gzip-compressed (a CSV of fills shrinks about tenfold) and streamed, never held whole.
 */

/** `ramp-recon_2026-11-21_<runId>.xlsx` -> `ramp-recon_2026-11-21_<runId>_detail`. */
export function detailFolderName(workbookFileName: string): string {
  return `${workbookFileName.replace(/\.xlsx$/, '')}_detail`;
}

/** "Exchange orders vs fills" -> "exchange-orders-vs-fills.csv.gz". */
export function detailFileName(sheetName: string): string {
  return `${csvFileName(sheetName)}.gz`;
}

export interface DetailFile {
  sheet: string;
  path: string;
  rows: number;
  bytes: number;
  /** How long the file took to write (the files are written side by side). */
  ms: number;
}

export interface DetailWritten {
  dir: string;
  files: DetailFile[];
  /** The full detail workbook, when asked for (`report --detail`). */
  workbook?: { path: string; sheets: Record<string, number> };
}

/** Lines per chunk handed to gzip: one string per row would cost a stream write each. */
const LINES_PER_CHUNK = 512;
/** Fast deflate, as the workbook's: CSV text compresses well at any level, and level 1 costs a third of the time. */
const GZIP_LEVEL = 1;

/**
 * A detail file whose CSV lines come already written, a page of lines at a time (the fills and partner orders, whose
 * lines Postgres writes: store/report/csv-text.ts): the same bytes csvLine prints of the sheet's rows.
 */
export interface CsvTextSource {
  spec: SheetSpec;
  csv: AsyncIterable<{ text: string; rows: number }>;
}

export type DetailSource = SheetSource | CsvTextSource;

async function* csvChunks(source: DetailSource, counted: { rows: number }): AsyncGenerator<string> {
  if ('csv' in source) {
    yield csvHeader(source.spec);
    for await (const page of source.csv) {
      counted.rows += page.rows;
      if (page.text) yield page.text;
    }
    return;
  }
  const width = source.spec.columns.length;
  let chunk = csvHeader(source.spec);
  let lines = 0;
  for await (const row of source.rows as AsyncIterable<Row>) {
    chunk += csvLine(row.cells, width);
    counted.rows += 1;
    if (++lines >= LINES_PER_CHUNK) {
      yield chunk;
      chunk = '';
      lines = 0;
    }
  }
  if (chunk) yield chunk;
}

/**
 * Writes the detail folder `dir`: one `<sheet>.csv.gz` per source, and with `workbook` the full detail workbook
 * (`<dir name>.xlsx`, sheets continued in parts beyond Excel's row limit). Everything is written into
 * `<dir>.<host>-<pid>-<random>.partial` (partialPath) and renamed into place at the end, replacing an earlier detail of
 * the same run: a killed report never leaves a half detail under the real name (removeStalePartials clears what it left
 * after a day), and two writers never share a temporary folder.
 */
export async function writeDetail(
  dir: string,
  sources: DetailSource[],
  workbook?: { sources: SheetSource[]; maxRowsPerSheet?: number },
  fileMode = DEFAULT_REPORT_FILE_MODE,
): Promise<DetailWritten> {
  const tmp = partialPath(dir);
  try {
    await mkdir(tmp, { recursive: true });
    // The files are written side by side: while one waits for its next page from the database, another formats
    // rows (and gzip runs off the main thread). All settle before a failure is thrown, so none still writes into a
    // folder being removed.
    const written = await allSettledOrThrow(
      sources.map(async (source) => {
        const file = detailFileName(source.spec.name);
        const counted = { rows: 0 };
        const started = performance.now();
        await pipeline(
          Readable.from(csvChunks(source, counted)),
          createGzip({ level: GZIP_LEVEL }),
          createWriteStream(join(tmp, file), { mode: fileMode }),
        );
        await chmod(join(tmp, file), fileMode);
        return { sheet: source.spec.name, file, rows: counted.rows, ms: Math.round(performance.now() - started) };
      }),
    );
    let book: DetailWritten['workbook'];
    const bookName = `${basename(dir)}.xlsx`;
    if (workbook) {
      const sheets = await writeWorkbook(join(tmp, bookName), workbook.sources, {
        maxRowsPerSheet: workbook.maxRowsPerSheet,
        fileMode,
      });
      book = { path: join(dir, bookName), sheets };
    }
    await rm(dir, { recursive: true, force: true });
    await rename(tmp, dir);
    const files: DetailFile[] = [];
    for (const w of written) {
      const path = join(dir, w.file);
      files.push({ sheet: w.sheet, path, rows: w.rows, bytes: (await stat(path)).size, ms: w.ms });
    }
    return { dir, files, ...(book ? { workbook: book } : {}) };
  } catch (err) {
    await rm(tmp, { recursive: true, force: true });
    if (err instanceof ReportError) throw err;
    const e = err as { code?: string; message?: string };
    // A database error is the store's to report; a file error names the folder.
    if (!e.code || !/^E[A-Z]+$/.test(e.code)) throw err;
    throw new ReportError(`cannot write the detail files to the folder ${dir}: ${e.code}: ${e.message ?? ''}`);
  }
}
