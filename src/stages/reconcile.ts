/** The reconcile stage: reads the period's stored records in pages, runs the rules, and records breaks and results on
 * the run. Its phases, in order: open (reference data, judgement), records (partner, exchange orders, fills, the
 * balance pairs' reads beside the fills), balances, payments and sync, lifecycle, write.
 */
import type { StageContext } from './context.js';
import type { Period } from '../domain/period.js';
import { listCursors, unsettledCoverage } from '../store/sync/cursors.js';
import { daysOf } from '../util/dates.js';
import type { RollFigures } from '../rules/balance-roll.js';
import { findRule, RULESET_VERSION } from '../rules/catalog.js';
import { checkPayments, checkSync, checkUnsyncedDays } from '../rules/engine.js';
import { breakId, type Break, type BreakEventKind } from '../domain/index.js';
import { applyLifecycle, type LifecycleResult } from '../rules/lifecycle.js';
import type { RuleResult } from '../rules/tally.js';
import { inScopeKeys, lateBreakFacts, previousBreaks } from '../store/recon/breaks.js';
import type { Judgement } from '../store/recon/changes.js';
import { countPeriod, type RunCounts } from '../store/recon/counts.js';
import {
  openDeposits,
  openWithdrawals,
  withdrawalsChangedOutside,
  withdrawalsIn,
} from '../store/recon/exchange-reads.js';
import { unresolvedQuarantine } from '../store/sync/quarantine.js';
import { recordReconcile } from '../store/runs/runs.js';
import { inTransaction } from '../store/db/database.js';
import { reopenChangedAcknowledgements } from '../workflow/index.js';
import type { DetectedBreak, LateBreak, Withdrawal } from '../domain/index.js';
import { checkBalancePairs, type BalanceOutcome } from './reconcile-balances.js';
import { checkRecords, webhookCutoff } from './reconcile-records.js';
import { openReconcile, RECONCILE_PAGE_SIZE, type ReconcileRun } from './reconcile-run.js';
import { closesToRecord, recordAdjustments } from './reconcile-closes.js';

export { engineConfig } from './reconcile-run.js';
export type { RunCounts } from '../store/recon/counts.js';

export interface ReconcileResult {
  runId: string;
  period: Period;
  counts: RunCounts;
  ruleResults: RuleResult[];
  /** Breaks this run detected (open now), and what the lifecycle did. */
  detected: number;
  lifecycle: Record<BreakEventKind, number>;
  balanceRoll: RollFigures[];
  ms: number;
  /**
   * Milliseconds per phase, for the run record and tuning (partner, exchangeOrders and fills overlap, balanceReads
   * beside fills: their own times).
   */
  phases: Record<string, number>;
  /**
   * What the run judged besides its period (docs/rules.md "What a run judges"): the changes the
   * snapshot `since` did not see (null: the account's first judgement, every stored record);
   * `until`, this run's own snapshot, is the next run's `since`; the records of other days judged.
   */
  judged: {
    since: string | null;
    until: string;
    outsidePeriod: { partnerOrders: number; withdrawals: number; balancePairs: number };
  };
  /** Breaks of earlier days this run opened, reopened or resolved because their records changed: late data. */
  late: LateBreak[];
}

/**
 * Checks the stored data for a period and records breaks (docs/rules.md). ctx.runId must be an existing `run` row; its
 * counts, rule_results, ruleset_version and cursors are written, and the roll-forward figures go to balance_roll.
 * Re-running it (same run or a later one) never duplicates a break.
 */
export async function reconcilePeriod(ctx: StageContext, period: Period): Promise<ReconcileResult> {
  const run = await openReconcile(ctx, period);
  const balanceReads = await checkRecords(run);
  const balances = checkBalancePairs(run, balanceReads);
  const sync = await checkPaymentsAndSync(run);
  run.clock.phase('balancesPaymentsSync');
  const detected = run.tally.breaks();
  const lifecycle = await judgeLifecycle(run, detected);
  const written = await writeReconcile(run, lifecycle, balances, sync);
  run.clock.phase('lifecycleAndWrite');
  const result: ReconcileResult = {
    runId: run.runId,
    period,
    ...written,
    detected: detected.length,
    lifecycle: lifecycle.counts,
    balanceRoll: balances.balanceRoll,
    ms: Date.now() - run.clock.started,
    phases: run.clock.phases,
    judged: { since: run.judgement.since, until: run.judgement.until, outsidePeriod: run.outsidePeriod },
  };
  const { counts, judged, late, ms, phases } = result;
  run.log.info(
    { counts, detected: detected.length, lifecycle: lifecycle.counts, judged, late: late.length, ms, phases },
    'reconciled',
  );
  return result;
}

/**
 * The payment rules (open deposits and withdrawals; the period's withdrawals and the changed ones), then the sync
 * rules (stored coverage and quarantine; the days of the period no sync covered). Returns what the run records of
 * them: the unresolved quarantine count and the cursors as judged.
 */
