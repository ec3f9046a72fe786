/** The Summary's words and figures, shared by the sheet (summary-sheet.ts), the e-mail, the digest, the group report
 * and the CLI: the verdict and its status line, the period's name, what a failed or partial run says, the balance
 * totals, the fees per day.
 */
import { plural } from '../util/words.js';
import { addDays, isPartial } from '../util/dates.js';
import { Decimal, ZERO } from '../decimal/decimal.js';
import type { Tone } from './cells.js';
import type { OpenBreakCounts, PeriodSplit } from '../domain/index.js';
import type {
  BalanceRec,
  BalanceRollRec,
  FeeDayRec,
  RollFigures,
  StoredRuleResult,
  RunInfo,
  StageInfo,
} from '../domain/index.js';
import type { Precision } from './precision.js';
import type { UsdRates } from './usd-rates.js';

export interface SeverityCounts {
  high: number;
  medium: number;
  low: number;
  total: number;
}

/** The severity figures of the run's open-break counts (all open breaks, of this period or carried over). */
export function severityTotals(counts: OpenBreakCounts): SeverityCounts {
  return {
    high: counts.severity.high.total,
    medium: counts.severity.medium.total,
    low: counts.severity.low.total,
    total: counts.total,
  };
}

/** "12 of this period, 5 carried over": the two counts, worded the same in the workbook and the e-mail. */
export function periodSplitText(s: PeriodSplit): string {
  return `${s.inPeriod} of this period, ${s.carriedOver} carried over`;
}

/** What "explained" means, next to the counts. */
export const EXPLAINED_MEANING =
  'explained: still open, acknowledged by a person with a reason (ramp-recon breaks ack, or the Breaks sheet ' +
  'returned with "Explained?" = yes); counted in Open too';

/** What a reader is told "carried over" means, wherever the two counts appear. */
export const CARRIED_OVER_MEANING =
  'of this period: the break\'s record belongs to the period reported (docs/rules.md "This period or carried ' +
  'over"); carried over: still open from other days or earlier runs';

/**
 * What this run says about a rule that has open breaks, so that a count and a rule status never
 * read as a contradiction: a rule not checked in this run keeps the breaks earlier runs left open.
 */
export function ruleStatusNote(results: readonly StoredRuleResult[], code: string): string {
  const r = results.find((x) => x.code === code);
  if (!r) return 'not run in this run: its open breaks are as earlier runs left them';
  if (r.status === 'not_checked')
    return `not checked in this run${r.reason ? ` (${r.reason})` : ''}: its open breaks are as earlier runs left them`;
  if (r.status === 'passed') return `passed in this run (${r.checked ?? 0} checked)`;
  return `${r.breaks ?? 0} found in this run (${r.checked ?? 0} checked)`;
}

/**
 * The one way a period is named wherever a reader sees it (Summary, file name, e-mail): "2026-11-01"
 * for one day, "2026-11-01 to 2026-11-07" (both days inclusive) for longer periods. `toExclusive` is
 * the stored, command-line end of the period (the day after the last).
 */
export function periodLabel(from: string, toExclusive: string): string {
  const last = addDays(toExclusive, -1);
  return last <= from ? from : `${from} to ${last}`;
}

/**
 * A run whose period was not over when it started (the period includes that UTC day): its records were still
 * arriving.
 */
export function partialRun(run: { periodFrom: string; periodTo: string; startedAt: Date }): boolean {
  return isPartial({ from: run.periodFrom, to: run.periodTo }, run.startedAt);
}

/** What the Summary, the e-mail and the CLI say of a partial period. */
export const PARTIAL_MEANING =
  'partial: the period was not over when the run started (it includes that UTC day); its records were still arriving';

/**
 * `ramp-recon_2026-11-21_<runId>.xlsx`, `ramp-recon_2026-11-18_to_2026-11-21_<runId>.xlsx`: the period label, no
 * spaces.
 */
export function reportFileNameOf(run: { periodFrom: string; periodTo: string; id: string }): string {
  return `ramp-recon_${periodLabel(run.periodFrom, run.periodTo).replace(' to ', '_to_')}_${run.id}.xlsx`;
}

/** ok: green, nothing open; explained: amber, every open break explained; bad: red, unexplained breaks or a failure. */
export type HeadlineTone = 'ok' | 'explained' | 'bad';

