/** Sync cursors and the sync's day-by-day coverage of each stream. */
import { sql } from 'kysely';
import type { Db } from '../db/database.js';
import type { CoverageRow } from '../../domain/index.js';
import type { CoverageRec } from '../../domain/index.js';
import { isLosslessNumber, parseJsonLossless, type LosslessNumber } from '../../decimal/json.js';

/** Reads a sync cursor; null when the stream has never been synced. */
export async function getCursor(db: Db, account: string, source: string, name: string): Promise<string | null> {
  const row = await db
    .selectFrom('sync_cursor')
    .select('value')
    .where((eb) => eb.and({ account, source, name }))
    .executeTakeFirst();
  return row?.value ?? null;
}

/** Moves a cursor. Call it inside the transaction that stores the rows the cursor covers. */
export async function setCursor(db: Db, account: string, source: string, name: string, value: string): Promise<void> {
  await db
    .insertInto('sync_cursor')
    .values({ account, source, name, value, updated_at: new Date() })
    .onConflict((oc) => oc.columns(['account', 'source', 'name']).doUpdateSet({ value, updated_at: new Date() }))
    .execute();
}

export async function listCursors(db: Db, account: string): Promise<Record<string, string>> {
  const rows = await db
    .selectFrom('sync_cursor')
    .select(['source', 'name', 'value'])
    .where('account', '=', account)
    .execute();
  return Object.fromEntries(rows.map((r) => [`${r.source}.${r.name}`, r.value]));
}

/** Coverage rows the sync left unsettled (S_COVERAGE), plus how many rows there are in all. */
export async function unsettledCoverage(db: Db, account: string): Promise<{ unsettled: CoverageRow[]; total: number }> {
  const rows = await db
    .selectFrom('sync_coverage')
    .select(['source', 'stream', 'day', 'settled', 'pages', 'rows', 'detail'])
    .where('account', '=', account)
    .where('settled', '=', false)
    .execute();
  const { n } = await db
    .selectFrom('sync_coverage')
    .select((eb) => eb.fn.countAll<string>().as('n'))
    .where('account', '=', account)
    .executeTakeFirstOrThrow();
  return {
    unsettled: rows.map((r) => ({
      source: r.source,
      stream: r.stream,
      day: String(r.day),
      settled: r.settled,
      pages: r.pages,
      rows: r.rows,
      detail: r.detail,
    })),
    total: Number(n),
  };
}

/**
 * The streams whose records are stored one per row with a time of their own: a day's coverage
 * counts what is stored for it (table, time column) and what is still open in quarantine for it
 * (entity, the raw record's time field), whatever scan read them.
 */
const ACCUMULATED: Record<
  string,
  {
    table: 'partner_order' | 'exchange_fill' | 'exchange_deposit' | 'exchange_withdrawal';
    time: 'created_at' | 'timestamp';
    entity: string;
    rawTime: string;
  }
> = {
  'partner:orders': { table: 'partner_order', time: 'created_at', entity: 'partner_order', rawTime: 'createdAt' },
  'exchange:fills': { table: 'exchange_fill', time: 'timestamp', entity: 'fill', rawTime: 'timestamp' },
  'exchange:deposits': { table: 'exchange_deposit', time: 'timestamp', entity: 'deposit', rawTime: 'timestamp' },
  'exchange:withdrawals': {
    table: 'exchange_withdrawal',
    time: 'timestamp',
    entity: 'withdrawal',
    rawTime: 'timestamp',
  },
};

/**
 * The exchange's order listings, which accumulate too: `orders.<STATUS>` (one per status) and
 * `trades`. Not `orders.open`, the open set that syncOrderLookups lists without a window whatever
 * the day: what it misses is asked by id, so it keeps its last scan's figures.
 */
const isOrderListing = (source: string, stream: string): boolean =>
  source === 'exchange' && (stream === 'trades' || /^orders\.[A-Z_]+$/.test(stream));

const isAccumulated = (source: string, stream: string): boolean =>
  `${source}:${stream}` in ACCUMULATED || isOrderListing(source, stream);

