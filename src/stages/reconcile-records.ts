/** The reconcile's record phases: the partner orders (and their webhooks, and the open ones), the exchange orders and
 * the fills, each read in pages and handed to the rules. The partner scans and the exchange scans run side by side.
 */
import type { PartnerOrder } from '../domain/index.js';
import { ourAddresses } from '../rules/cross-rules.js';
import {
  addPassedFills,
  addPassedOrders,
  checkExchangeOrders,
  checkFills,
  checkOpenOrders,
  checkPartnerBatch,
  checkWebhookGaps,
  fillPrefilter,
  finishWebhookGaps,
  orderPrefilter,
} from '../rules/engine.js';
import { WEBHOOK_GAP, WEBHOOK_RETRY_MS } from '../rules/partner-rules.js';
import { judgedFillTimeRange } from '../store/recon/changes.js';
import {
  depositAddresses,
  depositsByTxHash,
  exchangeOrderCandidatesIn,
  SCAN_SIZE,
} from '../store/recon/exchange-reads.js';
import { fillCandidatesIn, fillIdHalves } from '../store/recon/fill-candidates.js';
import {
  openPartnerOrders,
  partnerOrdersByTxHash,
  partnerOrdersChangedOutside,
  partnerOrdersCreatedIn,
  webhookEventsByOrder,
} from '../store/recon/partner-reads.js';
import { webhookGapCandidates } from '../store/recon/webhook-judgements.js';
import { addDays, dayStart } from '../util/dates.js';
import { allSettledOrThrow, sideBySideInOrder } from '../util/side-by-side.js';
import { RECONCILE_PAGE_SIZE, type ReconcileRun } from './reconcile-run.js';
import { readBalancePairs, type BalanceReads } from './reconcile-balances.js';

/**
 * The partner scans and the exchange scans read the store independently and add verdicts of different rules to the
 * tally: the two run side by side, each on a session of its own on a Postgres server, so the fills' SQL pre-selection
 * does not wait for the partner rules' client work. Each phase's time is its own. All settle before a failure is
 * thrown: no read of this reconcile still runs when its stage is recorded. The exchange orders go before the fills:
 * E_SYMBOL_RULES hears from both, and a key's failures read in that order.
 *
 * The balance phase's reads start with the fills and run beside them (they touch no verdict: the balance rules judge
 * what they read after the records, in the run's order): the fills' pages, one statement at a time, would otherwise be
 * the database's only work while its second core idles. Returned once everything has settled.
 */
export async function checkRecords(run: ReconcileRun): Promise<BalanceReads> {
  run.clock.phase('statisticsAndReference');
  let balances: BalanceReads | undefined;
  await allSettledOrThrow([
    run.clock.timed('partner', () => checkPartnerOrders(run)),
    (async () => {
      await run.clock.timed('exchangeOrders', () => checkExchangeOrderCandidates(run));
      await allSettledOrThrow([
        run.clock.timed('fills', () => checkFillCandidates(run)),
        run.clock.timed('balanceReads', async () => {
          balances = await readBalancePairs(run);
        }),
      ]);
    })(),
  ]);
  run.clock.restart();
  return balances!;
}

/** The cut-off of P_WEBHOOK_GAP: a state change older than the sender's retry window. */
export function webhookCutoff(run: ReconcileRun): Date {
  return new Date(run.cfg.now.getTime() - WEBHOOK_RETRY_MS);
}

