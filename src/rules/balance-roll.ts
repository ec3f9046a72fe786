/** The balance roll-forward: each currency's opening balance plus the period's flows against the closing snapshot
 * (E_BALANCE_ROLL, E_BALANCE_SANITY).
 */
import { Decimal, ZERO, decimalText } from '../decimal/decimal.js';
import type { BalanceLine, BalanceSnapshot, DayFlows, RollFigures } from '../domain/index.js';

export type { DayFlows, DerivedDay, RollFigures } from '../domain/index.js';
import type { Failure, Finding, Verdict } from './types.js';

const net = (f: Pick<DayFlows, 'deposits' | 'withdrawals' | 'bought' | 'sold' | 'fees'>) =>
  f.deposits.minus(f.withdrawals).plus(f.bought).minus(f.sold).minus(f.fees);

function dayOf(d: Date): string {
  return d.toISOString().slice(0, 10);
}

function daysBetween(from: string, to: string): string[] {
  const out: string[] = [];
  for (let t = Date.parse(`${from}T00:00:00Z`); t <= Date.parse(`${to}T00:00:00Z`); t += 86_400_000)
    out.push(new Date(t).toISOString().slice(0, 10));
  return out;
}

/**
 * Rolls every currency present in either snapshot (or moved by a flow) from s1 to s2.
 * A currency absent from a snapshot has a balance of 0 there.
 */
export function rollForward(
  s1: BalanceSnapshot,
  s2: BalanceSnapshot,
  flows: readonly DayFlows[],
  tolerance: Decimal,
): RollFigures[] {
  const opening = new Map(s1.balances.map((b) => [b.currency, b.balance]));
  const closing = new Map(s2.balances.map((b) => [b.currency, b.balance]));
  const currencies = new Set([...opening.keys(), ...closing.keys(), ...flows.map((f) => f.currency)]);
  const days = daysBetween(dayOf(s1.fetchedAt), dayOf(s2.fetchedAt));
  const figures: RollFigures[] = [];
  for (const currency of [...currencies].sort()) {
    const mine = flows.filter((f) => f.currency === currency);
    const sum = (k: 'deposits' | 'withdrawals' | 'bought' | 'sold' | 'fees') =>
      mine.reduce((a, f) => a.plus(f[k]), ZERO);
    const totals = {
      deposits: sum('deposits'),
      withdrawals: sum('withdrawals'),
      bought: sum('bought'),
      sold: sum('sold'),
      fees: sum('fees'),
    };
    const byState = {
      depositsByState: mine.reduce((a, f) => a.plus(f.depositsByState ?? ZERO), ZERO),
      withdrawalsByState: mine.reduce((a, f) => a.plus(f.withdrawalsByState ?? ZERO), ZERO),
    };
    const open = opening.get(currency) ?? ZERO;
    const actual = closing.get(currency) ?? ZERO;
    const expected = open.plus(net(totals));
    const residual = actual.minus(expected);
    const netByDay = new Map<string, Decimal>();
    for (const f of mine) netByDay.set(f.day, (netByDay.get(f.day) ?? ZERO).plus(net(f)));
    const derived = deriveBackwards(days, netByDay, actual);
    figures.push({
      currency,
      openingSnapshotId: s1.id,
      closingSnapshotId: s2.id,
      openingAt: s1.fetchedAt,
      closingAt: s2.fetchedAt,
      opening: open,
      ...totals,
      ...byState,
      expectedClosing: expected,
      actualClosing: actual,
      residual,
      firstDivergentDay: residual.abs().gt(tolerance) ? firstDivergentDay(days, netByDay, open, derived) : null,
      days: derived.map((d) => ({ day: d.day, net: decimalText(d.net), derivedClosing: decimalText(d.closing) })),
    });
  }
  return figures;
}

function deriveBackwards(
  days: string[],
  netByDay: Map<string, Decimal>,
  closing: Decimal,
): { day: string; net: Decimal; closing: Decimal }[] {
  const out: { day: string; net: Decimal; closing: Decimal }[] = [];
  let balance = closing;
  for (let i = days.length - 1; i >= 0; i--) {
    const day = days[i]!;
    const n = netByDay.get(day) ?? ZERO;
    out.push({ day, net: n, closing: balance });
    balance = balance.minus(n);
  }
  return out.reverse();
}

/**
 * Two anchors cannot say *where* in between a residual arose, but a balance can never be
 * negative. Rolled forward from s1, a negative end-of-day balance means an inflow up to that day
 * is missing (or an outflow counted too much): that day. Derived backwards from s2, a negative
 * end-of-day balance means the recorded flows after that day are wrong: the day after it.
 * Otherwise the first day of the pair (with nightly snapshots, a pair spans one day).
 */
