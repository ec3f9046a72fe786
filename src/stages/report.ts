/** The report stage: reads the run and its period from the store and streams the workbook to REPORTS_DIR. */
import { basename, join } from 'node:path';
import type { StageContext } from './context.js';
import { assumptions } from '../report/assumptions.js';
import type { Row } from '../report/cells.js';
import { Precision, type SymbolScales } from '../report/precision.js';
import { openBreaksOfRun } from '../store/breaks.js';
import { loadChanges } from '../store/run-changes.js';
import { balanceRollOfRun } from '../store/balance-flows.js';
import { periodTotals } from '../store/counts.js';
import { coverageOfDays } from '../store/cursors.js';
import { eachRow, spanOf } from '../store/keyset.js';
import {
  depositsIn,
  fillsByTimeIn,
  latestBalances,
  ordersWithFillsIn,
  withdrawalsIn,
} from '../store/exchange-reads.js';
import { partnerDailyIn, partnerOrdersCreatedIn, webhookStatsIn } from '../store/partner-reads.js';
import { loadRun, setReportPath } from '../store/runs.js';
import { latestCurrencies, latestSymbols } from '../store/snapshots.js';
import type { Db } from '../store/database.js';
import { breakId, openBreakCounts, type OpenBreakCounts } from '../domain/index.js';
import {
  BreakIndex,
  balanceRows,
  balancesSpec,
  coverageRow,
  coverageSpec,
  depositRow,
  depositsSpec,
  fillRow,
  fillsSpec,
  orderVsFillsRow,
  ordersVsFillsSpec,
  partnerDailyRow,
  partnerDailySpec,
  partnerOrderRow,
  partnerOrdersSpec,
  withdrawalRow,
  withdrawalsSpec,
} from '../report/sheets.js';
import {
  BreakLinks,
  breakRow,
  breaksSpec,
  keysBySheet,
  positionsIn,
  sortBreaks,
  type DataSheet,
} from '../report/breaks-sheet.js';
import { dataSheetPositions } from '../store/sheet-positions.js';
import { usdRateInputs } from '../store/usd-rates.js';
import { UsdRates } from '../report/usd-rates.js';
import { feeDays, reportFileNameOf, summaryRows, summarySpec } from '../report/summary.js';
import { buildDigest } from '../report/digest.js';
import type { ReportDigest } from '../domain/index.js';
import { fillFeesByDay, partnerFeesByDay } from '../store/counts.js';
import {
  removeStalePartials,
  writeWorkbook,
  type SheetSource,
  type WriteWorkbookOptions,
} from '../report/write-workbook.js';
import { CsvExport, type CsvFileWritten } from '../report/csv.js';

export { SHEET } from '../report/sheets.js';
export { headline, periodLabel } from '../report/summary.js';
export { writeWorkbook } from '../report/write-workbook.js';

/**
 * `ramp-recon_<period label, ' to ' as '_to_'>_<runId>.xlsx`: ramp-recon_2026-11-21_<runId>.xlsx,
 * ramp-recon_2026-11-18_to_2026-11-21_<runId>.xlsx.
 */
export function reportFileName(run: { periodFrom: string; periodTo: string; id: string }): string {
  return reportFileNameOf(run);
}

export interface ReportOptions extends Pick<WriteWorkbookOptions, 'maxRowsPerSheet'> {
  /** Also write one CSV per sheet but the Summary into this folder (`report --csv DIR`), from the same rows. */
  csvDir?: string;
}

/**
 * The sheets in workbook order, each with its rows; with a CSV export, each table sheet's rows
 * also stream into its CSV file as the workbook writer takes them (one pass: the same rows).
 */
function withCsv(csv: CsvExport | null, sources: SheetSource[]): SheetSource[] {
  return csv ? csv.tee(sources) : sources;
}

/**
 * Writes the run's workbook (and, when asked, its CSV files) and records its path on the run.
 * The Summary is computed first (from the run row and SQL aggregates) because the streaming
 * writer emits sheets in order and cannot go back; the big sheets then stream from keyset-paged queries.
 */
