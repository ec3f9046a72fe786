/** Money at stake, defined once: what the Summary, the group Summary, both e-mails and the `--json` summary show
 * (docs/reports.md "Money at stake"). Pure: from the open breaks and the USD rates, in decimals only.
 */
import { Decimal, ZERO } from '../decimal/decimal.js';
import type { MoneyAtStakeFigures, PeriodSplit, ReportedBreak } from '../domain/index.js';
import { plural } from '../util/words.js';
import { breakValuation, usdFigureText, type UsdRates } from './usd-rates.js';

/** A USD sum split like the open breaks: this period and carried over. */
export interface UsdSplit {
  total: Decimal;
  inPeriod: Decimal;
  carriedOver: Decimal;
}

export interface MoneyAtStake {
  /** The sum of the negative USD impacts: money missing or gone (a negative figure, or zero). */
  shortfalls: UsdSplit;
  /** The sum of the positive USD impacts: money extra (a positive figure, or zero). */
  surpluses: UsdSplit;
  /** Open breaks that move money but have no USD figure (no rate for their currency, no amount recorded). */
  noFigure: PeriodSplit;
  /** Open breaks whose rule (or check) moves no money: ages, prices, states, coverage, quarantine. */
  noMoney: PeriodSplit;
}

const usdSplit = (): UsdSplit => ({ total: ZERO, inPeriod: ZERO, carriedOver: ZERO });
const countSplit = (): PeriodSplit => ({ total: 0, inPeriod: 0, carriedOver: 0 });

function addUsd(s: UsdSplit, usd: Decimal, inPeriod: boolean): void {
  s.total = s.total.plus(usd);
  if (inPeriod) s.inPeriod = s.inPeriod.plus(usd);
  else s.carriedOver = s.carriedOver.plus(usd);
}

function addCount(s: PeriodSplit, inPeriod: boolean): void {
  s.total += 1;
  if (inPeriod) s.inPeriod += 1;
  else s.carriedOver += 1;
}

/**
 * The open breaks' USD impacts (breakValuation: each as the Breaks sheet shows it), signed from the business's side:
 * the negative ones summed as shortfalls, the positive ones as surpluses, never netted against each other; the breaks
 * with no figure counted apart. Each split this period / carried over.
 */
export function moneyAtStake(
  breaks: readonly Pick<
    ReportedBreak,
    'code' | 'unit' | 'currency' | 'expected' | 'actual' | 'difference' | 'detail' | 'inPeriod'
  >[],
  rates: UsdRates,
): MoneyAtStake {
  const m: MoneyAtStake = {
    shortfalls: usdSplit(),
    surpluses: usdSplit(),
    noFigure: countSplit(),
    noMoney: countSplit(),
  };
  for (const b of breaks) {
    const v = breakValuation(b, rates);
    if (v.kind === 'no money') addCount(m.noMoney, b.inPeriod);
    else if (v.kind === 'no figure') addCount(m.noFigure, b.inPeriod);
    else if (v.usd.isNeg()) addUsd(m.shortfalls, v.usd, b.inPeriod);
    else if (v.usd.gt(0)) addUsd(m.surpluses, v.usd, b.inPeriod);
  }
  return m;
}

const splitText = (s: UsdSplit) => ({
  total: s.total.toFixed(),
  inPeriod: s.inPeriod.toFixed(),
  carriedOver: s.carriedOver.toFixed(),
});

/**
 * The figures as exact text, as the digest stores them (the group report and the `--json` summary read them): the
 * new keys, and the earlier ones beside them (total, inPeriod, carriedOver: the absolute impacts, shortfalls and
 * surpluses alike; unvalued: the breaks without a USD figure).
 */
export function stakeFigures(m: MoneyAtStake): MoneyAtStakeFigures {
  const gross = (k: keyof UsdSplit) => m.surpluses[k].minus(m.shortfalls[k]).toFixed();
  return {
    total: gross('total'),
    inPeriod: gross('inPeriod'),
    carriedOver: gross('carriedOver'),
    unvalued: m.noFigure.total,
    shortfalls: splitText(m.shortfalls),
    surpluses: splitText(m.surpluses),
    noFigure: { ...m.noFigure },
    noMoney: { ...m.noMoney },
  };
}