export function firstDivergentDay(
  days: string[],
  netByDay: Map<string, Decimal>,
  opening: Decimal,
  backwards: { day: string; closing: Decimal }[],
): string | null {
  let forward = opening;
  for (const day of days) {
    forward = forward.plus(netByDay.get(day) ?? ZERO);
    if (forward.isNegative() && !forward.isZero()) return day;
  }
  for (let i = backwards.length - 1; i >= 0; i--) {
    const b = backwards[i]!;
    if (b.closing.isNegative() && !b.closing.isZero()) return backwards[i + 1]?.day ?? b.day;
  }
  return days[0] ?? null;
}

/** "2026-11-24 23:59:58 UTC": a snapshot's time in a break's words. */
function snapshotTime(at: Date): string {
  return `${at.toISOString().slice(0, 19).replace('T', ' ')} UTC`;
}

/** The roll-forward's rule: the stage reads its open breaks' failing pairs back (failingPairsOf). */
export const BALANCE_ROLL = 'E_BALANCE_ROLL';

/**
 * One E_BALANCE_ROLL break per currency: the most recent failing pair's figures, every failing
 * pair in detail (its words in `checks`, its snapshots in `pairs`: failingPairsOf reads them back).
 * pairs are the figures of all checked pairs, oldest first.
 */
export function balanceRollFindings(pairs: readonly RollFigures[][], tolerance: Decimal): Finding[] {
  const failing = new Map<string, RollFigures[]>();
  for (const pair of pairs)
    for (const f of pair)
      if (f.residual.abs().gt(tolerance)) failing.set(f.currency, [...(failing.get(f.currency) ?? []), f]);
  const findings: Finding[] = [];
  for (const [currency, list] of failing) {
    const last = list[list.length - 1]!;
    const failures: Failure[] = [...list].reverse().map((f) => ({
      // the snapshots by their times: their ids count every snapshot stored, not the ones the reader sees
      check: `residual ${decimalText(f.residual)} between the snapshot of ${snapshotTime(f.openingAt)} and that of ${snapshotTime(f.closingAt)}, first divergent day ${f.firstDivergentDay}`,
      expected: f.expectedClosing,
      actual: f.actualClosing,
      difference: f.residual,
      currency,
    }));
    // pairs: the failing pairs by their snapshots, so that later runs judge them again until they balance.
    const pairs = list.map((f) => ({ opening: f.openingSnapshotId, closing: f.closingSnapshotId }));
    // The break's day: where its latest failing pair went wrong (docs/rules.md "This period or carried over").
    findings.push({
      key: currency,
      failures,
      currency,
      extras: {
        day: last.firstDivergentDay,
        detail: {
          firstDivergentDay: list[0]!.firstDivergentDay,
          latestPairFirstDivergentDay: last.firstDivergentDay,
          pairs,
        },
      },
    });
  }
  return findings;
}

/** E_BALANCE_SANITY on one line of the latest snapshot. */
export function checkBalanceSanity(b: BalanceLine, localTolerance: Decimal): Verdict {
  const failures: Failure[] = [];
  if (b.available.gt(b.balance))
    failures.push({
      check: 'available above balance',
      expected: b.balance,
      actual: b.available,
      difference: b.available.minus(b.balance),
    });
  const local = b.balance.times(b.rate);
  if (b.balanceLocal.minus(local).abs().gt(localTolerance))
    failures.push({
      check: 'balance_local != balance x rate',
      expected: local,
      actual: b.balanceLocal,
      difference: b.balanceLocal.minus(local),
      // The exchange's local currency, assumed USD (the Summary states the assumption).
      currency: 'USD',
      note: 'local currency',
    });
  return failures;
}

/**
 * The closing snapshots of the failing pairs an open E_BALANCE_ROLL break records (its detail's
 * `pairs`): a pair that failed stays judged on every run until it balances, so its break is never
 * resolved by a run that simply stopped looking at it. Details written before `pairs` existed give none.
 */
export function failingPairsOf(details: readonly unknown[]): string[] {
  const out: string[] = [];
  for (const d of details) {
    const pairs = (d as { pairs?: unknown } | null)?.pairs;
    if (!Array.isArray(pairs)) continue;
    for (const p of pairs) {
      const closing = (p as { closing?: unknown } | null)?.closing;
      if (typeof closing === 'string') out.push(closing);
      else if (closing !== null && typeof closing === 'object' && 'value' in closing)
        out.push(String((closing as { value: unknown }).value));
    }
  }
  return out;
}
