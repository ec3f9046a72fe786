/** The reconcile stage: reads the period's stored records in pages, runs the rules, and records breaks and results on
 * the run.
 */
import { toDecimal } from '../decimal/decimal.js';
import type { StageContext } from './context.js';
import type { Period } from '../domain/period.js';
import { listCursors, unsettledCoverage } from '../store/cursors.js';
import { sourcesReach } from '../sources/index.js';
import { daysOf } from '../util/dates.js';
import type { RollFigures } from '../rules/balance-roll.js';
import { findRule, RULESET_VERSION } from '../rules/catalog.js';
import { BALANCE_ROLL, failingPairsOf } from '../rules/balance-roll.js';
import { ourAddresses } from '../rules/cross-rules.js';
import { WEBHOOK_GAP, WEBHOOK_RETRY_MS } from '../rules/partner-rules.js';
import {
  addPassedFills,
  addPassedOrders,
  checkBalances,
  checkExchangeOrders,
  checkFills,
  checkOpenOrders,
  fillPrefilter,
  orderPrefilter,
  checkPartnerBatch,
  checkPayments,
  checkSync,
  checkUnsyncedDays,
  checkWebhookGaps,
  finishWebhookGaps,
  markNotChecked,
  type EngineConfig,
  type ReferenceData,
  type SnapshotPair,
} from '../rules/engine.js';
import { breakId, type Break, type BreakEventKind } from '../domain/index.js';
import { applyLifecycle } from '../rules/lifecycle.js';
import { RuleTally, type RuleResult } from '../rules/tally.js';
import { dailyFlows, edgeFills, paymentHistories } from '../store/balance-flows.js';
import { placeEdgeFills, type EdgePair } from '../rules/snapshot-edges.js';
import { placePayments } from '../rules/balance-placement.js';
import { inScopeKeys, lateBreakFacts, openBreakDetails, previousBreaks } from '../store/breaks.js';
import { closingsOfChangedFlows, judgedFillTimeRange, openJudgement, type Judgement } from '../store/changes.js';
import { countPeriod, type RunCounts } from '../store/counts.js';
import { spanOf } from '../store/keyset.js';
import {
  openPartnerOrders,
  partnerOrdersByTxHash,
  partnerOrdersChangedOutside,
  partnerOrdersCreatedIn,
  webhookEventsByOrder,
} from '../store/partner-reads.js';
import {
  balanceSnapshotHeaders,
  balanceSnapshots,
  depositAddresses,
  depositsByTxHash,
  exchangeOrderCandidatesIn,
  fillCandidatesIn,
  fillIdHalves,
  SCAN_SIZE,
  openDeposits,
  openWithdrawals,
  withdrawalsChangedOutside,
  withdrawalsIn,
} from '../store/exchange-reads.js';
import { feeSchedule, latestCurrencies, latestSymbols, latestWhitelist } from '../store/snapshots.js';
import { unresolvedQuarantine } from '../store/quarantine.js';
import { webhookGapCandidates } from '../store/webhook-judgements.js';
import { recordReconcile } from '../store/runs.js';
import { inTransaction } from '../store/database.js';
import { refreshPlannerStatistics } from '../store/statistics.js';
import { reopenChangedAcknowledgements } from '../workflow/index.js';
import type { LateBreak, PartnerOrder, Withdrawal } from '../domain/index.js';
import { addDays, dayStart } from '../util/dates.js';
import { allSettledOrThrow, sideBySideInOrder } from '../util/side-by-side.js';

/**
 * Rows per page of the period's orders and withdrawals: the rules drop a page as soon as they have checked it, so
 * reconcile
 * reads bigger pages than the workbook (keyset.ts PAGE_SIZE).
 */
const RECONCILE_PAGE_SIZE = 5_000;

export type { RunCounts } from '../store/counts.js';

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
  /** Milliseconds per phase, for the run record and tuning (partner, exchangeOrders and fills overlap: their own times). */
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

/** Config as the pure rules want it (documented defaults come from the zod schema). */
export function engineConfig(ctx: StageContext): EngineConfig {
  const c = ctx.config;
  return {
    now: ctx.now,
    usdTolerance: toDecimal(c.tolerances.usd),
    partnerFeeRate: c.partner.feeRate ? toDecimal(c.partner.feeRate) : null,
    webhooksEnabled: c.webhooks !== undefined,
    staleAfterHours: { ...c.staleAfterHours },
    feeCurrency: c.exchange.feeCurrency,
    exchangeFeeTolerance: c.tolerances.exchangeFee ? toDecimal(c.tolerances.exchangeFee) : null,
    balanceTolerance: toDecimal(c.tolerances.balance),
    balanceLocalTolerance: toDecimal(c.tolerances.balanceLocal),
  };
}

