/** Exchange sync step: orders of every status and trades by time windows, then orders asked by id. */
import { ORDERS_CONTRACT_LIMIT, ORDERS_PAGE_LIMIT } from './client.js';
import type { Page } from '../common/page.js';
import { fastOrder, ORD_STATUSES, ORDER_NON_FINAL, orderSchema, type Order } from './schemas.js';
import { toFillRow, toOrderRow } from './transform.js';
import type { NewExchangeOrder } from '../../store/db/schema.js';
import {
  markOrdersNotFound,
  nonFinalIds,
  orderIdsMissingForFills,
  ordersNotFoundBefore,
  ordersDifferingFromFills,
  storedOrderIds,
  upsertFills,
  upsertOrders,
} from '../../store/sync/exchange-records.js';
import type { Window } from './plan.js';
import { runConcurrently, SOURCE, type ExchangeSync } from './sync-common.js';
import { getCursor, setCursor } from '../../store/sync/cursors.js';
import { changesSince, currentSnapshot } from '../../store/recon/changes.js';
import { fetchByIdInBatches, storeFetchedById, type ByIdRecords } from './sync-by-id.js';
import { timeCursor } from './streams.js';
import { fillPages, loadFillsState } from './sync-fills.js';
import { loadPageCap, padded, syncStream, walkWindows, type StreamCap, type WindowStream } from './sync-windows.js';

function orderStream(
  env: ExchangeSync,
  kind: 'orders' | 'trades',
  status: string | undefined,
  symbols: string[],
  cap: StreamCap,
  stream = status ? `${kind}.${status}` : kind,
): WindowStream<Order, NewExchangeOrder> {
  return {
    stream,
    cursor: timeCursor(stream),
    entity: 'exchange_order',
    keyField: 'exOrdId',
    int64Key: true,
    schema: orderSchema,
    fast: fastOrder,
    cap,
    symbols,
    fetch: (w, symbol, signal) =>
      (kind === 'orders' ? env.client.orders : env.client.trades)(
        { ...(isWholeList(env, w) ? {} : padded(w)), status, symbol, limit: ORDERS_PAGE_LIMIT },
        signal,
      ),
    toRow: toOrderRow,
    key: (r) => r.ex_ord_id,
    timestampOf: (o) => o.timestamp,
    write: async (db, rows, bookkeeping) => {
      const n = await upsertOrders(db, env.account, rows, env.startedAt, bookkeeping);
      if (kind === 'orders') env.counters.orders += n;
      else env.counters.trades += n;
      return n;
    },
  };
}

/** The window [0, now] is asked without bounds: the whole list of a status. */
const isWholeList = (env: ExchangeSync, w: Window): boolean => w.start <= 0 && w.end >= env.nowMs;

/**
 * Listings run side by side on a Postgres server (each page commits on its own pooled session);
 * PGlite has one session, so there they run one after another.
 */
const LISTINGS_AT_ONCE = 3;

/**
 * Orders of every status (a plain GET /orders lists only live ones) and trades (orders with
 * fills, which also land in exchange_order), each by time windows with its own cursor. An order
 * seen by two listings is upserted by key, so their order does not matter.
 */
export async function syncOrders(
  env: ExchangeSync,
  symbols: string[],
  range?: { from: number; to: number },
): Promise<void> {
  // One learned cap per endpoint, shared by its listings.
  const ordersCap = await loadPageCap(env, 'orders.maxPage', ORDERS_PAGE_LIMIT, ORDERS_CONTRACT_LIMIT);
  const tradesCap = await loadPageCap(env, 'trades.maxPage', ORDERS_PAGE_LIMIT, ORDERS_CONTRACT_LIMIT);
  const streams = [
    ...ORD_STATUSES.map((status) => orderStream(env, 'orders', status, symbols, ordersCap)),
    orderStream(env, 'trades', undefined, symbols, tradesCap),
  ];
  await runConcurrently(
    env,
    streams.map((stream) => (e: ExchangeSync) => syncStream(e, stream, range, walkWindows)),
    env.parallelWrites ? LISTINGS_AT_ONCE : 1,
  );
}

/** How orders fetched by id are stored. */
const ORDERS_BY_ID: ByIdRecords<Order, NewExchangeOrder> = {
  schema: orderSchema,
  idField: 'exOrdId',
  int64Key: true,
  toRow: toOrderRow,
  keyOf: (r) => r.ex_ord_id,
  upsert: upsertOrders,
  endpoint: 'GET /orders/{id}',
  entity: 'exchange_order',
};

/** Writes orders fetched one by one in small batches; the ids answered 404 are recorded as not found, or ignored. */
async function fetchOrdersById(env: ExchangeSync, ids: string[], onMissing: 'record' | 'ignore'): Promise<void> {
  const warning = onMissing === 'ignore' ? 'stored exchange orders answered 404 on refresh' : null;
  await fetchByIdInBatches(env, ids, (id) => env.client.orderById(id, env.signal), storeBatch, warning);

  async function storeBatch(pages: Page[], missing: string[]): Promise<number> {
    const notFound = onMissing === 'record' ? missing : [];
    const { rows, stored } = await storeFetchedById(env, ORDERS_BY_ID, pages, (trx) =>
      markOrdersNotFound(trx, env.account, notFound, env.startedAt),
    );
    env.counters.ordersById += stored;
    env.counters.ordersNotFound += notFound.length;
    return rows;
  }
}

