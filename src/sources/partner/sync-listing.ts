/** An order listing of the partner sync: offset pages as an async generator of validated pages, stored page by page. */
import type { QueryValue } from '../../http/client.js';
import { checkAbort } from '../common/abort.js';
import type { Page } from '../common/page.js';
import { ORDERS_PAGE_LIMIT, PartnerShapeError } from './client.js';
import {
  mergeValidated,
  ORDERS_ENDPOINT,
  quarantinePage,
  SOURCE,
  storeOrders,
  validateOrders,
  type PartnerSync,
  type ValidatedOrders,
} from './sync-common.js';

/** Guard against a server that ignores the offset parameter and returns full pages forever. */
const MAX_PAGES_PER_LISTING = 2_000;

/**
 * One answer of the order listing: its records, or null when the body was not a JSON array. That
 * body is quarantined whole, as the page of `what`, and the listing ends there.
 */
export async function fetchOrders(
  env: PartnerSync,
  query: Record<string, QueryValue>,
  what: string,
): Promise<unknown[] | null> {
  let page: Page;
  try {
    page = await env.client.listOrders(query, env.signal);
  } catch (err) {
    if (!(err instanceof PartnerShapeError)) throw err;
    env.result.pages++;
    await quarantinePage(env, ORDERS_ENDPOINT, err.response, `${what}: the orders list is not a JSON array`);
    return null;
  }
  env.result.pages++;
  return page.records;
}

export interface OrdersPage {
  /** The page's orders, validated; null when the body was not a list (quarantined whole: the listing ends there). */
  orders: ValidatedOrders | null;
  /** Records in the page. */
  size: number;
  /** A short page: the listing ended normally with it. */
  last: boolean;
}

/**
 * Pages of a listing stored by one statement: the statement's own cost (planning, the state rows' and quarantine's
 * parts, a round trip) is paid once per 200 orders rather than once per 50. A run stopped midway reads the pages of
 * an unfinished listing again (its day is recorded only once every page is stored), so a larger write loses nothing.
 */
const PAGES_PER_WRITE = 4;

/** Full pages after which a listing read to its end asks two pages ahead (a long listing: a day of a busy account). */
const LONG_LISTING_PAGES = 4;

/**
 * Pages of one order listing (limit 50, the configured offset parameter) as an async generator
 * of validated pages, until a short page. The caller stores the pages as they come (readListing:
 * at most two in flight), so nothing buffers the history. Without `prefetch` the next page is asked for only when the
 * caller takes it, so a caller that stops early makes no further request; with it, the next page
 * is asked for as soon as a full page arrives, while the caller stores this one (a listing read
 * to its end asks for exactly the same pages), and once the listing has shown itself long
 * (LONG_LISTING_PAGES full pages), two pages ahead: the pages' round trips overlap, for at most
 * one request past the end of a long listing. The generator's end waits for the pages still in
 * flight, so nothing of a listing is written after its caller has stopped.
 */
