/** The report stage: reads the run and its period from the store and streams the workbook to REPORTS_DIR. */
import { basename, join } from 'node:path';
import type { Logger } from '../log/logger.js';
import { breakRecords, type BreakKeys, type BreakRecords } from '../store/report/break-records.js';
import { dataSheetPositions } from '../store/report/sheet-positions.js';
import { loadRun, setReportPath } from '../store/runs/runs.js';
import { detailFolderName, writeDetail, type DetailWritten } from '../report/detail.js';
import type { RunStage, StageContext } from './context.js';
import { moneyAtStake, stakeFigures } from '../report/money-at-stake.js';
import type { UsdRates } from '../report/usd-rates.js';
import { BreakLinks, keysBySheet, positionsIn, type DataSheet } from '../report/breaks-sheet.js';
import { closingBalancesUsd, reportFileNameOf } from '../report/summary.js';
import { buildDigest } from '../report/digest.js';
import type { DigestFigures, OpenBreakCounts, ReportDigest, ReportedBreak, RunInfo } from '../domain/index.js';
import { removeStalePartials } from '../report/partials.js';
import {
  reportFileMode,
  writeWorkbook,
  type SheetSource,
  type WriteWorkbookOptions,
} from '../report/write-workbook.js';
import { CsvExport, type CsvFileWritten } from '../report/csv.js';
import { readReportFacts, type ReportFacts } from './report-reads.js';
import { reportSheets, type ReportSheets } from './report-sheets.js';

export { SHEET } from '../report/sheets.js';
export { headline, periodLabel } from '../report/summary.js';
export { loadExcel, writeWorkbook } from '../report/write-workbook.js';

/**
 * `ramp-recon_<period label, ' to ' as '_to_'>_<runId>.xlsx`: ramp-recon_2026-11-21_<runId>.xlsx,
 * ramp-recon_2026-11-18_to_2026-11-21_<runId>.xlsx.
 */
export function reportFileName(run: { periodFrom: string; periodTo: string; id: string }): string {
  return reportFileNameOf(run);
}

export interface ReportOptions extends Pick<WriteWorkbookOptions, 'maxRowsPerSheet'> {
  /** Also write one CSV per table sheet of the workbook into this folder (`report --csv DIR`), from the same rows. */
  csvDir?: string;
  /** Also write the full detail workbook, every record of the period, into the detail folder (`report --detail`). */
  detail?: boolean;
}

export interface ReportWritten {
  path: string;
  sheets: Record<string, number>;
  counts: OpenBreakCounts;
  digest: ReportDigest;
  detail: DetailWritten;
  csv?: CsvFileWritten[];
}

/** Where the report's files go, with what mode, and the CSV export when asked. */
interface ReportFiles {
  path: string;
  detailDir: string;
  fileMode: number;
  csv: CsvExport | null;
}

/**
 * Writes the run's two artefacts and records the workbook's path on the run:
 * - the detail, every record of the period: one gzip CSV per data sheet (and the full detail workbook when asked),
 *   in a folder beside the workbook, streamed from keyset-paged queries;
 * - the reconciliation workbook, the one that is mailed: Summary, Breaks, Balances, Partner daily, Exchange daily,
 *   Coverage, and data sheets holding only the records open breaks point at with those that explain them, so its
 *   size follows the breaks, not the volume.
 * The Summary is computed first (from the run row and SQL aggregates) because the streaming
 * writer emits sheets in order and cannot go back.
 */
export const writeReport: RunStage<ReportOptions, ReportWritten> = async (ctx, runId, options = {}) => {
  const log = ctx.logger.child({ stage: 'report', runId });
  const started = Date.now();
  const run = await loadRun(ctx.store.db, runId);
  const facts = await readReportFacts(ctx, run);
  const sheets = reportSheets(ctx, facts);
  const files = await prepareFiles(ctx, run, options, log);
  const detail = await writeDetailFiles(ctx, facts, sheets, files, options, log);
  const written = await writeMailedWorkbook(ctx, facts, sheets, files, detail, options, log);
  const digest = digestOf(ctx, facts, files.path, detail);
  await setReportPath(ctx.store.db, runId, files.path, facts.counts, digest);
  // after the workbook is recorded: a CSV that cannot be finished never costs the run its workbook
  const csvFiles = await files.csv?.finish();
  const { path } = files;
  log.info(
    {
      path,
      sheets: written,
      openBreaks: facts.openBreaks.length,
      csv: csvFiles?.map((f) => f.path),
      ms: Date.now() - started,
    },
    'report written',
  );
  return { path, sheets: written, counts: facts.counts, digest, detail, ...(csvFiles ? { csv: csvFiles } : {}) };
};

/** The files' names, what a killed report left removed first (of any run or period), the CSV export opened. */
async function prepareFiles(
  ctx: StageContext,
  run: RunInfo,
  options: ReportOptions,
  log: Logger,
): Promise<ReportFiles> {
  const fileName = reportFileName(run);
  const path = join(ctx.config.reportsDir, fileName);
  const detailDir = join(ctx.config.reportsDir, detailFolderName(fileName));
  const stale = await removeStalePartials(ctx.config.reportsDir);
  if (stale.length)
    log.info({ removed: stale }, 'removed partial workbooks left by interrupted reports (untouched for a day)');
  const fileMode = reportFileMode(ctx.config.reports.fileMode);
  const csv = options.csvDir === undefined ? null : await CsvExport.open(options.csvDir, fileMode);
  return { path, detailDir, fileMode, csv };
}

