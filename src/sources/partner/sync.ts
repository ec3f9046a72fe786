import type { StageContext } from '../../stages/context.js';
import type { Period } from '../../domain/period.js';
import type { Db } from '../../store/database.js';
import type { Logger } from '../../log/logger.js';
import type { HttpResponse, QueryValue } from '../../http/client.js';
import { HttpAuthError, HttpStatusError } from '../../http/client.js';
import { createHash } from 'node:crypto';
import { stringifyJsonLossless } from '../../decimal/json.js';
import { quarantineRecords, resolveQuarantined, type QuarantineInput } from '../../store/quarantine.js';
import { saveReferenceSnapshot } from '../../store/snapshots.js';
import { addDays, daysOf } from '../../util/dates.js';
import { createProgress, type Progress } from '../../util/progress.js';
import { getCursor, setCursor } from '../../store/cursors.js';
import { createPartnerApi, ORDERS_PAGE_LIMIT, type PartnerApi } from './client.js';
import { cheapestRefresh, consecutivePeriods, dayIsOver } from './plan.js';
import {
  currencySchema,
  formatPartnerIssues,
  partnerOrderSchema,
  paymentMethodsSchema,
  quoteSchema,
  readableKey,
  regionsSchema,
} from './schemas.js';
import { currencyToRow, flattenCurrencies, orderToRow, quoteToRow, requireTimestampKey, walletWithoutTag, type CurrencyRowInput, type PartnerOrderRowInput } from './transform.js';
import {
  listClosedDays,
  listExchangeDepositAddresses,
  listOpenOrdersByDay,
  markOrdersNotFound,
  ORDERS_STREAM,
  saveCoverage,
  saveCurrencies,
  saveQuote,
  upsertPartnerOrders,
  walletHistoryCursor,
  type OrderSource,
} from '../../store/partner-orders.js';

/** A day that can still drift is scanned until two consecutive passes agree, at most this often. */
export const MAX_DAY_PASSES = 4;
/** Guard against a server that ignores the offset parameter and returns full pages forever. */
const MAX_PAGES_PER_LISTING = 2_000;
/** Day listings in flight at once on a Postgres server. */
const DAYS_AT_ONCE = 3;
/** Refresh by id: requests in flight at once (the client's rate limit still applies). */
const REFRESH_CONCURRENCY = 4;
const ORDERS_ENDPOINT = '/orders';

export interface DayCoverage {
  day: string;
  /** Pages read over all passes. */
  pages: number;
  /** Distinct orders of the day seen in any pass. */
  rows: number;
  quarantined: number;
  /**
   * The listing is complete: one clean pass of a day that was over, or two consecutive passes
   * that agreed. false becomes an S_COVERAGE break.
   */
  settled: boolean;
  /** Settled by a pass that began after the day was over: later runs do not list the day again. */
  closed: boolean;
  passes: Array<{ pages: number; rows: number; distinct: number; duplicates: number; outsideDay: number }>;
}

export interface PartnerSyncResult {
  /** Distinct valid orders received in this sync (day, wallet, reference listings and refresh). */
  orders: number;
  /** Orders written (new, or a newer state / changed body). */
  inserted: number;
  updated: number;
  pages: number;
  quarantined: number;
  refreshed: number;
  notFound: number;
  quotes: number;
  quoteErrors: number;
  /** Wallet listings made (whole history or bounded by days). */
  wallets: number;
  /** Wallets whose whole history was read in this sync (first sync of the wallet, or asked). */
  walletHistories: number;
  references: number;
  /** Days of the period not listed: their stored listing is final (closed by an earlier run). */
  skippedDays: string[];
  /** Past days listed again by the refresh because that costs fewer requests than fetching their open orders by id. */
  relistedForRefresh: string[];
  /** Reference snapshots that changed (a new dated row) this time. */
  snapshots: { currencies: boolean | null; regions: boolean | null; paymentMethods: boolean | null };
  coverage: DayCoverage[];
}

