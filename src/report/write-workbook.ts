/** The exceljs edge: streams sheets of rows into an .xlsx file. */
import { createWriteStream } from 'node:fs';
import { chmod, mkdir, rename, rm } from 'node:fs/promises';
import { once } from 'node:events';
import { dirname } from 'node:path';
import type { Writable } from 'node:stream';
import { setTimeout as delay } from 'node:timers/promises';
import type ExcelJS from 'exceljs';
import {
  BOLD,
  DATETIME_FORMAT,
  DAY_FORMAT,
  EXCEL_MAX_ROWS,
  INT_FORMAT,
  MAX_WIDTH,
  dayDate,
  displayWidth,
  excelAmount,
  fitWidth,
  isAmount,
  textWidth,
  isDay,
  isLink,
  partName,
  type Cell,
  type Row,
  type SheetSpec,
  type Tone,
  DEFAULT_PRINT,
  printScale,
} from './cells.js';
import { partialPath, type Writer } from './partials.js';

/** The exceljs edge: streams sheets of Rows into an .xlsx file. Everything else is pure. */

export interface SheetSource {
  spec: SheetSpec;
  rows: Iterable<Row> | AsyncIterable<Row>;
}

export interface WriteWorkbookOptions {
  /** Rows per worksheet including the header; a sheet continues on "<name> (2)" beyond it. */
  maxRowsPerSheet?: number;
  creator?: string;
  /** Called after each sheet with rows written, for progress logs. */
  onSheet?: (name: string, rows: number) => void;
  /** Who writes, for the temporary name (default: this host and process; tests give two writers two identities). */
  writer?: Writer;
  /** The file's permissions (reports.fileMode): it holds personal data. Default 0640. */
  fileMode?: number;
}

/** reports.fileMode's default: owner reads and writes, the group reads, others nothing. */
export const DEFAULT_REPORT_FILE_MODE = 0o640;

/** reports.fileMode ("0640", validated by the config schema) as a number. */
export function reportFileMode(text: string | undefined): number {
  return text === undefined ? DEFAULT_REPORT_FILE_MODE : parseInt(text, 8);
}

/**
 * Header of the trailing column of a table sheet with amounts: the exact decimal text of each amount
 * of the row that its number cell cannot show as it is ("Opening = 1234567.123456789012345678"):
 * more significant digits than Excel keeps, or more decimals than the currency's format shows.
 */
export const EXACT_VALUES_HEADER = 'Exact values';
/** Note on a Summary (free layout) amount cell whose number cannot show the exact value. */
export const EXACT_NOTE_PREFIX = 'Exact value: ';
/** Rows inspected before the column widths are fixed (the streaming writer emits widths before any row). */
const FIT_SAMPLE = 1000;
/** Let zlib and the file stream catch up this often: exceljs pipes without back-pressure. */
const YIELD_EVERY = 500;
/** 200k fills: level 1 took 11.6 s for 16 MB, the default (6) 18.7 s for 13 MB. */
const ZIP_LEVEL = 1;
/** 64 KiB buffers a sheet may hold while the zip has not started reading it. */
const MAX_UNPIPED_BUFFERS = 64;
/** Bytes queued on the zip's input before writing pauses. */
const MAX_PIPE_BACKLOG = 4 * 1024 * 1024;

/** Queued bytes of a writable; archiver's PassThrough is readable-stream v2, without writableLength. */
function backlog(w: Writable): number {
  return w.writableLength ?? (w as unknown as { _writableState?: { length?: number } })._writableState?.length ?? 0;
}

/**
 * Waits for 'drain' or `ms`, whichever comes first, and leaves no listener behind: a once()
 * that lost the race to a timer kept its 'drain' and 'error' listeners on the zip's stream,
 * one pair per wait of a big sheet (MaxListenersExceededWarning, and a leak until the next drain).
 */
export async function drainOrTimeout(w: Writable, ms: number): Promise<void> {
  const cancel = new AbortController();
  try {
    await Promise.race([once(w, 'drain', { signal: cancel.signal }), delay(ms, undefined, { signal: cancel.signal })]);
  } finally {
    // The loser rejects with an AbortError, which the settled race has already handled.
    cancel.abort();
  }
}