/** 1. The detail: every record of the period as gzip CSV, and the full detail workbook when asked. */
async function writeDetailFiles(
  ctx: StageContext,
  facts: ReportFacts,
  sheets: ReportSheets,
  files: ReportFiles,
  options: ReportOptions,
  log: Logger,
): Promise<DetailWritten> {
  const workbook = options.detail
    ? await detailWorkbook(ctx, facts, sheets, files.detailDir, options.maxRowsPerSheet)
    : undefined;
  const detail = await writeDetail(files.detailDir, sheets.detailCsv(), workbook, files.fileMode);
  log.info(
    { dir: detail.dir, files: detail.files.map((f) => [basename(f.path), f.rows, f.bytes, f.ms]) },
    'detail written (file, rows, bytes, ms)',
  );
  return detail;
}

/**
 * The full detail workbook links each break to its row among every record of the period: the same order and span as
 * each sheet's query, split at maxRowsPerSheet like the writer.
 */
async function detailWorkbook(
  ctx: StageContext,
  { account, span, openBreaks }: ReportFacts,
  sheets: ReportSheets,
  dir: string,
  maxRowsPerSheet: number | undefined,
): Promise<{ sources: SheetSource[]; maxRowsPerSheet?: number }> {
  const positions = new Map<DataSheet, Map<string, number>>(
    await dataSheetPositions(ctx.store.db, account, span, keysBySheet(openBreaks)),
  );
  for (const [sheet, at] of sheets.inMemoryPositions) positions.set(sheet, at);
  const links = new BreakLinks(positions, maxRowsPerSheet);
  const { period } = sheets;
  return {
    maxRowsPerSheet,
    sources: [
      sheets.summary({ dir, files: null }),
      sheets.breaks(links),
      ...sheets.tables(),
      period.partnerOrders(),
      period.ordersVsFills(),
      period.fills(),
      period.deposits(),
      period.withdrawals(),
    ],
  };
}

/**
 * 2. The reconciliation workbook: its data sheets hold the records the open breaks point at, and links go there;
 * with a CSV export, each table sheet's rows also stream into its CSV file as the writer takes them (one pass).
 */
async function writeMailedWorkbook(
  ctx: StageContext,
  facts: ReportFacts,
  sheets: ReportSheets,
  files: ReportFiles,
  detail: DetailWritten,
  options: ReportOptions,
  log: Logger,
): Promise<Record<string, number>> {
  const records = await breakRecords(ctx.store.db, facts.account, breakKeysOf(facts.openBreaks));
  const positions = new Map<DataSheet, ReadonlyMap<string, number>>([
    ...recordPositions(records),
    ...sheets.inMemoryPositions,
  ]);
  const sources = [
    sheets.summary({ dir: detail.dir, files: detail.files }),
    sheets.breaks(new BreakLinks(positions, options.maxRowsPerSheet)),
    ...sheets.tables(),
    ...sheets.records(records),
  ];
  return writeWorkbook(files.path, files.csv ? files.csv.tee(sources) : sources, {
    maxRowsPerSheet: options.maxRowsPerSheet,
    fileMode: files.fileMode,
    onSheet: (name, rows) => log.debug({ sheet: name, rows }, 'sheet written'),
  }).catch(async (err: unknown) => {
    await files.csv?.abort();
    throw err;
  });
}

/** Where each listed record is on its data sheet of the mailed workbook. */
function recordPositions(records: BreakRecords): Array<[DataSheet, Map<string, number>]> {
  return [
    ['partnerOrders', positionsIn(records.partnerOrders.map((o) => o.orderId))],
    ['ordersVsFills', positionsIn(records.ordersVsFills.map((o) => o.exOrdId))],
    ['fills', positionsIn(records.fills.map((f) => f.execId))],
    ['deposits', positionsIn(records.deposits.map((d) => d.depositId))],
    ['withdrawals', positionsIn(records.withdrawals.map((w) => w.withdrawalId))],
  ];
}

/** What the e-mail shows, stored with the workbook so that a later delivery agrees with its attachment. */
function digestOf(ctx: StageContext, facts: ReportFacts, path: string, detail: DetailWritten): ReportDigest {
  const { run, openBreaks, counts, rates, precision, balances, stored } = facts;
  return buildDigest({
    run,
    openBreaks,
    counts,
    rates,
    now: ctx.now,
    attachmentName: basename(path),
    detailDir: detail.dir,
    precision,
    figures: digestFigures(openBreaks, rates, balances),
    closedPeriods: facts.closes,
    ...(stored ? { stored: { ...stored } } : {}),
  });
}

/** Open breaks' keys per record kind with a data sheet: what the mailed workbook's data sheets list. */
function breakKeysOf(breaks: readonly ReportedBreak[]): BreakKeys {
  const keys: { [K in keyof BreakKeys]: string[] } = {
    partnerOrder: [],
    exchangeOrder: [],
    fill: [],
    deposit: [],
    withdrawal: [],
  };
  for (const b of breaks) if (b.entity in keys) keys[b.entity as keyof BreakKeys].push(b.key);
  return keys;
}

/** The Summary's money figures as exact text: what the group report shows of this account. */
function digestFigures(
  openBreaks: readonly ReportedBreak[],
  rates: UsdRates,
  balances: ReportFacts['balances'],
): DigestFigures {
  const closing = closingBalancesUsd(balances.rolls, balances.latest, rates);
  return {
    moneyAtStake: stakeFigures(moneyAtStake(openBreaks, rates)),
    closingUsd: closing ? closing.usd.toFixed() : null,
    closingUnvalued: closing?.unvalued ?? [],
  };
}
