/** Webhook events stored by eventId with their exact bytes, repeated eventIds told apart (duplicate or conflict), and quarantined bodies kept byte for byte. */
import { createHash } from 'node:crypto';
import { sql } from 'kysely';
import type { Db } from './database.js';
import type { NewPartnerOrder } from './schema.js';
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
export async function writeWebhookEvent(db: Db, account: string, event: WebhookEventWrite, order: NewPartnerOrder, now: Date): Promise<WebhookWriteResult> {
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
        select body_hash, raw::text as raw from webhook_event where account = ${account} and event_id = ${event.eventId}`.execute(trx);
      const prior = stored.rows[0];
      // Events stored before 0013 have no hash: the caller's hash of their jsonb text decides.
      const priorHash = prior?.body_hash ?? (prior ? legacyHash(prior.raw) : null);
      if (priorHash === event.bodyHash) {
        await sql`update webhook_event set duplicate_count = duplicate_count + 1 where account = ${account} and event_id = ${event.eventId}`.execute(trx);
        return { kind: 'duplicate' };
      }
      await sql`
        insert into webhook_event_conflict (account, event_id, body_hash, stored_body_hash, raw_bytes, raw_text, remote_addr, first_seen_at, last_seen_at)
        values (${account}, ${event.eventId}, ${event.bodyHash}, ${priorHash}, ${event.rawBytes}, ${event.raw}, ${event.remoteAddr}, ${now}, ${now})
        on conflict (account, event_id, body_hash) do update set seen_count = webhook_event_conflict.seen_count + 1, last_seen_at = excluded.last_seen_at`.execute(trx);
      return { kind: 'conflict', storedBodyHash: priorHash };
    }
    const result = await upsertPartnerOrders(trx, account, [order], 'webhook', now);
    const applied = result.inserted.length + result.updated.length > 0;
    if (applied) await sql`update webhook_event set applied = true where account = ${account} and event_id = ${event.eventId}`.execute(trx);
    return { kind: 'stored', applied };
  });
}

/** Hook for events stored before migration 0013 (no body_hash): set by the webhook module to hash their jsonb text canonically. */
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
      last_seen_at = excluded.last_seen_at, seen_count = quarantine.seen_count + 1, reason = excluded.reason`.execute(db);
}

/** Conflicting webhook events (repeated eventId, other body): distinct bodies and deliveries, for the report. */
export async function webhookConflictCounts(db: Db, account: string): Promise<{ conflicts: number; deliveries: number }> {
  const r = await sql<{ n: string; d: string | null }>`
    select count(*) as n, sum(seen_count) as d from webhook_event_conflict where account = ${account}`.execute(db);
  return { conflicts: Number(r.rows[0]?.n ?? 0), deliveries: Number(r.rows[0]?.d ?? 0) };
}
