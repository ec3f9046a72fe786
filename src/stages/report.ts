/** The report stage: reads the run and its period from the store and streams the workbook to REPORTS_DIR. */
import { basename, join } from 'node:path';
import { breakRecords, type BreakKeys } from '../store/break-records.js';
import { exchangeDailyIn, fillCountsOfDays } from '../store/exchange-daily.js';
import { exchangeDailyRows, exchangeDailySpec } from '../report/exchange-daily-sheet.js';
import { detailFolderName, writeDetail, type DetailSource, type DetailWritten } from '../report/detail.js';
import type { StageContext } from './context.js';
import { assumptions } from '../report/assumptions.js';
import type { Row, SheetSpec } from '../report/cells.js';
import { Precision, type SymbolScales } from '../report/precision.js';
import { openBreaksOfRun } from '../store/breaks.js';
import { loadChanges } from '../store/run-changes.js';
import { balanceRollOfRun } from '../store/balance-flows.js';
import { periodTotals, storedCounts } from '../store/counts.js';
import { coverageOfDays } from '../store/cursors.js';
import { eachRow, spanOf } from '../store/keyset.js';
import { moneyAtStake, stakeFigures } from '../report/money-at-stake.js';
import {
  depositsIn,
  fillsByTimeIn,
  fillCsvPages,
  latestBalances,
  ordersWithFillsIn,
  withdrawalsIn,
  type OrderWithFills,
} from '../store/exchange-reads.js';
import {
  partnerDailyIn,
  partnerOrdersCreatedIn,
  partnerOrderCsvPages,
  webhookStatsIn,
} from '../store/partner-reads.js';
import { orderVsFillsCsvLines } from '../store/orders-vs-fills-csv.js';
import { loadRun, setReportPath } from '../store/runs.js';
import { latestCurrencies, latestSymbols } from '../store/snapshots.js';
import type { Db } from '../store/database.js';
import {
  breakId,
  openBreakCounts,
  type Deposit,
  type FillRec,
  type OpenBreakCounts,
  type PartnerOrderRec,
  type ReportedBreak,
  type Withdrawal,
} from '../domain/index.js';
import {
  BreakIndex,
  balanceRows,
  balancesSpec,
  coverageRow,
  coverageSpec,
  depositRow,
  depositsSpec,
  fillRow,
  fillCsvFields,
  fillsSpec,
  orderVsFillsRow,
  orderVsFillsCsvPrint,
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
import {
  closingBalancesUsd,
  feeDays,
  reportFileNameOf,
  runFailure,
  summaryRows,
  summarySpec,
  type SummaryDetail,
} from '../report/summary.js';
import { buildDigest } from '../report/digest.js';
import type { BalanceRec, BalanceRollRec, DigestFigures, ReportDigest } from '../domain/index.js';
import { partnerFeesByDay } from '../store/counts.js';
import { removeStalePartials } from '../report/partials.js';
import {
  reportFileMode,
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
  /** Also write one CSV per table sheet of the workbook into this folder (`report --csv DIR`), from the same rows. */
  csvDir?: string;
  /** Also write the full detail workbook, every record of the period, into the detail folder (`report --detail`). */
  detail?: boolean;
}

/**
 * The sheets in workbook order, each with its rows; with a CSV export, each table sheet's rows
 * also stream into its CSV file as the workbook writer takes them (one pass: the same rows).
 */
function withCsv(csv: CsvExport | null, sources: SheetSource[]): SheetSource[] {
  return csv ? csv.tee(sources) : sources;
}

export interface ReportWritten {
  path: string;
  sheets: Record<string, number>;
  counts: OpenBreakCounts;
  digest: ReportDigest;
  detail: DetailWritten;
  csv?: CsvFileWritten[];
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
export async function writeReport(
  ctx: StageContext,
  runId: string,
  options: ReportOptions = {},
): Promise<ReportWritten> {
  const { db } = ctx.store;
  const log = ctx.logger.child({ stage: 'report', runId });
  const started = Date.now();
  const run = await loadRun(db, runId);
  const period = { from: run.periodFrom, to: run.periodTo };
  const account = run.account;
  const span = spanOf(period);
  const debitStates = ctx.config.exchange.withdrawalDebitStates;
  const feeCurrency = ctx.config.exchange.feeCurrency;

  // One scan of the period's fills per day and symbol: the Exchange daily sheet, the exchange fees of the Summary's
  // fee days, and, added up, the Summary's fill totals, the Coverage sheet's stored fills per day and the symbols of
  // the detail's fills (a million fills scanned once, not four times).
  const exchangeDaysRead = exchangeDailyIn(db, account, span, debitStates);
  // One read of the open breaks, each with inPeriod, and one count of them: the Summary, the Breaks
  // sheet and (stored with the workbook) the e-mail all show these.
  // The reads below are independent: side by side, each on a session of its own on a Postgres server.
  const [
    openBreaksRaw,
    precision,
    totals,
    daily,
    latest,
    rolls,
    coverage,
    webhooks,
    rateInputs,
    exchangeDays,
    partnerFees,
  ] = await Promise.all([
    openBreaksOfRun(db, run),
    loadPrecision(db, account),
    exchangeDaysRead.then((days) => periodTotals(db, account, span, debitStates, days.fills)),
    partnerDailyIn(db, account, span),
    latestBalances(db, account, ctx.config.exchange.account),
    balanceRollOfRun(db, runId),
    exchangeDaysRead.then((days) =>
      coverageOfDays(db, account, period, new Map([['exchange:fills', fillCountsOfDays(days.fills)]])),
    ),
    webhookStatsIn(db, account, span),
    usdRateInputs(db, account, ctx.config.exchange.account, span),
    exchangeDaysRead,
    partnerFeesByDay(db, account, span),
  ]);
  // A run that failed before its reconcile counted nothing: its Summary and e-mail show what the database holds.
  const failure = runFailure(run);
  const stored = failure && !failure.judged ? await storedCounts(db, account, span) : undefined;
  const openBreaks = sortBreaks(openBreaksRaw);
  const counts = openBreakCounts(openBreaks);
  const changes = await loadChanges(db, run, openBreaks);
  const balances = { rolls, latest };
  const rates = new UsdRates(rateInputs);
  const fees = feeDays(
    partnerFees,
    exchangeDays.fills.map((f) => ({ day: f.day, symbol: f.symbol, fee: f.fees })),
    precision,
    feeCurrency,
  );
  const exchangeDaily = exchangeDailyRows(exchangeDays, precision, rates, feeCurrency);
  const index = new BreakIndex(openBreaks);
  const late = new Map((run.lateBreaks ?? []).map((b) => [breakId(b.code, b.key), b]));
  const now = ctx.now;
  const balanceRowList = balanceRows(balances.rolls, balances.latest, precision, index);
  const coverageRowList = coverage.map((c) => coverageRow(c, index));

  async function* map<T>(source: AsyncIterable<T>, fn: (t: T) => Row): AsyncGenerator<Row> {
    for await (const item of source) yield fn(item);
  }
  const rowOf = {
    partnerOrder: (o: PartnerOrderRec) => partnerOrderRow(o, precision, index),
    orderVsFills: (o: OrderWithFills) => orderVsFillsRow(o, precision, index),
    fill: (f: FillRec) => fillRow(f, precision, index, feeCurrency),
    deposit: (d: Deposit) => depositRow(d, precision, index),
    withdrawal: (w: Withdrawal) => withdrawalRow(w, precision, index, debitStates),
  };
  const streamed = <T>(spec: SheetSpec, pages: AsyncIterable<T[]>, row: (t: T) => Row): SheetSource => ({
    spec,
    rows: map(eachRow(pages), row),
  });
  /** Every record of the period on each data sheet, streamed: the full detail workbook's rows (`report --detail`). */
  const periodSheet = {
    partnerOrders: () => streamed(partnerOrdersSpec, partnerOrdersCreatedIn(db, account, span), rowOf.partnerOrder),
    ordersVsFills: () => streamed(ordersVsFillsSpec, ordersWithFillsIn(db, account, span), rowOf.orderVsFills),
    fills: () => streamed(fillsSpec, fillsByTimeIn(db, account, span), rowOf.fill),
    deposits: () => streamed(depositsSpec, depositsIn(db, account, span), rowOf.deposit),
    withdrawals: () => streamed(withdrawalsSpec, withdrawalsIn(db, account, span), rowOf.withdrawal),
  };
  /**
   * The same records as the detail's CSV files. The partner orders and the fills (most of the detail) come as CSV
   * lines Postgres writes (partnerOrderCsvPages, fillCsvPages): the same bytes, with no Decimal, Date or row object
   * per record.
   */
  const fillSymbols = [...new Set(exchangeDays.fills.map((f) => f.symbol))];
  const { copyOut } = ctx.store;
  const detailSources = (): DetailSource[] => [
    { spec: partnerOrdersSpec, csv: partnerOrderCsvPages(ctx.store, account, span, index.csvFields('partnerOrder')) },
    // On a server the orders too come as lines Postgres writes; the embedded database builds their rows here.
    copyOut
      ? {
          spec: ordersVsFillsSpec,
          csv: orderVsFillsCsvLines(
            { db, copyOut: copyOut.bind(ctx.store) },
            account,
            span,
            orderVsFillsCsvPrint(precision, index),
            fillSymbols,
          ),
        }
      : periodSheet.ordersVsFills(),
    {
      spec: fillsSpec,
      csv: fillCsvPages(ctx.store, account, span, fillCsvFields(precision, index, feeCurrency), undefined, fillSymbols),
    },
    periodSheet.deposits(),
    periodSheet.withdrawals(),
  ];

  const fileName = reportFileName(run);
  const path = join(ctx.config.reportsDir, fileName);
  const detailDir = join(ctx.config.reportsDir, detailFolderName(fileName));
  // What a killed report left (of any run or period) goes before this one is written.
  const stale = await removeStalePartials(ctx.config.reportsDir);
  if (stale.length)
    log.info({ removed: stale }, 'removed partial workbooks left by interrupted reports (untouched for a day)');
  const fileMode = reportFileMode(ctx.config.reports.fileMode);
  const csv = options.csvDir === undefined ? null : await CsvExport.open(options.csvDir, fileMode);

  const summaryOf = (detail: SummaryDetail): Row[] =>
    summaryRows({
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
      detail,
      ...(stored ? { storedCounts: { ...stored } } : {}),
    });
  const breaksSheet = (links: BreakLinks): SheetSource => ({
    spec: breaksSpec,
    rows: openBreaks.map((b) => breakRow(b, { now, precision, usd: rates, links, late })),
  });
  // Balances and Coverage are the same in both workbooks, built in memory.
  const inMemory: Array<[DataSheet, Map<string, number>]> = [
    ['balances', positionsIn(balanceRowList.map((r) => r.cells[0] as string | null))],
    ['coverage', positionsIn(coverage.map((c) => `${c.source}:${c.stream}:${c.day}`))],
  ];

  // 1. The detail. The full detail workbook (on request) links each break to its row among every record of the
  // period: the same order and span as each sheet's query, split at maxRowsPerSheet like the writer.
  let detailWorkbook: Parameters<typeof writeDetail>[2];
  if (options.detail) {
    const positions = new Map<DataSheet, Map<string, number>>(
      await dataSheetPositions(db, account, span, keysBySheet(openBreaks)),
    );
    for (const [sheet, at] of inMemory) positions.set(sheet, at);
    const links = new BreakLinks(positions, options.maxRowsPerSheet);
    detailWorkbook = {
      maxRowsPerSheet: options.maxRowsPerSheet,
      sources: [
        { spec: summarySpec, rows: summaryOf({ dir: detailDir, files: null }) },
        breaksSheet(links),
        { spec: balancesSpec, rows: balanceRowList },
        { spec: partnerDailySpec, rows: daily.map((d) => partnerDailyRow(d, precision)) },
        { spec: exchangeDailySpec, rows: exchangeDaily },
        { spec: coverageSpec, rows: coverageRowList },
        periodSheet.partnerOrders(),
        periodSheet.ordersVsFills(),
        periodSheet.fills(),
        periodSheet.deposits(),
        periodSheet.withdrawals(),
      ],
    };
  }
  const detail = await writeDetail(detailDir, detailSources(), detailWorkbook, fileMode);
  log.info(
    { dir: detail.dir, files: detail.files.map((f) => [basename(f.path), f.rows, f.bytes, f.ms]) },
    'detail written (file, rows, bytes, ms)',
  );

  // 2. The reconciliation workbook: its data sheets hold the records the open breaks point at, and links go there.
  const records = await breakRecords(db, account, breakKeysOf(openBreaks));
  const positions = new Map<DataSheet, ReadonlyMap<string, number>>([
    ['partnerOrders', positionsIn(records.partnerOrders.map((o) => o.orderId))],
    ['ordersVsFills', positionsIn(records.ordersVsFills.map((o) => o.exOrdId))],
    ['fills', positionsIn(records.fills.map((f) => f.execId))],
    ['deposits', positionsIn(records.deposits.map((d) => d.depositId))],
    ['withdrawals', positionsIn(records.withdrawals.map((w) => w.withdrawalId))],
    ...inMemory,
  ]);
  const sheets = await writeWorkbook(
    path,
    withCsv(csv, [
      { spec: summarySpec, rows: summaryOf({ dir: detail.dir, files: detail.files }) },
      breaksSheet(new BreakLinks(positions, options.maxRowsPerSheet)),
      { spec: balancesSpec, rows: balanceRowList },
      { spec: partnerDailySpec, rows: daily.map((d) => partnerDailyRow(d, precision)) },
      { spec: exchangeDailySpec, rows: exchangeDaily },
      { spec: coverageSpec, rows: coverageRowList },
      { spec: partnerOrdersSpec, rows: records.partnerOrders.map(rowOf.partnerOrder) },
      { spec: ordersVsFillsSpec, rows: records.ordersVsFills.map(rowOf.orderVsFills) },
      { spec: fillsSpec, rows: records.fills.map(rowOf.fill) },
      { spec: depositsSpec, rows: records.deposits.map(rowOf.deposit) },
      { spec: withdrawalsSpec, rows: records.withdrawals.map(rowOf.withdrawal) },
    ]),
    {
      maxRowsPerSheet: options.maxRowsPerSheet,
      fileMode,
      onSheet: (name, rows) => log.debug({ sheet: name, rows }, 'sheet written'),
    },
  ).catch(async (err: unknown) => {
    await csv?.abort();
    throw err;
  });
  const digest = buildDigest({
    run,
    openBreaks,
    counts,
    rates,
    now,
    attachmentName: basename(path),
    detailDir: detail.dir,
    precision,
    figures: digestFigures(openBreaks, rates, balances),
    ...(stored ? { stored: { ...stored } } : {}),
  });
  await setReportPath(db, runId, path, counts, digest);
  // after the workbook is recorded: a CSV that cannot be finished never costs the run its workbook
  const csvFiles = await csv?.finish();
  log.info(
    { path, sheets, openBreaks: openBreaks.length, csv: csvFiles?.map((f) => f.path), ms: Date.now() - started },
    'report written',
  );
  return { path, sheets, counts, digest, detail, ...(csvFiles ? { csv: csvFiles } : {}) };
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

/** Decimal places per partner currency and exchange symbol, from the latest reference snapshots. */
export async function loadPrecision(db: Db, account: string): Promise<Precision> {
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

/** The Summary's money figures as exact text: what the group report shows of this account. */
function digestFigures(
  openBreaks: readonly ReportedBreak[],
  rates: UsdRates,
  balances: { rolls: BalanceRollRec[]; latest: BalanceRec[] },
): DigestFigures {
  const closing = closingBalancesUsd(balances.rolls, balances.latest, rates);
  return {
    moneyAtStake: stakeFigures(moneyAtStake(openBreaks, rates)),
    closingUsd: closing ? closing.usd.toFixed() : null,
    closingUnvalued: closing?.unvalued ?? [],
  };
}
