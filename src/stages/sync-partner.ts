/** The partner sync stage: builds the client and the progress from the stage context, runs the steps, returns the
 * result.
 */
import type { StageContext } from './context.js';
import type { Period } from '../domain/period.js';
import { daysOf } from '../util/dates.js';
import { createProgress } from '../util/progress.js';
import { allSettledOrThrow } from '../util/side-by-side.js';
import {
  emptyPartnerSyncResult,
  partnerClientFromConfig,
  refreshOpenOrders,
  daysToList,
  syncDays,
  syncExternalReference,
  syncQuotes,
  syncReferenceData,
  syncWallets,
  type PartnerClient,
  type PartnerSyncResult,
  type SyncEnv,
} from '../sources/partner/index.js';

export type { PartnerSyncResult } from '../sources/partner/index.js';

export interface PartnerSyncOptions {
  /** Fetch only the orders with these external references (no day listing). */
  externalReferences?: string[];
  /** Only the wallet listings, each over the wallet's whole history. */
  walletsOnly?: boolean;
  /** List every day of the period, also a day whose stored listing is final (`sync --relist`). */
  relist?: boolean;
  /** Read every wallet's whole history again (`sync --wallet-history`). */
  walletHistory?: boolean;
}

/**
 * Partner sync (docs/operations.md "What a sync asks the APIs"): reference snapshots, orders of each UTC day of the period
 * (a past day once), orders of every wallet we own (a wallet's whole history once), re-fetch of
 * stored non-final orders, and quotes. With externalReferences only those orders are fetched;
 * with walletsOnly only the wallet listings. Every write is an idempotent upsert, so a re-run
 * changes nothing. ctx.signal stops it between pages (SyncAbortedError).
 */
export async function syncPartner(
  ctx: StageContext,
  period: Period | null,
  options: PartnerSyncOptions = {},
  deps: { client?: PartnerClient } = {},
): Promise<PartnerSyncResult> {
  const logger = ctx.logger.child({ source: 'partner' });
  const client = deps.client ?? partnerClientFromConfig(ctx.config, logger, { meter: ctx.meter });
  const progress = createProgress({ logger, label: 'partner orders' });
  const env: SyncEnv = {
    db: ctx.store.db,
    account: ctx.config.account,
    runId: ctx.runId,
    now: ctx.now,
    signal: ctx.signal,
    config: ctx.config.partner,
    client,
    logger,
    progress,
    parallelWrites: ctx.store.kind === 'postgres',
    result: emptyPartnerSyncResult(),
    written: new Map(),
    quarantined: new Set(),
  };
  const { result } = env;
  try {
    if (options.externalReferences) {
      for (const ref of options.externalReferences) await syncExternalReference(env, ref);
    } else if (options.walletsOnly) {
      await syncWallets(env, { wholeHistory: true, days: [] });
    } else {
      await syncReferenceData(env);
      const listedDays = period ? await daysToList(env, daysOf(period), options.relist ?? false) : [];
      const listed = new Set(listedDays);
      // The open orders of days this sync does not list (yesterday's, at night) are refreshed beside the listings on
      // a Postgres server: different pages of the same API, written on sessions of their own. Those of the listed
      // days wait for the listings, which bring most of them.
      await allSettledOrThrow([
        (async () => {
          await syncDays(env, listedDays);
          await syncWallets(env, { wholeHistory: options.walletHistory ?? false, days: listedDays });
        })(),
        ...(env.parallelWrites ? [refreshOpenOrders(env, (day) => !listed.has(day))] : []),
      ]);
      await refreshOpenOrders(env, env.parallelWrites ? (day) => listed.has(day) : undefined);
      await syncQuotes(env);
    }
    progress.stop();
  } catch (err) {
    progress.stop(err);
    throw err;
  } finally {
    if (!deps.client) await client.close();
  }
  result.orders = env.written.size;
  logger.info(
    {
      ...result,
      coverage: result.coverage.map((c) => ({
        day: c.day,
        rows: c.rows,
        pages: c.pages,
        settled: c.settled,
        closed: c.closed,
      })),
    },
    'partner sync done',
  );
  return result;
}
