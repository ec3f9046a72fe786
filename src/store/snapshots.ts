import { createHash } from 'node:crypto';
import type { Db } from './database.js';

export interface SnapshotResult {
  id: string;
  /** false when the content equals the latest snapshot of the same kind (nothing inserted). */
  changed: boolean;
}

/**
 * Stores a reference snapshot (currencies, regions, fees, symbols, whitelist, tickers) only when
 * its content differs from the latest one of its kind, so the table reads "in force from when"
 * and re-runs add nothing. Normalized detail rows are written by the caller when `changed`.
 */
export async function saveReferenceSnapshot(
  db: Db,
  input: { account: string; source: 'partner' | 'exchange'; kind: string; fetchedAt: Date; bodyText: string },
): Promise<SnapshotResult> {
  const hash = createHash('sha256').update(input.bodyText).digest('hex');
  const latest = await db
    .selectFrom('reference_snapshot')
    .select(['id', 'content_hash'])
    .where('account', '=', input.account)
    .where('source', '=', input.source)
    .where('kind', '=', input.kind)
    .orderBy('fetched_at', 'desc')
    .orderBy('id', 'desc')
    .limit(1)
    .executeTakeFirst();
  if (latest && latest.content_hash === hash) return { id: latest.id, changed: false };
  const inserted = await db
    .insertInto('reference_snapshot')
    .values({ account: input.account, source: input.source, kind: input.kind, fetched_at: input.fetchedAt, content_hash: hash, body: input.bodyText })
    .returning('id')
    .executeTakeFirstOrThrow();
  return { id: inserted.id, changed: true };
}