/**
 * Coverage rows of the period's days, by source, stream and day (the workbook's Coverage sheet).
 * Coverage accumulates (issue 17): for the streams of ACCUMULATED and the order listings, rows is
 * everything stored for the day and quarantined everything still open for it, not the last scan's
 * numbers (a nightly scan from a cursor reads only what is new: 86 rows of a day that holds 701).
 * Pages are the scans' own count, added up over runs by the writers (every request ever made for
 * the day). One grouped query per table, whatever the number of streams and days.
 */
export async function coverageOfDays(
  db: Db,
  account: string,
  period: { from: string; to: string },
  /** Records per UTC day of the period the caller already counted, by stream (`exchange:fills`): not counted again. */
  counted: ReadonlyMap<string, ReadonlyMap<string, number>> = new Map(),
): Promise<CoverageRec[]> {
  const scanned = await scannedCoverage(db, account, period);
  const streams = new Set(
    scanned.filter((c) => isAccumulated(c.source, c.stream)).map((c) => `${c.source}:${c.stream}`),
  );
  const stored = new Map<string, number>();
  for (const stream of streams) {
    const acc = ACCUMULATED[stream];
    if (!acc) continue;
    const known = counted.get(stream);
    if (known) {
      for (const [day, n] of known) stored.set(`${stream}:${day}`, n);
      continue;
    }
    // Grouped by the date, printed once per day (exchange-daily.ts).
    const utcDate = sql`(${sql.ref(acc.time)} at time zone 'UTC')::date`;
    const res = await sql<{ day: string; n: string }>`
      select to_char(${utcDate}, 'YYYY-MM-DD') as day, count(*) as n
      from ${sql.table(acc.table)}
      where account = ${account} and ${sql.ref(acc.time)} >= ${`${period.from}T00:00:00Z`} and ${sql.ref(acc.time)} < ${`${period.to}T00:00:00Z`}
      group by ${utcDate}`.execute(db);
    for (const r of res.rows) stored.set(`${stream}:${r.day}`, Number(r.n));
  }
  if ([...streams].some((s) => !ACCUMULATED[s]))
    for (const r of await storedOrdersOfDays(db, account, period))
      stored.set(`exchange:${r.stream}:${r.day}`, Number(r.n));
  const { open, unplaced } = await openQuarantineOfDays(db, account, streams, period);
  return scanned.map((c) => {
    if (!isAccumulated(c.source, c.stream)) return c;
    const stream = `${c.source}:${c.stream}`;
    const key = `${stream}:${c.day}`;
    // The store decides: the scan's own count stands in only when some open entry has no readable
    // day. A scan counts a record twice when a page boundary cuts a millisecond (read again by the
    // next window) and still counts one resolved since, so it would make the figure wobble.
    const scan = unplaced.has(stream) ? c.quarantined : 0;
    return { ...c, rows: stored.get(key) ?? 0, quarantined: Math.max(open.get(key) ?? 0, scan) };
  });
}

/**
 * Stored orders of each day per order listing. The day is the UTC day of `timestamp`, the time the
 * listings' windows select on (sync-orders.ts timestampOf). `orders.<STATUS>`: the orders ever seen
 * in that status, from the state history (exchange_order_state, plus the stored row's own status),
 * not the current status alone: an order listed OPEN that is FILLED by now still counts for the
 * OPEN listing of its day, so a rescan never shrinks that figure. `trades` (what GET /trades lists,
 * "filled orders including partial fills"): the orders ever seen with a filled quantity, or FILLED
 * / PART_FILLED for a record without cumQty. The period's orders come by exchange_order_time and
 * their states by the state table's primary key (account, ex_ord_id, ...); days are dates until
 * the groups are formed (to_char per order cost PGlite a third of the query at 200,000 orders).
 */