const WHITE = 'FFFFFFFF';
const FILLS: Partial<Record<Tone, string>> = {
  break: 'FFFFC7CE',
  high: 'FFC00000',
  medium: 'FFFFC000',
  low: 'FFFFF2CC',
  ok: 'FFC6EFCE',
  bad: 'FFFFC7CE',
  clean: 'FFC6EFCE',
  section: 'FFD9E1F2',
};
const FONTS: Partial<Record<Tone, Partial<ExcelJS.Font>>> = {
  break: { color: { argb: 'FF9C0006' } },
  high: { bold: true, color: { argb: WHITE } },
  medium: { bold: true },
  low: {},
  ok: { bold: true, size: 14, color: { argb: 'FF006100' } },
  bad: { bold: true, size: 14, color: { argb: 'FF9C0006' } },
  clean: { color: { argb: 'FF006100' } },
  section: { bold: true },
  bold: { bold: true },
  muted: { color: { argb: 'FF808080' } },
};

let excelLoaded: Promise<typeof ExcelJS> | undefined;

/**
 * exceljs, loaded when a workbook is first written (or asked for ahead, loadStages' prefetch): its load alone takes
 * about a quarter of a second, which every command reaching this module through the report's pure parts (the batch's
 * words, the digest) would otherwise pay before its first stage.
 */
export function loadExcel(): Promise<typeof ExcelJS> {
  return (excelLoaded ??= import('exceljs').then((m) => m.default));
}

export async function writeWorkbook(
  path: string,
  sources: SheetSource[],
  options: WriteWorkbookOptions = {},
): Promise<Record<string, number>> {
  await mkdir(dirname(path), { recursive: true });
  // Written under a temporary name and renamed: a crash never leaves a truncated report under the real name.
  const tmp = partialPath(path, options.writer);
  const excel = await loadExcel();
  // The file's stream is ours, not exceljs's: on a failure it is closed before the partial file is removed. Opened by
  // exceljs, the file could appear after the removal (its open still pending when the first rows failed) and stay.
  const out = createWriteStream(tmp);
  const workbook = new excel.stream.xlsx.WorkbookWriter({
    stream: out,
    useStyles: true,
    useSharedStrings: false,
    // Fast deflate: the sheets are repetitive XML, level 1 costs little size and saves most of the zip time.
    zip: { zlib: { level: ZIP_LEVEL } },
  });
  workbook.creator = options.creator ?? 'ramp-recon';
  workbook.created = new Date();
  const maxRows = options.maxRowsPerSheet ?? EXCEL_MAX_ROWS;
  if (maxRows < 2) throw new RangeError('maxRowsPerSheet must leave room for a header and a row');
  const counts: Record<string, number> = {};
  try {
    for (const source of sources) {
      const sheet = new SheetWriter(workbook, source.spec, maxRows, counts);
      for await (const row of source.rows) await sheet.add(row);
      sheet.finish();
      options.onSheet?.(source.spec.name, counts[source.spec.name] ?? 0);
    }
    await workbook.commit();
    // Set on the file itself, whatever the umask; before the rename, so the real name never has wider permissions.
    await chmod(tmp, options.fileMode ?? DEFAULT_REPORT_FILE_MODE);
    await rename(tmp, path);
  } catch (err) {
    if (!out.closed) {
      const closed = once(out, 'close').catch(() => {});
      out.destroy();
      await closed;
    }
    // only the writer removes its own partial file; another's may be being written (src/report/partials.ts)
    await rm(tmp, { force: true });
    throw err;
  }
  return counts;
}

class SheetWriter {
  private readonly report: boolean;
  private readonly hasAmounts: boolean;
  private readonly columnCount: number;
  /** Per column: the style additions of its spec (see extraOf), and whether any column wraps. */
  private columnExtras: Extra[];
  private readonly wrapHeader: boolean;
  private readonly hasWrap: boolean;
  private ws: ExcelJS.Worksheet | null = null;
  private part = 0;
  private rowsInPart = 0;
  private sample: Row[] | null = [];
  private widths: number[] | null = null;
  private written = 0;
  /** The current part's name (its rows are counted under it). */
  private partKey = '';
  /** No row seen before the widths were fixed has an exact value its number cannot show. */
  private exactUnused = true;
  /** Per column, the style its last cell got: a column's cells mostly share one (see styleFor). */
  private lastStyles: Array<LastStyle | undefined> = [];