/** Partner and cross-system rules, streamed by keyset over orders created in the period, and those that changed. */
async function checkPartnerOrders(run: ReconcileRun): Promise<void> {
  const { db, account, span, tally, cfg, ref } = run;
  const ours = ourAddresses(run.ctx.config.partner.wallets, await depositAddresses(db, account));
  const checkOrders = async (orders: readonly PartnerOrder[]) => {
    const hashes = [...new Set(orders.flatMap((o) => (o.transactionHash ? [o.transactionHash] : [])))];
    const [depositsByTx, claimantsByTx] = await Promise.all([
      depositsByTxHash(db, account, hashes),
      partnerOrdersByTxHash(db, account, hashes),
    ]);
    for (const hash of checkPartnerBatch(tally, cfg, ref, { orders, depositsByTx, ourAddresses: ours, claimantsByTx }))
      run.judgement.again.add(hash);
  };
  for await (const orders of partnerOrdersCreatedIn(db, account, span, RECONCILE_PAGE_SIZE)) {
    run.partnerOrders += orders.length;
    await checkOrders(orders);
  }
  // Orders of other days that changed (or whose deposit match did) since the account was last judged.
  const since = run.judgement.since;
  for await (const orders of partnerOrdersChangedOutside(db, account, span, since, RECONCILE_PAGE_SIZE)) {
    run.outsidePeriod.partnerOrders += orders.length;
    await checkOrders(orders);
  }
  if (cfg.webhooksEnabled) await checkWebhooks(run);
  checkOpenOrders(tally, cfg, ref, await openPartnerOrders(db, account));
}

/**
 * P_WEBHOOK_GAP: every settled order once its last state change is past the retry window, in the first run where that
 * holds, whatever its creation day (and again while its break is open).
 */
async function checkWebhooks(run: ReconcileRun): Promise<void> {
  const { db, account, tally, cfg, ref } = run;
  let judged = 0;
  const candidates = webhookGapCandidates(
    db,
    account,
    WEBHOOK_GAP,
    webhookCutoff(run),
    run.runId,
    RECONCILE_PAGE_SIZE,
    run.judgement.since,
  );
  for await (const orders of candidates) {
    const ids = orders.map((o) => o.orderId);
    judged += checkWebhookGaps(tally, cfg, ref, orders, await webhookEventsByOrder(db, account, ids)).length;
  }
  finishWebhookGaps(tally, cfg, ref, judged);
}

/** Only the orders that could fail an order rule are loaded (sums of all their fills in SQL); the others passed. */
async function checkExchangeOrderCandidates(run: ReconcileRun): Promise<void> {
  const { db, account, span, tally, cfg, ref } = run;
  const filter = orderPrefilter(cfg, ref);
  for await (const page of exchangeOrderCandidatesIn(db, account, span, filter, undefined, run.judgement.since)) {
    checkExchangeOrders(tally, cfg, ref, page.orders);
    addPassedOrders(tally, cfg, ref, page.passed);
  }
}

/**
 * Only the fills that could fail a per-fill rule are loaded (SQL numeric pre-selection); the rules decide on those,
 * and the others count as checked and passed.
 */
async function checkFillCandidates(run: ReconcileRun): Promise<void> {
  const { db, account, span, tally, cfg, ref } = run;
  const since = run.judgement.since;
  // The reference values of each day the SQL prefilter compares with cover the days of the changed fills too.
  const changedFills = await judgedFillTimeRange(db, account, since);
  const daySpan = changedFills
    ? {
        from: new Date(Math.min(span.from.getTime(), dayStart(changedFills.from).getTime())),
        to: new Date(Math.max(span.to.getTime(), dayStart(addDays(changedFills.to, 1)).getTime())),
      }
    : span;
  const filter = fillPrefilter(cfg, ref, daySpan);
  // Judging every stored fill (a first run: a million of them) is Postgres's work alone, on one session while the
  // client waits: on a server the two halves of the id range are scanned side by side, their pages judged in id
  // order as one scan would give them (a later verdict on a key adds to the earlier ones in that order).
  const halves = since === null && run.ctx.store.kind === 'postgres' ? await fillIdHalves(db, account) : null;
  // A later judgement's pages: on a server the next two are asked for while the client judges one.
  const ahead = run.ctx.store.kind === 'postgres' ? 2 : 1;
  const pages = halves
    ? sideBySideInOrder(
        halves.map((bounds) => fillCandidatesIn(db, account, span, filter, SCAN_SIZE, since, { bounds })),
        (page) => page.fills.length,
        SCAN_SIZE,
      )
    : fillCandidatesIn(db, account, span, filter, SCAN_SIZE, since, { ahead });
  for await (const page of pages) {
    checkFills(tally, cfg, ref, page.fills);
    addPassedFills(tally, cfg, ref, page.scanned - page.fills.length);
  }
}
