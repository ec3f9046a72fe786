/** Store functions of the exchange records (fills, orders, payments, snapshots), with the benchmarked one-statement
 * page writes.
 */
import { sql, type RawBuilder } from 'kysely';
import type { Db } from '../db/database.js';
import { recordset, type RecordsetColumns } from './recordset.js';
import { unjudged } from '../recon/changes.js';
import type {
  NewBalance,
  NewExchangeDeposit,
  NewExchangeFeeRate,
  NewExchangeFill,
  NewExchangeOrder,
  NewExchangeSymbol,
  NewExchangeTicker,
  NewExchangeWhitelistEntry,
  NewExchangeWithdrawal,
} from '../db/schema.js';

/**
 * Store functions of the exchange sync. Every write is set-based: a whole page goes to Postgres as
 * one JSON parameter unpacked by json_to_recordset, merged with one `insert ... on conflict`
 * (three parameters instead of one per value, one round trip per page, the same SQL on pg and
 * PGlite). Amounts travel as JSON strings, so numeric receives their exact text. Functions take
 * the database or a transaction first.
 */

/** Later occurrences win: "on conflict do update" cannot touch one row twice in a statement. */
function dedupe<T>(rows: T[], key: (r: T) => string): T[] {
  if (rows.length < 2) return rows;
  const map = new Map<string, T>();
  for (const r of rows) map.set(key(r), r);
  return map.size === rows.length ? rows : [...map.values()];
}

/**
 * A page of fills as Postgres array literals, one per column, for `unnest`, and the raw records
 * as one JSON array: Postgres parses an array element with the column's own input function (the
 * cheapest set-based path short of COPY). The literals are built here rather than by the driver,
 * whose per-element escaping was the sync's largest cost after parsing: ids, decimals, times and
 * sides are validated plain tokens that need no quoting, symbols are quoted, and the raw JSON
 * goes as JSON, which needs no escaping at all.
 */
function fillColumns(rows: NewExchangeFill[], pageText?: string): string[] {
  const plain = (pick: (r: NewExchangeFill) => string | number) => `{${rows.map(pick).join(',')}}`;
  return [
    plain((r) => r.exec_id),
    plain((r) => r.ex_ord_id),
    plain((r) => r.trade_id),
    plain((r) => r.side),
    `{${rows.map((r) => `"${r.symbol.replace(/[\\"]/g, '\\$&')}"`).join(',')}}`,
    plain((r) => r.price),
    plain((r) => r.qty),
    plain((r) => r.fee),
    plain((r) => r.timestamp),
    // With the page text, each row's raw record is the page's element at its position, exactly as
    // received (no re-serialization at all); otherwise the rows' own raw JSON, in row order.
    pageText === undefined ? `{${rows.map((_r, i) => i + 1).join(',')}}` : plain((r) => r.page_index),
    pageText ?? `[${rows.map((r) => r.raw).join(',')}]`,
  ];
}

/**
 * The upsert of a page of fills. A fill is immutable; the update only fires if the exchange ever
 * sends different content. `pageText`: the page as received, whose elements are the rows' raw
 * records (by page_index). When every record of the page validated, the page is read as jsonb
 * once and its elements stored as they are; otherwise it is read as json (a record that failed
 * validation may hold what jsonb refuses, such as \u0000) and only the stored rows are converted,
 * one parse more (about 15% more database time per page in bench/fills-write.ts).
 */