  constructor(
    private readonly workbook: ExcelJS.stream.xlsx.WorkbookWriter,
    private readonly spec: SheetSpec,
    private readonly maxRows: number,
    private readonly counts: Record<string, number>,
  ) {
    this.report = spec.layout === 'report';
    this.hasAmounts = !this.report && spec.columns.some((c) => c.kind === 'amount');
    this.columnCount = spec.columns.length + (this.hasAmounts ? 1 : 0);
    this.columnExtras = spec.columns.map((c) => extraOf(c));
    this.wrapHeader = !this.report && spec.fitToWidth === true;
    // Where some cells wrap (rows several lines tall), every cell reads from the top of its row.
    if (!this.report && spec.columns.some((c) => c.wrap))
      this.columnExtras = this.columnExtras.map((e) => (e.includes('w') ? e : `${e}t`));
    // Printed one page wide, the exact values wrap in a column of their own width instead of running on.
    if (this.wrapHeader) this.columnExtras.push('w');
    this.hasWrap = !this.report && spec.columns.some((c) => c.wrap);
  }

  async add(row: Row): Promise<void> {
    if (this.sample) {
      this.sample.push(row);
      if (this.sample.length >= FIT_SAMPLE && !this.spec.fitAllRows) this.flushSample();
      return;
    }
    this.writeRow(row);
    if (++this.written % YIELD_EVERY === 0) await this.backPressure();
  }

  /**
   * exceljs's sheet stream hands chunks to the zip's deflate stream without waiting for it, and
   * buffers everything while the zip is still busy with an earlier entry: unchecked, a big sheet
   * ends up in memory. Wait here until the deflate stream has drained and the unpiped backlog is small.
   */
  private async backPressure(): Promise<void> {
    const stream = (this.ws as unknown as { stream?: { pipes?: Writable[]; buffers?: unknown[] } } | null)?.stream;
    for (;;) {
      const pipes = stream?.pipes ?? [];
      const full = pipes.find((p) => backlog(p) > MAX_PIPE_BACKLOG);
      if (full) {
        await drainOrTimeout(full, 50);
        continue;
      }
      if (pipes.length === 0 && (stream?.buffers?.length ?? 0) > MAX_UNPIPED_BUFFERS) {
        await delay(5);
        continue;
      }
      await new Promise((r) => setImmediate(r));
      return;
    }
  }

  finish(): void {
    if (this.sample) this.flushSample();
    if (!this.ws) this.openPart();
    this.closePart();
  }

