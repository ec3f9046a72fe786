/** Posting raw webhook bodies to a test receiver, and finding where each body ended (stored event, quarantine, conflict). */
import { createHash } from 'node:crypto';
import { sql } from 'kysely';
import { request } from 'undici';
import { loadConfig, type Config } from '../../src/config/load.js';
import type { Store } from '../../src/store/db/database.js';

const base = loadConfig({ env: {} });

/** A receiver config on a free port of 127.0.0.1 that accepts 127.0.0.1. */
export function receiverConfig(bodyLimitBytes = 64 * 1024): Config {
  return {
    ...base,
    webhooks: { port: 0, host: '127.0.0.1', allowedIps: ['127.0.0.1'], bodyLimitBytes },
  } as Config;
}

export async function postBytes(url: string, bytes: Buffer): Promise<{ status: number; text: string }> {
  const res = await request(`${url}/webhooks/orders`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: bytes,
  });
  return { status: res.statusCode, text: await res.body.text() };
}

export function sha256(bytes: Buffer): string {
  return createHash('sha256').update(bytes).digest('hex');
}

function asBuffer(v: unknown): Buffer | null {
  if (v === null || v === undefined) return null;
  if (v instanceof Uint8Array) return Buffer.from(v);
  return null;
}

/** The quarantine entry of these exact bytes (raw_hash is the sha256 of the bytes as delivered), or null. */
export async function quarantinedBody(
  store: Store,
  bytes: Buffer,
): Promise<{ reason: string; recordKey: string | null; rawBytes: Buffer | null; rawText: string } | null> {
  const r = await sql<{ reason: string; record_key: string | null; raw_bytes: unknown; raw_text: string }>`
    select reason, record_key, raw_bytes, raw_text from quarantine where source = 'webhook' and raw_hash = ${sha256(bytes)}`.execute(
    store.db,
  );
  const row = r.rows[0];
  return row
    ? { reason: row.reason, recordKey: row.record_key, rawBytes: asBuffer(row.raw_bytes), rawText: row.raw_text }
    : null;
}

/** The stored event's exact bytes, or null when no event has this eventId. */
export async function storedEventBytes(store: Store, eventId: string): Promise<Buffer | null | undefined> {
  const r = await sql<{ raw_bytes: unknown }>`select raw_bytes from webhook_event where event_id = ${eventId}`.execute(
    store.db,
  );
  return r.rows.length ? asBuffer(r.rows[0]?.raw_bytes) : undefined;
}