function fillUpsert(
  account: string,
  unique: NewExchangeFill[],
  pageText: string | undefined,
  pageValid: boolean,
  fresh = false,
) {
  const [a, b, c, d, e, f, g, h, i, k, j] = fillColumns(unique, pageText);
  const elements = pageValid
    ? sql`jsonb_array_elements(${j}::jsonb) with ordinality as r(raw, n)`
    : sql`json_array_elements(${j}::json) with ordinality as r(raw, n)`;
  return sql`
    insert into exchange_fill (account, exec_id, ex_ord_id, trade_id, side, symbol, price, qty, fee, "timestamp", raw)
    select ${account}, x.exec_id, x.ex_ord_id, x.trade_id, x.side, x.symbol, x.price, x.qty, x.fee, x.ts, r.raw::jsonb
    from unnest(${a}::bigint[], ${b}::bigint[], ${c}::bigint[], ${d}::text[], ${e}::text[],
      ${f}::numeric[], ${g}::numeric[], ${h}::numeric[], ${i}::timestamptz[], ${k}::integer[])
      as x(exec_id, ex_ord_id, trade_id, side, symbol, price, qty, fee, ts, idx)
    join ${elements} on r.n = x.idx
    ${
      fresh
        ? sql``
        : sql`on conflict (account, exec_id) do update set
      ex_ord_id = excluded.ex_ord_id, trade_id = excluded.trade_id, side = excluded.side, symbol = excluded.symbol,
      price = excluded.price, qty = excluded.qty, fee = excluded.fee, "timestamp" = excluded."timestamp", raw = excluded.raw
    where exchange_fill.raw is distinct from excluded.raw`
    }`;
}

/**
 * Upserts a page of fills (see fillUpsert); `pageValid`: every record of pageText validated. `fresh`: fills believed
 * new, inserted without the upsert's conflict handling (Postgres's speculative insertion costs about a quarter more
 * per row); a stored fill among them fails the statement with a unique violation (isUniqueViolation), and the caller
 * writes the page again as an upsert.
 */
export async function upsertFills(
  db: Db,
  account: string,
  rows: NewExchangeFill[],
  pageText?: string,
  pageValid = false,
  fresh = false,
): Promise<number> {
  const unique = dedupe(rows, (r) => r.exec_id);
  if (unique.length === 0) return 0;
  await fillUpsert(account, unique, pageText, pageValid, fresh).execute(db);
  return unique.length;
}

/**
 * A cursor a page commit writes. `grows`: an integer that only ever grows, such as a learned page cap: the larger of
 * the stored and the written value is kept, since pages written side by side on two sessions can commit a smaller
 * value after a larger one. Any other cursor takes the value written.
 */
export interface CursorWrite {
  name: string;
  value: string;
  grows?: true;
}

/** What every page commit records besides its rows: coverage figures and cursors. */
export interface PageBookkeeping {
  account: string;
  runId: string | null;
  coverageStream: string;
  coverage: Map<string, CoverageDelta>;
  cursors: CursorWrite[];
}

export interface PageCommit extends PageBookkeeping {
  rows: NewExchangeFill[];
  /** The page as received: the rows' raw records are its elements (see upsertFills). */
  pageText?: string;
}

/**
 * The bookkeeping of a page as data-modifying CTEs (cov, cur, durability) that run in the
 * statement they are part of. Coverage: pages add up across runs (every request ever made for the
 * day: a rescan adds its own); rows and quarantined add up within one run and a new run starts
 * them afresh (the latest scan's; the report counts the accumulated streams from the store,
 * coverageOfDays). `settled`: a page of a later scan covers only part of a day (a rescan from a
 * cursor), so it never settles a day another scan left unsettled (settleCoverage does, for a scan
 * that re-read it). A page is counted once: its figures commit with its rows. Durability: rows and
 * cursor commit together and the API can always serve them again, so a commit lost to a server
 * crash costs a re-fetch, never a gap or a duplicate; the commit need not wait for its WAL flush
 * (one fsync per page otherwise dominates the ingest).
 */
