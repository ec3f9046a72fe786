/** Webhook events stored by eventId with their exact bytes, repeated eventIds told apart (duplicate or conflict), and
 * quarantined bodies kept byte for byte.
 */
import { createHash } from 'node:crypto';
import { sql } from 'kysely';
import type { Db } from '../db/database.js';
import type { NewPartnerOrder } from '../db/schema.js';
import { upsertPartnerOrders, type WebhookEventInput } from './partner-orders.js';

export interface WebhookEventWrite extends WebhookEventInput {
  /** The body exactly as delivered. */
  rawBytes: Uint8Array;
  /** sha256 of the event's canonical JSON (src/webhooks/canonical.ts). */
  bodyHash: string;
}

export type WebhookWriteResult =
  | { kind: 'stored'; applied: boolean }
  | { kind: 'duplicate' }
  /** Same eventId, different body: kept in webhook_event_conflict, the stored event unchanged. */
  | { kind: 'conflict'; storedBodyHash: string | null };

/**
 * Stores an event once by eventId and applies it to its order, in one short transaction: when it
 * commits, the event is durable and the order reflects it, so the caller can acknowledge. A
 * repeated eventId with the same canonical body bumps duplicate_count; with another body it is
 * kept as a conflict (for the report), never dropped and never applied.
 */
export async function writeWebhookEvent(
  db: Db,
  account: string,
  event: WebhookEventWrite,
  order: NewPartnerOrder,
  now: Date,
): Promise<WebhookWriteResult> {
  return db.transaction().execute(async (trx) => {
    const inserted = await sql<{ event_id: string }>`
      insert into webhook_event (account, event_id, order_id, order_state, order_state_updated_at, order_state_updated_at_text,
        order_state_updated_key, created_at_text, received_at, remote_addr, extra_fields, raw, raw_bytes, body_hash)
      values (${account}, ${event.eventId}, ${event.orderId}, ${event.orderState}, ${event.orderStateUpdatedKey}, ${event.orderStateUpdatedAt},
        ${event.orderStateUpdatedKey}, ${event.createdAtText}, ${now}, ${event.remoteAddr}, ${event.extraFields}, ${event.raw}, ${event.rawBytes}, ${event.bodyHash})
      on conflict (account, event_id) do nothing
      returning event_id`.execute(trx);
    if (inserted.rows.length === 0) {
      const stored = await sql<{ body_hash: string | null; raw: string }>`
        select body_hash, raw::text as raw from webhook_event where account = ${account} and event_id = ${event.eventId}`.execute(
        trx,
      );
      const prior = stored.rows[0];
      // Events stored before 0013 have no hash: the caller's hash of their jsonb text decides.
      const priorHash = prior?.body_hash ?? (prior ? legacyHash(prior.raw) : null);
      if (priorHash === event.bodyHash) {
        await sql`update webhook_event set duplicate_count = duplicate_count + 1 where account = ${account} and event_id = ${event.eventId}`.execute(
          trx,
        );
        return { kind: 'duplicate' };
      }
      await sql`
        insert into webhook_event_conflict (account, event_id, body_hash, stored_body_hash, raw_bytes, raw_text, remote_addr, first_seen_at, last_seen_at)
        values (${account}, ${event.eventId}, ${event.bodyHash}, ${priorHash}, ${event.rawBytes}, ${event.raw}, ${event.remoteAddr}, ${now}, ${now})
        on conflict (account, event_id, body_hash) do update set seen_count = webhook_event_conflict.seen_count + 1, last_seen_at = excluded.last_seen_at`.execute(
        trx,
      );
      return { kind: 'conflict', storedBodyHash: priorHash };
    }
    const result = await upsertPartnerOrders(trx, account, [order], 'webhook', now);
    const applied = result.inserted.length + result.updated.length > 0;
    if (applied)
      await sql`update webhook_event set applied = true where account = ${account} and event_id = ${event.eventId}`.execute(
        trx,
      );
    return { kind: 'stored', applied };
  });
}

/**
 * Hook for events stored before migration 0013 (no body_hash): set by the webhook module to hash their jsonb text
 * canonically.
 */
let legacyHash: (jsonText: string) => string = (text) => createHash('sha256').update(text).digest('hex');
export function setLegacyBodyHash(fn: (jsonText: string) => string): void {
  legacyHash = fn;
}

export interface WebhookQuarantineInput {
  account: string;
  endpoint: string;
  /** The eventId when it could be read and is storable (a key of bounded length without NUL), else null. */
  recordKey: string | null;
  rawBytes: Uint8Array;
  /** The body as text when it is valid UTF-8 without NUL, else a base64 rendering (raw_bytes holds the exact bytes). */
  rawText: string;
  reason: string;
}

/**
 * Keeps a webhook body that was not stored as an event: exact bytes, a printable text and the
 * reason. The same bytes at the same endpoint are kept once and counted (the sender's retries).
 */
export async function quarantineWebhookBody(db: Db, q: WebhookQuarantineInput, now: Date): Promise<void> {
  const hash = createHash('sha256').update(q.rawBytes).digest('hex');
  await sql`
    insert into quarantine (account, source, endpoint, entity, record_key, position, raw_text, raw_hash, reason, first_seen_at, last_seen_at, raw_bytes)
    values (${q.account}, 'webhook', ${q.endpoint}, 'webhook_event', ${q.recordKey}, null, ${q.rawText}, ${hash}, ${q.reason}, ${now}, ${now}, ${q.rawBytes})
    on conflict (account, source, endpoint, raw_hash) do update set
      last_seen_at = excluded.last_seen_at, seen_count = quarantine.seen_count + 1, reason = excluded.reason`.execute(
    db,
  );
}

