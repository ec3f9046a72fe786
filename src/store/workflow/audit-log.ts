/** The audit log (docs/closing.md "The audit log"): append-only rows, each chained to the one before by hash. */
import { createHash } from 'node:crypto';
import { sql } from 'kysely';
import type { Db } from '../db/database.js';
import { stringifyJsonLossless } from '../../decimal/json.js';

export interface AuditEntry {
  actor: string;
  /** close, reopen, acknowledge, unacknowledge, note, assign, import */
  action: string;
  /** What it acted on: a close id, a break (`CODE:key`), a workbook. */
  subject: string;
  payload: Record<string, unknown>;
}

export interface AuditRow extends AuditEntry {
  seq: string;
  at: Date;
  prevHash: string;
  hash: string;
}

/** The prev_hash of the first row. */
export const GENESIS = '0'.repeat(64);

/** Serialises appends across sessions and servers' schemas alike: one chain, one writer at a time. */
const AUDIT_LOCK = 7_416_046;

/** hash = SHA-256(prev_hash + the row's canonical text: seq, at (ISO), actor, action, subject, payload JSON). */
export function auditHash(row: Omit<AuditRow, 'hash' | 'payload'> & { payload: string }): string {
  const canonical = JSON.stringify([row.seq, row.at.toISOString(), row.actor, row.action, row.subject, row.payload]);
  return createHash('sha256').update(row.prevHash).update(canonical).digest('hex');
}

/**
 * Appends one row in the caller's transaction, after the last one (a transaction-level lock keeps two appends from
 * taking the same place). The payload is stored as the JSON text that was hashed.
 */
export async function appendAudit(trx: Db, entry: AuditEntry, at: Date): Promise<AuditRow> {
  await sql`select pg_advisory_xact_lock(hashtext(current_schema() || ':audit'), ${AUDIT_LOCK}::int)`.execute(trx);
  const last = await sql<{ seq: string; hash: string }>`
    select a.seq::text as seq, a.hash from audit_log a order by a.seq desc limit 1`.execute(trx);
  const prev = last.rows[0];
  const payload = stringifyJsonLossless(entry.payload);
  const row = { ...entry, seq: String(prev ? BigInt(prev.seq) + 1n : 1n), at, prevHash: prev?.hash ?? GENESIS };
  const hash = auditHash({ ...row, payload });
  await sql`insert into audit_log (seq, at, actor, action, subject, payload, prev_hash, hash)
    values (${row.seq}::bigint, ${at}, ${entry.actor}, ${entry.action}, ${entry.subject}, ${payload}, ${row.prevHash}, ${hash})`.execute(
    trx,
  );
  return { ...row, hash };
}

/** The first link of the chain that does not hold, or null when every row does. */
export interface BrokenLink {
  seq: string;
  reason: string;
}

/** Walks the chain in seq order, a page at a time, and names the first row whose place, link or hash is wrong. */
export async function checkAuditChain(db: Db): Promise<{ rows: number; broken: BrokenLink | null }> {
  let prevHash = GENESIS;
  let expected = 1n;
  let rows = 0;
  for (let after = 0n; ;) {
    const page = await sql<{
      seq: string;
      at: Date;
      actor: string;
      action: string;
      subject: string;
      payload: string;
      prev_hash: string;
      hash: string;
    }>`
      select a.seq::text as seq, a.at, a.actor, a.action, a.subject, a.payload, a.prev_hash, a.hash from audit_log a
      where a.seq > ${String(after)}::bigint order by a.seq limit 1000`.execute(db);
    for (const r of page.rows) {
      rows++;
      const seq = BigInt(r.seq);
      if (seq !== expected) return { rows, broken: { seq: r.seq, reason: `row ${expected} is missing` } };
      if (r.prev_hash !== prevHash)
        return { rows, broken: { seq: r.seq, reason: `its prev_hash is not the hash of row ${seq - 1n}` } };
      const hash = auditHash({ ...r, prevHash: r.prev_hash });
      if (hash !== r.hash) return { rows, broken: { seq: r.seq, reason: 'its content does not match its hash' } };
      prevHash = r.hash;
      expected = seq + 1n;
      after = seq;
    }
    if (page.rows.length < 1000) return { rows, broken: null };
  }
}

/** The audit row of a person's change to a break (acknowledge, note, assign, ...), in the change's transaction. */
export async function auditBreakChange(
  trx: Db,
  account: string,
  b: { code: string; key: string },
  event: { kind: string; text: string | null },
  actor: { by: string; source: string; at?: Date },
): Promise<void> {
  await appendAudit(
    trx,
    {
      actor: actor.by,
      action: event.kind,
      subject: `${b.code}:${b.key}`,
      payload: { account, source: actor.source, text: event.text },
    },
    actor.at ?? new Date(),
  );
}