/**
 * Fills whose order was not in any list: GET /orders/{id}; a 404 is recorded for E_FILL_ORPHAN.
 * Orders still open from earlier runs must land in their final state: the open set is listed
 * (status OPEN, PART_FILLED, PENDING without a window, walked like any listing when it fills a
 * page), and only the stored ones that left it (not seen by any listing of this run) are asked
 * by id. The listing needs no guarantee: an open order it misses is asked by id.
 */
export async function syncOrderLookups(env: ExchangeSync, symbols: string[] = []): Promise<void> {
  env.progress.setStage('orders by id');
  await lookUpOrdersOfFills(env);
  // A 404 can be temporary (an order the exchange lists again later): ask again each run, so an
  // orphan that turns up resolves its E_FILL_ORPHAN; orphans are few.
  await fetchOrdersById(env, await ordersNotFoundBefore(env.db, env.account, env.startedAt), 'record');
  if ((await nonFinalIds(env.db, 'exchange_order', env.account, ORDER_NON_FINAL, env.startedAt)).length === 0) return;
  const cap = await loadPageCap(env, 'orders.maxPage', ORDERS_PAGE_LIMIT, ORDERS_CONTRACT_LIMIT);
  for (const status of ORDER_NON_FINAL) {
    await syncStream(
      env,
      { ...orderStream(env, 'orders', status, symbols, cap, 'orders.open'), bestEffort: true },
      { from: 0, to: env.nowMs },
      walkWindows,
    );
  }
  env.progress.setStage('orders by id');
  const left = await nonFinalIds(env.db, 'exchange_order', env.account, ORDER_NON_FINAL, env.startedAt);
  await fetchOrdersById(env, left, 'ignore');
}

/**
 * The fills of the stored orders read once more, last: the listings ask for orders up to now, and the open ones without
 * any bound, so an order created after the fills walk can come back with fills the walk never saw, and be judged on a
 * sum of fills short of its cumQty (an E_FILL_QTY that next night's run resolves). The fills above the cursor are read
 * again (a page, usually) and those of stored orders written; the others, and the cursor, are left to the next run's
 * walk, so the top-up asks for no order it does not hold (on a busy account, every order created while the sync ran).
 * A stored order whose fills still differ from its cumQty is then asked by id: its record was listed before a fill
 * (a resting order that filled while the sync ran). A fills walk that got stuck is not walked again.
 */
export async function topUpFills(env: ExchangeSync): Promise<void> {
  if (env.coverage.fills?.settled === false) return;
  const touched = new Set<string>();
  for await (const step of fillPages(env, await loadFillsState(env.db, env.account), {})) {
    // The request's bounds are stored already (the walk's watermark, a stored range's edge).
    const bounds = new Set([step.page.request.fromExecId, step.page.request.toExecId]);
    const rows = step.page.validated.valid.filter((v) => !bounds.has(v.value.execId)).map((v) => toFillRow(v));
    const stored = await storedOrderIds(env.db, env.account, [...new Set(rows.map((r) => r.ex_ord_id))]);
    const kept = rows.filter((r) => stored.has(r.ex_ord_id));
    env.counters.fills += await upsertFills(env.db, env.account, kept);
    for (const r of kept) touched.add(r.ex_ord_id);
    if (step.done || step.stuck) break;
  }
  env.progress.setStage('orders by id');
  await fetchOrdersById(env, await ordersDifferingFromFills(env.db, env.account, [...touched]), 'ignore');
}

/** The cursor of the fills' order lookups: the snapshot they started from and the ids left missing (JSON). */
export const ORDER_LOOKUPS_CURSOR = 'orders.lookups';

/**
 * Asks by id for the orders that fills point at and no listing brought. Only the fills written or changed since the
 * last completed lookups are looked at (a nightly run does not scan a million fills), plus the ids those lookups left
 * missing: an order that answers but fails validation is neither stored nor 404, and is asked again once per run,
 * as an order of a new fill is. The cursor moves only when every lookup is done, so an interrupted run's fills are
 * looked at again.
 */
async function lookUpOrdersOfFills(env: ExchangeSync): Promise<void> {
  const [stored, now] = await Promise.all([
    getCursor(env.db, env.account, SOURCE, ORDER_LOOKUPS_CURSOR),
    currentSnapshot(env.db),
  ]);
  const mark = stored === null ? null : (JSON.parse(stored) as { snapshot: string; carried: string[] });
  const { since } = changesSince(mark?.snapshot ?? null, now);
  const carried = since === null ? [] : (mark?.carried ?? []);
  const asked = new Set<string>();
  for (;;) {
    const left = await orderIdsMissingForFills(env.db, env.account, 500 + asked.size, since, carried);
    const missing = left.filter((id) => !asked.has(id));
    if (missing.length === 0) {
      // Every id left was asked in this run: the ones to ask again next run.
      const next = JSON.stringify({ snapshot: now.snapshot, carried: left });
      await setCursor(env.db, env.account, SOURCE, ORDER_LOOKUPS_CURSOR, next);
      return;
    }
    missing.forEach((id) => asked.add(id));
    await fetchOrdersById(env, missing, 'record');
  }
}