/**
 * Checks the stored data for a period and records breaks (docs/rules.md,
 * docs/rules.md). ctx.runId must be an existing `run` row; its counts, rule_results,
 * ruleset_version and cursors are written, and the roll-forward figures go to balance_roll.
 * Re-running it (same run or a later one) never duplicates a break.
 */
export async function reconcilePeriod(ctx: StageContext, period: Period): Promise<ReconcileResult> {
  const started = Date.now();
  const runId = ctx.runId;
  if (!runId) throw new Error('reconcilePeriod needs ctx.runId (create the run with createRun first)');
  const db = ctx.store.db;
  const account = ctx.config.account;
  const log = ctx.logger.child({ stage: 'reconcile', runId, period });
  const span = spanOf(period);
  const cfg = engineConfig(ctx);
  const tally = new RuleTally();
  const phases: Record<string, number> = {};
  let mark = Date.now();
  const phase = (name: string) => {
    const t = Date.now();
    phases[name] = t - mark;
    mark = t;
  };
  /** A phase that runs beside others: its own wall time. */
  const timed = async (name: string, fn: () => Promise<void>) => {
    const t = Date.now();
    await fn();
    phases[name] = Date.now() - t;
  };

  // The period's scans are planned on the statistics of what the syncs stored.
  const analyzed = await refreshPlannerStatistics(db, account);
  if (analyzed.length) log.debug({ tables: analyzed }, 'planner statistics refreshed');
  // Read before any record: every change committed from here on is the next run's to judge.
  const judgement = await openJudgement(db, account);
  if (judgement.reset) log.warn(judgement.reset);
  const since = judgement.since;
  const outsidePeriod = { partnerOrders: 0, withdrawals: 0, balancePairs: 0 };

  const [currencies, symbols, fees, whitelist, headers] = await Promise.all([
    latestCurrencies(db, account),
    latestSymbols(db, account),
    feeSchedule(db, account),
    latestWhitelist(db, account),
    balanceSnapshotHeaders(db, account, ctx.config.exchange.account),
  ]);
  const ref: ReferenceData = {
    currencies,
    symbols: symbols?.symbols ?? null,
    fees,
    whitelist,
    balanceSnapshotCount: headers.length,
  };
  markNotChecked(tally, cfg, ref);

  // The partner scans and the exchange scans read the store independently and add verdicts of
  // different rules to the tally: the two run side by side, each on a session of its own on a
  // Postgres server, so the fills' SQL pre-selection does not wait for the partner rules' client
  // work. Each phase's time is its own.
  let partnerOrders = 0;
  const webhookCutoff = new Date(cfg.now.getTime() - WEBHOOK_RETRY_MS);
  const partnerPhase = async () => {
    // Partner and cross-system rules, streamed by keyset over orders created in the period.
    const ours = ourAddresses(ctx.config.partner.wallets, await depositAddresses(db, account));
    const checkOrders = async (orders: readonly PartnerOrder[]) => {
      const hashes = [...new Set(orders.flatMap((o) => (o.transactionHash ? [o.transactionHash] : [])))];
      const [depositsByTx, claimantsByTx] = await Promise.all([
        depositsByTxHash(db, account, hashes),
        partnerOrdersByTxHash(db, account, hashes),
      ]);
      checkPartnerBatch(tally, cfg, ref, { orders, depositsByTx, ourAddresses: ours, claimantsByTx });
    };
    for await (const orders of partnerOrdersCreatedIn(db, account, span, RECONCILE_PAGE_SIZE)) {
      partnerOrders += orders.length;
      await checkOrders(orders);
    }
    // Orders of other days that changed (or whose deposit match did) since the account was last judged.
    for await (const orders of partnerOrdersChangedOutside(db, account, span, since, RECONCILE_PAGE_SIZE)) {
      outsidePeriod.partnerOrders += orders.length;
      await checkOrders(orders);
    }
    // P_WEBHOOK_GAP: every settled order once its last state change is past the retry window, in
    // the first run where that holds, whatever its creation day (and again while its break is open).
    if (cfg.webhooksEnabled) {
      let judged = 0;
      for await (const orders of webhookGapCandidates(
        db,
        account,
        WEBHOOK_GAP,
        webhookCutoff,
        runId,
        RECONCILE_PAGE_SIZE,
        since,
      )) {
        const events = await webhookEventsByOrder(
          db,
          account,
          orders.map((o) => o.orderId),
        );
        judged += checkWebhookGaps(tally, cfg, orders, events).length;
      }
      finishWebhookGaps(tally, cfg, judged);
    }
    checkOpenOrders(tally, cfg, await openPartnerOrders(db, account));
  };
  const exchangeOrdersPhase = async () => {
    // Likewise only the orders that could fail an order rule (sums of all their fills in SQL).
    for await (const page of exchangeOrderCandidatesIn(db, account, span, orderPrefilter(ref), undefined, since)) {
      checkExchangeOrders(tally, ref, page.orders);
      addPassedOrders(tally, ref, page.passed, page.passedWithAvgPx);
    }
  };
  const fillsPhase = async () => {
    // Only the fills that could fail a per-fill rule are loaded (SQL numeric pre-selection); the
    // rules decide on those, and the others count as checked and passed.
    // The fee rates the SQL prefilter compares with cover the days of the changed fills too.
    const changedFills = await judgedFillTimeRange(db, account, since);
    const rateSpan = changedFills
      ? {
          from: new Date(Math.min(span.from.getTime(), dayStart(changedFills.from).getTime())),
          to: new Date(Math.max(span.to.getTime(), dayStart(addDays(changedFills.to, 1)).getTime())),
        }
      : span;
    const filter = fillPrefilter(cfg, ref, rateSpan);
    // Judging every stored fill (a first run: a million of them) is Postgres's work alone, on one session while the
    // client waits: on a server the two halves of the id range are scanned side by side, their pages judged in id
    // order as one scan would give them (a later verdict on a key adds to the earlier ones in that order).
    const halves = since === null && ctx.store.kind === 'postgres' ? await fillIdHalves(db, account) : null;
    const pages = halves
      ? sideBySideInOrder(
          halves.map((bounds) => fillCandidatesIn(db, account, span, filter, SCAN_SIZE, since, bounds)),
          (page) => page.fills.length,
          SCAN_SIZE,
        )
      : fillCandidatesIn(db, account, span, filter, SCAN_SIZE, since);
    for await (const page of pages) {
      checkFills(tally, cfg, ref, page.fills);
      addPassedFills(tally, ref, page.scanned - page.fills.length);
    }
  };
  phase('statisticsAndReference');
  // All settle before a failure is thrown: no read of this reconcile still runs when its stage is recorded. The
  // exchange orders go before the fills: E_SYMBOL_RULES hears from both, and a key's failures read in that order.
  await allSettledOrThrow([
    timed('partner', partnerPhase),
    (async () => {
      await timed('exchangeOrders', exchangeOrdersPhase);
      await timed('fills', fillsPhase);
    })(),
  ]);
  mark = Date.now();

  // Roll-forward: every consecutive pair whose closing snapshot is after the period start, always
  // the latest pair (a run for an old period still judges the current balances), every pair a
  // changed flow falls into (a late fill or deposit, by its time), and every pair that failed when
  // last judged (it stays judged until it balances: its break never resolves unseen).
  const changedClosings = await closingsOfChangedFlows(db, account, ctx.config.exchange.account, since);
  const failing = new Set(failingPairsOf(await openBreakDetails(db, account, BALANCE_ROLL)));
  const regular = (h: { fetchedAt: Date }, i: number) =>
    h.fetchedAt.getTime() > span.from.getTime() || i === headers.length - 1;
  const pairHeaders = headers.flatMap((h, i) => {
    if (i === 0 || !(regular(h, i) || changedClosings === null || changedClosings.has(h.id) || failing.has(h.id)))
      return [];
    if (!regular(h, i)) outsidePeriod.balancePairs += 1;
    return [[headers[i - 1]!, h] as const];
  });
  const latestHeader = headers[headers.length - 1];
  const needed = [
    ...new Map([...pairHeaders.flat(), ...(latestHeader ? [latestHeader] : [])].map((h) => [h.id, h])).values(),
  ];
  const snapshots = await balanceSnapshots(db, needed);
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
        ctx.config.exchange.withdrawalDebitStates,
      )
    : [];
  // Each pair's fills between the two snapshots' windows, and each snapshot's window fills (stamped between its
  // /accounts request and the answer), which rules/snapshot-edges.ts places on the side of the snapshot that balances.
  const flowOptions = { account, symbolsSnapshotId: symbols?.snapshotId ?? null, feeCurrency: cfg.feeCurrency };
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
    log.info(
      { account, windowFills: edges.windowFills, heldAfter: edges.heldAfter },
      'fills stamped while a balance snapshot was being fetched, placed on the side of it that balances',
    );
  const pairs: SnapshotPair[] = edgePairs.map((p, i) => ({
    opening: p.opening,
    closing: p.closing,
    flows: edges.flows[i]!,
  }));
  const balanceRoll = checkBalances(tally, cfg, pairs, latestHeader ? snapshots.get(latestHeader.id)! : null).flat();

  const periodWithdrawals: Withdrawal[] = [];
  const [deposits, withdrawals] = await Promise.all([
    openDeposits(db, account),
    openWithdrawals(db, account),
    (async () => {
      for await (const page of withdrawalsIn(db, account, span, RECONCILE_PAGE_SIZE)) periodWithdrawals.push(...page);
      for await (const page of withdrawalsChangedOutside(db, account, span, since, RECONCILE_PAGE_SIZE)) {
        outsidePeriod.withdrawals += page.length;
        periodWithdrawals.push(...page);
      }
    })(),
  ]);
  checkPayments(tally, cfg, ref, { openDeposits: deposits, openWithdrawals: withdrawals, periodWithdrawals });

  const [cov, quarantined] = await Promise.all([unsettledCoverage(db, account), unresolvedQuarantine(db, account)]);
  checkSync(tally, cov.unsettled, quarantined, cov.total);
  // Days of the period no sync covered have no row to be unsettled: each stream is asked how far it was read.
  const cursors = await listCursors(db, account);
  checkUnsyncedDays(tally, cfg.now, daysOf(period), await sourcesReach(db, account, period));
  phase('balancesPaymentsSync');

  // Lifecycle: one transaction, so a failed run leaves the breaks as they were.
  const detected = tally.breaks();
  const previous = await previousBreaks(db, account, detected);
  const detectedIds = new Set(detected.map((d) => breakId(d.code, d.key)));
  const scoped = await inScopeKeys(
    db,
    account,
    span,
    previous.filter(
      (b) => b.status === 'open' && !detectedIds.has(breakId(b.code, b.key)) && findRule(b.code)?.reach === 'records',
    ),
    since,
  );
  const lifecycle = applyLifecycle({
    runId,
    now: ctx.now,
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

  const counts = await countPeriod(db, account, span, {
    partnerOrders,
    quarantined: quarantined.length,
    balanceSnapshots: needed.length,
  });
  const ruleResults = tally.results();
  const late = await lateBreaks(ctx, span, judgement, lifecycle.upserts, lifecycle.events);
  await inTransaction(db, async (trx) => {
    await recordReconcile(trx, {
      runId,
      account,
      upserts: lifecycle.upserts,
      events: lifecycle.events,
      balanceRoll,
      counts,
      ruleResults,
      rulesetVersion: RULESET_VERSION,
      cursors,
      webhookJudgement: cfg.webhooksEnabled ? { cutoff: webhookCutoff, now: ctx.now } : null,
      judgement,
      late,
    });
    // In the same transaction: no run can show a break as explained on amounts nobody accepted. Every written break
    // has its event, all of this run: amounts change only through them.
    const first = lifecycle.events[0];
    if (first) await reopenChangedAcknowledgements(trx, account, first.runId, first.at);
  });

  phase('lifecycleAndWrite');
  const judged = { since, until: judgement.until, outsidePeriod };
  const result: ReconcileResult = {
    runId,
    period,
    counts,
    ruleResults,
    detected: detected.length,
    lifecycle: lifecycle.counts,
    balanceRoll,
    ms: Date.now() - started,
    phases,
    judged,
    late,
  };
  log.info(
    {
      counts,
      detected: detected.length,
      lifecycle: lifecycle.counts,
      judged,
      late: late.length,
      ms: result.ms,
      phases,
    },
    'reconciled',
  );
  return result;
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
