/** What the report stage reads before it writes anything: the run's open breaks and the period's aggregates, read side
 * by side. The streaming writer emits sheets in order and cannot go back, so everything the Summary shows is read
 * first.
 */
import { exchangeDailyIn, fillCountsOfDays } from '../store/report/exchange-daily.js';
import { exchangeDailyRows } from '../report/exchange-daily-sheet.js';
import type { StageContext } from './context.js';
import type { Row } from '../report/cells.js';
import { Precision, type SymbolScales } from '../report/precision.js';
import { openBreaksOfRun } from '../store/recon/breaks.js';
import { loadChanges } from '../store/report/run-changes.js';
import { balanceRollOfRun } from '../store/recon/balance-flows.js';
import { partnerFeesByDay, periodTotals, storedCounts } from '../store/recon/counts.js';
import { coverageOfDays } from '../store/sync/cursors.js';
import { spanOf, type Span } from '../store/db/keyset.js';
import { latestBalances } from '../store/report/exchange-sheets.js';
import { partnerDailyIn, webhookStatsIn } from '../store/report/partner-sheets.js';
import { latestCurrencies, latestSymbols } from '../store/sync/snapshots.js';
import type { Db } from '../store/db/database.js';
import { usdRateInputs } from '../store/report/usd-rates.js';
import { breaksOnClosedPeriods, closedPeriodChanges } from '../store/workflow/close-changes.js';
import type { ClosedPeriodChanges } from '../domain/evidence.js';
import { CLOSED_CHANGES_LISTED } from '../report/summary-closed-periods.js';
import { UsdRates } from '../report/usd-rates.js';
import { BreakIndex } from '../report/sheets.js';
import { sortBreaks } from '../report/breaks-sheet.js';
import { feeDays, runFailure } from '../report/summary.js';
import {
  breakId,
  openBreakCounts,
  type BalanceRec,
  type BalanceRollRec,
  type Changes,
  type CoverageRec,
  type ExchangeDailyAgg,
  type FeeDayRec,
  type LateBreak,
  type OpenBreakCounts,
  type PartnerDailyRec,
  type ReportedBreak,
  type RunInfo,
  type Totals,
  type WebhookStats,
} from '../domain/index.js';

/** A run's open breaks and its period's figures: what every sheet of both workbooks and the digest are built from. */
export interface ReportFacts {
  run: RunInfo;
  account: string;
  span: Span;
  /** Most severe and oldest first, each with inPeriod: the Summary, the Breaks sheet and the e-mail show these. */
  openBreaks: ReportedBreak[];
  counts: OpenBreakCounts;
  changes: Changes;
  /** The open breaks by id, for the red rows and the Open breaks column of the data sheets. */
  index: BreakIndex;
  /** The breaks of earlier days late data changed, by break id (the Breaks sheet marks them). */
  late: Map<string, LateBreak>;
  precision: Precision;
  rates: UsdRates;
  totals: Totals;
  daily: PartnerDailyRec[];
  exchangeDays: ExchangeDailyAgg;
  exchangeDaily: Row[];
  balances: { rolls: BalanceRollRec[]; latest: BalanceRec[] };
  coverage: CoverageRec[];
  webhooks: WebhookStats;
  fees: FeeDayRec[];
  /** What the database holds for the period, for a run that failed before its reconcile counted it. */
  stored: Record<string, number> | undefined;
  /** The account's signed closes with their prior-period adjustments (docs/closing.md). */
  closes: ClosedPeriodChanges[];
  /** The open breaks inside a signed close's period: break id -> close id (the Breaks sheet marks them). */
  onClosedPeriods: Map<string, string>;
}

/** Reads the run's open breaks and the period's aggregates (independent reads side by side, one session each). */
export async function readReportFacts(ctx: StageContext, run: RunInfo): Promise<ReportFacts> {
  const { db } = ctx.store;
  const account = run.account;
  const period = { from: run.periodFrom, to: run.periodTo };
  const span = spanOf(period);
  const { withdrawalDebitStates: debitStates, feeCurrency } = ctx.config.exchange;
  // One scan of the period's fills per day and symbol: the Exchange daily sheet, the exchange fees of the Summary's
  // fee days, and, added up, the Summary's fill totals, the Coverage sheet's stored fills per day and the symbols of
  // the detail's fills (a million fills scanned once, not four times).
  const exchangeDaysRead = exchangeDailyIn(db, account, span, debitStates);
  const [
    openBreaks,
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
    openBreaksOfRun(db, run).then(sortBreaks),
    loadPrecision(db, account),
    exchangeDaysRead.then((days) => periodTotals(db, account, span, debitStates, days.fills)),
    partnerDailyIn(db, account, span),
    latestBalances(db, account, ctx.config.exchange.account),
    balanceRollOfRun(db, run.id),
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
  const stored = failure && !failure.judged ? { ...(await storedCounts(db, account, span)) } : undefined;
  const changes = await loadChanges(db, run, openBreaks);
  const closes = await closedPeriodChanges(db, account, CLOSED_CHANGES_LISTED);
  const onClosedPeriods = await breaksOnClosedPeriods(db, account, closes);
  const rates = new UsdRates(rateInputs);
  const fillFees = exchangeDays.fills.map((f) => ({ day: f.day, symbol: f.symbol, fee: f.fees }));
  return {
    run,
    account,
    span,
    openBreaks,
    counts: openBreakCounts(openBreaks),
    changes,
    index: new BreakIndex(openBreaks),
    late: new Map((run.lateBreaks ?? []).map((b) => [breakId(b.code, b.key), b])),
    precision,
    rates,
    totals,
    daily,
    exchangeDays,
    exchangeDaily: exchangeDailyRows(exchangeDays, precision, rates, feeCurrency),
    balances: { rolls, latest },
    coverage,
    webhooks,
    fees: feeDays(partnerFees, fillFees, precision, feeCurrency),
    stored,
    closes,
    onClosedPeriods,
  };
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
