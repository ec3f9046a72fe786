import { decimalText, toDecimal, type Decimal } from '../decimal/decimal.js';
import { stringifyJsonLossless } from '../decimal/json.js';
import type { StageContext } from './context.js';
import type { Period } from '../domain/period.js';
import { listCursors } from '../store/cursors.js';
import { dayStart } from '../util/dates.js';
import type { RollFigures } from '../rules/balance-roll.js';
import { RULESET_VERSION } from '../rules/catalog.js';
import { ourAddresses } from '../rules/cross-rules.js';
import { addPassedFills, addPassedOrders, checkBalances, checkExchangeOrders, checkFills, checkOpenOrders, fillPrefilter, orderPrefilter, checkPartnerBatch, checkPayments, checkSync, markNotChecked, type EngineConfig, type ReferenceData, type SnapshotPair } from '../rules/engine.js';
import { breakId, type BreakEventKind } from '../domain/index.js';
import { applyLifecycle } from '../rules/lifecycle.js';
import { RuleTally, type RuleResult } from '../rules/tally.js';
import { dailyFlows } from '../store/balance-flows.js';
import { inScopeKeys, previousBreaks, writeBreaks } from '../store/breaks.js';
import * as load from '../store/recon-reads.js';
import { countPeriod, type RunCounts } from '../store/counts.js';

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
  /** Milliseconds per phase, for the run record and tuning. */
  phases: Record<string, number>;
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
 * Checks the stored data for a period and records breaks (DESIGN.md "Reconcile",
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
  const span: load.Span = { from: dayStart(period.from), to: dayStart(period.to) };
  const cfg = engineConfig(ctx);
  const tally = new RuleTally();
  const phases: Record<string, number> = {};
  let mark = Date.now();
  const phase = (name: string) => {
    const t = Date.now();
    phases[name] = t - mark;
    mark = t;
  };

  const [currencies, symbols, fees, whitelist, headers] = await Promise.all([
    load.latestCurrencies(db, account),
    load.latestSymbols(db, account),
    load.feeSchedule(db, account),
    load.latestWhitelist(db, account),
    load.balanceSnapshotHeaders(db, account, ctx.config.exchange.account),
  ]);
  const ref: ReferenceData = { currencies, symbols: symbols?.symbols ?? null, fees, whitelist, balanceSnapshotCount: headers.length };
  markNotChecked(tally, cfg, ref);

  // Partner and cross-system rules, streamed by keyset over orders created in the period.
  const ours = ourAddresses(ctx.config.partner.wallets, await load.depositAddresses(db, account));
  let partnerOrders = 0;
  for await (const orders of load.partnerOrdersCreatedIn(db, account, span)) {
    partnerOrders += orders.length;
    const hashes = [...new Set(orders.flatMap((o) => (o.transactionHash ? [o.transactionHash] : [])))];
    const [depositsByTx, eventsByOrder] = await Promise.all([
      load.depositsByTxHash(db, account, hashes),
      cfg.webhooksEnabled ? load.webhookEventsByOrder(db, account, orders.map((o) => o.orderId)) : Promise.resolve(new Map()),
    ]);
    checkPartnerBatch(tally, cfg, ref, { orders, depositsByTx, eventsByOrder, ourAddresses: ours });
  }
  checkOpenOrders(tally, cfg, await load.openPartnerOrders(db, account));
  phase('partner');

  // Likewise only the orders that could fail an order rule (sums of all their fills in SQL).
  for await (const page of load.exchangeOrderCandidatesIn(db, account, span, orderPrefilter(ref))) {
    checkExchangeOrders(tally, ref, page.orders);
    addPassedOrders(tally, ref, page.passed, page.passedWithAvgPx);
  }
  phase('exchangeOrders');
  // Only the fills that could fail a per-fill rule are loaded (SQL numeric pre-selection); the
  // rules decide on those, and the others count as checked and passed.
  for await (const page of load.fillCandidatesIn(db, account, span, fillPrefilter(cfg, ref, span))) {
    checkFills(tally, cfg, ref, page.fills);
    addPassedFills(tally, ref, page.scanned - page.fills.length);
  }
  phase('fills');

  // Roll-forward: every consecutive pair whose closing snapshot is after the period start, and
  // always the latest pair (a run for an old period still judges the current balances).
  const pairHeaders = headers.flatMap((h, i) => (i > 0 && (h.fetchedAt.getTime() > span.from.getTime() || i === headers.length - 1) ? [[headers[i - 1]!, h] as const] : []));
  const latestHeader = headers[headers.length - 1];
  const needed = [...new Map([...pairHeaders.flat(), ...(latestHeader ? [latestHeader] : [])].map((h) => [h.id, h])).values()];
  const snapshots = await load.balanceSnapshots(db, needed);
  const pairs: SnapshotPair[] = [];
  for (const [a, b] of pairHeaders) {
    const flows = await dailyFlows(db, a.id, b.id, { account, symbolsSnapshotId: symbols?.snapshotId ?? null, feeCurrency: cfg.feeCurrency, withdrawalDebitStates: ctx.config.exchange.withdrawalDebitStates });
    pairs.push({ opening: snapshots.get(a.id)!, closing: snapshots.get(b.id)!, flows });
  }
  const balanceRoll = checkBalances(tally, cfg, pairs, latestHeader ? snapshots.get(latestHeader.id)! : null).flat();

  const [openDeposits, openWithdrawals, periodWithdrawals] = await Promise.all([load.openDeposits(db, account), load.openWithdrawals(db, account), load.withdrawalsIn(db, account, span)]);
  checkPayments(tally, cfg, ref, { openDeposits, openWithdrawals, periodWithdrawals });

  const [cov, quarantined] = await Promise.all([load.coverage(db, account), load.unresolvedQuarantine(db, account)]);
  checkSync(tally, cov.unsettled, quarantined, cov.total);
  phase('balancesPaymentsSync');

  // Lifecycle: one transaction, so a failed run leaves the breaks as they were.
  const detected = tally.breaks();
  const previous = await previousBreaks(db, account, detected);
  const detectedIds = new Set(detected.map((d) => breakId(d.code, d.key)));
  const scoped = await inScopeKeys(db, account, span, previous.filter((b) => b.status === 'open' && !detectedIds.has(breakId(b.code, b.key))));
  const lifecycle = applyLifecycle({
    runId,
    now: ctx.now,
    previous,
    detected,
    policy: { checked: (code) => tally.wasChecked(code), skipped: (code, key) => tally.skippedKeys(code).has(key), inScope: (code, key) => scoped.has(breakId(code, key)) },
  });

  const counts = await countPeriod(db, account, span, { partnerOrders, quarantined: quarantined.length, balanceSnapshots: needed.length });
  const ruleResults = tally.results();
  const cursors = await listCursors(db, account);
  await db.transaction().execute(async (trx) => {
    await writeBreaks(trx, account, lifecycle.upserts, lifecycle.events);
    await trx.deleteFrom('balance_roll').where('run_id', '=', runId).execute();
    for (let i = 0; i < balanceRoll.length; i += 500)
      await trx.insertInto('balance_roll').values(balanceRoll.slice(i, i + 500).map((f) => rollRow(runId, account, f))).execute();
    await trx
      .updateTable('run')
      .set({ counts: JSON.stringify(counts), rule_results: JSON.stringify(ruleResults), ruleset_version: RULESET_VERSION, cursors: stringifyJsonLossless(cursors) })
      .where('id', '=', runId)
      .execute();
  });

  phase('lifecycleAndWrite');
  const result: ReconcileResult = { runId, period, counts, ruleResults, detected: detected.length, lifecycle: lifecycle.counts, balanceRoll, ms: Date.now() - started, phases };
  log.info({ counts, detected: detected.length, lifecycle: lifecycle.counts, ms: result.ms, phases }, 'reconciled');
  return result;
}

function rollRow(runId: string, account: string, f: RollFigures) {
  const t = (d: Decimal) => decimalText(d);
  return {
    run_id: runId,
    account,
    currency: f.currency,
    opening_snapshot_id: f.openingSnapshotId,
    closing_snapshot_id: f.closingSnapshotId,
    opening_at: f.openingAt,
    closing_at: f.closingAt,
    opening: t(f.opening),
    deposits: t(f.deposits),
    withdrawals: t(f.withdrawals),
    bought: t(f.bought),
    sold: t(f.sold),
    fees: t(f.fees),
    expected_closing: t(f.expectedClosing),
    actual_closing: t(f.actualClosing),
    residual: t(f.residual),
    first_divergent_day: f.firstDivergentDay,
    days: JSON.stringify(f.days),
  };
}