export interface Headline {
  /** true for green and amber (no unexplained open break, no failure). */
  reconciled: boolean;
  tone: HeadlineTone;
  /** The banner. */
  text: string;
  detail: string;
  /** The Summary's "Status" line: the banner's verdict in lower case, so the two never disagree. */
  status: string;
}

/** The workbook tone of a headline's banner row (amber is the 'medium' fill). */
export const HEADLINE_ROW_TONE: Record<HeadlineTone, Tone> = { ok: 'ok', explained: 'medium', bad: 'bad' };

/** A run that failed in a stage other than deliver, as its workbook and e-mail say it. */
export interface RunFailure {
  stage: string;
  error: string | null;
  /** The run's reconcile recorded its results before the failure; if not, the open breaks are as last known. */
  judged: boolean;
}

/**
 * The failure the workbook reports, or null: a run that only failed to send its e-mail (failed at deliver) is judged
 * by its breaks, not reported as a failure.
 */
export function runFailure(
  run: Pick<RunInfo, 'status' | 'failedStage' | 'ruleResults'> & { error?: string | null },
): RunFailure | null {
  if (run.status !== 'failed' || run.failedStage === 'deliver') return null;
  return { stage: run.failedStage ?? 'run', error: run.error ?? null, judged: run.ruleResults.length > 0 };
}

/** What the workbook and the e-mail of a run that failed before its reconcile say of the open breaks they show. */
export const LAST_KNOWN_MEANING =
  'as last known: left open by earlier runs, not judged by this run (it failed before its reconcile)';

/** What a failed run kept, said under its banner and in its e-mail. */
export const FAILED_RUN_KEPT = 'what each stage committed before the failure is kept; the next run resumes from it';

/** Over the counts of a run that failed before its reconcile counted the period. */
export const STORED_COUNTS_MEANING = 'records the database holds for the period; this run did not count them';

/**
 * What to do about a failed run: see it with `runs`, fix the cause, run the period again (`--account` for an account
 * of a multi-account config).
 */
export function failedRunNextStep(run: Pick<RunInfo, 'account' | 'periodFrom' | 'periodTo'>): string {
  const account = run.account && run.account !== 'default' ? ` --account ${run.account}` : '';
  return (
    "`ramp-recon runs` shows the run's stages and its error; fix the cause the error names, then run the period " +
    `again: \`ramp-recon run --from ${run.periodFrom} --to ${run.periodTo}${account}\``
  );
}

/**
 * The first line finance reads, and the Status line derived from it: green "RECONCILED" with no
 * open break; amber "RECONCILED WITH EXPLANATIONS" when every open break is explained; red "NOT
 * RECONCILED" with an unexplained open break or no reconciliation results; red "FAILED in <stage>"
 * for a failed run, its open breaks as last known unless it judged them first. A run that only
 * failed to send its e-mail (failed at deliver) is judged by its breaks, its status says so.
 */
export function headline(
  run: Pick<RunInfo, 'periodFrom' | 'periodTo' | 'status' | 'failedStage' | 'ruleResults'> & { error?: string | null },
  counts: OpenBreakCounts,
): Headline {
  const period = periodLabel(run.periodFrom, run.periodTo);
  const open = severityTotals(counts);
  const explained = counts.explained ?? 0;
  const notChecked = run.ruleResults.filter((r) => r.status === 'not_checked').length;
  const nc = notChecked ? `; ${plural(notChecked, 'rule')} not checked (see Rules)` : '';
  const breaks = (n: number) => plural(n, 'open break');
  const failed = run.status === 'failed';
  const error = run.error ? `: ${run.error}` : '';
  const failure = runFailure(run);
  const split = periodSplitText(counts);
  if (failure) {
    const lastKnown = failure.judged ? '' : 'open breaks as last known (not judged by this run): ';
    return {
      reconciled: false,
      tone: 'bad',
      text: `FAILED in ${failure.stage}: ${period} not reconciled`,
      detail: `Period ${period}; ${lastKnown}${breaks(open.total)} (${split})`,
      status: `failed in ${failure.stage}${error}`,
    };
  }
  const mail = failed ? `; e-mail not sent (failed at deliver${error})` : '';
  if (open.total > 0 && explained < open.total) {
    const bySeverity = `${open.high} high, ${open.medium} medium, ${open.low} low`;
    const unexplained = `${open.total - explained} unexplained, ${explained} explained`;
    return {
      reconciled: false,
      tone: 'bad',
      text: `NOT RECONCILED: ${breaks(open.total)} (${bySeverity}${explained ? `; ${explained} explained` : ''})`,
      detail: `Period ${period}: ${split}${nc}`,
      status: `not reconciled: ${breaks(open.total)} (${unexplained})${mail}`,
    };
  }
  if (open.total > 0)
    return {
      reconciled: true,
      tone: 'explained',
      text: `RECONCILED WITH EXPLANATIONS: ${breaks(open.total)}, all explained`,
      detail: `Period ${period}: ${split}${nc}`,
      status: `reconciled with explanations: ${breaks(open.total)}, all explained${mail}`,
    };
  if (run.ruleResults.length === 0)
    return {
      reconciled: false,
      tone: 'bad',
      text: 'NOT RECONCILED: no reconciliation results for this run',
      detail: `Period ${period}; run reconcile first`,
      status: `not reconciled: no reconciliation results${mail}`,
    };
  return {
    reconciled: true,
    tone: 'ok',
    text: `RECONCILED: ${period}, no open breaks`,
    detail: `Period ${period}${nc}`,
    status: `reconciled: no open breaks${mail}`,
  };
}

