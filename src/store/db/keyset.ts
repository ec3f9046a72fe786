/** Keyset paging on exact stored values, the period span paged queries are bounded by, and the default page size. */
import { sql, type SelectQueryBuilder } from 'kysely';
import type { Period } from '../../domain/period.js';
import type { DB } from './schema.js';
import type { Db } from './database.js';
import { dayStart } from '../../util/dates.js';

/** The period as instants: [from 00:00Z, to 00:00Z). */
export interface Span {
  from: Date;
  to: Date;
}

export function spanOf(period: Pick<Period, 'from' | 'to'>): Span {
  return { from: dayStart(period.from), to: dayStart(period.to) };
}

/**
 * Rows per keyset page when the caller does not say. A page lives (with its prefetched successor)
 * while its consumer works on it; for the workbook that is long enough for V8 to promote it to the
 * old generation, where it piles up as garbage until a full GC: 5,000-row pages let the heap grow
 * to ~200 MB over a ~30 MB live set, 1,000-row pages to ~130 MB, at the same speed (the writer, not
 * the queries, sets the pace). Reconcile, whose rules drop a page at once, asks for bigger pages.
 */
export const PAGE_SIZE = 1_000;

/**
 * A timestamp key as the database prints it (`created_at::text`): paging must compare the stored
 * value exactly. A JS Date keeps milliseconds while timestamptz keeps microseconds, so a page
 * ending inside a millisecond would return rows again on the next page (or forever).
 */
export interface TimeKey {
  at: string;
  id: string;
}

/**
 * One page of rows whose time column is in the span, in (time, id) order after the key `after`:
 * the key is compared as the stored text (TimeKey), never as a JS Date. `idType` is the id
 * column's SQL type. Select `<time>::text` in the query to build the next key from.
 */
export function spanPage<DB, TB extends keyof DB, O>(
  q: SelectQueryBuilder<DB, TB, O>,
  columns: { time: string; id: string; idType: 'text' | 'bigint' },
  span: Span,
  after: TimeKey | null,
  pageSize: number,
): SelectQueryBuilder<DB, TB, O> {
  const time = sql.ref(columns.time);
  const id = sql.ref(columns.id);
  return q
    .where(sql<boolean>`${time} >= ${span.from}`)
    .where(sql<boolean>`${time} < ${span.to}`)
    .$if(after !== null, (qb) =>
      qb.where(sql<boolean>`(${time}, ${id}) > (${after?.at}::timestamptz, ${after?.id}::${sql.raw(columns.idType)})`),
    )
    .orderBy(time)
    .orderBy(id)
    .limit(pageSize);
}

/**
 * Pages a keyset query: fetch(after) returns the page after the given key (null: the first),
 * scanned(page) how many rows the page scanned and the key of its last one. Page n+1 is asked for
 * as soon as page n has arrived, so the database works while the consumer handles page n; at
 * most two pages are in memory. Paging ends on an empty page or one shorter than pageSize.
 */
export async function* keysetScan<P, K>(
  fetch: (after: K | null) => Promise<P>,
  scanned: (page: P) => { count: number; last: K | null },
  pageSize: number,
): AsyncGenerator<P> {
  let pending: Promise<P> | null = fetch(null);
  while (pending) {
    const page: P = await pending;
    const { count, last } = scanned(page);
    if (count === 0) return;
    pending = count < pageSize || last === null ? null : fetch(last);
    // A failed prefetch must not become an unhandled rejection while the consumer works (or stops early).
    pending?.catch(() => {});
    yield page;
  }
}

/** A comma-separated list cut into slices of at most `size` items, in order (none for null or an empty list). */
export function* listSlices(list: string | null, size: number): Generator<string> {
  let start = 0;
  while (list !== null && start < list.length) {
    // The comma after the slice's last item, or the list's end.
    let end = start - 1;
    for (let n = 0; n < size && (n === 0 || end !== -1); n++) end = list.indexOf(',', end + 1);
    if (end === -1) end = list.length;
    yield list.slice(start, end);
    start = end + 1;
  }
}

/** A slice of a sorted id list as the range (after, through] of its ids, and the ids of a subset of the list in it. */
export interface IdRange {
  /** The last id of the slice before (or the range's given start); null: unbounded. */
  after: string | null;
  /** The slice's last id. */
  through: string;
  /** The ids of `subset` (idRanges) within (after, through], in order. */
  subset: string[];
}

/**
 * listSlices as id ranges: each slice of `list` (ascending integer ids, comma-separated) as (after, through], and the
 * ids of `subset` (a sorted sublist of `list`) in it, so a page can read the ids of a range by an index range and look
 * the few others up one by one. `after`: where the first range starts.
 */
export function* idRanges(
  list: string | null,
  size: number,
  subset: string | null,
  after: string | null = null,
): Generator<IdRange> {
  const rest = subset ? subset.split(',') : [];
  let next = 0;
  for (const slice of listSlices(list, size)) {
    const through = slice.slice(slice.lastIndexOf(',') + 1);
    const last = BigInt(through);
    const from = next;
    while (next < rest.length && BigInt(rest[next]!) <= last) next++;
    yield { after, through, subset: rest.slice(from, next) };
    after = through;
  }
}

