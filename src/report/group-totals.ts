/** The group's totals: the sums over the accounts whose run completed, and the words that name every account left out,
 * so a total never passes for the whole group's when an account failed, never ran or is still running.
 */
import { Decimal } from '../decimal/decimal.js';
import type { DigestFigures, MoneyAtStakeFigures, OpenBreakCounts } from '../domain/index.js';
import { sumStakeFigures } from './money-at-stake.js';

/** What the totals need of an account (a GroupAccount). */
export interface Totalled {
  account: string;
  state: 'reconciled' | 'breaks' | 'failed' | 'not run';
  /** Its batch status: tells an account still running (a report at the deadline) from one that never started. */
  status: 'pending' | 'running' | 'succeeded' | 'failed';
  counts: OpenBreakCounts | null;
  digest: { figures?: DigestFigures } | null;
}

export interface GroupTotals {
  /** "Total of 2 of 3 accounts (beta failed: left out)"; "Total of all 3 accounts". */
  label: string;
  /** The accounts summed, in order. */
  counted: string[];
  /** Each account left out of every sum, and why ("failed", "not run", "still running", "not started"). */
  leftOut: Array<{ account: string; why: string }>;
  /** Counted accounts without money figures (a digest written before they were stored): left out of the USD sums. */
  noFigures: string[];
  /** Counted accounts with figures but no closing balance in USD (no balance snapshot): left out of that sum. */
  noClosing: string[];
  /** Null when no account is counted: no sum is shown rather than a zero that looks like a clean group. */
  openBreaks: number | null;
  high: number | null;
  medium: number | null;
  low: number | null;
  unexplained: number | null;
  /** Exact decimal text, at least 2 decimals: the absolute impacts (the first figure stored; kept for readers of it). */
  moneyAtStake: string | null;
  /** The money at stake summed over the counted accounts with figures (money-at-stake.ts); null without them all. */
  stake: MoneyAtStakeFigures | null;
  closingUsd: string | null;
}

function whyLeftOut(a: Totalled): string {
  if (a.state === 'failed') return 'failed';
  if (a.status === 'running') return 'still running';
  if (a.status === 'pending') return 'not started';
  return 'not run';
}

/** Sums over the accounts whose run completed (reconciled or with breaks); every other account is named. */
export function groupTotals(accounts: readonly Totalled[]): GroupTotals {
  const counted = accounts.filter((a) => (a.state === 'reconciled' || a.state === 'breaks') && a.counts);
  const leftOut = accounts.filter((a) => !counted.includes(a)).map((a) => ({ account: a.account, why: whyLeftOut(a) }));
  const noFigures = counted.filter((a) => !a.digest?.figures).map((a) => a.account);
  const noClosing = counted
    .filter((a) => a.digest?.figures && a.digest.figures.closingUsd === null)
    .map((a) => a.account);
  const sum = (of: (c: OpenBreakCounts) => number) =>
    counted.length ? counted.reduce((n, a) => n + of(a.counts!), 0) : null;
  const usd = (of: (f: DigestFigures) => string | null) => {
    const figures = counted.flatMap((a) => (a.digest?.figures ? [a.digest.figures] : []));
    if (!figures.length) return null;
    const total = figures.reduce((t, f) => t.plus(of(f) ?? 0), new Decimal(0));
    // exact: the workbook shows 2 decimals and keeps the rest in its exact values, as on each account's line
    return total.decimalPlaces() < 2 ? total.toFixed(2) : total.toFixed();
  };
  return {
    label: totalLabel(accounts.length, counted.length, leftOut, noFigures, noClosing),
    counted: counted.map((a) => a.account),
    leftOut,
    noFigures,
    noClosing,
    openBreaks: sum((c) => c.total),
    high: sum((c) => c.severity.high.total),
    medium: sum((c) => c.severity.medium.total),
    low: sum((c) => c.severity.low.total),
    unexplained: sum((c) => c.total - (c.explained ?? 0)),
    moneyAtStake: usd((f) => f.moneyAtStake.total),
    stake: sumStakeFigures(counted.flatMap((a) => (a.digest?.figures ? [a.digest.figures.moneyAtStake] : []))),
    closingUsd: usd((f) => f.closingUsd),
  };
}

function totalLabel(
  all: number,
  counted: number,
  leftOut: GroupTotals['leftOut'],
  noFigures: readonly string[],
  noClosing: readonly string[],
): string {
  const of = counted !== all ? `${counted} of ${all}` : all === 1 ? 'the 1' : `all ${all}`;
  const notes = [
    ...(leftOut.length ? [`${leftOut.map((l) => `${l.account} ${l.why}`).join(', ')}: left out`] : []),
    ...(noFigures.length ? [`${noFigures.join(', ')}: no USD figures, left out of the USD sums`] : []),
    ...(noClosing.length ? [`${noClosing.join(', ')}: no closing balance, left out of the closing sum`] : []),
  ];
  return `Total of ${of} account${all === 1 ? '' : 's'}${notes.length ? ` (${notes.join('; ')})` : ''}`;
}