function bookkeepingCtes(c: PageBookkeeping) {
  const coverage = JSON.stringify(
    [...c.coverage].map(([day, d]) => ({
      day,
      pages: d.pages,
      rows: d.rows,
      quarantined: d.quarantined,
      settled: d.settled,
      detail: d.detail ?? null,
    })),
  );
  return sql`
    cov as (
      insert into sync_coverage (account, source, stream, day, pages, rows, quarantined, settled, detail, run_id, updated_at)
      select ${c.account}, 'exchange', ${c.coverageStream}, v.day, v.pages, v.rows, v.quarantined, v.settled, v.detail, ${c.runId}::text, now()
      from json_to_recordset(${coverage}::json) as v(day date, pages integer, rows integer, quarantined integer, settled boolean, detail jsonb)
      on conflict (account, source, stream, day) do update set
        pages = sync_coverage.pages + excluded.pages,
        rows = case when sync_coverage.run_id is not distinct from excluded.run_id then sync_coverage.rows + excluded.rows else excluded.rows end,
        quarantined = case when sync_coverage.run_id is not distinct from excluded.run_id then sync_coverage.quarantined + excluded.quarantined else excluded.quarantined end,
        settled = sync_coverage.settled and excluded.settled,
        detail = coalesce(excluded.detail, sync_coverage.detail),
        run_id = excluded.run_id,
        updated_at = excluded.updated_at
      returning 1
    ), cur as (
      insert into sync_cursor (account, source, name, value, updated_at)
      select ${c.account}, 'exchange', k.name, k.value, now()
      from json_to_recordset(${JSON.stringify(c.cursors)}::json) as k(name text, value text, grows boolean)
      where k.grows is not true
      on conflict (account, source, name) do update set value = excluded.value, updated_at = excluded.updated_at
      returning 1
    ), grown as (
      insert into sync_cursor (account, source, name, value, updated_at)
      select ${c.account}, 'exchange', k.name, k.value, now()
      from json_to_recordset(${JSON.stringify(c.cursors)}::json) as k(name text, value text, grows boolean)
      where k.grows
      on conflict (account, source, name) do update set
        value = case when sync_cursor.value ~ '^[0-9]{1,15}$' and excluded.value ~ '^[0-9]{1,15}$'
                 then greatest(sync_cursor.value::bigint, excluded.value::bigint)::text
                 else excluded.value end,
        updated_at = excluded.updated_at
      returning 1
    ), durability as (
      select set_config('synchronous_commit', 'off', true) as setting
    )`;
}

const bookkeepingFigures = sql`(select count(*) from cov) as days, (select count(*) from cur) + (select count(*) from grown) as cursors, (select setting from durability) as synchronous_commit`;

/**
 * A fills page, its coverage figures and its cursors in ONE statement (data-modifying CTEs
 * run atomically, all or nothing): one round trip per page instead of six for BEGIN, insert,
 * coverage, two cursors and COMMIT, which on a busy machine costs more than the insert itself.
 * Every record of the page validated (the caller's condition).
 */
export async function commitFillsPage(db: Db, c: PageCommit, fresh = false): Promise<void> {
  const unique = dedupe(c.rows, (r) => r.exec_id);
  await sql`
    with ins as (${fillUpsert(c.account, unique, c.pageText, true, fresh)} returning 1), ${bookkeepingCtes(c)}
    select (select count(*) from ins) as written, ${bookkeepingFigures}
  `.execute(db);
}

/**
 * The bookkeeping of a page (coverage, cursors, asynchronous commit) in one statement, for a
 * transaction that wrote the page's rows first.
 */
export async function recordPage(db: Db, c: PageBookkeeping): Promise<void> {
  await sql`with ${bookkeepingCtes(c)} select ${bookkeepingFigures}`.execute(db);
}

/**
 * Writes a page of one record kind in one statement: the rows as `x` (recordset.ts, with `columns`, used by every
 * part), then the kind's own `parts` (CTEs named apart from x, cov, cur and durability), then the page's bookkeeping
 * when given, so that rows, coverage and cursor commit together without a transaction around them. An empty page
 * records only its bookkeeping. Returns the number of rows written.
 */