  private flushSample(): void {
    const sample = this.sample ?? [];
    this.sample = null;
    const seen = this.spec.columns.map(() => 0);
    // Numbers and dates cannot wrap (a cell too narrow shows ###): a wrapping column is at least as wide as they are.
    const unwrappable = this.spec.columns.map(() => 0);
    let exactSeen = 0;
    let exactWord = 0;
    for (const row of sample) {
      row.cells.forEach((c, i) => {
        // On the Summary, text may run on into the empty cells beside it; numbers and dates cannot
        // (Excel shows ### when they do not fit), so only they, and text with a cell beside it, widen its columns.
        const besideIt = row.cells[i + 1];
        if (this.report && c === null) return;
        if (this.report && typeof c === 'string' && (besideIt === null || besideIt === undefined || besideIt === ''))
          return;
        const bold = this.report && typeof c === 'string' && (row.tone === 'bold' || row.tone === 'section');
        seen[i] = Math.max(seen[i] ?? 0, displayWidth(c) * (bold ? BOLD : 1));
        if (c !== null && typeof c !== 'string') unwrappable[i] = Math.max(unwrappable[i] ?? 0, displayWidth(c));
      });
      if (this.hasAmounts) {
        const exact = this.exactValues(row.cells).join('; ');
        exactSeen = Math.max(exactSeen, textWidth(exact));
        exactWord = Math.max(exactWord, ...exact.split(' ').map(textWidth));
      }
    }
    this.exactUnused = exactSeen === 0;
    // A sheet printed one page wide wraps its header, so a long header ("Deposits placed by state
    // change") does not widen its column of short numbers: the longest word of it is the floor.
    const headerOf = (h: string) => (this.wrapHeader ? longestWord(h) : h);
    this.widths = this.spec.columns.map((col, i) =>
      this.report
        ? Math.min(MAX_WIDTH, Math.max(col.width ?? 12, Math.ceil((seen[i] ?? 0) + 1.5)))
        : col.wrap
          ? Math.max(
              Math.min(fitWidth(headerOf(col.header), seen[i] ?? 0), col.width ?? MAX_WIDTH),
              unwrappable[i] ? fitWidth('', unwrappable[i] ?? 0) : 0,
            )
          : fitWidth(headerOf(col.header), seen[i] ?? 0, col.width),
    );
    // Printed one page wide, the exact values wrap at spaces: the column holds their longest word whole.
    if (this.hasAmounts)
      this.widths.push(
        this.wrapHeader
          ? Math.min(fitWidth(EXACT_VALUES_HEADER, exactSeen), Math.max(EXACT_PRINTED_WIDTH, fitWidth('', exactWord)))
          : fitWidth(EXACT_VALUES_HEADER, exactSeen),
      );
    for (const row of sample) this.writeRow(row);
  }

  private openPart(): void {
    this.part += 1;
    const name = this.partName();
    const ws = this.workbook.addWorksheet(name, {
      views: [{ state: 'frozen', xSplit: 0, ySplit: 1, topLeftCell: 'A2', activeCell: 'A2' }],
      // Printed or exported to PDF: landscape; the Summary fits one page width, data sheets keep a
      // readable size and repeat their header row on every page.
      pageSetup: {
        ...(this.report
          ? { orientation: 'landscape', scale: this.summaryScale() }
          : this.spec.fitToWidth
            ? { orientation: 'landscape', fitToPage: true, fitToWidth: 1, fitToHeight: 0, printTitlesRow: '1:1' }
            : { orientation: 'landscape', printTitlesRow: '1:1' }),
        ...(this.spec.print ? { paperSize: this.spec.print.paperSize, margins: { ...this.spec.print.margins } } : {}),
      },
    });
    const widths = this.widths ?? this.spec.columns.map((c) => c.width ?? 12);
    ws.columns = widths.map((width, i) => ({
      width,
      hidden:
        i < this.spec.columns.length
          ? this.spec.columns[i]!.hidden === true
          : this.spec.exactValues === 'when needed' && this.exactUnused,
    }));
    this.ws = ws;
    this.rowsInPart = 0;
    this.partKey = name;
    this.counts[name] = 0;
    if (this.report) return;
    const headers = this.spec.columns.map((c) => c.header);
    if (this.hasAmounts) headers.push(EXACT_VALUES_HEADER);
    const header = ws.addRow(headers);
    header.font = { bold: true };
    header.eachCell((cell) => {
      cell.fill = { type: 'pattern', pattern: 'solid', fgColor: { argb: 'FFD9D9D9' } };
      cell.border = { bottom: { style: 'thin' } };
      cell.alignment = { vertical: this.wrapHeader ? 'top' : 'middle', wrapText: this.wrapHeader };
    });
    if (this.wrapHeader) {
      // Rows are not re-measured when opened: the header gets the height of its longest wrapped title.
      const lines = headers.map((h, i) => Math.ceil((textWidth(h) * 1.1) / Math.max(1, (widths[i] ?? 12) - 1)));
      header.height = Math.min(4, Math.max(1, ...lines)) * LINE_HEIGHT;
    }
    header.commit();
    this.rowsInPart = 1;
  }

  private header(i: number): string {
    return this.spec.columns[i]?.header || `column ${i + 1}`;
  }

