#!/usr/bin/env node
// Renders chosen sheets of a workbook to PNG pages, as LibreOffice prints them (docs/images/ in the README):
//   node scripts/sheet-pages.mjs <workbook.xlsx> <out-dir> "Summary" "Breaks" "Balances"
// Each sheet is copied alone into a workbook of its own (so its pages are known), exported to PDF by
// `libreoffice --headless` and cut into pages by `pdftoppm` (Debian: libreoffice-calc, poppler-utils).
// Writes <out-dir>/<sheet>-<page>.png (first 2 pages of each sheet) and prints each file with its page count.
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, renameSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import ExcelJS from 'exceljs';
import JSZip from 'jszip';

/** The rows after which a sheet (its position, from 1) has a manual page break. */
async function manualBreaks(path, position) {
  const zip = await JSZip.loadAsync(readFileSync(path));
  const xml = (await zip.file(`xl/worksheets/sheet${position}.xml`)?.async('string')) ?? '';
  const rowBreaks = /<rowBreaks[^>]*>(.*?)<\/rowBreaks>/s.exec(xml)?.[1] ?? '';
  return [...rowBreaks.matchAll(/<brk id="(\d+)"[^>]*man="1"/g)].map((m) => Number(m[1]));
}

const [workbookPath, outDir, ...sheets] = process.argv.slice(2);
if (!workbookPath || !outDir || sheets.length === 0) {
  process.stderr.write('usage: node scripts/sheet-pages.mjs <workbook.xlsx> <out-dir> <sheet name>...\n');
  process.exit(2);
}
const MAX_PAGES = Number(process.env.SHEET_PAGES_MAX ?? 2);
mkdirSync(outDir, { recursive: true });
const work = mkdtempSync(join(tmpdir(), 'sheet-pages-'));
try {
  for (const sheet of sheets) {
    const wb = new ExcelJS.Workbook();
    await wb.xlsx.readFile(workbookPath);
    if (!wb.getWorksheet(sheet)) throw new Error(`${workbookPath}: no sheet named ${JSON.stringify(sheet)}`);
    // exceljs does not read manual page breaks back (the Summary's first page ends in one): taken from the XML
    for (const row of await manualBreaks(workbookPath, wb.getWorksheet(sheet).orderNo + 1))
      wb.getWorksheet(sheet).getRow(row).addPageBreak();
    for (const ws of [...wb.worksheets]) if (ws.name !== sheet) wb.removeWorksheet(ws.id);
    const slug = sheet.toLowerCase().replace(/[^a-z0-9]+/g, '-');
    const single = join(work, `${slug}.xlsx`);
    await wb.xlsx.writeFile(single);
    execFileSync('libreoffice', ['--headless', '--convert-to', 'pdf', '--outdir', work, single], {
      stdio: 'ignore',
      env: { ...process.env, HOME: work },
    });
    const pdf = join(work, `${slug}.pdf`);
    const pages = Number(/Pages:\s+(\d+)/.exec(execFileSync('pdfinfo', [pdf]).toString())?.[1] ?? 0);
    execFileSync('pdftoppm', [
      '-png',
      '-r',
      String(process.env.SHEET_PAGES_DPI ?? 110),
      '-f',
      '1',
      '-l',
      String(Math.min(pages, MAX_PAGES)),
      pdf,
      join(work, slug),
    ]);
    for (const f of readdirSync(work)
      .filter((f) => f.startsWith(`${slug}-`) && f.endsWith('.png'))
      .sort()) {
      const page = Number(/-(\d+)\.png$/.exec(f)?.[1]);
      const target = join(outDir, `${slug}-page${page}.png`);
      renameSync(join(work, f), target);
      process.stdout.write(`${target} (page ${page} of ${pages})\n`);
    }
  }
} finally {
  rmSync(work, { recursive: true, force: true });
}
