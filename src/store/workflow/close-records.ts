/** The records a period close signs (docs/closing.md): each stream's records of the period in canonical form, read
 * through a server-side cursor (never the period in memory), their digest, and the copy kept with the close.
 */
import { sql, type RawBuilder } from 'kysely';
import type { Db } from '../db/database.js';
import type { Span } from '../db/keyset.js';
import { RECORD_KINDS } from '../../domain/record-kinds.js';
import { EVIDENCE_STREAMS, EvidenceDigest, type EvidenceContext, type EvidenceStream } from '../../domain/evidence.js';

/** Rows per FETCH: a page in memory at a time. */
const FETCH_ROWS = 5_000;

/** Columns that say when a row was read, not what it holds: left out of its document. */
const READ_COLUMNS = ['account', 'change_xid', 'first_seen_at', 'last_seen_at'];

export interface EvidenceRow {
  id: string;
  doc: string;
}

/**
 * The SQL of a stream's table, key and the time that places a record on a day (the record-kind registry's), its
 * columns under the alias `t`.
 */
export function streamTable(stream: EvidenceStream): { table: string; key: string; time: string } {
  const kind = RECORD_KINDS[stream];
  const time = kind.time!.map((c) => `t.${c}`).join(', ');
  return { table: kind.table!, key: kind.key!, time: kind.time!.length > 1 ? `coalesce(${time})` : time };
}

/**
 * A stream's records of the span as they stand: id and document (the row as jsonb text without READ_COLUMNS; the
 * caller's transaction prints times in UTC), in bytewise id order, the same on every server.
 */
export function liveRecords(stream: EvidenceStream, account: string, span: Span): RawBuilder<EvidenceRow> {
  const { table, key, time } = streamTable(stream);
  return sql<EvidenceRow>`
    select t.${sql.ref(key)}::text as id,
      (to_jsonb(t) - ${sql.raw(`array[${READ_COLUMNS.map((c) => `'${c}'`).join(', ')}]`)})::text as doc
    from ${sql.table(table)} t
    where t.account = ${account} and ${sql.raw(time)} >= ${span.from} and ${sql.raw(time)} < ${span.to}
    order by t.${sql.ref(key)}::text collate "C"`;
}

/** A stream's records as signed with a close, in the same order. */
export function signedRecords(closeId: string, stream: EvidenceStream): RawBuilder<EvidenceRow> {
  return sql<EvidenceRow>`
    select record_id as id, doc from close_record
    where close_id = ${closeId} and stream = ${stream}
    order by record_id collate "C"`;
}

let cursors = 0;

/**
 * The rows of a query in FETCH_ROWS pages through a cursor. `trx` must be a transaction (a cursor lives in one) that
 * printed times in UTC (inUtc).
 */
export async function* cursorPages<R>(trx: Db, query: RawBuilder<R>, rows = FETCH_ROWS): AsyncGenerator<R[]> {
  const name = sql.raw(`evidence_${++cursors}`);
  await sql`declare ${name} no scroll cursor for ${query}`.execute(trx);
  try {
    for (;;) {
      const page = await sql<R>`fetch ${sql.raw(String(rows))} from ${name}`.execute(trx);
      if (page.rows.length) yield page.rows;
      if (page.rows.length < rows) return;
    }
  } finally {
    await sql`close ${name}`.execute(trx);
  }
}

/** Times printed in UTC for the rest of the transaction: a document's text must not depend on the server's zone. */
export async function inUtc(trx: Db): Promise<void> {
  await sql`set local timezone to 'UTC'`.execute(trx);
}

/** The digest of the span's records as they stand (or as signed, `closeId`), streamed in a read transaction. */
export async function evidenceDigest(
  trx: Db,
  source: { account: string; span: Span } | { closeId: string },
  context: EvidenceContext,
): Promise<{ digest: string; records: number }> {
  const digest = new EvidenceDigest();
  for (const stream of EVIDENCE_STREAMS) {
    digest.stream(stream);
    const query =
      'closeId' in source ? signedRecords(source.closeId, stream) : liveRecords(stream, source.account, source.span);
    for await (const page of cursorPages(trx, query)) for (const r of page) digest.record(r.id, r.doc);
  }
  return { digest: digest.finish(context), records: digest.records };
}

/** Copies the span's records as they stand into close_record, in the close's transaction. */
export async function keepSignedRecords(trx: Db, closeId: string, account: string, span: Span): Promise<void> {
  for (const stream of EVIDENCE_STREAMS)
    await sql`insert into close_record (close_id, stream, record_id, doc)
      select ${closeId}, ${stream}, r.id, r.doc from (${liveRecords(stream, account, span)}) r`.execute(trx);
}

/** A record whose document differs between the sign-off and now (null: absent on that side). */
export interface DifferingRecord {
  id: string;
  before: string | null;
  after: string | null;
}

/** A stream's records that differ between a close and the span as it stands, in key order. */
export function differingRecords(
  closeId: string,
  stream: EvidenceStream,
  account: string,
  span: Span,
): RawBuilder<DifferingRecord> {
  return sql<DifferingRecord>`
    select coalesce(s.id, l.id) as id, s.doc as before, l.doc as after
    from (${signedRecords(closeId, stream)}) s full join (${liveRecords(stream, account, span)}) l on l.id = s.id
    where s.doc is distinct from l.doc
    order by coalesce(s.id, l.id) collate "C"`;
}

/** Whether any record differs between a close and the span as it stands (stops at the first). */
export async function anyDifference(trx: Db, closeId: string, account: string, span: Span): Promise<boolean> {
  for (const stream of EVIDENCE_STREAMS) {
    const r = await sql`select 1 from (${differingRecords(closeId, stream, account, span)}) d limit 1`.execute(trx);
    if (r.rows.length) return true;
  }
  return false;
}