async function storedOrdersOfDays(
  db: Db,
  account: string,
  period: { from: string; to: string },
): Promise<Array<{ day: string; stream: string; n: string }>> {
  const res = await sql<{ day: string; stream: string; n: string }>`
    with o as (
      select ex_ord_id, ("timestamp" at time zone 'UTC')::date as day, ord_status, coalesce(cum_qty, 0) as cum_qty
      from exchange_order
      where account = ${account} and "timestamp" >= ${`${period.from}T00:00:00Z`} and "timestamp" < ${`${period.to}T00:00:00Z`}
    ), seen as (
      select o.day, o.ex_ord_id, s.ord_status, s.cum_qty
      from o join exchange_order_state s on s.account = ${account} and s.ex_ord_id = o.ex_ord_id
      union
      select day, ex_ord_id, ord_status, cum_qty from o
    )
    select to_char(seen.day, 'YYYY-MM-DD') as day, k.stream, count(distinct seen.ex_ord_id) as n
    from seen
    cross join lateral (values ('orders.' || seen.ord_status), (case when seen.cum_qty > 0 or seen.ord_status in ('FILLED', 'PART_FILLED') then 'trades' end)) as k(stream)
    where k.stream is not null
    group by seen.day, k.stream`.execute(db);
  return res.rows;
}

/**
 * Open quarantine entries of the accumulated streams, by `source:stream:day` (the raw record's own
 * day), in one read, and the streams holding an entry that no day can take (`unplaced`: its time,
 * or for an order from GET /orders its status, cannot be read). An exchange order is the listing's
 * that read it: GET /trades for trades, GET /orders for `orders.<its raw ordStatus>`; one asked
 * by id (GET /orders/{id}) is no listing's.
 */
async function openQuarantineOfDays(
  db: Db,
  account: string,
  streams: Set<string>,
  period: { from: string; to: string },
): Promise<{ open: Map<string, number>; unplaced: Set<string> }> {
  const byEntity = new Map<string, { stream: string; rawTime: string }>();
  for (const stream of streams) {
    const acc = ACCUMULATED[stream];
    if (acc) byEntity.set(`${stream.split(':')[0]}:${acc.entity}`, { stream, rawTime: acc.rawTime });
  }
  const orderListings = [...streams].filter((s) => !ACCUMULATED[s]);
  const entities = [
    ...new Set(
      [...byEntity.keys()]
        .map((k) => k.slice(k.indexOf(':') + 1))
        .concat(orderListings.length ? ['exchange_order'] : []),
    ),
  ];
  const open = new Map<string, number>();
  const unplaced = new Set<string>();
  if (entities.length === 0) return { open, unplaced };
  const rows = await db
    .selectFrom('quarantine')
    .select(['source', 'entity', 'endpoint', 'raw_text'])
    .where('account', '=', account)
    .where('entity', 'in', entities)
    .where('resolved_at', 'is', null)
    .execute();
  for (const q of rows) {
    const record = parseRecord(q.raw_text);
    let stream: string | null = null;
    let day: string | null = null;
    const acc = byEntity.get(`${q.source}:${q.entity ?? ''}`);
    if (acc) {
      stream = acc.stream;
      day = recordDay(record, acc.rawTime);
    } else if (q.source === 'exchange' && q.entity === 'exchange_order') {
      day = recordDay(record, 'timestamp');
      const status = record?.ordStatus;
      if (/\/trades$/.test(q.endpoint)) stream = 'exchange:trades';
      else if (!/\/orders$/.test(q.endpoint)) continue;
      else if (typeof status === 'string') stream = `exchange:orders.${status}`;
      else {
        // Read by one of the status listings, which one the entry does not tell.
        orderListings.filter((s) => s.startsWith('exchange:orders.')).forEach((s) => unplaced.add(s));
        continue;
      }
    }
    if (stream === null || !streams.has(stream)) continue;
    if (day === null) unplaced.add(stream);
    else if (day >= period.from && day < period.to)
      open.set(`${stream}:${day}`, (open.get(`${stream}:${day}`) ?? 0) + 1);
  }
  return { open, unplaced };
}

/**
 * The UTC day of a quarantined record from its raw time field (ISO text or epoch milliseconds), or null when
 * unreadable.
 */
export function rawRecordDay(rawText: string, field: string): string | null {
  return recordDay(parseRecord(rawText), field);
}

/**
 * A quarantined record's raw text as an object, or null (a quarantined body need not be JSON). Lossless: its amounts
 * stay text.
 */
