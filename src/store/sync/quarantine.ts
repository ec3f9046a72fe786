/** Records that failed validation: kept with their raw body and reason, and the unresolved ones read back. */
import { createHash } from 'node:crypto';
import { sql, type RawBuilder } from 'kysely';
import type { Db } from '../db/database.js';
import type { QuarantinedRecord } from '../../domain/index.js';

export interface QuarantineInput {
  account: string;
  source: 'partner' | 'exchange' | 'webhook';
  endpoint: string;
  /** Kind of record: fill, exchange_order, deposit, withdrawal, partner_order, webhook_event, ... */
  entity: string;
  /** The record's natural id when it could be read (becomes the S_QUARANTINE break key). */
  recordKey: string | null;
  /** Index of the record in its page, when no id could be read. */
  position: number | null;
  rawText: string;
  reason: string;
  runId?: string | null;
}

/**
 * Keeps a record that failed validation, with its raw body and the reason. The same raw body
 * from the same endpoint is stored once (re-runs are idempotent) and counted.
 */
export async function quarantineRecords(db: Db, records: QuarantineInput[]): Promise<void> {
  if (records.length === 0) return;
  const now = new Date();
  const values = records
    .map((r) => storableInput(r))
    .map((r) => ({
      account: r.account,
      source: r.source,
      endpoint: r.endpoint,
      entity: r.entity,
      record_key: r.recordKey,
      position: r.position,
      raw_text: r.rawText,
      raw_hash: createHash('sha256').update(r.rawText).digest('hex'),
      reason: r.reason,
      run_id: r.runId ?? null,
      first_seen_at: now,
      last_seen_at: now,
    }));
  // Dedupe within the batch: "on conflict" cannot touch the same row twice in one statement.
  const unique = [...new Map(values.map((v) => [`${v.account}|${v.source}|${v.endpoint}|${v.raw_hash}`, v])).values()];
  await db
    .insertInto('quarantine')
    .values(unique)
    .onConflict((oc) =>
      oc.columns(['account', 'source', 'endpoint', 'raw_hash']).doUpdateSet((eb) => ({
        last_seen_at: now,
        seen_count: eb('quarantine.seen_count', '+', 1),
        reason: eb.ref('excluded.reason'),
      })),
    )
    .execute();
}

/** The longest record key kept in its indexed column (the sources' ids are at most 200 characters). */
const MAX_RECORD_KEY = 200;

// eslint-disable-next-line no-control-regex -- NUL is what is looked for: Postgres text cannot hold it
const UNSTORABLE = /\u0000|[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g;

/**
 * The quarantine's own columns are text, which holds neither NUL nor a lone surrogate: those are
 * written as their JSON escape (\u0000, \ud800), which inside a JSON string is the same value,
 * so the record that could not be stored is still kept.
 */
function storableInput(r: QuarantineInput): QuarantineInput {
  const esc = (t: string) => t.replace(UNSTORABLE, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
  // A key is indexed (a btree entry holds about 2700 bytes): a longer one is kept in the raw text only.
  const key = r.recordKey === null || r.recordKey.length > MAX_RECORD_KEY ? null : esc(r.recordKey);
  return { ...r, rawText: esc(r.rawText), reason: esc(r.reason), recordKey: key };
}

/**
 * A later fetch of the same record validated: its quarantine entries are resolved (and so is
 * its S_QUARANTINE break at the next reconcile).
 */
export async function resolveQuarantined(
  db: Db,
  account: string,
  entity: string,
  recordKeys: string[],
): Promise<number> {
  if (recordKeys.length === 0) return 0;
  const result = await sql<{
    n: number;
  }>`with ${resolving(account, entity, recordKeys)} select count(*)::int as n from rq`.execute(db);
  return result.rows[0]!.n;
}

/**
 * The update that resolves the open entries of `recordKeys`, as a data-modifying CTE named rq (one row per entry
 * resolved): resolveQuarantined runs it alone, a statement that writes the records runs it beside their writes.
 */
export function resolving(account: string, entity: string, recordKeys: string[]): RawBuilder<unknown> {
  return sql`rq as (
    update quarantine set resolved_at = ${new Date()}
    where account = ${account} and entity = ${entity} and record_key = any(${recordKeys}::text[]) and resolved_at is null
    returning 1)`;
}

/** Every record still in quarantine (S_QUARANTINE), oldest first. */
export async function unresolvedQuarantine(db: Db, account: string): Promise<QuarantinedRecord[]> {
  const rows = await db
    .selectFrom('quarantine')
    .select(['id', 'source', 'endpoint', 'entity', 'record_key', 'position', 'reason', 'first_seen_at'])
    .where('account', '=', account)
    .where('resolved_at', 'is', null)
    .orderBy('id')
    .execute();
  return rows.map((r) => ({
    id: r.id,
    source: r.source,
    endpoint: r.endpoint,
    entity: r.entity,
    recordKey: r.record_key,
    position: r.position,
    reason: r.reason,
    firstSeenAt: r.first_seen_at,
  }));
}