export async function* orderPages(
  env: PartnerSync,
  query: Record<string, QueryValue>,
  label: string,
  options: { prefetch?: boolean } = {},
): AsyncGenerator<OrdersPage> {
  const offsetName = env.config.partner.params.offset;
  const request = (offset: number) => {
    const answer = fetchOrders(env, { ...query, limit: ORDERS_PAGE_LIMIT, [offsetName]: offset }, label);
    // Its failure is the iteration's that takes it to throw, or nobody's when the caller stops first.
    answer.catch(() => {});
    return answer;
  };
  let previousPage = '';
  /** Pages asked for ahead, by offset, in offset order. */
  const ahead = new Map<number, Promise<unknown[] | null>>();
  try {
    for (let offset = 0, pages = 0; ; offset += ORDERS_PAGE_LIMIT) {
      if (pages >= MAX_PAGES_PER_LISTING) {
        env.logger.warn(
          { label, pages },
          'order listing stopped at the page guard: the offset parameter may be ignored by the server',
        );
        return;
      }
      checkAbort(env.signal, SOURCE);
      const records = await (ahead.get(offset) ?? request(offset));
      ahead.delete(offset);
      pages++;
      if (!records) {
        yield { orders: null, size: 0, last: false };
        return;
      }
      const orders = validateOrders(records);
      if (records.length < ORDERS_PAGE_LIMIT) {
        yield { orders, size: records.length, last: true };
        return;
      }
      // A full page identical to the previous one: the server ignores the offset parameter
      // (wrong partner.params.offset). Paging on would loop forever and find nothing new.
      const pageIds = orders.ids.join('\n');
      const repeated = pageIds === previousPage;
      previousPage = pageIds;
      if (options.prefetch && !repeated) {
        const depth = pages >= LONG_LISTING_PAGES ? 2 : 1;
        for (let k = 1; k <= depth && pages + k <= MAX_PAGES_PER_LISTING; k++) {
          const at = offset + k * ORDERS_PAGE_LIMIT;
          if (!ahead.has(at)) ahead.set(at, request(at));
        }
      }
      yield { orders, size: records.length, last: false };
      if (repeated) {
        env.logger.warn(
          { label, offsetParam: offsetName, offset },
          'the same full page came back for the next offset: check partner.params.offset (the wire name of the offset ' +
            'parameter)',
        );
        return;
      }
    }
  } finally {
    await Promise.allSettled(ahead.values());
  }
}

export interface Listing {
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
 * Reads one order listing, storing each page as it arrives, and sums it up. `day`: the UTC day a
 * day listing asked for (orders of other days are counted); `stopAfter`: a stored page after
 * which the listing has read enough.
 */
export async function readListing(
  env: PartnerSync,
  query: Record<string, QueryValue>,
  label: string,
  options: { day?: string; stopAfter?: (page: ValidatedOrders) => boolean } = {},
): Promise<Listing> {
  const listing: Listing = {
    pages: 0,
    rows: 0,
    ids: new Set(),
    duplicates: 0,
    quarantined: 0,
    outsideDay: 0,
    complete: false,
  };
  // A listing that may stop early asks for a page only when it needs it; one read to its end asks ahead. Pages are
  // stored PAGES_PER_WRITE at a time, one statement each; on a Postgres server two such writes run at once, each on a
  // session of its own (rows in key order: no deadlock). Every store has settled before the listing is summed up, so
  // a day is never recorded ahead of its pages.
  const depth = env.parallelWrites ? 2 : 1;
  const storing: Array<Promise<number>> = [];
  const settleOldest = async () => {
    listing.quarantined += await storing.shift()!;
  };
  let batch: ValidatedOrders[] = [];
  const flush = async () => {
    if (!batch.length) return;
    while (storing.length >= depth) await settleOldest();
    const stored = storeOrders(env, mergeValidated(batch), 'poll', ORDERS_ENDPOINT);
    batch = [];
    // Observed in order by settleOldest(); this keeps a failure from being reported as unhandled meanwhile.
    stored.catch(() => {});
    storing.push(stored);
  };
  try {
    for await (const page of orderPages(env, query, label, { prefetch: !options.stopAfter })) {
      listing.pages++;
      if (page.orders === null) break;
      batch.push(page.orders);
      listing.rows += page.size;
      listing.quarantined += page.orders.invalid.length;
      if (options.day) listing.outsideDay += page.orders.createdDays.filter((d) => d !== options.day).length;
      for (const id of page.orders.ids) {
        if (listing.ids.has(id)) listing.duplicates++;
        else listing.ids.add(id);
      }
      env.progress.tick(page.size);
      if (page.last) {
        listing.complete = true;
        break;
      }
      if (options.stopAfter?.(page.orders)) break;
      if (batch.length >= PAGES_PER_WRITE) await flush();
    }
    await flush();
    while (storing.length) await settleOldest();
  } finally {
    // On a failure, the stores in flight finish before the caller records anything.
    await Promise.allSettled(storing);
  }
  return listing;
}