function parseRecord(rawText: string): Record<string, unknown> | null {
  let record: unknown;
  try {
    record = parseJsonLossless(rawText);
  } catch {
    return null;
  }
  return record && typeof record === 'object' && !Array.isArray(record) ? (record as Record<string, unknown>) : null;
}

function recordDay(record: Record<string, unknown> | null, field: string): string | null {
  if (!record) return null;
  const raw = record[field];
  // Epoch milliseconds fit a double exactly; the lossless parser hands them over as text.
  const v = isLosslessNumber(raw) ? (raw as LosslessNumber).value : raw;
  if (typeof v === 'string' && /^\d{4}-\d{2}-\d{2}[Tt ]/.test(v)) return v.slice(0, 10);
  const ms = typeof v === 'number' ? v : typeof v === 'string' && /^\d{10,15}$/.test(v) ? Number(v) : NaN;
  if (!Number.isFinite(ms)) return null;
  const d = new Date(ms);
  return Number.isNaN(d.getTime()) ? null : d.toISOString().slice(0, 10);
}

/** The sync_coverage rows as the scans wrote them. */
async function scannedCoverage(db: Db, account: string, period: { from: string; to: string }): Promise<CoverageRec[]> {
  const rows = await db
    .selectFrom('sync_coverage')
    .selectAll()
    .where('account', '=', account)
    .where('day', '>=', period.from)
    .where('day', '<', period.to)
    .orderBy('source')
    .orderBy('stream')
    .orderBy('day')
    .execute();
  return rows.map((r) => ({
    source: r.source,
    stream: r.stream,
    day: String(r.day),
    pages: Number(r.pages),
    rows: Number(r.rows),
    quarantined: Number(r.quarantined),
    settled: r.settled,
    runId: r.run_id,
  }));
}

/** Days of the period that have a coverage row of (source, stream), settled or not: the days some sync listed. */
export async function listedDays(
  db: Db,
  account: string,
  source: string,
  stream: string,
  period: { from: string; to: string },
): Promise<Set<string>> {
  const rows = await db
    .selectFrom('sync_coverage')
    .select('day')
    .where((eb) => eb.and({ account, source, stream }))
    .where('day', '>=', period.from)
    .where('day', '<', period.to)
    .execute();
  return new Set(rows.map((r) => String(r.day)));
}

/**
 * The check of a cursor the sync expected to advance: one row `cursor:<name>` (its day is the
 * run's), settled = false while the cursor is stuck with newer records at the API, true once a
 * later sync moved it. The row replaces the cursor's earlier one, whatever its day.
 */
export async function saveCursorCheck(
  db: Db,
  account: string,
  runId: string | null,
  check: { source: string; name: string; settled: boolean; detail: unknown },
  now: Date,
): Promise<void> {
  const stream = `cursor:${check.name}`;
  await db
    .deleteFrom('sync_coverage')
    .where('account', '=', account)
    .where('source', '=', check.source)
    .where('stream', '=', stream)
    .execute();
  await db
    .insertInto('sync_coverage')
    .values({
      account,
      source: check.source,
      stream,
      day: now.toISOString().slice(0, 10),
      pages: 0,
      rows: 0,
      quarantined: 0,
      settled: check.settled,
      detail: JSON.stringify(check.detail),
      run_id: runId,
      updated_at: now,
    })
    .execute();
}

/**
 * Marks a stream's unsettled coverage rows settled: only for a scan that re-read what they miss
 * (the fills walk that completed from a cursor that had not moved; a backfill that read every
 * window of the days `within` completely). Rows a scan did not re-read are never cleared.
 */
export async function settleCoverage(
  db: Db,
  account: string,
  runId: string | null,
  source: string,
  stream: string,
  within: { from: string; to: string } | null,
): Promise<void> {
  await db
    .updateTable('sync_coverage')
    .set({ settled: true, run_id: runId, updated_at: new Date() })
    .where('account', '=', account)
    .where('source', '=', source)
    .where('stream', '=', stream)
    .where('settled', '=', false)
    .$if(within !== null, (q) => q.where('day', '>=', within!.from).where('day', '<', within!.to))
    .execute();
}
