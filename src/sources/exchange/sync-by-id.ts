/** Exchange records fetched one by one (orders, deposits, withdrawals by id), in batches, and how they are stored. */
import type { z } from 'zod';
import { inTransaction, type Db } from '../../store/db/database.js';
import { writeOrSplit } from '../common/record-fallback.js';
import type { Page } from '../common/page.js';
import { checkAbort } from '../common/abort.js';
import { validateRecords, type Validated } from './schemas.js';
import { handleQuarantine, type ExchangeSync } from './sync-common.js';

/** Lookups by id per batch: a kill loses at most a batch of them. */
const BY_ID_BATCH = 50;

/**
 * Fetches records one by one, in batches each stored before the next is asked: `store` gets a batch's pages and the ids
 * answered 404 and returns the rows to count on the progress. The missing ids are logged with `missingWarning`, unless
 * it is null (the caller records them).
 */
export async function fetchByIdInBatches(
  env: ExchangeSync,
  ids: string[],
  get: (id: string) => Promise<Page | null>,
  store: (pages: Page[], missing: string[]) => Promise<number>,
  missingWarning: string | null,
): Promise<void> {
  for (let i = 0; i < ids.length; i += BY_ID_BATCH) {
    checkAbort(env.signal);
    const batch = ids.slice(i, i + BY_ID_BATCH);
    const pages: Page[] = [];
    const missing: string[] = [];
    for (const id of batch) {
      const page = await get(id);
      if (page) pages.push(page);
      else missing.push(id);
    }
    const n = await store(pages, missing);
    env.counters.pages += batch.length;
    env.progress.tick(n, batch.length);
    if (missing.length && missingWarning !== null) env.logger.warn({ ids: missing }, missingWarning);
  }
}

/** How the records of one kind fetched by id are validated, keyed and stored. */
export interface ByIdRecords<T, Row> {
  schema: z.ZodType<T, unknown>;
  idField: string;
  int64Key: boolean;
  toRow: (record: Validated<T>) => Row;
  keyOf: (row: Row) => string;
  upsert: (db: Db, account: string, rows: Row[], observedAt: Date) => Promise<unknown>;
  /** The endpoint and entity their quarantine names. */
  endpoint: string;
  entity: string;
}

/**
 * Stores the records of pages fetched by id with their page's quarantine; a page the database refuses is written
 * record by record (writeOrSplit), each refused record quarantined. `alongside` runs in each transaction that stores.
 * Returns the valid rows and how many of them were stored.
 */
export async function storeFetchedById<T, Row>(
  env: ExchangeSync,
  r: ByIdRecords<T, Row>,
  pages: Page[],
  alongside?: (trx: Db) => Promise<void>,
): Promise<{ rows: number; stored: number }> {
  const validated = validateRecords(
    r.schema,
    pages.flatMap((page) => page.records),
    r.idField,
    r.int64Key,
  );
  const rows = validated.valid.map((v) => r.toRow(v));
  const items = validated.valid.map((v, i) => ({ v, row: rows[i]! }));
  const split = await writeOrSplit(
    env.db,
    items,
    () =>
      inTransaction(env.db, async (trx) => {
        await r.upsert(trx, env.account, rows, env.startedAt);
        await handleQuarantine(env, trx, r.endpoint, r.entity, validated.invalid, rows.map(r.keyOf));
        await alongside?.(trx);
      }),
    (trx, it) => r.upsert(trx, env.account, [it.row], env.startedAt),
    async (trx, kept, refused) => {
      const dbRefused = refused.map((x) => ({
        index: x.item.v.index,
        raw: x.item.v.raw,
        reason: x.reason,
        key: r.keyOf(x.item.row),
      }));
      await handleQuarantine(
        env,
        trx,
        r.endpoint,
        r.entity,
        [...validated.invalid, ...dbRefused],
        kept.map((k) => r.keyOf(k.row)),
      );
      await alongside?.(trx);
    },
  );
  return { rows: rows.length, stored: split ? split.kept.length : rows.length };
}