async function writePage<T extends { raw: string }>(
  db: Db,
  rows: T[],
  columns: RecordsetColumns,
  parts: RawBuilder<unknown>,
  c?: PageBookkeeping,
): Promise<number> {
  if (rows.length === 0) {
    if (c) await recordPage(db, c);
    return 0;
  }
  // The figures reference the durability CTE: a plain CTE that nothing reads is never run.
  await sql`
    with x as materialized (select * from ${recordset(rows, columns)}), ${parts}
    ${c ? sql`, ${bookkeepingCtes(c)}` : sql``}
    select ${c ? bookkeepingFigures : sql`1`}`.execute(db);
  return rows.length;
}

/** An exchange order's columns besides raw, as upsertOrders reads them. */
const ORDER_COLUMNS: RecordsetColumns = [
  ['ex_ord_id', 'bigint'],
  ['cl_ord_id', 'text'],
  ['ord_type', 'text'],
  ['ord_status', 'text'],
  ['side', 'text'],
  ['price', 'numeric'],
  ['text', 'text'],
  ['symbol', 'text'],
  ['last_shares', 'numeric'],
  ['last_px', 'numeric'],
  ['leaves_qty', 'numeric'],
  ['cum_qty', 'numeric'],
  ['avg_px', 'numeric'],
  ['timestamp', 'timestamptz'],
];

/**
 * Upserts orders and their state history (one row per observed status and cumQty; seeing a state
 * again adds nothing). Rows go in key order, so listings written side by side (the status
 * listings and trades share orders) lock them in the same order and cannot deadlock. A row is
 * rewritten only when its content changed or a later sync saw it: within one run the trades
 * listing brings back orders the status listings stored already.
 * `c`: the page's bookkeeping, written by the same statement.
 */
export async function upsertOrders(
  db: Db,
  account: string,
  rows: NewExchangeOrder[],
  observedAt: Date,
  c?: PageBookkeeping,
): Promise<number> {
  const at = observedAt.toISOString();
  return writePage(
    db,
    dedupe(rows, (r) => r.ex_ord_id),
    ORDER_COLUMNS,
    sql`ord as (
      insert into exchange_order (account, ex_ord_id, cl_ord_id, ord_type, ord_status, side, price, text, symbol,
        last_shares, last_px, leaves_qty, cum_qty, avg_px, "timestamp", raw, first_seen_at, last_seen_at)
      select ${account}, x.ex_ord_id, x.cl_ord_id, x.ord_type, x.ord_status, x.side, x.price, x.text, x.symbol,
        x.last_shares, x.last_px, x.leaves_qty, x.cum_qty, x.avg_px, x."timestamp", x.raw, ${at}::timestamptz, ${at}::timestamptz
      from x order by x.ex_ord_id
      on conflict (account, ex_ord_id) do update set
        cl_ord_id = excluded.cl_ord_id, ord_type = excluded.ord_type, ord_status = excluded.ord_status, side = excluded.side,
        price = excluded.price, text = excluded.text, symbol = excluded.symbol, last_shares = excluded.last_shares,
        last_px = excluded.last_px, leaves_qty = excluded.leaves_qty, cum_qty = excluded.cum_qty, avg_px = excluded.avg_px,
        "timestamp" = excluded."timestamp", raw = excluded.raw, last_seen_at = excluded.last_seen_at
      where exchange_order.raw is distinct from excluded.raw or exchange_order.last_seen_at < excluded.last_seen_at
    ), state as (
      insert into exchange_order_state (account, ex_ord_id, ord_status, cum_qty, observed_at)
      select ${account}, x.ex_ord_id, x.ord_status, coalesce(x.cum_qty, 0), ${at}::timestamptz from x order by x.ex_ord_id
      on conflict do nothing
    ), found as (
      -- An order recorded as 404 earlier that shows up now is no longer an orphan.
      delete from exchange_order_not_found n using x where n.account = ${account} and n.ex_ord_id = x.ex_ord_id
    )`,
    c,
  );
}

export async function markOrdersNotFound(db: Db, account: string, ids: string[], checkedAt: Date): Promise<void> {
  if (ids.length === 0) return;
  await db
    .insertInto('exchange_order_not_found')
    .values([...new Set(ids)].map((id) => ({ account, ex_ord_id: id, checked_at: checkedAt })))
    .onConflict((oc) => oc.columns(['account', 'ex_ord_id']).doUpdateSet({ checked_at: checkedAt }))
    .execute();
}

