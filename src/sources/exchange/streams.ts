/** The exchange's coverage streams and the cursors that say how far each is read. */
import type { Db } from '../../store/db/database.js';
import type { StreamReach } from '../../domain/index.js';
import { listCursors } from '../../store/sync/cursors.js';
import { ORD_STATUSES } from './schemas.js';
import { SOURCE } from './sync-common.js';

/** Epoch ms of the start of the last sync whose fills walk completed: every fill stamped before it is stored. */
export const FILLS_SYNCED_CURSOR = 'fills.syncedTo';

/** The cursor (epoch ms) up to which a listing by time windows ('orders.FILLED', 'trades', 'deposits') is read. */
export function timeCursor(listing: string): string {
  return `${listing}.time`;
}

/**
 * The time cursors (epoch ms) up to which each exchange stream is read completely, as S_COVERAGE
 * asks of each day of a period: a stream of several listings is read as far as its slowest one.
 * The streams are the exchange's of domain/record-kinds.ts (test/unit/source-streams.test.ts).
 */
export const EXCHANGE_STREAM_CURSORS: Readonly<Record<string, readonly string[]>> = {
  fills: [FILLS_SYNCED_CURSOR],
  orders: ORD_STATUSES.map((status) => timeCursor(`orders.${status}`)),
  trades: [timeCursor('trades')],
  deposits: [timeCursor('deposits')],
  withdrawals: [timeCursor('withdrawals')],
};

/** How far each exchange stream is read: up to its slowest cursor, null while one of them never ran. */
export async function exchangeStreamReach(db: Db, account: string): Promise<StreamReach[]> {
  const cursors = await listCursors(db, account);
  return Object.entries(EXCHANGE_STREAM_CURSORS).map(([stream, names]) => ({
    source: SOURCE,
    stream,
    kind: 'cursor' as const,
    syncedTo: slowest(names.map((name) => cursors[`${SOURCE}.${name}`])),
  }));
}

/** The least of the cursors (epoch ms); null when one never ran. */
function slowest(values: ReadonlyArray<string | undefined>): number | null {
  let least: number | null = null;
  for (const v of values) {
    const n = v === undefined ? NaN : Number(v);
    if (!Number.isFinite(n)) return null;
    least = least === null ? n : Math.min(least, n);
  }
  return least;
}