  /** "Header = exact text" for each amount of the row its number cannot show as it is. */
  private exactValues(cells: Cell[]): string[] {
    const out: string[] = [];
    cells.forEach((cell, i) => {
      if (!isAmount(cell)) return;
      const ex = excelAmount(cell).exact;
      if (ex !== null) out.push(`${this.header(i)} = ${ex}`);
    });
    return out;
  }

  private partName(): string {
    return partName(this.spec.name, this.part);
  }

  private closePart(): void {
    const ws = this.ws;
    if (!ws) return;
    const lastRow = Math.max(this.rowsInPart, 1);
    if (!this.report) {
      ws.autoFilter = { from: { row: 1, column: 1 }, to: { row: lastRow, column: this.columnCount } };
      if (lastRow > 1) addChoices(ws, this.spec, lastRow);
    }
    ws.commit();
    this.ws = null;
  }

  /** Lines the tallest wrapped cell of a row needs at its column's width. */
  private wrappedLines(values: unknown[]): number {
    let most = 1;
    this.spec.columns.forEach((col, i) => {
      const v = values[i];
      const text =
        typeof v === 'string'
          ? v
          : v && typeof v === 'object' && 'text' in v
            ? String((v as { text: unknown }).text)
            : null;
      if (!col.wrap || !text) return;
      const perLine = Math.max(1, Math.floor((this.widths?.[i] ?? col.width ?? 12) - 1));
      const lines = text.split('\n').reduce((n, line) => n + Math.max(1, Math.ceil(line.length / perLine)), 0);
      most = Math.max(most, lines);
    });
    // the "Exact values" column, wrapped on a sheet printed one page wide
    const exact = this.wrapHeader && this.hasAmounts ? values[this.spec.columns.length] : null;
    if (typeof exact === 'string')
      most = Math.max(
        most,
        Math.ceil(exact.length / Math.max(1, (this.widths?.[this.spec.columns.length] ?? EXACT_PRINTED_WIDTH) - 1)),
      );
    return most;
  }

  private writeRow(row: Row): void {
    if (!this.ws || this.rowsInPart >= this.maxRows) {
      this.closePart();
      this.openPart();
    }
    const ws = this.ws as ExcelJS.Worksheet;
    const values: unknown[] = [];
    const formats: Array<Converted | undefined> = [];
    const exact: string[] = [];
    row.cells.forEach((cell, i) => {
      const c = convert(cell);
      values.push(c.value);
      formats.push(c);
      if (c.exact !== undefined && !this.report) exact.push(`${this.header(i)} = ${c.exact}`);
    });
    if (this.hasAmounts) {
      while (values.length < this.spec.columns.length) values.push(null);
      values.push(exact.length ? exact.join('; ') : null);
    }
    const xrow = ws.addRow(values);
    if (row.pageBreakAfter) xrow.addPageBreak();
    const lines = this.hasWrap || this.wrapHeader ? this.wrappedLines(values) : 1;
    // Rows are not re-measured when opened (LibreOffice prints wrapped text over the next row): set the height.
    if (lines > 1) xrow.height = Math.min(MAX_ROW_HEIGHT, lines * LINE_HEIGHT);
    const width = this.report ? Math.max(row.cells.length, row.tone ? 1 : 0) : this.columnCount;
    for (let i = 0; i < width; i++) {
      const f = formats[i];
      const tone = row.cellTones?.[i] ?? row.tone;
      const extra = this.report
        ? this.summaryExtra(row, i)
        : f?.link
          ? `${this.columnExtras[i] ?? ''}l`
          : (this.columnExtras[i] ?? '');
      if (this.report && f?.exact !== undefined) xrow.getCell(i + 1).note = `${EXACT_NOTE_PREFIX}${f.exact}`;
      if (!tone && !f?.numFmt && !extra) {
        // A plain cell gets the shared empty style: exceljs caches a style's id by object identity,
        // and a cell left alone has a fresh {} of its own, serialized again for every such cell.
        // An empty cell is written as before (an empty style is the default style, id 0).
        if (i < values.length) xrow.getCell(i + 1).style = PLAIN;
        continue;
      }
      xrow.getCell(i + 1).style = this.styleOf(i, f?.numFmt, tone, extra);
    }
    // The row's own style, {} per row, would be serialized per row the same way: the shared empty one instead.
    (xrow as unknown as { style: Partial<ExcelJS.Style> }).style = PLAIN;
    xrow.commit();
    this.rowsInPart += 1;
    this.counts[this.partKey] = (this.counts[this.partKey] ?? 0) + 1;
  }