/** The SQL type of each column of the payment tables but raw (recordset.ts reads the rows with them). */
const PAYMENT_COLUMN_TYPES = {
  amount: 'numeric',
  fee: 'numeric',
  currency: 'text',
  address: 'text',
  tx_hash: 'text',
  beneficiary: 'text',
  state: 'text',
  timestamp: 'timestamptz',
} as const;

/** A payment table: its id (text), the key of a row, and its other columns in table order. */
interface PaymentTable<R> {
  table: 'exchange_deposit' | 'exchange_withdrawal';
  id: 'deposit_id' | 'withdrawal_id';
  key: (row: R) => string;
  columns: ReadonlyArray<keyof R & (keyof typeof PAYMENT_COLUMN_TYPES | 'raw')>;
}

/**
 * The upsert of a page of deposits or withdrawals and their state history (one row per observed
 * state; a record without a state adds none), as upsertOrders: a row is rewritten only when its
 * content changed or a later sync saw it. `c`: the page's bookkeeping, written by the same statement.
 */
function paymentUpsert<R extends { raw: string }>(p: PaymentTable<R>) {
  const table = sql.table(p.table);
  const id = sql.ref(p.id);
  const xId = sql.ref(`x.${p.id}`);
  const columns: RecordsetColumns = [
    [p.id, 'text'],
    ...p.columns.flatMap((name) => (name === 'raw' ? [] : [[name, PAYMENT_COLUMN_TYPES[name]] as const])),
  ];
  const names = sql.join(p.columns.map((name) => sql.ref(name)));
  const xNames = sql.join(p.columns.map((name) => sql.ref(`x.${name}`)));
  const updates = sql.join(p.columns.map((name) => sql`${sql.ref(name)} = ${sql.ref(`excluded.${name}`)}`));
  return async (db: Db, account: string, rows: R[], observedAt: Date, c?: PageBookkeeping): Promise<number> => {
    const at = observedAt.toISOString();
    return writePage(
      db,
      dedupe(rows, p.key),
      columns,
      sql`rec as (
        insert into ${table} (account, ${id}, ${names}, first_seen_at, last_seen_at)
        select ${account}, ${xId}, ${xNames}, ${at}::timestamptz, ${at}::timestamptz
        from x
        on conflict (account, ${id}) do update set ${updates}, last_seen_at = excluded.last_seen_at
        where ${table}.raw is distinct from excluded.raw or ${table}.last_seen_at < excluded.last_seen_at
      ), state as (
        insert into ${sql.table(`${p.table}_state`)} (account, ${id}, state, observed_at)
        select ${account}, ${xId}, x.state, ${at}::timestamptz from x
        where x.state is not null
        on conflict do nothing
      )`,
      c,
    );
  };
}

/** Deposits and their state history (paymentUpsert). */
export const upsertDeposits = paymentUpsert<NewExchangeDeposit>({
  table: 'exchange_deposit',
  id: 'deposit_id',
  key: (r) => r.deposit_id,
  columns: ['amount', 'currency', 'address', 'tx_hash', 'state', 'timestamp', 'raw'],
});

/** Withdrawals and their state history, when they carry one (paymentUpsert). */
export const upsertWithdrawals = paymentUpsert<NewExchangeWithdrawal>({
  table: 'exchange_withdrawal',
  id: 'withdrawal_id',
  key: (r) => r.withdrawal_id,
  columns: ['amount', 'fee', 'currency', 'beneficiary', 'state', 'timestamp', 'raw'],
});

/**
 * Balance snapshots are always inserted: each one is an anchor of the roll-forward. `rows`
 * empty: the header alone, whose rows insertBalances writes (one by one when the database
 * refused some, sync-snapshots.ts).
 */
