/** Partner sync step: stored orders still PENDING or WITHDRAWING read again, by a short day listing or by id, whichever
 * costs fewer requests.
 */
import { addDays } from '../../util/dates.js';
import { listOpenOrdersByDay, markOrdersNotFound } from '../../store/sync/partner-orders.js';
import { checkAbort } from '../common/abort.js';
import { cheapestRefresh, dayIsOver } from './plan.js';
import { requireTimestampKey } from './transform.js';
import { SOURCE, storeOrders, validateOrders, type PartnerSync } from './sync-common.js';
import { readListing } from './sync-listing.js';

/** Refresh by id: requests in flight at once (the client's rate limit still applies). */
const REFRESH_CONCURRENCY = 4;

/**
 * Every stored order still PENDING or WITHDRAWING is read again so that late state changes land;
 * orders already received in this sync are fresh and skipped. Per creation day, the cheapest way
 * (cheapestRefresh): by id, one request per order, or (a day that is over, so its list no longer
 * moves) listing the day again, newest first, only until the page that passes the last open
 * order worth listing for, and the older ones by id: the open orders of a day are mostly its last
 * ones, so that is a few pages where the whole day is hundreds. An open order the listing did not
 * return is fetched by id too. A 404 is recorded on the order. `ofDay` limits the refresh to the open orders created
 * on the days it accepts (default: every day).
 */
export async function refreshOpenOrders(env: PartnerSync, ofDay: (day: string) => boolean = () => true): Promise<void> {
  const { params } = env.config.partner;
  const ids: string[] = [];
  for (const group of await listOpenOrdersByDay(env.db, env.account)) {
    if (!ofDay(group.day)) continue;
    const open = group.open.filter((o) => !env.written.has(o.orderId));
    if (open.length === 0) continue;
    const plan = dayIsOver(group.day, env.now) ? cheapestRefresh(open.map((o) => o.rank)) : { listThrough: 0 };
    if (plan.listThrough > 0) {
      env.progress.setStage(`refresh of ${group.day}`);
      const through = requireTimestampKey(open[plan.listThrough - 1]!.createdAt);
      await readListing(
        env,
        { [params.from]: group.day, [params.to]: addDays(group.day, 1) },
        `open orders of ${group.day}`,
        {
          day: group.day,
          stopAfter: (page) => page.oldestCreatedKey !== null && page.oldestCreatedKey < through,
        },
      );
      env.result.relistedForRefresh.push(group.day);
    }
    ids.push(...open.filter((o) => !env.written.has(o.orderId)).map((o) => o.orderId));
  }
  if (ids.length === 0) return;
  env.progress.setStage(`refresh of ${ids.length} open orders`);
  const missing: string[] = [];
  let next = 0;
  const worker = async () => {
    while (next < ids.length) {
      const id = ids[next++] as string;
      checkAbort(env.signal, SOURCE);
      const page = await env.client.getOrder(id, env.signal);
      env.result.refreshed++;
      if (page === null) {
        missing.push(id);
        continue;
      }
      await storeOrders(env, validateOrders(page.records), 'refresh', '/orders/{id}');
      env.progress.tick(1);
    }
  };
  await Promise.all(Array.from({ length: Math.min(REFRESH_CONCURRENCY, ids.length) }, worker));
  if (missing.length) {
    await markOrdersNotFound(env.db, env.account, missing, env.now);
    env.result.notFound += missing.length;
    env.logger.warn(
      { count: missing.length, orderIds: missing.slice(0, 20) },
      'open partner orders not found on refresh (404)',
    );
  }
}