async function checkPaymentsAndSync(run: ReconcileRun): Promise<SyncOutcome> {
  const { db, account, span, tally, cfg, ref, period } = run;
  const periodWithdrawals: Withdrawal[] = [];
  const [deposits, withdrawals] = await Promise.all([
    openDeposits(db, account),
    openWithdrawals(db, account),
    (async () => {
      for await (const page of withdrawalsIn(db, account, span, RECONCILE_PAGE_SIZE)) periodWithdrawals.push(...page);
      const since = run.judgement.since;
      for await (const page of withdrawalsChangedOutside(db, account, span, since, RECONCILE_PAGE_SIZE)) {
        run.outsidePeriod.withdrawals += page.length;
        periodWithdrawals.push(...page);
      }
    })(),
  ]);
  checkPayments(tally, cfg, ref, { openDeposits: deposits, openWithdrawals: withdrawals, periodWithdrawals });

  const [cov, quarantined] = await Promise.all([unsettledCoverage(db, account), unresolvedQuarantine(db, account)]);
  checkSync(tally, cov.unsettled, quarantined, cov.total);
  const cursors = await listCursors(db, account);
  // Days of the period no sync covered have no row to be unsettled: each stream is asked how far it was read.
  checkUnsyncedDays(tally, cfg.now, daysOf(period), run.reach);
  return { quarantined: quarantined.length, cursors };
}

interface SyncOutcome {
  quarantined: number;
  cursors: Awaited<ReturnType<typeof listCursors>>;
}

/** What the detected breaks do to the stored ones: opened, seen, reopened, resolved (each rule's reach decides). */
async function judgeLifecycle(run: ReconcileRun, detected: DetectedBreak[]): Promise<LifecycleResult> {
  const { db, account, span, tally } = run;
  const previous = await previousBreaks(db, account, detected);
  const detectedIds = new Set(detected.map((d) => breakId(d.code, d.key)));
  const scoped = await inScopeKeys(
    db,
    account,
    span,
    previous.filter(
      (b) => b.status === 'open' && !detectedIds.has(breakId(b.code, b.key)) && findRule(b.code)?.reach === 'records',
    ),
    run.judgement.since,
  );
  return applyLifecycle({
    runId: run.runId,
    now: run.ctx.now,
    previous,
    detected,
    policy: {
      checked: (code) => tally.wasChecked(code),
      skipped: (code, key) => tally.skippedKeys(code).has(key),
      inScope: (code, key) => scoped.has(breakId(code, key)),
      // A rule of reach 'judged' (P_WEBHOOK_GAP): the orders it judged in this run, not the period's.
      judged: (code, key) => tally.wasJudged(code, key),
    },
  });
}

/**
 * The run's counts, rule results and late data, and one transaction that writes the breaks with their events, the
 * roll-forward figures, the cursors, the watermark and the closed periods' adjustments: a failed run leaves the breaks
 * as they were.
 */
async function writeReconcile(
  run: ReconcileRun,
  lifecycle: LifecycleResult,
  balances: BalanceOutcome,
  sync: SyncOutcome,
): Promise<{ counts: RunCounts; ruleResults: RuleResult[]; late: LateBreak[] }> {
  const { db, account, span, cfg, judgement } = run;
  const counts = await countPeriod(db, account, span, {
    partnerOrders: run.partnerOrders,
    quarantined: sync.quarantined,
    balanceSnapshots: balances.snapshotsUsed,
  });
  const ruleResults = run.tally.results();
  const late = await lateBreaks(run.ctx, span, judgement, lifecycle.upserts, lifecycle.events);
  const closes = await closesToRecord(run);
  await inTransaction(db, async (trx) => {
    await recordReconcile(trx, {
      runId: run.runId,
      account,
      upserts: lifecycle.upserts,
      events: lifecycle.events,
      balanceRoll: balances.balanceRoll,
      counts,
      ruleResults,
      rulesetVersion: RULESET_VERSION,
      cursors: sync.cursors,
      webhookJudgement: cfg.webhooksEnabled ? { cutoff: webhookCutoff(run), now: run.ctx.now } : null,
      judgement,
      late,
    });
    // In the same transaction: no run can show a break as explained on amounts nobody accepted. Every written break
    // has its event, all of this run: amounts change only through them.
    const first = lifecycle.events[0];
    if (first) await reopenChangedAcknowledgements(trx, account, first.runId, first.at);
    // Last: it prints times in UTC for the rest of the transaction (the signed documents' form).
    await recordAdjustments(trx, run, closes);
  });
  return { counts, ruleResults, late };
}

/**
 * The lifecycle events of this run (opened, reopened, resolved) on breaks whose record lies on an
 * earlier day and changed since the account was last judged: what late data changed about earlier
 * days (the Summary, the e-mail and the JSON summary name them; the Breaks sheet marks them).
 */
async function lateBreaks(
  ctx: StageContext,
  span: { from: Date; to: Date },
  judgement: Judgement,
  upserts: readonly Pick<Break, 'code' | 'key' | 'entity' | 'day' | 'severity' | 'message'>[],
  events: readonly { code: string; key: string; event: BreakEventKind }[],
): Promise<LateBreak[]> {
  if (judgement.since === null) return [];
  const eventOf = new Map(events.filter((e) => e.event !== 'seen').map((e) => [breakId(e.code, e.key), e.event]));
  const moved = upserts.filter((b) => eventOf.has(breakId(b.code, b.key)));
  const breakOf = new Map(moved.map((b) => [breakId(b.code, b.key), b]));
  const facts = await lateBreakFacts(ctx.store.db, ctx.config.account, span, judgement.since, moved);
  return facts.map((f) => {
    const b = breakOf.get(breakId(f.code, f.key));
    return {
      code: f.code,
      key: f.key,
      day: f.day,
      event: eventOf.get(breakId(f.code, f.key)) as LateBreak['event'],
      severity: b?.severity ?? '',
      message: b?.message ?? null,
    };
  });
}
