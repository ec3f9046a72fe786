/** Every API the product syncs, in the order a sync reads them: a third API is its folder and one line here. */
import type { Db } from '../store/db/database.js';
import type { Period, StreamReach } from '../domain/index.js';
import { exchangeSource } from './exchange/index.js';
import { partnerSource } from './partner/index.js';
import type { Source } from './source.js';

/**
 * The exchange first: the partner sync lists orders by every deposit address the exchange has shown. The exchange
 * always syncs from its cursors up to now: the period selects what is reported, not what is synced, so every flow
 * between two balance snapshots is present.
 */
export const SOURCES: readonly Source[] = [exchangeSource, partnerSource];

/** How far every stream of every source is read, for reconcile's S_COVERAGE of the days no coverage row settles. */
export async function sourcesReach(db: Db, account: string, period: Period): Promise<StreamReach[]> {
  const reach: StreamReach[] = [];
  for (const source of SOURCES) reach.push(...(await source.reach(db, account, period)));
  return reach;
}