export async function writeReport(
  ctx: StageContext,
  runId: string,
  options: ReportOptions = {},
): Promise<{
  path: string;
  sheets: Record<string, number>;
  counts: OpenBreakCounts;
  digest: ReportDigest;
  csv?: CsvFileWritten[];
}> {
  const { db } = ctx.store;
  const log = ctx.logger.child({ stage: 'report', runId });
  const started = Date.now();
  const run = await loadRun(db, runId);
  const period = { from: run.periodFrom, to: run.periodTo };
  const account = run.account;
  const span = spanOf(period);
  const debitStates = ctx.config.exchange.withdrawalDebitStates;
  const feeCurrency = ctx.config.exchange.feeCurrency;

  // One read of the open breaks, each with inPeriod, and one count of them: the Summary, the Breaks
  // sheet and (stored with the workbook) the e-mail all show these.
  const [openBreaksRaw, precision] = [await openBreaksOfRun(db, run), await loadPrecision(db, account)];
  const openBreaks = sortBreaks(openBreaksRaw);
  const counts = openBreakCounts(openBreaks);
  const changes = await loadChanges(db, run, openBreaks);
  const totals = await periodTotals(db, account, span, debitStates);
  const daily = await partnerDailyIn(db, account, span);
  const latest = await latestBalances(db, account, ctx.config.exchange.account);
  const balances = { rolls: await balanceRollOfRun(db, runId), latest };
  const coverage = await coverageOfDays(db, account, period);
  const webhooks = await webhookStatsIn(db, account, span);
  const rates = new UsdRates(await usdRateInputs(db, account, ctx.config.exchange.account, span));
  const fees = feeDays(
    await partnerFeesByDay(db, account, span),
    await fillFeesByDay(db, account, span),
    precision,
    feeCurrency,
  );
  const index = new BreakIndex(openBreaks);
  const late = new Map((run.lateBreaks ?? []).map((b) => [breakId(b.code, b.key), b]));
  const now = ctx.now;

  // Breaks sheet: each key links to its row on its data sheet (the same order and span as that
  // sheet's query, split at maxRowsPerSheet like the writer), the USD impact from the run's rates.
  const balanceRowList = balanceRows(balances.rolls, balances.latest, precision, index);
  const breakKeys = keysBySheet(openBreaks);
  const positions = new Map<DataSheet, Map<string, number>>(await dataSheetPositions(db, account, span, breakKeys));
  positions.set('balances', positionsIn(balanceRowList.map((r) => r.cells[0] as string | null)));
  positions.set('coverage', positionsIn(coverage.map((c) => `${c.source}:${c.stream}:${c.day}`)));
  const links = new BreakLinks(positions, options.maxRowsPerSheet);

  async function* map<T>(source: AsyncIterable<T>, fn: (t: T) => Row): AsyncGenerator<Row> {
    for await (const item of source) yield fn(item);
  }

  const path = join(ctx.config.reportsDir, reportFileName(run));
  // What a killed report left (of any run or period) goes before this one is written.
  const stale = await removeStalePartials(ctx.config.reportsDir);
  if (stale.length) log.info({ removed: stale }, 'removed partial workbooks left by interrupted reports');
  const csv = options.csvDir === undefined ? null : await CsvExport.open(options.csvDir);
  const sheets = await writeWorkbook(
    path,
    withCsv(csv, [
      {
        spec: summarySpec,
        rows: summaryRows({
          run,
          openBreaks,
          counts,
          changes,
          totals,
          assumptions: assumptions(ctx.config),
          precision,
          now,
          writtenAt: new Date(),
          webhooks,
          balanceRolls: balances.rolls,
          latestBalances: latest,
          rates,
          feeDays: fees,
          feeCurrency,
        }),
      },
      { spec: breaksSpec, rows: openBreaks.map((b) => breakRow(b, { now, precision, usd: rates, links, late })) },
      { spec: partnerDailySpec, rows: daily.map((d) => partnerDailyRow(d, precision)) },
      {
        spec: partnerOrdersSpec,
        rows: map(eachRow(partnerOrdersCreatedIn(db, account, span)), (o) => partnerOrderRow(o, precision, index)),
      },
      {
        spec: ordersVsFillsSpec,
        rows: map(eachRow(ordersWithFillsIn(db, account, span)), (o) => orderVsFillsRow(o, precision, index)),
      },
      {
        spec: fillsSpec,
        rows: map(eachRow(fillsByTimeIn(db, account, span)), (f) => fillRow(f, precision, index, feeCurrency)),
      },
      { spec: balancesSpec, rows: balanceRowList },
      { spec: depositsSpec, rows: map(eachRow(depositsIn(db, account, span)), (d) => depositRow(d, precision, index)) },
      {
        spec: withdrawalsSpec,
        rows: map(eachRow(withdrawalsIn(db, account, span)), (w) => withdrawalRow(w, precision, index, debitStates)),
      },
      { spec: coverageSpec, rows: coverage.map((c) => coverageRow(c, index)) },
    ]),
    {
      maxRowsPerSheet: options.maxRowsPerSheet,
      onSheet: (name, rows) => log.debug({ sheet: name, rows }, 'sheet written'),
    },
  ).catch(async (err: unknown) => {
    await csv?.abort();
    throw err;
  });
  const digest = buildDigest({ run, openBreaks, counts, rates, now, attachmentName: basename(path) });
  await setReportPath(db, runId, path, counts, digest);
  // after the workbook is recorded: a CSV that cannot be finished never costs the run its workbook
  const csvFiles = await csv?.finish();
  log.info(
    { path, sheets, openBreaks: openBreaks.length, csv: csvFiles?.map((f) => f.path), ms: Date.now() - started },
    'report written',
  );
  return { path, sheets, counts, digest, ...(csvFiles ? { csv: csvFiles } : {}) };
}

/** Decimal places per partner currency and exchange symbol, from the latest reference snapshots. */
async function loadPrecision(db: Db, account: string): Promise<Precision> {
  const [currencies, symbolRules] = [await latestCurrencies(db, account), await latestSymbols(db, account)];
  const partner = new Map<string, { precision: number; type: string }>();
  for (const c of currencies?.values() ?? []) partner.set(c.code, { precision: Number(c.precision), type: c.type });
  const symbols = new Map<string, SymbolScales>();
  for (const r of symbolRules?.symbols.values() ?? [])
    symbols.set(r.symbol, {
      base: r.baseCurrency,
      counter: r.counterCurrency,
      baseScale: r.baseScale === null ? null : Number(r.baseScale),
      counterScale: r.counterScale === null ? null : Number(r.counterScale),
      priceScale: r.priceIncrement ? r.priceIncrement.decimalPlaces() : null,
    });
  return new Precision({ partner, symbols });
}