export async function insertBalanceSnapshot(
  db: Db,
  input: {
    account: string;
    exchangeAccount: string;
    /** When the request was sent (null: not known); fetchedAt is when its answer arrived. */
    requestedAt: Date | null;
    fetchedAt: Date;
    runId: string | null;
    rawText: string;
    rows: NewBalance[];
  },
): Promise<string> {
  const { id } = await db
    .insertInto('balance_snapshot')
    .values({
      account: input.account,
      exchange_account: input.exchangeAccount,
      requested_at: input.requestedAt,
      fetched_at: input.fetchedAt,
      run_id: input.runId,
      raw: input.rawText,
    })
    .returning('id')
    .executeTakeFirstOrThrow();
  await insertBalances(db, id, input.rows);
  return id;
}

export async function insertBalances(db: Db, snapshotId: string, rows: NewBalance[]): Promise<void> {
  const unique = dedupe(rows, (r) => r.currency);
  if (unique.length)
    await db
      .insertInto('balance')
      .values(unique.map((r) => ({ snapshot_id: snapshotId, ...r })))
      .execute();
}

export async function insertFeeRate(db: Db, snapshotId: string, row: NewExchangeFeeRate): Promise<void> {
  await db
    .insertInto('exchange_fee_rate')
    .values({ snapshot_id: snapshotId, ...row })
    .onConflict((oc) => oc.doNothing())
    .execute();
}

/** The row each table of a snapshot's reference rows takes. */
interface SnapshotRows {
  exchange_symbol: NewExchangeSymbol;
  exchange_whitelist_entry: NewExchangeWhitelistEntry;
  exchange_ticker: NewExchangeTicker;
}

/**
 * A snapshot's reference rows, once each by `key` (the later occurrence); a row the snapshot holds
 * already stays as stored.
 */
async function insertSnapshotRows<T extends keyof SnapshotRows>(
  db: Db,
  table: T,
  snapshotId: string,
  rows: SnapshotRows[T][],
  key: (r: SnapshotRows[T]) => string,
): Promise<void> {
  const unique = dedupe(rows, key);
  const into: keyof SnapshotRows = table;
  if (unique.length)
    await db
      .insertInto(into)
      .values(unique.map((r) => ({ snapshot_id: snapshotId, ...r })))
      .onConflict((oc) => oc.doNothing())
      .execute();
}

export async function insertSymbols(db: Db, snapshotId: string, rows: NewExchangeSymbol[]): Promise<void> {
  await insertSnapshotRows(db, 'exchange_symbol', snapshotId, rows, (r) => r.symbol);
}

export async function insertWhitelist(db: Db, snapshotId: string, rows: NewExchangeWhitelistEntry[]): Promise<void> {
  await insertSnapshotRows(db, 'exchange_whitelist_entry', snapshotId, rows, (r) => r.whitelist_id);
}

export async function insertTickers(db: Db, snapshotId: string, rows: NewExchangeTicker[]): Promise<void> {
  await insertSnapshotRows(db, 'exchange_ticker', snapshotId, rows, (r) => r.symbol);
}

export interface CoverageDelta {
  pages: number;
  rows: number;
  quarantined: number;
  settled: boolean;
  detail?: unknown;
}

/**
 * Order ids that fills point at and no stored order answers for (nor a recorded 404), in id order, at most `limit`.
 * `since` (a snapshot, see changes.ts) limits the fills looked at to those written or changed after it, plus the fills
 * of the `carried` order ids; null looks at every fill (orders are never deleted). The fills' distinct orders first,
 * each probed on the key: the night's changed fills were hashed against every order of the account, a growing scan.
 */
