import { join } from 'node:path';
import type { StageContext } from './context.js';
import { assumptions } from '../report/assumptions.js';
import type { Row } from '../report/cells.js';
import {
  loadBalances,
  loadCoverage,
  loadPartnerDaily,
  loadPrecision,
  loadRun,
  loadTotals,
  loadWebhookStats,
  periodBounds,
  streamDeposits,
  streamFills,
  streamOrdersVsFills,
  streamPartnerOrders,
  streamWithdrawals,
} from '../store/report-reads.js';
import { loadChanges, loadOpenBreaks } from '../store/breaks.js';
import {
  BreakIndex,
  balanceRows,
  balancesSpec,
  breakRow,
  breaksSpec,
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
  sortBreaks,
  withdrawalRow,
  withdrawalsSpec,
} from '../report/sheets.js';
import { summaryRows, summarySpec } from '../report/summary.js';
import { writeWorkbook, type WriteWorkbookOptions } from '../report/write-workbook.js';

export { SHEET } from '../report/sheets.js';
export { headline, countBySeverity, periodLabel } from '../report/summary.js';
export { ReportError } from '../store/report-reads.js';
export { writeWorkbook } from '../report/write-workbook.js';

/** `<reportsDir>/ramp-recon_<from>_<to>_<runId>.xlsx` (to exclusive, as on the command line). */
export function reportFileName(run: { periodFrom: string; periodTo: string; id: string }): string {
  return `ramp-recon_${run.periodFrom}_${run.periodTo}_${run.id}.xlsx`;
}

/**
 * Writes the run's workbook and records its path on the run. The Summary is computed first
 * (from the run row and SQL aggregates) because the streaming writer emits sheets in order
 * and cannot go back; the big sheets then stream from keyset-paged queries.
 */
export async function writeReport(
  ctx: StageContext,
  runId: string,
  options: Pick<WriteWorkbookOptions, 'maxRowsPerSheet'> = {},
): Promise<{ path: string; sheets: Record<string, number> }> {
  const { db } = ctx.store;
  const log = ctx.logger.child({ stage: 'report', runId });
  const started = Date.now();
  const run = await loadRun(db, runId);
  const period = { from: run.periodFrom, to: run.periodTo };
  const bounds = periodBounds(run.account, period);
  const debitStates = ctx.config.exchange.withdrawalDebitStates;
  const feeCurrency = ctx.config.exchange.feeCurrency;

  const [openBreaksRaw, precision] = [await loadOpenBreaks(db, run.account), await loadPrecision(db, run.account)];
  const openBreaks = sortBreaks(openBreaksRaw);
  const changes = await loadChanges(db, run, openBreaks);
  const totals = await loadTotals(db, bounds, debitStates);
  const daily = await loadPartnerDaily(db, bounds);
  const balances = await loadBalances(db, runId, run.account, ctx.config.exchange.account);
  const coverage = await loadCoverage(db, bounds, period);
  const webhooks = await loadWebhookStats(db, bounds);
  const index = new BreakIndex(openBreaks);
  const descriptions = new Map(run.ruleResults.map((r) => [r.code, r.description]));
  const now = ctx.now;

  async function* map<T>(source: AsyncIterable<T>, fn: (t: T) => Row): AsyncGenerator<Row> {
    for await (const item of source) yield fn(item);
  }

  const path = join(ctx.config.reportsDir, reportFileName(run));
  const sheets = await writeWorkbook(
    path,
    [
      { spec: summarySpec, rows: summaryRows({ run, openBreaks, changes, totals, assumptions: assumptions(ctx.config), precision, now, webhooks }) },
      { spec: breaksSpec, rows: openBreaks.map((b) => breakRow(b, now, precision, descriptions)) },
      { spec: partnerDailySpec, rows: daily.map((d) => partnerDailyRow(d, precision)) },
      { spec: partnerOrdersSpec, rows: map(streamPartnerOrders(db, bounds), (o) => partnerOrderRow(o, precision, index)) },
      { spec: ordersVsFillsSpec, rows: map(streamOrdersVsFills(db, bounds), (o) => orderVsFillsRow(o, precision, index)) },
      { spec: fillsSpec, rows: map(streamFills(db, bounds), (f) => fillRow(f, precision, index, feeCurrency)) },
      { spec: balancesSpec, rows: balanceRows(balances.rolls, balances.latest, precision, index) },
      { spec: depositsSpec, rows: map(streamDeposits(db, bounds), (d) => depositRow(d, precision, index)) },
      { spec: withdrawalsSpec, rows: map(streamWithdrawals(db, bounds), (w) => withdrawalRow(w, precision, index, debitStates)) },
      { spec: coverageSpec, rows: coverage.map((c) => coverageRow(c, index)) },
    ],
    {
      ...options,
      onSheet: (name, rows) => log.debug({ sheet: name, rows }, 'sheet written'),
    },
  );
  await db.updateTable('run').set({ report_path: path }).where('id', '=', runId).execute();
  log.info({ path, sheets, openBreaks: openBreaks.length, ms: Date.now() - started }, 'report written');
  return { path, sheets };
}