interface SyncState {
  ctx: StageContext;
  db: Db;
  api: PartnerApi;
  account: string;
  logger: Logger;
  progress: Progress;
  result: PartnerSyncResult;
  /**
   * orderId -> digest of the raw text already written in this sync: a repeat is not written
   * again. A digest, not the text: a first sync of 100,000 orders would otherwise hold them all.
   */
  written: Map<string, string>;
  /** Quarantined records of this sync (endpoint + raw text): one record seen on two passes counts once. */
  quarantined: Set<string>;
}

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
 * Partner sync (DESIGN.md "Sync"): reference snapshots, orders of each UTC day of the period
 * (a past day once), orders of every wallet we own (a wallet's whole history once), re-fetch of
 * stored non-final orders, and quotes. With externalReferences only those orders are fetched;
 * with walletsOnly only the wallet listings. Every write is an idempotent upsert, so a re-run
 * changes nothing.
 */
export async function syncPartner(
  ctx: StageContext,
  period: Period | null,
  options: PartnerSyncOptions = {},
  deps: { api?: PartnerApi } = {},
): Promise<PartnerSyncResult> {
  const logger = ctx.logger.child({ source: 'partner' });
  const api = deps.api ?? createPartnerApi(ctx.config, logger, { meter: ctx.meter });
  const result: PartnerSyncResult = {
    orders: 0,
    inserted: 0,
    updated: 0,
    pages: 0,
    quarantined: 0,
    refreshed: 0,
    notFound: 0,
    quotes: 0,
    quoteErrors: 0,
    wallets: 0,
    walletHistories: 0,
    references: 0,
    skippedDays: [],
    relistedForRefresh: [],
    snapshots: { currencies: null, regions: null, paymentMethods: null },
    coverage: [],
  };
  const progress = createProgress({ logger, label: 'partner orders' });
  const state: SyncState = { ctx, db: ctx.store.db, api, account: ctx.config.account, logger, progress, result, written: new Map(), quarantined: new Set() };
  try {
    if (options.externalReferences) {
      for (const ref of options.externalReferences) await syncReference(state, ref);
    } else if (options.walletsOnly) {
      await syncWallets(state, { wholeHistory: true, days: [] });
    } else {
      await syncReferenceData(state);
      const listedDays = period ? await syncDays(state, daysOf(period), options.relist ?? false) : [];
      await syncWallets(state, { wholeHistory: options.walletHistory ?? false, days: listedDays });
      await refreshOpenOrders(state);
      await syncQuotes(state);
    }
  } finally {
    progress.stop();
    if (!deps.api) await api.close();
  }
  result.orders = state.written.size;
  logger.info({ ...result, coverage: result.coverage.map((c) => ({ day: c.day, rows: c.rows, pages: c.pages, settled: c.settled, closed: c.closed })) }, 'partner sync done');
  return result;
}

function checkAbort(ctx: StageContext): void {
  if (ctx.signal?.aborted) throw ctx.signal.reason instanceof Error ? ctx.signal.reason : new Error('partner sync aborted');
}

/** A list body is an array of orders; anything else is quarantined whole. */
function asArray(body: unknown): unknown[] | null {
  return Array.isArray(body) ? body : null;
}

interface IngestResult {
  /** Order ids of the page (valid and, when readable, invalid records), in page order. */
  ids: string[];
  /** UTC creation day of each valid order. */
  createdDays: string[];
  /** Timestamp key (timestampKey) of the oldest valid order's createdAt; null when none validated. */
  oldestCreatedKey: string | null;
  quarantined: number;
}

/**
 * Validates the records of one response and stores them in one transaction: valid orders are
 * upserted (with state history), invalid ones quarantined with their raw text, the rest of the
 * page still lands. A record that validates resolves its earlier quarantine entries.
 */
async function ingestOrders(state: SyncState, records: unknown[], source: OrderSource, endpoint: string): Promise<IngestResult> {
  const ids: string[] = [];
  const createdDays: string[] = [];
  let oldestCreatedKey: string | null = null;
  const rows: PartnerOrderRowInput[] = [];
  const bad: QuarantineInput[] = [];
  const validIds: string[] = [];
  for (const [position, record] of records.entries()) {
    const parsed = partnerOrderSchema.safeParse(record);
    const rawText = stringifyJsonLossless(record);
    if (!parsed.success) {
      const key = readableKey(record, 'orderId');
      ids.push(key ?? `#${position}`);
      bad.push({
        account: state.account,
        source: 'partner',
        endpoint,
        entity: 'partner_order',
        recordKey: key,
        position,
        rawText,
        reason: formatPartnerIssues(parsed.error),
        runId: state.ctx.runId,
      });
      continue;
    }
    const order = parsed.data;
    ids.push(order.orderId);
    validIds.push(order.orderId);
    const createdKey = requireTimestampKey(order.createdAt);
    createdDays.push(createdKey.slice(0, 10));
    if (oldestCreatedKey === null || createdKey < oldestCreatedKey) oldestCreatedKey = createdKey;
    // The same body seen again in this sync (next pass, wallet listing) is not written twice.
    const digest = createHash('sha1').update(rawText).digest('base64');
    if (state.written.get(order.orderId) === digest) continue;
    state.written.set(order.orderId, digest);
    rows.push(orderToRow(order, record));
  }
  if (rows.length || bad.length || validIds.length) {
    await state.db.transaction().execute(async (trx) => {
      const r = await upsertPartnerOrders(trx, state.account, rows, source, state.ctx.now);
      state.result.inserted += r.inserted.length;
      state.result.updated += r.updated.length;
      await quarantineRecords(trx, bad);
      await resolveQuarantined(trx, state.account, 'partner_order', validIds);
    });
  }
  countQuarantined(state, bad);
  if (bad.length) state.logger.warn({ endpoint, quarantined: bad.length, first: bad[0]?.reason }, 'invalid partner orders quarantined');
  return { ids, createdDays, oldestCreatedKey, quarantined: bad.length };
}

function countQuarantined(state: SyncState, records: QuarantineInput[]): void {
  for (const r of records) state.quarantined.add(`${r.endpoint}\n${r.rawText}`);
  state.result.quarantined = state.quarantined.size;
}

async function quarantine(state: SyncState, records: QuarantineInput[]): Promise<void> {
  await quarantineRecords(state.db, records);
  countQuarantined(state, records);
}

async function quarantinePage(state: SyncState, endpoint: string, response: HttpResponse, reason: string): Promise<void> {
  await quarantine(state, [
    { account: state.account, source: 'partner', endpoint, entity: 'partner_order_page', recordKey: null, position: null, rawText: response.text, reason, runId: state.ctx.runId },
  ]);
}

interface Listing {
  pages: number;
  rows: number;
  ids: Set<string>;
  duplicates: number;
  quarantined: number;
  /** Day listings: orders created outside the requested day (a date filter name or bound mismatch). */
  outsideDay: number;
  /** The listing ended normally on a short page. */
  complete: boolean;
}

/**
 * Pages one order listing with limit 50 and the configured offset parameter until a short page
 * (or until `stopAfter` says a page was enough), storing each page as it arrives (nothing buffers
 * the history).
 */
async function pageOrders(state: SyncState, query: Record<string, QueryValue>, label: string, day?: string, stopAfter?: (page: IngestResult) => boolean): Promise<Listing> {
  const offsetName = state.ctx.config.partner.params.offset;
  const listing: Listing = { pages: 0, rows: 0, ids: new Set(), duplicates: 0, quarantined: 0, outsideDay: 0, complete: false };
  let previousPage = '';
  for (let offset = 0; listing.pages < MAX_PAGES_PER_LISTING; offset += ORDERS_PAGE_LIMIT) {
    checkAbort(state.ctx);
    const response = await state.api.listOrders({ ...query, limit: ORDERS_PAGE_LIMIT, [offsetName]: offset }, state.ctx.signal);
    listing.pages++;
    state.result.pages++;
    const records = asArray(response.body);
    if (!records) {
      await quarantinePage(state, ORDERS_ENDPOINT, response, `${label}: the orders list is not a JSON array`);
      return listing;
    }
    const page = await ingestOrders(state, records, 'poll', ORDERS_ENDPOINT);
    listing.rows += records.length;
    listing.quarantined += page.quarantined;
    if (day) listing.outsideDay += page.createdDays.filter((d) => d !== day).length;
    for (const id of page.ids) {
      if (listing.ids.has(id)) listing.duplicates++;
      else listing.ids.add(id);
    }
    state.progress.tick(records.length);
    if (records.length < ORDERS_PAGE_LIMIT) {
      listing.complete = true;
      return listing;
    }
    if (stopAfter?.(page)) return listing;
    // A full page identical to the previous one: the server ignores the offset parameter
    // (wrong partner.params.offset). Paging on would loop forever and find nothing new.
    const pageIds = page.ids.join('\n');
    if (pageIds === previousPage) {
      state.logger.warn({ label, offsetParam: offsetName, offset }, 'the same full page came back for the next offset: check partner.params.offset (the wire name of the offset parameter)');
      return listing;
    }
    previousPage = pageIds;
  }
  state.logger.warn({ label, pages: listing.pages }, 'order listing stopped at the page guard: the offset parameter may be ignored by the server');
  return listing;
}

function sameSet(a: Set<string>, b: Set<string>): boolean {
  if (a.size !== b.size) return false;
  for (const v of a) if (!b.has(v)) return false;
  return true;
}

/**
 * The days of the period, each listed unless its stored listing is final (closed by an earlier
 * run; `relist` lists it anyway). A closed day keeps its coverage row, which is still true: it
 * stays settled for S_COVERAGE and the Coverage sheet shows the run that read it. Returns the
 * days this sync listed.
 */
async function syncDays(state: SyncState, days: string[], relist: boolean): Promise<string[]> {
  const closed = relist ? new Set<string>() : await listClosedDays(state.db, state.account, days);
  const listed = days.filter((day) => !closed.has(day));
  state.result.skippedDays.push(...days.filter((day) => closed.has(day)));
  // Days are independent listings: on a Postgres server a few run side by side (each page
  // commits on its own pooled session; the private rate limit still paces them all). PGlite has
  // one session, so there they run one after another. A failure stops new days from starting.
  const atOnce = state.ctx.store.kind === 'postgres' ? DAYS_AT_ONCE : 1;
  let next = 0;
  let failed = false;
  const worker = async () => {
    while (!failed && next < listed.length) {
      const day = listed[next++]!;
      try {
        state.result.coverage.push(await syncDay(state, day));
      } catch (err) {
        failed = true;
        throw err;
      }
    }
  };
  const outcomes = await Promise.allSettled(Array.from({ length: Math.min(atOnce, listed.length) }, worker));
  const failure = outcomes.find((o): o is PromiseRejectedResult => o.status === 'rejected');
  if (failure) throw failure.reason;
  state.result.coverage.sort((a, b) => (a.day < b.day ? -1 : a.day > b.day ? 1 : 0));
  if (state.result.skippedDays.length) state.logger.debug({ days: state.result.skippedDays }, 'partner days already read completely after they ended: not listed again');
  return listed;
}

/**
 * One UTC day. Offset paging over a newest-first list shifts when orders arrive during the scan
 * (a row repeats, or one is skipped). A day that is over cannot drift any more: one complete
 * pass settles it, unless the pass itself shows the list moved (a repeated row) or the date
 * filters did not apply (orders of other days). A day not over yet (today) is read again until
 * two consecutive passes return the same orders; every pass's orders are stored, so the union is
 * complete once it settles. A day that never settles is recorded settled=false (an S_COVERAGE
 * break). A settled day that was over is recorded closed: later runs skip it.
 */
async function syncDay(state: SyncState, day: string): Promise<DayCoverage> {
  const { params } = state.ctx.config.partner;
  state.progress.setStage(day);
  const query = { [params.from]: day, [params.to]: addDays(day, 1) };
  // The run's start: every pass of this run begins after it.
  const over = dayIsOver(day, state.ctx.now);
  const seen = new Set<string>();
  const passes: DayCoverage['passes'] = [];
  let previous: Set<string> | null = null;
  let settled = false;
  let pages = 0;
  let quarantined = 0;
  let outsideDay = 0;
  for (let pass = 1; pass <= MAX_DAY_PASSES; pass++) {
    const listing = await pageOrders(state, query, `orders of ${day}`, day);
    if (listing.outsideDay > 0 && pass === 1)
      state.logger.warn(
        { day, outsideDay: listing.outsideDay, params: { from: params.from, to: params.to } },
        'the day listing returned orders created on other days: check partner.params (the wire names of the date filters) and whether the API treats "to" as exclusive',
      );
    pages += listing.pages;
    quarantined = listing.quarantined;
    outsideDay = listing.outsideDay;
    for (const id of listing.ids) seen.add(id);
    passes.push({ pages: listing.pages, rows: listing.rows, distinct: listing.ids.size, duplicates: listing.duplicates, outsideDay: listing.outsideDay });
    if (!listing.complete) break;
    if (over && pass === 1 && listing.duplicates === 0 && listing.outsideDay === 0) {
      settled = true;
      break;
    }
    if (previous && sameSet(previous, listing.ids)) {
      settled = true;
      break;
    }
    previous = listing.ids;
  }
  // A quarantined record keeps its day open: a later listing may find it fixed.
  const closed = settled && over && quarantined === 0 && outsideDay === 0;
  const coverage: DayCoverage = { day, pages, rows: seen.size, quarantined, settled, closed, passes };
  const detail = { passes, maxPasses: MAX_DAY_PASSES, ...(closed ? { closedAt: state.ctx.now.toISOString() } : {}) };
  await saveCoverage(state.db, state.account, state.ctx.runId, { day, stream: ORDERS_STREAM, pages, rows: seen.size, quarantined, settled, detail }, state.ctx.now);
  if (!settled) state.logger.warn({ day, passes }, 'partner orders of the day did not settle: the count kept changing between passes');
  else state.logger.debug({ day, rows: seen.size, pages, passes: passes.length, closed }, 'partner day synced');
  return coverage;
}

/**
 * Our wallets: configured addresses plus every address seen on exchange deposits. The API matches
 * walletAddress exactly while an order may show a tagged address (XRP "addr:tag") with or without
 * its tag, so both forms are listed.
 */
async function ourWallets(state: SyncState): Promise<string[]> {
  const deposits = await listExchangeDepositAddresses(state.db, state.account);
  const all = [...state.ctx.config.partner.wallets, ...deposits].flatMap((a) => [a, walletWithoutTag(a)]);
  return [...new Set(all.map((a) => a.trim()).filter(Boolean))].sort();
}

/**
 * Orders paid to our wallets (DESIGN.md "Sync"). A wallet's whole history is read once: the
 * first time the wallet is synced (a cursor records it once the listing is complete), or when
 * asked (--wallet-history, walletsOnly). After that each wallet is listed with the date filters
 * of the days this sync listed, one listing per run of consecutive days: a request or so per
 * wallet, where the whole history would grow every night. Days skipped as already read
 * completely are not listed again for wallets either.
 */
async function syncWallets(state: SyncState, plan: { wholeHistory: boolean; days: string[] }): Promise<void> {
  const { params } = state.ctx.config.partner;
  const bounded = consecutivePeriods(plan.days);
  for (const wallet of await ourWallets(state)) {
    const cursor = walletHistoryCursor(wallet);
    // The list limit applies to wallet listings too, so they are paged like the days.
    if (plan.wholeHistory || (await getCursor(state.db, state.account, 'partner', cursor)) === null) {
      state.progress.setStage(`wallet ${wallet}`);
      const listing = await pageOrders(state, { walletAddress: wallet }, `orders of wallet ${wallet}`);
      state.result.wallets++;
      state.result.walletHistories++;
      // Every page is committed as it arrives: the whole history is stored once the listing ended normally.
      if (listing.complete) await setCursor(state.db, state.account, 'partner', cursor, state.ctx.now.toISOString());
      continue;
    }
    for (const p of bounded) {
      state.progress.setStage(`wallet ${wallet} ${p.from}..${p.to}`);
      await pageOrders(state, { walletAddress: wallet, [params.from]: p.from, [params.to]: p.to }, `orders of wallet ${wallet} from ${p.from} to ${p.to}`);
      state.result.wallets++;
    }
  }
}

/** Several orders per reference are normal; the limit does not apply to this listing. */
async function syncReference(state: SyncState, reference: string): Promise<void> {
  checkAbort(state.ctx);
  const response = await state.api.listOrders({ externalReference: reference }, state.ctx.signal);
  state.result.pages++;
  const records = asArray(response.body);
  if (!records) {
    await quarantinePage(state, ORDERS_ENDPOINT, response, `orders of externalReference ${reference}: the orders list is not a JSON array`);
    return;
  }
  await ingestOrders(state, records, 'poll', ORDERS_ENDPOINT);
  state.progress.tick(records.length);
  state.result.references++;
}

/**
 * Every stored order still PENDING or WITHDRAWING is read again so that late state changes land;
 * orders already received in this sync are fresh and skipped. Per creation day, the cheapest way
 * (cheapestRefresh): by id, one request per order, or (a day that is over, so its list no longer
 * moves) listing the day again, newest first, only until the page that passes the last open
 * order worth listing for, and the older ones by id: the open orders of a day are mostly its last
 * ones, so that is a few pages where the whole day is hundreds. An open order the listing did not
 * return is fetched by id too. A 404 is recorded on the order.
 */
async function refreshOpenOrders(state: SyncState): Promise<void> {
  const { params } = state.ctx.config.partner;
  const ids: string[] = [];
  for (const group of await listOpenOrdersByDay(state.db, state.account)) {
    const open = group.open.filter((o) => !state.written.has(o.orderId));
    if (open.length === 0) continue;
    const plan = dayIsOver(group.day, state.ctx.now) ? cheapestRefresh(open.map((o) => o.rank)) : { listThrough: 0 };
    if (plan.listThrough > 0) {
      state.progress.setStage(`refresh of ${group.day}`);
      const through = requireTimestampKey(open[plan.listThrough - 1]!.createdAt);
      await pageOrders(state, { [params.from]: group.day, [params.to]: addDays(group.day, 1) }, `open orders of ${group.day}`, group.day, (page) =>
        page.oldestCreatedKey !== null && page.oldestCreatedKey < through,
      );
      state.result.relistedForRefresh.push(group.day);
    }
    ids.push(...open.filter((o) => !state.written.has(o.orderId)).map((o) => o.orderId));
  }
  if (ids.length === 0) return;
  state.progress.setStage(`refresh of ${ids.length} open orders`);
  const missing: string[] = [];
  let next = 0;
  const worker = async () => {
    while (next < ids.length) {
      const id = ids[next++] as string;
      checkAbort(state.ctx);
      const response = await state.api.getOrder(id, state.ctx.signal);
      state.result.refreshed++;
      if (response.status === 404) {
        missing.push(id);
        continue;
      }
      await ingestOrders(state, [response.body], 'refresh', '/orders/{id}');
      state.progress.tick(1);
    }
  };
  await Promise.all(Array.from({ length: Math.min(REFRESH_CONCURRENCY, ids.length) }, worker));
  if (missing.length) {
    await markOrdersNotFound(state.db, state.account, missing, state.ctx.now);
    state.result.notFound += missing.length;
    state.logger.warn({ count: missing.length, orderIds: missing.slice(0, 20) }, 'open partner orders not found on refresh (404)');
  }
}

/**
 * Currencies, regions (all, onlyBuyAllowed=false) and payment methods, as dated snapshots: a new
 * row only when the content changed. Invalid currencies are quarantined; the valid ones land.
 */
async function syncReferenceData(state: SyncState): Promise<void> {
  const { db, account, api } = state;
  const fetchedAt = state.ctx.now;

  checkAbort(state.ctx);
  const currencies = await api.currencies(state.ctx.signal);
  const list = flattenCurrencies(currencies.body);
  if (!list) {
    await quarantine(state, [
      { account, source: 'partner', endpoint: '/currencies', entity: 'partner_currency', recordKey: null, position: null, rawText: currencies.text, reason: 'currencies: not a JSON array', runId: state.ctx.runId },
    ]);
  } else {
    const rows: CurrencyRowInput[] = [];
    const bad: QuarantineInput[] = [];
    for (const [position, c] of list.entries()) {
      const parsed = currencySchema.safeParse(c);
      if (parsed.success) rows.push(currencyToRow(parsed.data));
      else
        bad.push({ account, source: 'partner', endpoint: '/currencies', entity: 'partner_currency', recordKey: readableKey(c, 'code'), position, rawText: stringifyJsonLossless(c), reason: formatPartnerIssues(parsed.error), runId: state.ctx.runId });
    }
    await db.transaction().execute(async (trx) => {
      const snap = await saveReferenceSnapshot(trx, { account, source: 'partner', kind: 'currencies', fetchedAt, bodyText: stringifyJsonLossless(currencies.body) });
      if (snap.changed) await saveCurrencies(trx, snap.id, rows);
      await quarantineRecords(trx, bad);
      await resolveQuarantined(trx, account, 'partner_currency', rows.map((r) => r.code));
      state.result.snapshots.currencies = snap.changed;
    });
    countQuarantined(state, bad);
  }

  for (const [kind, fetch, schema, key] of [
    ['regions', () => api.regions(state.ctx.signal), regionsSchema, 'regions'],
    ['payment_methods', () => api.paymentMethods(state.ctx.signal), paymentMethodsSchema, 'paymentMethods'],
  ] as const) {
    checkAbort(state.ctx);
    const response = await fetch();
    const parsed = schema.safeParse(response.body);
    if (!parsed.success) {
      await quarantine(state, [
        { account, source: 'partner', endpoint: `/${kind.replace('_', '-')}`, entity: `partner_${kind}`, recordKey: null, position: null, rawText: response.text, reason: formatPartnerIssues(parsed.error), runId: state.ctx.runId },
      ]);
      continue;
    }
    const snap = await saveReferenceSnapshot(db, { account, source: 'partner', kind, fetchedAt, bodyText: stringifyJsonLossless(response.body) });
    state.result.snapshots[key] = snap.changed;
  }
}

/** The quote's currency objects come wrapped in an array; the row keeps only codes and amounts. */
async function syncQuotes(state: SyncState): Promise<void> {
  for (const sample of state.ctx.config.partner.quotes) {
    checkAbort(state.ctx);
    const query = {
      quoteCurrencyCode: sample.quoteCurrencyCode,
      baseCurrencyCode: sample.baseCurrencyCode,
      quoteCurrencyAmount: sample.quoteCurrencyAmount,
      paymentMethod: sample.paymentMethod,
      countryCode: sample.countryCode,
    };
    let response: HttpResponse;
    try {
      response = await state.api.quoteBuy(query, state.ctx.signal);
    } catch (err) {
      // A quote is a sample for fee tracking: a refused pair must not fail the run; bad keys must.
      if (err instanceof HttpAuthError || !(err instanceof HttpStatusError)) throw err;
      state.result.quoteErrors++;
      state.logger.warn({ quote: query, status: err.status, err: { message: err.message } }, 'buy quote refused; skipped');
      continue;
    }
    const parsed = quoteSchema.safeParse(response.body);
    if (!parsed.success) {
      await quarantine(state, [
        { account: state.account, source: 'partner', endpoint: '/quote/buy', entity: 'partner_quote', recordKey: `${sample.quoteCurrencyCode}-${sample.baseCurrencyCode}-${sample.quoteCurrencyAmount}`, position: null, rawText: response.text, reason: formatPartnerIssues(parsed.error), runId: state.ctx.runId },
      ]);
      continue;
    }
    const row = quoteToRow(parsed.data, response.body, { paymentMethod: sample.paymentMethod });
    if (await saveQuote(state.db, state.account, state.ctx.runId, state.ctx.now, row)) state.result.quotes++;
  }
}