export async function orderIdsMissingForFills(
  db: Db,
  account: string,
  limit: number,
  since: string | null = null,
  carried: string[] = [],
): Promise<string[]> {
  const fills =
    since === null
      ? sql`select f.ex_ord_id from exchange_fill f where f.account = ${account}`
      : sql`select f.ex_ord_id from exchange_fill f where f.account = ${account} and ${unjudged(sql.ref('f.change_xid'), since)}
          union all
          select f.ex_ord_id from exchange_fill f where f.account = ${account} and f.ex_ord_id = any(${carried}::bigint[])`;
  const rows = await sql<{ ex_ord_id: string }>`
    select f.ex_ord_id from (select distinct f.ex_ord_id from (${fills}) f) f
    where not exists (select 1 from exchange_order o where o.account = ${account} and o.ex_ord_id = f.ex_ord_id)
      and not exists (select 1 from exchange_order_not_found n where n.account = ${account} and n.ex_ord_id = f.ex_ord_id)
    order by f.ex_ord_id
    limit ${limit}
  `.execute(db);
  return rows.rows.map((r) => String(r.ex_ord_id));
}

/** Which of these exchange order ids are stored. */
export async function storedOrderIds(db: Db, account: string, ids: readonly string[]): Promise<Set<string>> {
  if (ids.length === 0) return new Set();
  const rows = await sql<{ ex_ord_id: string }>`
    select ex_ord_id::text from exchange_order where account = ${account} and ex_ord_id = any(${ids}::bigint[])`.execute(
    db,
  );
  return new Set(rows.rows.map((r) => r.ex_ord_id));
}

/** Of these stored orders, those whose cumQty differs from the sum of their stored fills, in id order. */
export async function ordersDifferingFromFills(db: Db, account: string, ids: readonly string[]): Promise<string[]> {
  if (ids.length === 0) return [];
  const rows = await sql<{ ex_ord_id: string }>`
    select o.ex_ord_id::text from exchange_order o
    where o.account = ${account} and o.ex_ord_id = any(${ids}::bigint[])
      and coalesce(o.cum_qty, 0) <> (
        select coalesce(sum(f.qty), 0) from exchange_fill f where f.account = ${account} and f.ex_ord_id = o.ex_ord_id
      )
    order by o.ex_ord_id`.execute(db);
  return rows.rows.map((r) => r.ex_ord_id);
}

/** Where each re-fetchable record kind keeps its id and its state. */
const NON_FINAL = {
  exchange_order: { id: 'ex_ord_id', state: 'ord_status' },
  exchange_deposit: { id: 'deposit_id', state: 'state' },
  exchange_withdrawal: { id: 'withdrawal_id', state: 'state' },
} as const;

/**
 * Ids of stored records in a non-final state last seen before `before` (to re-fetch by id). The states are the code's
 * constants, written as literals so that the planner can use a partial index on them (sql/0021).
 */
export async function nonFinalIds(
  db: Db,
  table: keyof typeof NON_FINAL,
  account: string,
  states: readonly string[],
  before: Date,
): Promise<string[]> {
  const { id, state } = NON_FINAL[table];
  const rows = await sql<{ id: string }>`
    select ${sql.ref(id)}::text as id from ${sql.table(table)}
    where account = ${account} and ${sql.ref(state)} in (${sql.join(states.map((s) => sql.lit(s)))}) and last_seen_at < ${before}
    order by ${sql.ref(id)}`.execute(db);
  return rows.rows.map((r) => r.id);
}

/** Entities with unresolved quarantine entries of the exchange: only those pay for resolveQuarantined. */
export async function exchangeEntitiesInQuarantine(db: Db, account: string): Promise<Set<string>> {
  const rows = await db
    .selectFrom('quarantine')
    .select('entity')
    .distinct()
    .where('account', '=', account)
    .where('source', '=', 'exchange')
    .where('resolved_at', 'is', null)
    .execute();
  return new Set(rows.map((r) => r.entity ?? ''));
}

/** Orders that answered 404 when last asked before `before`, by id. */
export async function ordersNotFoundBefore(db: Db, account: string, before: Date): Promise<string[]> {
  const rows = await db
    .selectFrom('exchange_order_not_found')
    .select('ex_ord_id')
    .where('account', '=', account)
    .where('checked_at', '<', before)
    .orderBy('ex_ord_id')
    .execute();
  return rows.map((r) => r.ex_ord_id);
}