export interface WebhookBatchItem {
  event: WebhookEventWrite;
  order: NewPartnerOrder;
}

/**
 * Writes many events in one transaction (group commit: one WAL flush for the batch, a handful
 * of statements whatever its size), with the outcome of each as writeWebhookEvent would give it.
 * A repeated eventId within the batch is judged against the first one. The caller falls back to
 * writeWebhookEvent one by one when the batch fails for anything but a lost database.
 */
export async function writeWebhookEvents(
  db: Db,
  account: string,
  items: WebhookBatchItem[],
  now: Date,
): Promise<WebhookWriteResult[]> {
  if (items.length === 1) return [await writeWebhookEvent(db, account, items[0]!.event, items[0]!.order, now)];
  return db.transaction().execute(async (trx) => {
    const first = new Map<string, number>();
    items.forEach((it, i) => {
      if (!first.has(it.event.eventId)) first.set(it.event.eventId, i);
    });
    const candidates = [...first.values()].map((i) => items[i]!);
    const values = candidates.map(
      ({ event: e }) =>
        sql`(${account}, ${e.eventId}, ${e.orderId}, ${e.orderState}, ${e.orderStateUpdatedKey}::timestamptz, ${e.orderStateUpdatedAt}, ${e.orderStateUpdatedKey}, ${e.createdAtText}, ${now}::timestamptz, ${e.remoteAddr}, ${e.extraFields}::text[], ${e.raw}::jsonb, ${e.rawBytes}::bytea, ${e.bodyHash})`,
    );
    const inserted = await sql<{ event_id: string }>`
      insert into webhook_event (account, event_id, order_id, order_state, order_state_updated_at, order_state_updated_at_text,
        order_state_updated_key, created_at_text, received_at, remote_addr, extra_fields, raw, raw_bytes, body_hash)
      values ${sql.join(values)}
      on conflict (account, event_id) do nothing
      returning event_id`.execute(trx);
    const isNew = new Set(inserted.rows.map((r) => r.event_id));
    const results: WebhookWriteResult[] = new Array(items.length);
    // Every other delivery is a repeat: of a stored event, or of this batch's first delivery.
    const repeats = items
      .map((it, i) => ({ it, i }))
      .filter(({ it, i }) => !(isNew.has(it.event.eventId) && first.get(it.event.eventId) === i));
    if (repeats.length) {
      const ids = [...new Set(repeats.map((r) => r.it.event.eventId))];
      const stored = await sql<{ event_id: string; body_hash: string | null; raw: string }>`
        select event_id, body_hash, raw::text as raw from webhook_event where account = ${account} and event_id in (${sql.join(ids)})`.execute(
        trx,
      );
      const hashOf = new Map(stored.rows.map((r) => [r.event_id, r.body_hash ?? legacyHash(r.raw)]));
      const dupCounts = new Map<string, number>();
      for (const { it, i } of repeats) {
        const prior = hashOf.get(it.event.eventId) ?? null;
        if (prior === it.event.bodyHash) {
          dupCounts.set(it.event.eventId, (dupCounts.get(it.event.eventId) ?? 0) + 1);
          results[i] = { kind: 'duplicate' };
        } else {
          const e = it.event;
          await sql`
            insert into webhook_event_conflict (account, event_id, body_hash, stored_body_hash, raw_bytes, raw_text, remote_addr, first_seen_at, last_seen_at)
            values (${account}, ${e.eventId}, ${e.bodyHash}, ${prior}, ${e.rawBytes}, ${e.raw}, ${e.remoteAddr}, ${now}, ${now})
            on conflict (account, event_id, body_hash) do update set seen_count = webhook_event_conflict.seen_count + 1, last_seen_at = excluded.last_seen_at`.execute(
            trx,
          );
          results[i] = { kind: 'conflict', storedBodyHash: prior };
        }
      }
      if (dupCounts.size) {
        const json = JSON.stringify([...dupCounts].map(([id, n]) => ({ id, n })));
        await sql`update webhook_event w set duplicate_count = w.duplicate_count + v.n
          from json_to_recordset(${json}::json) as v(id text, n integer) where w.account = ${account} and w.event_id = v.id`.execute(
          trx,
        );
      }
    }
    const fresh = candidates.filter((it) => isNew.has(it.event.eventId));
    const moved = new Set<string>();
    if (fresh.length) {
      const result = await upsertPartnerOrders(
        trx,
        account,
        fresh.map((it) => it.order),
        'webhook',
        now,
      );
      for (const id of [...result.inserted, ...result.updated]) moved.add(id);
    }
    // The event that moved its order: the newest of the batch for each order that moved.
    const winner = new Map<string, WebhookBatchItem>();
    for (const it of fresh) {
      if (!moved.has(it.event.orderId)) continue;
      const prev = winner.get(it.event.orderId);
      if (!prev || prev.event.orderStateUpdatedKey <= it.event.orderStateUpdatedKey) winner.set(it.event.orderId, it);
    }
    const appliedIds = [...winner.values()].map((it) => it.event.eventId);
    if (appliedIds.length)
      await sql`update webhook_event set applied = true where account = ${account} and event_id in (${sql.join(appliedIds)})`.execute(
        trx,
      );
    const applied = new Set(appliedIds);
    items.forEach((it, i) => {
      if (!results[i]) results[i] = { kind: 'stored', applied: applied.has(it.event.eventId) };
    });
    return results;
  });
}