/** "USD -1,234.50": a USD figure of exact text as every report shows it (usdFigureText). */
export function usdWords(text: string): string {
  return `USD ${usdFigureText(new Decimal(text))}`;
}

/**
 * The money at stake in words, one line each, as both e-mails (and the group Summary's notes) show it:
 * "shortfalls USD -4,443.12 (this period -4,000.00, carried over -443.12)", "surpluses USD 10.00 (...)",
 * "3 open breaks without a USD figure (2 this period, 1 carried over); 12 that move no money". Figures stored before
 * shortfalls and surpluses were told apart: their absolute total, said as such.
 */
export function stakeLines(f: MoneyAtStakeFigures): string[] {
  if (!f.shortfalls || !f.surpluses)
    return [
      `USD ${usdFigureText(new Decimal(f.total))} (shortfalls and surpluses alike: stored before they were told apart)`,
    ];
  const usd = (label: string, s: { total: string; inPeriod: string; carriedOver: string }) =>
    `${label} ${usdWords(s.total)} (this period ${usdFigureText(new Decimal(s.inPeriod))}, carried over ${usdFigureText(new Decimal(s.carriedOver))})`;
  const none = f.noFigure ?? { total: f.unvalued, inPeriod: 0, carriedOver: 0 };
  const counts = `${plural(none.total, 'open break')} without a USD figure (${none.inPeriod} this period, ${none.carriedOver} carried over)`;
  const noMoney = f.noMoney ? `; ${f.noMoney.total} that move no money` : '';
  return [usd('shortfalls', f.shortfalls), usd('surpluses', f.surpluses), `${counts}${noMoney}`];
}

/**
 * The money at stake of several accounts (the group's total): each figure summed, exact. null when a figure of one is
 * missing (stored before shortfalls and surpluses were told apart): no sum passes for the whole.
 */
export function sumStakeFigures(list: readonly MoneyAtStakeFigures[]): MoneyAtStakeFigures | null {
  if (!list.length || list.some((f) => !f.shortfalls || !f.surpluses || !f.noFigure || !f.noMoney)) return null;
  const keys = ['total', 'inPeriod', 'carriedOver'] as const;
  const usd = (of: (f: MoneyAtStakeFigures) => { total: string; inPeriod: string; carriedOver: string }) => {
    const [total, inPeriod, carriedOver] = keys.map((k) => list.reduce((t, f) => t.plus(of(f)[k]), ZERO).toFixed());
    return { total: total!, inPeriod: inPeriod!, carriedOver: carriedOver! };
  };
  const count = (of: (f: MoneyAtStakeFigures) => PeriodSplit): PeriodSplit => {
    const [total, inPeriod, carriedOver] = keys.map((k) => list.reduce((n, f) => n + of(f)[k], 0));
    return { total: total!, inPeriod: inPeriod!, carriedOver: carriedOver! };
  };
  const gross = usd((f) => f);
  return {
    ...gross,
    unvalued: list.reduce((n, f) => n + f.unvalued, 0),
    shortfalls: usd((f) => f.shortfalls!),
    surpluses: usd((f) => f.surpluses!),
    noFigure: count((f) => f.noFigure!),
    noMoney: count((f) => f.noMoney!),
  };
}

/**
 * The money at stake in one phrase, for a line of the group e-mail: "shortfalls USD -4,443.12, surpluses USD 10.00,
 * 3 open breaks without a USD figure" (stakeLines's totals).
 */
export function stakePhrase(f: MoneyAtStakeFigures): string {
  if (!f.shortfalls || !f.surpluses) return stakeLines(f)[0]!;
  const none = f.noFigure?.total ?? f.unvalued;
  return `shortfalls ${usdWords(f.shortfalls.total)}, surpluses ${usdWords(f.surpluses.total)}, ${plural(none, 'open break')} without a USD figure`;
}
