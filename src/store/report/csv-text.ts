/** The biggest detail files (fills, partner orders) as CSV text Postgres writes: each row's line formatted in SQL
 * and streamed by COPY on a server (keyset pages of lines joined in SQL on the embedded database), so a million fills
 * cost no row object, Decimal or Date on the client.
 */
import { sql, type RawBuilder } from 'kysely';
import pg from 'pg';
import type { Db, Store } from '../db/database.js';
import { binaryCopyTexts } from './copy-binary.js';
import { keysetScan, type Span, type TimeKey } from '../db/keyset.js';
import { FORMULA_START, PLAIN_NUMBER } from '../../util/spreadsheet-text.js';

/** Where CSV text is read from: the store's queries, and on a server its COPY stream. */
export type CsvReader = Pick<Store, 'db' | 'copyOut'>;

/** A value written into the SQL text (COPY takes no parameters), quoted and escaped as libpq does. */
export function literal(value: string): RawBuilder<unknown> {
  return sql.raw(pg.escapeLiteral(value));
}

/**
 * The lines a query selects (one text column, each line with its CRLF) by one COPY of binary format, whose values
 * arrive unescaped. The query's values must be literals (`literal`): COPY takes no parameters.
 */
export function copiedLines(
  db: Db,
  copyOut: (query: string) => AsyncIterable<Buffer>,
  select: RawBuilder<unknown>,
): AsyncGenerator<CsvPage> {
  const { sql: text, parameters } = sql`copy (${select}) to stdout (format binary)`.compile(db);
  if (parameters.length) throw new Error(`a COPY query cannot take parameters (${parameters.length} given)`);
  return binaryCopyTexts(copyOut(text));
}

/**
 * A timestamptz as ISO 8601 UTC with milliseconds, cut (not rounded) to the millisecond as a JS Date cuts the stored
 * microseconds: what csv.ts prints of a Date.
 */
export function isoText(column: string): RawBuilder<string> {
  return sql<string>`to_char(${sql.ref(column)} at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`;
}

/** A numeric as its exact text without trailing zeros: what Decimal's toFixed() prints (csv.ts). */
export function decimalText(expr: RawBuilder<unknown>): RawBuilder<string | null> {
  return sql<string | null>`trim_scale(${expr})::text`;
}

/** A text that starts like a formula or holds a character CSV quotes: the one test csvFieldSql makes of every text. */
const NEEDS_CARE = literal(`${FORMULA_START.source}|[",\\r\\n]`);

/**
 * One field of a CSV line, as csv.ts csvField(csvText(cell)) prints it: '' for null, and a text quoted (quotes
 * doubled) only when it holds a comma, a quote or a line break. `plain`: a value that never needs quotes (digits,
 * decimals, ISO times), so the test is skipped. One regular expression passes nearly every text as it is (no formula
 * start, nothing to quote); only the others take the full path, which repeats the expression up to three times (the
 * fills detail of a night, 97,000 rows: 470 ms -> 380 ms in psql).
 */
export function csvFieldSql(expr: RawBuilder<unknown>, plain = false): RawBuilder<string> {
  if (plain) return sql<string>`coalesce((${expr})::text, '')`;
  const text = neutralisedSql(expr);
  return sql<string>`coalesce(case when (${expr})::text !~ ${NEEDS_CARE} then (${expr})::text
    when ${text} ~ '[",\\r\\n]' then '"' || replace(${text}, '"', '""') || '"' else ${text} end, '')`;
}

/**
 * csv.ts `neutralised` in SQL: a text a spreadsheet would evaluate (first character `=`, `+`, `-`, `@`, tab or CR)
 * gets a leading `'`; a plain number is left as it is. The same two expressions as csv.ts, so both paths agree.
 */
function neutralisedSql(expr: RawBuilder<unknown>): RawBuilder<string> {
  return sql<string>`(case when (${expr})::text ~ ${literal(FORMULA_START.source)}
    and (${expr})::text !~ ${literal(PLAIN_NUMBER.source)} then '''' || (${expr})::text else (${expr})::text end)`;
}

