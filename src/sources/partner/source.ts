/** The Partner API as a Source: its client, the steps of a sync planned from the request, its result, its reach. */
import { daysOf } from '../../util/dates.js';
import { createProgress } from '../../util/progress.js';
import { allSettledOrThrow } from '../../util/side-by-side.js';
import type { Source, SourceEnv, SyncRequest, SyncResult, SyncStep } from '../source.js';
import { partnerClientFromConfig, type PartnerClient } from './client.js';
import { emptyPartnerFigures, type PartnerFigures, type PartnerSync } from './sync-common.js';
import { daysToList, syncDays } from './sync-days.js';
import { syncExternalReference } from './sync-external-references.js';
import { refreshOpenOrders } from './sync-open-orders.js';
import { syncQuotes } from './sync-quotes.js';
import { syncReferenceData } from './sync-reference-data.js';
import { syncWallets } from './sync-wallets.js';
import { ORDERS_STREAM, partnerStreamReach } from './streams.js';

/**
 * Partner sync (docs/operations.md "What a sync asks the APIs"): reference snapshots, orders of each UTC day of the
 * period (a past day once), orders of every wallet we own (a wallet's whole history once), re-fetch of stored
 * non-final orders, and quotes. With externalReferences only those orders are fetched; with walletsOnly only the
 * wallet listings. Every write is an idempotent upsert, so a re-run changes nothing. The signal stops it between pages
 * (SyncAbortedError).
 */
export const partnerSource: Source<PartnerClient, PartnerSync, PartnerFigures> = {
  name: 'partner',
  streams: [ORDERS_STREAM],
  connect: (env) => partnerClientFromConfig(env.config, env.logger, { meter: env.meter }),
  open: async (env, client) => openSync(env, client),
  plan: (_sync, request) => planSteps(request),
  finish: async (sync) => finishSync(sync),
  failed: (sync, error) => {
    sync.progress.stop(error);
    return error;
  },
  reach: partnerStreamReach,
};

function openSync(env: SourceEnv, client: PartnerClient): PartnerSync {
  return {
    ...env,
    client,
    progress: createProgress({ logger: env.logger, label: 'partner orders', mode: env.progressMode }),
    result: emptyPartnerFigures(),
    written: new Map(),
    quarantined: new Set(),
  };
}

function planSteps(request: SyncRequest): Array<SyncStep<PartnerSync>> {
  const references = request.externalReferences;
  if (references)
    return [
      {
        name: 'external references',
        run: async (sync) => {
          for (const ref of references) await syncExternalReference(sync, ref);
        },
      },
    ];
  if (request.walletsOnly)
    return [{ name: 'wallets', run: (sync) => syncWallets(sync, { wholeHistory: true, days: [] }) }];
  const { period } = request;
  return [
    { name: 'reference data', run: syncReferenceData },
    { name: 'orders', run: (sync) => syncOrders(sync, period ? daysOf(period) : null, request) },
    { name: 'quotes', run: syncQuotes },
  ];
}

/**
 * The day listings, the wallets and the refresh of open orders. The open orders of days this sync does not list
 * (yesterday's, at night) are refreshed beside the listings on a Postgres server: different pages of the same API,
 * written on sessions of their own. Those of the listed days wait for the listings, which bring most of them.
 */
async function syncOrders(sync: PartnerSync, days: string[] | null, request: SyncRequest): Promise<void> {
  const listedDays = days ? await daysToList(sync, days, request.relist ?? false) : [];
  const listed = new Set(listedDays);
  await allSettledOrThrow([
    (async () => {
      await syncDays(sync, listedDays);
      await syncWallets(sync, { wholeHistory: request.walletHistory ?? false, days: listedDays });
    })(),
    ...(sync.parallelWrites ? [refreshOpenOrders(sync, (day) => !listed.has(day))] : []),
  ]);
  await refreshOpenOrders(sync, sync.parallelWrites ? (day) => listed.has(day) : undefined);
}

function finishSync(sync: PartnerSync): SyncResult<PartnerFigures> {
  sync.progress.stop();
  const { result } = sync;
  result.orders = sync.written.size;
  sync.logger.info(
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
  const { orders, inserted, updated, pages, quarantined, refreshed, notFound, wallets } = result;
  return {
    source: 'partner',
    recorded: { orders, inserted, updated, pages, quarantined, refreshed, notFound, wallets },
    figures: result,
  };
}