/** The run's stages in the order they ran: by seq (recordStage), then by start time, then by name. */
export function stagesInRunOrder(stages: Record<string, StageInfo>): Array<[string, StageInfo]> {
  const big = Number.MAX_SAFE_INTEGER;
  return Object.entries(stages).sort(
    ([an, a], [bn, b]) =>
      (a.seq ?? big) - (b.seq ?? big) || (a.startedAt ?? '').localeCompare(b.startedAt ?? '') || an.localeCompare(bn),
  );
}

/**
 * When the run finished: its finishedAt; while the workbook is written inside the run (before
 * delivery), the time its reconcile stage finished, labelled so.
 */
export function finishedTime(run: Pick<RunInfo, 'finishedAt' | 'stages'>): {
  label: string;
  at: Date | null;
  note: string | null;
} {
  if (run.finishedAt) return { label: 'Finished (UTC)', at: run.finishedAt, note: null };
  const reconcile = run.stages.reconcile?.finishedAt;
  if (reconcile)
    return {
      label: 'Reconcile finished (UTC)',
      at: new Date(reconcile),
      note: 'written inside the run: report and e-mail came after this',
    };
  return { label: 'Finished (UTC)', at: null, note: 'not finished when this workbook was written' };
}

/**
 * One currency's roll-forward over the whole period (the run's snapshot pairs chained): the figures of a
 * pair's roll, the residual being the sum of the pairs' residuals when they chain.
 */
export type BalanceTotal = Pick<
  RollFigures,
  | 'currency'
  | 'opening'
  | 'deposits'
  | 'withdrawals'
  | 'bought'
  | 'sold'
  | 'fees'
  | 'expectedClosing'
  | 'actualClosing'
  | 'residual'
> & { openingAt: Date | null; closingAt: Date | null; pairs: number };

/**
 * Per currency over the run's balance_roll rows: the opening of its first pair, each flow kind
 * summed over the pairs, the expected closing from those, the actual closing of its last pair and
 * the residual between the two.
 */
export function balanceTotals(rolls: readonly BalanceRollRec[]): BalanceTotal[] {
  const byCurrency = new Map<string, BalanceRollRec[]>();
  for (const r of rolls) byCurrency.set(r.currency, [...(byCurrency.get(r.currency) ?? []), r]);
  const time = (d: Date | null) => d?.getTime() ?? 0;
  return [...byCurrency.keys()].sort().map((currency) => {
    const pairs = byCurrency
      .get(currency)!
      .sort((a, b) => time(a.openingAt) - time(b.openingAt) || time(a.closingAt) - time(b.closingAt));
    const first = pairs[0]!;
    const last = pairs[pairs.length - 1]!;
    const sum = (k: 'deposits' | 'withdrawals' | 'bought' | 'sold' | 'fees') =>
      pairs.reduce((a, p) => a.plus(p[k] ?? ZERO), ZERO);
    const flows = {
      deposits: sum('deposits'),
      withdrawals: sum('withdrawals'),
      bought: sum('bought'),
      sold: sum('sold'),
      fees: sum('fees'),
    };
    const opening = first.opening ?? ZERO;
    const expectedClosing = opening
      .plus(flows.deposits)
      .minus(flows.withdrawals)
      .plus(flows.bought)
      .minus(flows.sold)
      .minus(flows.fees);
    const actualClosing = last.actualClosing ?? ZERO;
    return {
      currency,
      opening,
      ...flows,
      expectedClosing,
      actualClosing,
      residual: actualClosing.minus(expectedClosing),
      openingAt: first.openingAt,
      closingAt: last.closingAt,
      pairs: pairs.length,
    };
  });
}

