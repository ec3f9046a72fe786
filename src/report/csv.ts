/** The CSV edge (`report --csv DIR`): one RFC 4180 file per table sheet, written from the very rows the workbook gets.
 *
 */
import { partialPath } from './partials.js';
import { once } from 'node:events';
import { createWriteStream, type WriteStream } from 'node:fs';
import { chmod, mkdir, rename, rm, writeFile } from 'node:fs/promises';
import { DEFAULT_REPORT_FILE_MODE } from './write-workbook.js';
import { join, resolve } from 'node:path';
import { ConfigError, ReportError } from '../errors.js';
import { isAmount, isDay, type Cell, type Row, type SheetSpec } from './cells.js';
import type { SheetSource } from './write-workbook.js';
import { neutralised } from '../util/spreadsheet-text.js';

export { neutralised } from '../util/spreadsheet-text.js';

/**
 * Finance tools that do not read xlsx get each data sheet (and the Breaks sheet) as CSV: UTF-8
 * without a byte-order mark, CRLF line ends, a header row of the sheet's column headers, fields
 * quoted only when they hold a comma, a quote or a line break (quotes doubled). Values are the
 * model's, never Excel's: amounts as their exact decimal text (not rounded to 15 digits, not cut
 * to the currency's decimals), date-times as ISO 8601 UTC with milliseconds, days as YYYY-MM-DD,
 * links as their text. The Summary (a free layout, not a table) has no CSV.
 */

/** "Exchange orders vs fills" -> "exchange-orders-vs-fills.csv". */
export function csvFileName(sheetName: string): string {
  const slug = sheetName
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '');
  return `${slug || 'sheet'}.csv`;
}

/** One field, quoted when RFC 4180 requires it. */
export function csvField(text: string): string {
  return /[",\r\n]/.test(text) ? `"${text.replace(/"/g, '""')}"` : text;
}

/** A model cell as CSV text: exact decimals, ISO date-times, days as they are, links as their text. */
export function csvText(cell: Cell): string {
  if (cell === null || cell === undefined) return '';
  if (typeof cell === 'string') return neutralised(cell);
  if (typeof cell === 'number') return Number.isFinite(cell) ? String(cell) : '';
  if (typeof cell === 'boolean') return cell ? 'true' : 'false';
  if (cell instanceof Date) return cell.toISOString();
  if (isDay(cell)) return cell.value;
  if (isAmount(cell)) return cell.value.toFixed();
  // a link to another sheet's row (or any other cell kind carrying its text)
  const other = cell as unknown as { text?: unknown };
  return typeof other.text === 'string' ? neutralised(other.text) : '';
}

/** One CSV record with its CRLF, `width` fields wide (short rows padded, extra cells dropped). */
export function csvLine(cells: readonly Cell[], width: number): string {
  const fields: string[] = [];
  for (let i = 0; i < width; i++) fields.push(csvField(csvText(cells[i] ?? null)));
  return `${fields.join(',')}\r\n`;
}

export function csvHeader(spec: SheetSpec): string {
  return `${spec.columns.map((c) => csvField(c.header)).join(',')}\r\n`;
}

/** A sheet's CSV file, written under a `.partial` name of its own (partialPath) until the whole export is done. */
class CsvFile {
  private readonly stream: WriteStream;
  private readonly closed: Promise<void>;
  /** The temporary name: this writer's own, so another report writing the same folder never shares it. */
  readonly tmp: string;
  rows = 0;

  constructor(
    readonly path: string,
    readonly spec: SheetSpec,
  ) {
    this.tmp = partialPath(path);
    this.stream = createWriteStream(this.tmp, { encoding: 'utf8' });
    this.closed = new Promise((resolveClosed, reject) => {
      this.stream.on('error', reject);
      this.stream.on('close', () => resolveClosed());
    });
    // an error is reported by close(); never an unhandled rejection before it is awaited
    this.closed.catch(() => undefined);
    this.stream.write(csvHeader(spec));
  }

  async write(row: Row): Promise<void> {
    this.rows += 1;
    if (!this.stream.write(csvLine(row.cells, this.spec.columns.length)))
      await Promise.race([once(this.stream, 'drain'), this.closed]);
  }

  async close(): Promise<void> {
    if (!this.stream.writableEnded) this.stream.end();
    await this.closed;
  }

  async abort(): Promise<void> {
    this.stream.destroy();
    await this.closed.catch(() => undefined);
    await rm(this.tmp, { force: true });
  }
}

export interface CsvFileWritten {
  sheet: string;
  path: string;
  rows: number;
}

/**
 * The CSV files of one report. `tee` wraps the workbook's sheet sources so that each table sheet's
 * rows go to its CSV file as the workbook writer takes them: one pass over the data, the same rows
 * in both. `finish` (after the workbook is written) renames the files into place; `abort` removes them.
 */
export class CsvExport {
  private readonly files: CsvFile[] = [];

  private constructor(
    readonly dir: string,
    readonly fileMode: number,
  ) {}

  /** Creates the folder if needed and proves it writable, or fails naming it (exit 2: a bad --csv DIR). */
  static async open(dir: string, fileMode = DEFAULT_REPORT_FILE_MODE): Promise<CsvExport> {
    const abs = resolve(dir);
    const probe = join(abs, `.ramp-recon-write-test-${process.pid}`);
    try {
      await mkdir(abs, { recursive: true });
      await writeFile(probe, '');
      await rm(probe, { force: true });
    } catch (err) {
      throw new ConfigError([`--csv ${dir}: cannot write CSV files to the folder ${abs} (${reason(err)})`]);
    }
    return new CsvExport(abs, fileMode);
  }

  tee(sources: SheetSource[]): SheetSource[] {
    return sources.map((source) =>
      source.spec.layout === 'report' ? source : { spec: source.spec, rows: this.rowsTo(source) },
    );
  }

  private async *rowsTo(source: SheetSource): AsyncGenerator<Row> {
    const file = new CsvFile(join(this.dir, csvFileName(source.spec.name)), source.spec);
    this.files.push(file);
    for await (const row of source.rows) {
      await this.guard(file.write(row));
      yield row;
    }
    await this.guard(file.close());
  }

  /** The files written, in sheet order, moved from their `.partial` names into place. */
  async finish(): Promise<CsvFileWritten[]> {
    const done: CsvFileWritten[] = [];
    try {
      for (const file of this.files) {
        await this.guard(file.close());
        await this.guard(chmod(file.tmp, this.fileMode));
        await this.guard(rename(file.tmp, file.path));
        done.push({ sheet: file.spec.name, path: file.path, rows: file.rows });
      }
    } catch (err) {
      await this.abort();
      throw err;
    }
    return done;
  }

  async abort(): Promise<void> {
    await Promise.all(this.files.map((f) => f.abort()));
  }

  private async guard<T>(p: Promise<T>): Promise<T> {
    try {
      return await p;
    } catch (err) {
      throw new ReportError(`cannot write CSV files to the folder ${this.dir}: ${reason(err)}`);
    }
  }
}

function reason(err: unknown): string {
  const e = err as { code?: string; message?: string };
  return e.code ? `${e.code}: ${e.message ?? ''}`.trim() : String(e.message ?? err);
}
