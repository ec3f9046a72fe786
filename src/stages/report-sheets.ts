/** The sheets of the report's two workbooks and the detail's CSV files, built from what the report read first: the
 * Summary, the Breaks sheet and the tables both workbooks share, every record of the period streamed (the detail), and
 * the records open breaks point at (the mailed workbook).
 */
import type { StageContext } from './context.js';
import type { ReportFacts } from './report-reads.js';
import { assumptions } from '../report/assumptions.js';
import type { Row, SheetSpec } from '../report/cells.js';
import type { DetailSource } from '../report/detail.js';
import type { SheetSource } from '../report/write-workbook.js';
import { exchangeDailySpec } from '../report/exchange-daily-sheet.js';
import { summaryRows, summarySpec, type SummaryDetail, type SummaryInput } from '../report/summary-sheet.js';
import { BreakLinks, breakRow, breaksSpec, positionsIn, type DataSheet } from '../report/breaks-sheet.js';
import {
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
import type { BreakRecords } from '../store/report/break-records.js';
import { eachRow } from '../store/db/keyset.js';
import { depositsIn, fillsByTimeIn, ordersWithFillsIn } from '../store/report/exchange-sheets.js';
import { fillCsvPages, partnerOrderCsvPages } from '../store/report/sheet-csv.js';
import { withdrawalsIn } from '../store/recon/exchange-reads.js';
import { partnerOrdersCreatedIn } from '../store/recon/partner-reads.js';
import { orderVsFillsCsvLines } from '../store/report/orders-vs-fills-csv.js';

/** The five data sheets, each a function that gives its source. */
type DataSheets<T> = Record<'partnerOrders' | 'ordersVsFills' | 'fills' | 'deposits' | 'withdrawals', T>;

export interface ReportSheets {
  /** The Summary, its rows computed now (it says when the workbook was written). */
  summary(detail: SummaryDetail): SheetSource;
  breaks(links: BreakLinks): SheetSource;
  /** Balances, Partner daily, Exchange daily, Coverage: the same in both workbooks, built in memory. */
  tables(): SheetSource[];
  /** Where each key is on the sheets built in memory, for the Breaks sheet's links. */
  inMemoryPositions: Array<[DataSheet, Map<string, number>]>;
  /** Every record of the period on each data sheet, streamed: the full detail workbook's rows (`report --detail`). */
  period: DataSheets<() => SheetSource>;
  /** The records open breaks point at, with those that explain them: the mailed workbook's data sheets. */
  records(records: BreakRecords): SheetSource[];
  /** The detail's CSV files: the same records as `period`, the largest as CSV lines Postgres writes. */
  detailCsv(): DetailSource[];
}

export function reportSheets(ctx: StageContext, facts: ReportFacts): ReportSheets {
  const { openBreaks, precision, index, rates, late, balances, coverage } = facts;
  const now = ctx.now;
  const balanceRowList = balanceRows(balances.rolls, balances.latest, precision, index);
  const coverageRowList = coverage.map((c) => coverageRow(c, index));
  const rowOf = dataRows(ctx, facts);
  const period = periodSheets(ctx, facts, rowOf);
  return {
    summary: (detail) => ({ spec: summarySpec, rows: summaryRows(summaryInput(ctx, facts, detail)) }),
    breaks: (links) => ({
      spec: breaksSpec,
      rows: openBreaks.map((b) =>
        breakRow(b, { now, precision, usd: rates, links, late, closedPeriods: facts.onClosedPeriods }),
      ),
    }),
    tables: () => [
      { spec: balancesSpec, rows: balanceRowList },
      { spec: partnerDailySpec, rows: facts.daily.map((d) => partnerDailyRow(d, precision)) },
      { spec: exchangeDailySpec, rows: facts.exchangeDaily },
      { spec: coverageSpec, rows: coverageRowList },
    ],
    inMemoryPositions: [
      ['balances', positionsIn(balanceRowList.map((r) => r.cells[0] as string | null))],
      ['coverage', positionsIn(coverage.map((c) => `${c.source}:${c.stream}:${c.day}`))],
    ],
    period,
    records: (records) => [
      { spec: partnerOrdersSpec, rows: records.partnerOrders.map(rowOf.partnerOrders) },
      { spec: ordersVsFillsSpec, rows: records.ordersVsFills.map(rowOf.ordersVsFills) },
      { spec: fillsSpec, rows: records.fills.map(rowOf.fills) },
      { spec: depositsSpec, rows: records.deposits.map(rowOf.deposits) },
      { spec: withdrawalsSpec, rows: records.withdrawals.map(rowOf.withdrawals) },
    ],
    detailCsv: () => detailCsvSources(ctx, facts, period),
  };
}

/** The Summary's input: the facts, the config's assumptions, and when the workbook is written. */
function summaryInput(ctx: StageContext, facts: ReportFacts, detail: SummaryDetail): SummaryInput {
  return {
    run: facts.run,
    openBreaks: facts.openBreaks,
    counts: facts.counts,
    changes: facts.changes,
    totals: facts.totals,
    assumptions: assumptions(ctx.config),
    precision: facts.precision,
    now: ctx.now,
    writtenAt: new Date(),
    webhooks: facts.webhooks,
    balanceRolls: facts.balances.rolls,
    latestBalances: facts.balances.latest,
    rates: facts.rates,
    feeDays: facts.fees,
    feeCurrency: ctx.config.exchange.feeCurrency,
    detail,
    closedPeriods: facts.closes,
    ...(facts.stored ? { storedCounts: { ...facts.stored } } : {}),
  };
}

/** Each data sheet's row of a record: red where an open break points, links from the Breaks sheet. */
function dataRows(ctx: StageContext, { precision, index }: ReportFacts) {
  const { feeCurrency, withdrawalDebitStates } = ctx.config.exchange;
  return {
    partnerOrders: (o: BreakRecords['partnerOrders'][number]) => partnerOrderRow(o, precision, index),
    ordersVsFills: (o: BreakRecords['ordersVsFills'][number]) => orderVsFillsRow(o, precision, index),
    fills: (f: BreakRecords['fills'][number]) => fillRow(f, precision, index, feeCurrency),
    deposits: (d: BreakRecords['deposits'][number]) => depositRow(d, precision, index),
    withdrawals: (w: BreakRecords['withdrawals'][number]) => withdrawalRow(w, precision, index, withdrawalDebitStates),
  };
}

function periodSheets(
  ctx: StageContext,
  { account, span }: ReportFacts,
  rowOf: ReturnType<typeof dataRows>,
): DataSheets<() => SheetSource> {
  const { db } = ctx.store;
  return {
    partnerOrders: () => streamed(partnerOrdersSpec, partnerOrdersCreatedIn(db, account, span), rowOf.partnerOrders),
    ordersVsFills: () => streamed(ordersVsFillsSpec, ordersWithFillsIn(db, account, span), rowOf.ordersVsFills),
    fills: () => streamed(fillsSpec, fillsByTimeIn(db, account, span), rowOf.fills),
    deposits: () => streamed(depositsSpec, depositsIn(db, account, span), rowOf.deposits),
    withdrawals: () => streamed(withdrawalsSpec, withdrawalsIn(db, account, span), rowOf.withdrawals),
  };
}

function streamed<T>(spec: SheetSpec, pages: AsyncIterable<T[]>, row: (t: T) => Row): SheetSource {
  return { spec, rows: mapRows(eachRow(pages), row) };
}

async function* mapRows<T>(source: AsyncIterable<T>, fn: (t: T) => Row): AsyncGenerator<Row> {
  for await (const item of source) yield fn(item);
}

/**
 * The same records as the period's sheets, as the detail's CSV files. The partner orders and the fills (most of the
 * detail) come as CSV lines Postgres writes (partnerOrderCsvPages, fillCsvPages): the same bytes, with no Decimal,
 * Date or row object per record.
 */
function detailCsvSources(
  ctx: StageContext,
  { account, span, precision, index, exchangeDays }: ReportFacts,
  period: DataSheets<() => SheetSource>,
): DetailSource[] {
  const { db, copyOut } = ctx.store;
  const feeCurrency = ctx.config.exchange.feeCurrency;
  const fillSymbols = [...new Set(exchangeDays.fills.map((f) => f.symbol))];
  const fillFields = fillCsvFields(precision, index, feeCurrency);
  const orderLines = () =>
    orderVsFillsCsvLines(
      { db, copyOut: copyOut!.bind(ctx.store) },
      account,
      span,
      orderVsFillsCsvPrint(precision, index),
      fillSymbols,
    );
  return [
    { spec: partnerOrdersSpec, csv: partnerOrderCsvPages(ctx.store, account, span, index.csvFields('partnerOrder')) },
    // On a server the orders too come as lines Postgres writes; the embedded database builds their rows here.
    copyOut ? { spec: ordersVsFillsSpec, csv: orderLines() } : period.ordersVsFills(),
    { spec: fillsSpec, csv: fillCsvPages(ctx.store, account, span, fillFields, undefined, fillSymbols) },
    period.deposits(),
    period.withdrawals(),
  ];
}
