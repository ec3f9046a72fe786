/** The fills at a balance snapshot's edge (stamped while it was fetched), placed on the side of it that balances.
 *
 * The exchange takes the balances of `/accounts` at some instant between our request and its answer, which no field
 * of the answer gives. A fill stamped inside that window (on a busy account: a few) may be in the snapshot or not.
 * Since the exchange's balance is as of one instant, the fills it holds are a prefix, in time order, of the window's
 * fills. Each snapshot's cut is chosen once, for the series of consecutive pairs being judged, so that as few of the
 * pairs' currencies as possible are out of balance (each fill then counts in exactly one pair): counted by currency,
 * not by pair, so that a pair out of balance in one currency (a real break) still places the window's fills of the
 * others where they balance. Where nothing decides, a cut counts every window fill before the snapshot, as a snapshot
 * stamped when its answer arrived always did.
 */
import { ZERO, type Decimal } from '../decimal/decimal.js';
import type { BalanceSnapshot, DayFlows, EdgeFill } from '../domain/index.js';

export interface EdgePair {
  opening: BalanceSnapshot;
  closing: BalanceSnapshot;
  /** Every flow strictly between the opening's window and the closing's. */
  core: readonly DayFlows[];
}

/**
 * A window with more fills than this is not searched (the search costs the product of two neighbouring windows'
 * sizes): its fills count before the snapshot. Only a request that took very long on a very busy account has one.
 */
export const MAX_EDGE_FILLS = 400;

type Nets = Map<string, Decimal>;

const netOf = (f: DayFlows): Decimal => f.deposits.minus(f.withdrawals).plus(f.bought).minus(f.sold).minus(f.fees);

function addNets(into: Nets, flows: readonly DayFlows[], sign = 1): void {
  for (const f of flows) {
    const n = netOf(f);
    into.set(f.currency, (into.get(f.currency) ?? ZERO).plus(sign < 0 ? n.neg() : n));
  }
}

/** prefix[k]: the net per currency of the window's first k fills. */
function prefixNets(edge: readonly EdgeFill[]): Nets[] {
  const out: Nets[] = [new Map()];
  for (const fill of edge) {
    const next = new Map(out[out.length - 1]!);
    addNets(next, fill.moves);
    out.push(next);
  }
  return out;
}

/**
 * Each pair's flows: its core, the opening window's fills after the opening's cut and the closing window's fills
 * up to the closing's cut; with how many fills the windows held and how many of them were placed after their
 * snapshot. `edges` holds each snapshot's window fills in time order (a snapshot without any is
 * absent). Pairs are oldest first; a pair whose opening is the previous pair's closing shares that snapshot's cut.
 */
export function placeEdgeFills(
  pairs: readonly EdgePair[],
  edges: ReadonlyMap<string, readonly EdgeFill[]>,
  tolerance: Decimal,
): { flows: DayFlows[][]; windowFills: number; heldAfter: number } {
  const searched = (id: string): readonly EdgeFill[] => {
    const e = edges.get(id) ?? [];
    return e.length > MAX_EDGE_FILLS ? [] : e;
  };
  const out: DayFlows[][] = [];
  let windowFills = 0;
  let heldAfter = 0;
  let start = 0;
  while (start < pairs.length) {
    let end = start + 1;
    while (end < pairs.length && pairs[end]!.opening.id === pairs[end - 1]!.closing.id) end++;
    const chain = pairs.slice(start, end);
    const snapshots = [chain[0]!.opening, ...chain.map((p) => p.closing)];
    const windows = snapshots.map((s) => searched(s.id));
    const cuts = chooseCuts(chain, windows, tolerance);
    snapshots.forEach((s, i) => {
      const all = edges.get(s.id)?.length ?? 0;
      windowFills += all;
      if (windows[i]!.length) heldAfter += all - cuts[i]!;
    });
    chain.forEach((p, j) => {
      const before = edges.get(p.opening.id) ?? [];
      const after = edges.get(p.closing.id) ?? [];
      // An unsearched window counts wholly before its snapshot: none after the opening, all up to the closing.
      const from = windows[j]!.length ? cuts[j]! : before.length;
      const to = windows[j + 1]!.length ? cuts[j + 1]! : after.length;
      out.push([
        ...p.core,
        ...before.slice(from).flatMap((f) => f.moves),
        ...after.slice(0, to).flatMap((f) => f.moves),
      ]);
    });
    start = end;
  }
  return { flows: out, windowFills, heldAfter };
}

/** [pairs' currencies out of balance, window fills moved after their snapshot]: smaller is better, in that order. */
type Cost = [number, number];
const better = (a: Cost, b: Cost): boolean => a[0] < b[0] || (a[0] === b[0] && a[1] < b[1]);

/**
 * The cut of every snapshot of a chain (how many of its window's fills it holds), by dynamic programming over the
 * chain: the fewest currencies out of balance over its pairs, then the fewest fills moved after their snapshot's answer.
 */
function chooseCuts(
  chain: readonly EdgePair[],
  windows: readonly (readonly EdgeFill[])[],
  tolerance: Decimal,
): number[] {
  const prefixes = windows.map(prefixNets);
  let best: Cost[] = prefixes[0]!.map((_, k) => [0, windows[0]!.length - k]);
  const back: number[][] = [];
  chain.forEach((pair, j) => {
    const before = prefixes[j]!;
    const after = prefixes[j + 1]!;
    // What the closing holds beyond the opening and the core flows; the windows' fills must make it up.
    const base: Nets = new Map();
    for (const b of pair.closing.balances) base.set(b.currency, b.balance);
    for (const b of pair.opening.balances) base.set(b.currency, (base.get(b.currency) ?? ZERO).minus(b.balance));
    addNets(base, pair.core, -1);
    const beforeAll = before[before.length - 1]!;
    const currencies = new Set([...base.keys(), ...beforeAll.keys(), ...after[after.length - 1]!.keys()]);
    const unbalanced = (ka: number, kb: number): number => {
      let out = 0;
      for (const c of currencies) {
        const residual = (base.get(c) ?? ZERO)
          .minus((beforeAll.get(c) ?? ZERO).minus(before[ka]!.get(c) ?? ZERO))
          .minus(after[kb]!.get(c) ?? ZERO);
        if (residual.abs().gt(tolerance)) out++;
      }
      return out;
    };
    const next: Cost[] = [];
    const from: number[] = [];
    for (let kb = 0; kb < after.length; kb++) {
      let choice = -1;
      let cost: Cost = [Infinity, Infinity];
      // From the cut that counts every fill before the opening down: on a tie, the one nearest that.
      for (let ka = before.length - 1; ka >= 0; ka--) {
        const c: Cost = [best[ka]![0] + unbalanced(ka, kb), best[ka]![1] + (after.length - 1 - kb)];
        if (better(c, cost)) [cost, choice] = [c, ka];
      }
      next.push(cost);
      from.push(choice);
    }
    best = next;
    back.push(from);
  });
  // From the highest cut down, moving only to a strictly better one: on a tie, the highest.
  let k = best.length - 1;
  for (let i = k - 1; i >= 0; i--) if (better(best[i]!, best[k]!)) k = i;
  const cuts = [k];
  for (let j = back.length - 1; j >= 0; j--) cuts.unshift((k = back[j]![k]!));
  return cuts;
}