/**
 * Each item's page, the next `ahead` ones asked for as soon as the last has arrived (the database works while the
 * consumer handles a page; at most `ahead` + 1 pages in memory), as keysetScan does for keyset pages. Pages come in the
 * items' order. `ahead` > 1 asks for pages side by side: on a server each on a session of its own. The generator ends
 * (a page failed, or the consumer stopped) only once the pages asked for have settled: no statement of the scan still
 * runs when its caller goes on.
 */
export async function* prefetched<I, P>(
  items: Iterator<I>,
  fetch: (item: I) => Promise<P>,
  ahead = 1,
): AsyncGenerator<P> {
  const ask = (): Promise<P> | null => {
    const next = items.next();
    if (next.done) return null;
    const page = fetch(next.value);
    // A failed prefetch must not become an unhandled rejection while the consumer works (or stops early).
    page.catch(() => {});
    return page;
  };
  const pending: Array<Promise<P>> = [];
  const fill = () => {
    while (pending.length < ahead) {
      const page = ask();
      if (!page) return;
      pending.push(page);
    }
  };
  try {
    fill();
    while (pending.length) {
      const page: P = await pending.shift()!;
      fill();
      yield page;
    }
  } finally {
    await Promise.allSettled(pending);
  }
}

/** keysetScan over pages that say how many rows they scanned and the key of the last one. */
export function scanPages<P extends { scanned: number; last: K | null }, K>(
  fetch: (after: K | null) => Promise<P>,
  scanSize: number,
): AsyncGenerator<P> {
  return keysetScan(fetch, (page) => ({ count: page.scanned, last: page.last }), scanSize);
}

/** keysetScan over plain row pages, each row's key read by keyOf. */
export function keysetPages<R, K>(
  fetch: (after: K | null) => Promise<R[]>,
  keyOf: (row: R) => K,
  pageSize: number,
): AsyncGenerator<R[]> {
  return keysetScan(
    fetch,
    (rows) => ({ count: rows.length, last: rows.length ? keyOf(rows[rows.length - 1]!) : null }),
    pageSize,
  );
}

/** The time column as the stored text (`time_key`), for spanPages to build the next key from. */
export function timeKey(column: string) {
  return sql<string>`${sql.ref(column)}::text`.as('time_key');
}

/**
 * Keyset pages of the rows of `query` whose time column is in the span, in (time, id) order
 * (spanPage). The query selects the id column and timeKey(time).
 */
export function spanPages<
  DB,
  TB extends keyof DB,
  O extends Record<I, string> & { time_key: string },
  I extends string,
>(
  query: SelectQueryBuilder<DB, TB, O>,
  columns: { time: string; id: I; idType: 'text' | 'bigint' },
  span: Span,
  pageSize: number,
): AsyncGenerator<O[]> {
  const fetch = (after: TimeKey | null) => spanPage(query, columns, span, after, pageSize).execute();
  return keysetPages(fetch, (r) => ({ at: r.time_key, id: r[columns.id] }), pageSize);
}

/** The records of one account in a span, in pages of `pageSize` (PAGE_SIZE when not given). */
export type SpanReader<T> = (db: Db, account: string, span: Span, pageSize?: number) => AsyncGenerator<T[]>;

/**
 * A reader of one account's rows whose time column is in a span, in (time, id) pages (spanPages), each row made a
 * record by toRecord: `select` selects the columns of one table, the reader adds the account and timeKey(time).
 */
export function accountSpanReader<TB extends keyof DB, O extends Record<I, string>, I extends string, T>(
  select: (db: Db) => SelectQueryBuilder<DB, TB, O>,
  columns: { time: string; id: I; idType: 'text' | 'bigint' },
  toRecord: (row: O & { time_key: string }) => T,
): SpanReader<T> {
  return (db, account, span, pageSize = PAGE_SIZE) => {
    const query = select(db)
      .select(timeKey(columns.time))
      .where(sql<boolean>`${sql.ref('account')} = ${account}`);
    return mappedPages(spanPages(query, columns, span, pageSize), toRecord);
  };
}

/** Pages of rows as pages of records, each row made one by toRecord. */
export async function* mappedPages<R, T>(pages: AsyncIterable<R[]>, toRecord: (row: R) => T): AsyncGenerator<T[]> {
  for await (const rows of pages) yield rows.map(toRecord);
}

/**
 * Keyset pages of the rows of `query` in the order of its id column `id` (a reference such as
 * `w.withdrawal_id`), each page after the id of the previous page's last row (keyOf).
 */
export function idPages<DB, TB extends keyof DB, O>(
  query: SelectQueryBuilder<DB, TB, O>,
  id: string,
  keyOf: (row: O) => string,
  pageSize: number,
): AsyncGenerator<O[]> {
  const fetch = (after: string | null) =>
    query
      .$if(after !== null, (q) => q.where(sql<boolean>`${sql.ref(id)} > ${after}`))
      .orderBy(sql.ref(id))
      .limit(pageSize)
      .execute();
  return keysetPages(fetch, keyOf, pageSize);
}

/** The rows of keyset pages, one at a time. */
export async function* eachRow<R>(pages: AsyncIterable<R[]>): AsyncGenerator<R> {
  for await (const rows of pages) yield* rows;
}