  /** The Summary's print scale: its visible columns one page wide on its paper (A4 unless the spec says). */
  private summaryScale(): number {
    const widths = (this.widths ?? this.spec.columns.map((c) => c.width ?? 12)).filter(
      (_, i) => !this.spec.columns[i]?.hidden,
    );
    return printScale(widths, this.spec.print ?? DEFAULT_PRINT);
  }

  /**
   * On the Summary: a header's titles right-aligned over their figures ('r') and left over text, and a text that
   * follows a figure indented ('i'), so "0" and "1 found in this run" in two cells never read as "0 1 found".
   */
  private summaryExtra(row: Row, i: number): Extra {
    if (i === 0) return '';
    // A text column's title stands as its cells do: left, indented where a figure column precedes it.
    if (row.alignRight) {
      const title = row.textTitles?.[i];
      return title === 'indent' ? 'i' : title === 'left' ? '' : 'r';
    }
    const before = row.cells[i - 1];
    const c = row.cells[i];
    return typeof c === 'string' && c !== '' && before !== null && before !== undefined && typeof before !== 'string'
      ? 'i'
      : '';
  }

  /** styleFor, remembered per column: consecutive cells of a column mostly ask for the same style. */
  private styleOf(
    column: number,
    numFmt: string | undefined,
    tone: Tone | undefined,
    extra: Extra,
  ): Partial<ExcelJS.Style> {
    const last = this.lastStyles[column];
    if (last && last.numFmt === numFmt && last.tone === tone && last.extra === extra) return last.style;
    const style = styleFor(numFmt, tone, extra);
    this.lastStyles[column] = { numFmt, tone, extra, style };
    return style;
  }
}

interface LastStyle {
  numFmt: string | undefined;
  tone: Tone | undefined;
  extra: Extra;
  style: Partial<ExcelJS.Style>;
}

export interface Converted {
  value: unknown;
  numFmt?: string;
  /** An amount's exact decimal text, when its number cell cannot show it as it is. */
  exact?: string;
  link?: boolean;
}

/** A sheet name as a formula or link reference: quoted, with its quotes doubled. */
export function sheetRef(name: string): string {
  return `'${name.replace(/'/g, "''")}'`;
}

/** An in-workbook link's target, as exceljs writes it: `#'Sheet name'!A12`. */
export function linkTarget(sheet: string, row: number): string {
  return `#${sheetRef(sheet)}!A${row}`;
}

/**
 * Per-column style additions, as a key: e = editable (unlocked, light yellow), w = wrapped
 * text, t = top-aligned (a cell beside wrapped ones), l = a link (blue, underlined). Empty: none.
 */
type Extra = string;
function extraOf(col: SheetSpec['columns'][number] | undefined): Extra {
  return `${col?.editable ? 'e' : ''}${col?.wrap ? 'w' : ''}`;
}

const EDITABLE_FILL = 'FFFFFFCC';
/** Width of the "Exact values" column on a sheet printed one page wide (its text wraps). */
const EXACT_PRINTED_WIDTH = 40;

/** The longest word of a header: the narrowest its column can be once the header wraps. */
function longestWord(header: string): string {
  return header.split(/\s+/).reduce((a, b) => (b.length > a.length ? b : a), '');
}
/** Points per line of 11-point text, and Excel's largest row height. */
const LINE_HEIGHT = 15;
const MAX_ROW_HEIGHT = 409;
const LINK_FONT: Partial<ExcelJS.Font> = { color: { argb: 'FF0563C1' }, underline: true };

