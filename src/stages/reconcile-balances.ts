/** The reconcile's balance phase: which pairs of balance snapshots to roll forward, each pair's flows (fills by day,
 * deposits and withdrawals placed where their state changed, the fills stamped while a snapshot was fetched placed on
 * the side that balances), then the balance rules.
 */
import type { RollFigures } from '../rules/balance-roll.js';
import { BALANCE_ROLL, failingPairsOf } from '../rules/balance-roll.js';
import { placePayments } from '../rules/balance-placement.js';
import { checkBalances, type SnapshotPair } from '../rules/engine.js';
import type { BalanceSnapshot } from '../domain/index.js';
import { placeEdgeFills, type EdgePair } from '../rules/snapshot-edges.js';
import { dailyFlows, edgeFills, paymentHistories } from '../store/recon/balance-flows.js';
import { openBreakDetails } from '../store/recon/breaks.js';
import { closingsOfChangedFlows } from '../store/recon/changes.js';
import { balanceSnapshots } from '../store/recon/exchange-reads.js';
import type { ReconcileRun } from './reconcile-run.js';

type Header = { id: string; fetchedAt: Date };

export interface BalanceOutcome {
  balanceRoll: RollFigures[];
  /** The snapshots the balance rules used (the checked pairs' and the latest). */
  snapshotsUsed: number;
}

/** What the balance rules judge: the pairs to roll forward with their flows, and the latest snapshot. */
export interface BalanceReads {
  pairs: SnapshotPair[];
  latest: BalanceSnapshot | null;
  snapshotsUsed: number;
}

/** The balance phase's reads (store only, no verdict): the reconcile runs them beside the fills' pages. */
export async function readBalancePairs(run: ReconcileRun): Promise<BalanceReads> {
  const { db, headers } = run;
  const pairHeaders = await pairsToCheck(run);
  const latestHeader = headers[headers.length - 1];
  const needed = [
    ...new Map([...pairHeaders.flat(), ...(latestHeader ? [latestHeader] : [])].map((h) => [h.id, h])).values(),
  ];
  const snapshots = await balanceSnapshots(db, needed);
  const pairs = await pairFlows(run, pairHeaders, snapshots);
  const latest = latestHeader ? snapshots.get(latestHeader.id)! : null;
  return { pairs, latest, snapshotsUsed: needed.length };
}

/** The balance rules on what readBalancePairs read, after the record rules (the tally's order is the run's). */
export function checkBalancePairs(run: ReconcileRun, reads: BalanceReads): BalanceOutcome {
  const balanceRoll = checkBalances(run.tally, run.cfg, run.ref, reads.pairs, reads.latest).flat();
  return { balanceRoll, snapshotsUsed: reads.snapshotsUsed };
}

/**
 * Roll-forward: every consecutive pair whose closing snapshot is after the period start, always the latest pair (a run
 * for an old period still judges the current balances), every pair a changed flow falls into (a late fill or deposit,
 * by its time), and every pair that failed when last judged (it stays judged until it balances: its break never
 * resolves unseen).
 */
async function pairsToCheck(run: ReconcileRun): Promise<(readonly [Header, Header])[]> {
  const { db, account, headers, span } = run;
  const since = run.judgement.since;
  const changedClosings = await closingsOfChangedFlows(db, account, run.ctx.config.exchange.account, since);
  const failing = new Set(failingPairsOf(await openBreakDetails(db, account, BALANCE_ROLL)));
  const regular = (h: Header, i: number) => h.fetchedAt.getTime() > span.from.getTime() || i === headers.length - 1;
  return headers.flatMap((h, i) => {
    if (i === 0 || !(regular(h, i) || changedClosings === null || changedClosings.has(h.id) || failing.has(h.id)))
      return [];
    if (!regular(h, i)) run.outsidePeriod.balancePairs += 1;
    return [[headers[i - 1]!, h] as const];
  });
}

/** Each pair's flows, with its deposits and withdrawals and its snapshots' window fills placed. */
async function pairFlows(
  run: ReconcileRun,
  pairHeaders: readonly (readonly [Header, Header])[],
  snapshots: Awaited<ReturnType<typeof balanceSnapshots>>,
): Promise<SnapshotPair[]> {
  const { db, account, headers, cfg } = run;
  // Deposits and withdrawals move a balance when their state changes: each move is placed in the
  // pair of snapshots where its state was first observed (rules/balance-placement.ts, docs/rules.md).
  // The checked pairs are consecutive snapshots: every snapshot from the first pair's opening to the
  // last pair's closing bounds the placement, and pair (a, b) is placed[index of a among them].
  const series = pairHeaders.length
    ? headers.slice(headers.indexOf(pairHeaders[0]![0]), headers.indexOf(pairHeaders[pairHeaders.length - 1]![1]) + 1)
    : [];
  const placed = series.length
    ? placePayments(
        series.map((h) => h.fetchedAt),
        await paymentHistories(db, account, series[0]!.fetchedAt, series[series.length - 1]!.fetchedAt),
        run.ctx.config.exchange.withdrawalDebitStates,
      )
    : [];
  // Each pair's fills between the two snapshots' windows, and each snapshot's window fills (stamped between its
  // /accounts request and the answer), which rules/snapshot-edges.ts places on the side of the snapshot that balances.
  const flowOptions = { account, symbolsSnapshotId: run.symbolsSnapshotId, feeCurrency: cfg.feeCurrency };
  const edgePairs: EdgePair[] = [];
  for (const [a, b] of pairHeaders) {
    edgePairs.push({
      opening: snapshots.get(a.id)!,
      closing: snapshots.get(b.id)!,
      core: [...(await dailyFlows(db, a.id, b.id, flowOptions)), ...(placed[series.indexOf(a)] ?? [])],
    });
  }
  const edged = [...new Set(pairHeaders.flat())];
  const windows = await edgeFills(
    db,
    edged.map((h) => ({ id: h.id, previous: headers[headers.indexOf(h) - 1]?.id ?? null })),
    flowOptions,
  );
  const edges = placeEdgeFills(edgePairs, windows, cfg.balanceTolerance);
  if (edges.windowFills > 0)
    run.log.info(
      { account, windowFills: edges.windowFills, heldAfter: edges.heldAfter },
      'fills stamped while a balance snapshot was being fetched, placed on the side of it that balances',
    );
  return edgePairs.map((p, i) => ({ opening: p.opening, closing: p.closing, flows: edges.flows[i]! }));
}