/** A field looked up by `key` in a JSON object of ready CSV field texts (an absent key prints ''). */
export function csvLookupSql(fields: ReadonlyMap<string, string>, key: RawBuilder<unknown>): RawBuilder<string> {
  return sql<string>`coalesce(${literal(JSON.stringify(Object.fromEntries(fields)))}::jsonb ->> (${key})::text, '')`;
}

/** Rows per page of CSV text: a page is one string, so a bigger page costs the client nothing per row. */
export const CSV_PAGE_SIZE = 5_000;

/** A page of CSV lines (CRLF after each) and how many rows it holds. */
export interface CsvPage {
  text: string;
  rows: number;
}

/** What csvPages reads: the rows of `table` of one account whose time column is in the span, as `fields`. */
export interface CsvQuery {
  table: string;
  account: string;
  span: Span;
  columns: { time: string; id: string; idType: 'text' | 'bigint' };
  fields: RawBuilder<string>[];
}

/**
 * The rows of `table` of one account whose time column is in the span, in (time, id) order, as CSV lines of
 * `fields` (csvFieldSql, csvLookupSql). On a server, one COPY of the lines (binary, so each line's bytes arrive as
 * Postgres wrote them): a third of the database time of paging. Otherwise keyset pages of `pageSize` rows, each read
 * as one string (string_agg), the next page asked for while the caller writes this one.
 */
export function csvPages(reader: CsvReader, q: CsvQuery, pageSize: number): AsyncGenerator<CsvPage> {
  if (!reader.copyOut) return pagedLines(reader.db, q, pageSize);
  const time = sql.ref(q.columns.time);
  return copiedLines(
    reader.db,
    reader.copyOut.bind(reader),
    sql`
      select ${csvLineSql(q.fields)} from ${sql.table(q.table)}
      where account = ${literal(q.account)} and ${time} >= ${literal(q.span.from.toISOString())}::timestamptz
        and ${time} < ${literal(q.span.to.toISOString())}::timestamptz
      order by ${time}, ${sql.ref(q.columns.id)}`,
  );
}

/** A CSV line of `fields` (csvFieldSql, csvLookupSql) with its CRLF. */
export function csvLineSql(fields: RawBuilder<string>[]): RawBuilder<string> {
  return sql<string>`${sql.join(fields, sql`|| ',' ||`)} || chr(13) || chr(10)`;
}

function pagedLines(db: Db, q: CsvQuery, pageSize: number): AsyncGenerator<CsvPage> {
  const time = sql.ref(q.columns.time);
  const id = sql.ref(q.columns.id);
  const fetch = async (after: TimeKey | null) => {
    const keyset =
      after === null
        ? sql``
        : sql`and (${time}, ${id}) > (${after.at}::timestamptz, ${after.id}::${sql.raw(q.columns.idType)})`;
    // The page's last key by max() rather than by two more aggregates sorted descending: on Postgres 15 an
    // aggregate's ORDER BY sorts its input even when it arrives sorted; those two sorts were a third of the page.
    const { rows } = await sql<{ text: string | null; rows: number; last_at: string | null; last_id: string | null }>`
      with page as materialized (
        select ${csvLineSql(q.fields)} as line, ${time} as t, ${id} as i
        from ${sql.table(q.table)}
        where account = ${q.account} and ${time} >= ${q.span.from} and ${time} < ${q.span.to} ${keyset}
        order by ${time}, ${id} limit ${pageSize}
      ), last as (select max(t) as t from page)
      select string_agg(line, '' order by t, i) as text, count(*)::int as rows, (select t::text from last) as last_at,
        (select max(i)::text from page where t = (select t from last)) as last_id
      from page`.execute(db);
    return rows[0]!;
  };
  const pages = keysetScan(
    fetch,
    (p) => ({
      count: p.rows,
      last: p.last_at === null || p.last_id === null ? null : { at: p.last_at, id: p.last_id },
    }),
    pageSize,
  );
  return (async function* () {
    for await (const p of pages) yield { text: p.text ?? '', rows: p.rows };
  })();
}