/** The drop-down of each column with choices, over the data rows of the part. */
function addChoices(ws: ExcelJS.Worksheet, spec: SheetSpec, lastRow: number): void {
  spec.columns.forEach((col, i) => {
    if (!col.choices?.length) return;
    const letter = columnLetter(i + 1);
    // exceljs's typings omit dataValidations, which its sheet writers have (and write at commit).
    (
      ws as unknown as { dataValidations: { add(address: string, v: ExcelJS.DataValidation): void } }
    ).dataValidations.add(`${letter}2:${letter}${lastRow}`, {
      type: 'list',
      allowBlank: true,
      formulae: [`"${col.choices.join(',')}"`],
      showErrorMessage: true,
      errorStyle: 'stop',
      errorTitle: col.header,
      error: `Choose one of: ${col.choices.join(', ')}`,
    });
  });
}

/**
 * A model cell as exceljs takes it. Amounts are always numbers at their currency's format (the
 * exact text, when needed, goes beside them); every date-time has the one format.
 */
export function convert(cell: Cell): Converted {
  if (cell === null || cell === undefined) return { value: null };
  if (typeof cell === 'string' || typeof cell === 'boolean') return { value: cell };
  if (typeof cell === 'number') return { value: cell, numFmt: Number.isInteger(cell) ? INT_FORMAT : undefined };
  if (cell instanceof Date) return { value: cell, numFmt: DATETIME_FORMAT };
  if (isDay(cell)) return { value: dayDate(cell.value), numFmt: DAY_FORMAT };
  if (isLink(cell)) return { value: { text: cell.text, hyperlink: linkTarget(cell.sheet, cell.row) }, link: true };
  if (isAmount(cell)) {
    const ex = excelAmount(cell);
    return ex.exact === null
      ? { value: ex.value, numFmt: ex.numFmt }
      : { value: ex.value, numFmt: ex.numFmt, exact: ex.exact };
  }
  return { value: String(cell) };
}

/**
 * One style object per (format, tone) combination. exceljs caches a style's id by
 * object identity (a WeakMap in its style manager); handing it the same object for every cell of
 * a kind avoids re-serializing a style per cell, which dominated the time of large sheets.
 */
const STYLES = new Map<string, Partial<ExcelJS.Style>>();
const PLAIN: Partial<ExcelJS.Style> = {};

function styleFor(numFmt: string | undefined, tone: Tone | undefined, extra: Extra = ''): Partial<ExcelJS.Style> {
  const key = `${numFmt ?? ''}\u0000${tone ?? ''}\u0000${extra}`;
  let style = STYLES.get(key);
  if (!style) {
    style = {};
    // white on dark red: the format's own [Red] for negatives would paint the figure the colour of its fill
    if (numFmt) style.numFmt = tone && FONTS[tone]?.color?.argb === WHITE ? numFmt.replace(/\[Red\]/g, '') : numFmt;
    const font = { ...(tone ? FONTS[tone] : {}) };
    if (Object.keys(font).length) style.font = font;
    const fill = tone ? FILLS[tone] : undefined;
    if (fill) style.fill = { type: 'pattern', pattern: 'solid', fgColor: { argb: fill } };
    if (extra.includes('l')) style.font = { ...style.font, ...LINK_FONT };
    if (extra.includes('w')) style.alignment = { ...style.alignment, wrapText: true, vertical: 'top' };
    if (extra.includes('t')) style.alignment = { ...style.alignment, vertical: 'top' };
    if (extra.includes('r')) style.alignment = { ...style.alignment, horizontal: 'right' };
    // An indent applies only to an explicit left (or right) alignment: with the general one Excel and LibreOffice
    // ignore it, and "0" and "1 found" read as "0 1 found".
    if (extra.includes('i')) style.alignment = { ...style.alignment, horizontal: 'left', indent: 1 };
    if (extra.includes('e')) {
      style.fill = { type: 'pattern', pattern: 'solid', fgColor: { argb: EDITABLE_FILL } };
      style.protection = { locked: false };
    }
    STYLES.set(key, style);
  }
  return style;
}

export function columnLetter(n: number): string {
  let s = '';
  for (let x = n; x > 0; x = Math.floor((x - 1) / 26)) s = String.fromCharCode(65 + ((x - 1) % 26)) + s;
  return s;
}
