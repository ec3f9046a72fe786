/** The partner's coverage stream and cursors: the day listings of orders, and when each wallet's history was read. */
import type { Db } from '../../store/db/database.js';
import type { Period, StreamReach } from '../../domain/index.js';
import { RECORD_KINDS, type RecordKind } from '../../domain/record-kinds.js';
import { listedDays } from '../../store/sync/cursors.js';
import { SOURCE } from './sync-common.js';

/** The stream a record kind is listed under at the partner, as domain/record-kinds.ts names it ('partner:orders'). */
function registeredStream(kind: RecordKind): string {
  const stream = kind.streams.find((s) => s.startsWith(`${SOURCE}:`));
  if (stream === undefined) throw new Error(`domain/record-kinds.ts names no ${SOURCE} stream of ${kind.name}`);
  return stream.slice(SOURCE.length + 1);
}

/** The day listings of orders (sync-days.ts): one coverage row per day listed. */
export const ORDERS_STREAM = registeredStream(RECORD_KINDS.partnerOrder);

/** Cursor recording when a wallet's whole order history was read (value: ISO time; sync-wallets.ts). */
export function walletHistoryCursor(wallet: string): string {
  return `wallet-history:${wallet}`;
}

/** How far the orders are read: a day of `period` is read once some sync listed it (settled or not). */
export async function partnerStreamReach(db: Db, account: string, period: Period): Promise<StreamReach[]> {
  const days = await listedDays(db, account, SOURCE, ORDERS_STREAM, period);
  return [{ source: SOURCE, stream: ORDERS_STREAM, kind: 'days', days }];
}