/** Sums USD values, and names the currencies that could not be valued (no rate). */
export function usdSum(
  items: Array<{ currency: string; value: Decimal | null | undefined }>,
  rates: UsdRates,
): { usd: Decimal; unvalued: string[] } {
  let usd = ZERO;
  const unvalued = new Set<string>();
  for (const i of items) {
    if (!i.value) continue;
    const v = rates.usd(i.value, i.currency);
    if (v === null) {
      if (!i.value.isZero()) unvalued.add(i.currency);
    } else usd = usd.plus(v);
  }
  return { usd, unvalued: [...unvalued].sort() };
}

/**
 * The currency a fill's fee is charged in: the symbol's counter currency, or its base with exchange.feeCurrency = base.
 */
export function feeCurrencyOf(
  symbol: string,
  precision: Precision,
  feeCurrency: 'counter' | 'base',
): { code: string; dp: number } {
  const p = precision.symbol(symbol);
  const code = (feeCurrency === 'base' ? p.base : p.counterCode) ?? '?';
  return { code, dp: feeCurrency === 'base' ? p.qty : p.counter };
}

/**
 * Partner fees (per input currency) and fill fees (per fee currency) of each day, merged into one row per day and
 * currency.
 */
export function feeDays(
  partner: ReadonlyArray<{ day: string; currency: string; fee: Decimal; feeUsd: Decimal }>,
  fills: ReadonlyArray<{ day: string; symbol: string; fee: Decimal }>,
  precision: Precision,
  feeCurrency: 'counter' | 'base',
): FeeDayRec[] {
  const rows = new Map<string, FeeDayRec>();
  const at = (day: string, currency: string) => {
    const k = `${day} ${currency}`;
    let r = rows.get(k);
    if (!r) rows.set(k, (r = { day, currency, partnerFee: null, partnerFeeUsd: null, exchangeFee: null }));
    return r;
  };
  for (const p of partner) {
    const r = at(p.day, p.currency);
    r.partnerFee = (r.partnerFee ?? ZERO).plus(p.fee);
    r.partnerFeeUsd = (r.partnerFeeUsd ?? ZERO).plus(p.feeUsd);
  }
  for (const f of fills) {
    const r = at(f.day, feeCurrencyOf(f.symbol, precision, feeCurrency).code);
    r.exchangeFee = (r.exchangeFee ?? ZERO).plus(f.fee);
  }
  return [...rows.values()].sort((a, b) => a.day.localeCompare(b.day) || a.currency.localeCompare(b.currency));
}

export const COUNT_LABELS: Array<[string, string]> = [
  ['partnerOrders', 'Partner orders (created in period)'],
  ['fills', 'Exchange fills'],
  ['exchangeOrders', 'Exchange orders'],
  ['deposits', 'Exchange deposits'],
  ['withdrawals', 'Exchange withdrawals'],
  ['balanceSnapshots', 'Balance snapshots'],
  ['quarantined', 'Quarantined records (unresolved)'],
];

export const STAKE_MEANING =
  "Each open break's USD impact as on the Breaks sheet, signed from our side: shortfalls (negative) and surpluses " +
  '(positive) are summed apart, never netted; "no money": ages, states, coverage, quarantine.';

/**
 * The closing balances' USD total the balance table ends with: the roll-forward's actual closings, or without a
 * roll-forward the latest snapshot's balances; null without either.
 */
export function closingBalancesUsd(
  rolls: readonly BalanceRollRec[],
  latest: readonly BalanceRec[],
  rates: UsdRates,
): { usd: Decimal; unvalued: string[] } | null {
  const table = balanceTotals(rolls);
  if (table.length)
    return usdSum(
      table.map((t) => ({ currency: t.currency, value: t.actualClosing })),
      rates,
    );
  if (latest.length)
    return usdSum(
      latest.map((b) => ({ currency: b.currency, value: b.balance })),
      rates,
    );
  return null;
}
