/** Planner statistics after bulk writes: the tables a sync or a reconcile changed by more than autovacuum would wait for. */
import { sql, type RawBuilder } from 'kysely';
import { inTransaction, type Db } from './database.js';
import { allSettledOrThrow } from '../../util/side-by-side.js';

/**
 * Analyzes this schema's tables never analyzed, and those whose rows changed by more than half since they were last
 * analyzed. A first sync loads a million fills in minutes, well inside autovacuum's nap (and autovacuum may be off):
 * the reconcile and report queries that follow were planned for empty tables (a hash of 5,807 estimated rows over a
 * million real ones: 1.4 s for a 0.3 s query). ANALYZE samples a fixed number of rows, about 0.3 s for the fills table
 * at any size, so it runs in the job's path only for such shifts: a night that adds a tenth to a table (autovacuum's
 * own threshold) leaves it to autovacuum; so does a table whose statistics know the account. Except where the night
 * is large: a table that tracks changes (change_xid) and took more than CHANGED_ROWS rows since its last ANALYZE is
 * analyzed too, because the reconcile's "changed since the last run" scans read that column and every row written
 * since carries a transaction id above the statistics' histogram: the planner took 100,000 changed fills for one row
 * and joined a page of them to its orders by a nested loop (416 million comparisons, 14 s of a 20 s nightly run; 0.5 s
 * after ANALYZE). Such a night's ANALYZE reads only the columns of the table's indexes, those the scans filter and join
 * on, whose histograms the night moved (change_xid, the record's time), but a row's identity within the account
 * (uniqueInAccount): the other columns' statistics (the raw JSON
 * above all) cost most of a whole-table ANALYZE and plan nothing (nightly, 100,000 fills: partner_order 0.72 s ->
 * 0.21 s, exchange_fill 0.42 s -> 0.18 s). Postgres does not reset the table's count of changed rows after such a
 * partial ANALYZE, so whether a night was large is judged from the statistics themselves: the account's rows whose
 * change_xid lies above the largest the statistics know (changesBeyondStatistics). A night's ANALYZE also samples a
 * quarter of the rows (NIGHT_STATISTICS_TARGET) and leaves the account column alone (its common values, which
 * accountUnknown reads, are a whole ANALYZE's: a fleet's hundred accounts need the default target's hundred): the
 * night moved where its rows' times and transaction ids lie, which 25 histogram buckets place as well for the night's
 * range scans (the bench's replayed nightly reconcile took as long on either), at a quarter of the cost (scale 1,
 * kept schema: partner_order 258-450 ms -> 62-71 ms, exchange_fill 291-501 ms -> 62-94 ms, exchange_order 163-270 ms
 * -> 43-52 ms). Returns the tables analyzed.
 */
export async function refreshPlannerStatistics(db: Db, account: string): Promise<string[]> {
  const candidates = await staleTables(db, account);
  const tables: Array<{ name: string; columns: string[] | null }> = [];
  for (const t of candidates) {
    if (t.whole) tables.push({ name: t.name, columns: null });
    // the columns the scans filter and join on, and change_xid, which the night's scans read whether indexed or not
    else if (await changesBeyondStatistics(db, t.name, account, t.changeMax))
      tables.push({
        name: t.name,
        columns: [...new Set([...(t.columns ?? []), 'change_xid'])].filter((c) => c !== 'account').sort(),
      });
  }
  // Side by side on a server (each ANALYZE on a pooled session of its own): the job waits for them with nothing else
  // to do, and one ANALYZE keeps one core busy. PGlite's one session runs them one after another all the same.
  let next = 0;
  const lane = async () => {
    while (next < tables.length) {
      const { name, columns } = tables[next++]!;
      if (!columns) {
        await sql`analyze ${sql.table(name)}`.execute(db);
        continue;
      }
      await inTransaction(db, async (trx) => {
        await sql`set local default_statistics_target = ${sql.lit(NIGHT_STATISTICS_TARGET)}`.execute(trx);
        await sql`analyze ${sql.table(name)} (${sql.join(columns.map((c) => sql.ref(c)))})`.execute(trx);
      });
    }
  };
  // Both lanes settle before a failure is thrown: no ANALYZE still runs when the caller goes on.
  await allSettledOrThrow(Array.from({ length: Math.min(ANALYZE_AT_ONCE, tables.length) }, lane));
  return tables.map((t) => t.name);
}

/**
 * The schema's tables to analyze: `whole` when never analyzed, changed by more than half, or written by an account the
 * statistics do not know; otherwise a change-tracking table past CHANGED_ROWS changed rows, with its indexed columns and
 * the largest change_xid its statistics know (refreshPlannerStatistics decides whether the night was large).
 */
async function staleTables(db: Db, account: string) {
  const r = await sql<{ name: string; whole: boolean; columns: string[] | null; changeMax: string | null }>`
    select c.relname as name, w.whole,
      (
        select array_agg(distinct a.attname::text order by a.attname::text)
        from pg_index i join pg_attribute a on a.attrelid = i.indrelid and a.attnum = any(i.indkey)
        where i.indrelid = c.oid and not ${uniqueInAccount(sql`c.oid`, sql`a.attnum`)}
      ) as columns,
      (
        -- the largest change_xid the statistics know: of the histogram, or of the common values (a few transactions)
        select max(v)::text
        from pg_stats st,
          unnest(coalesce(st.histogram_bounds::text::xid8[], '{}') || coalesce(st.most_common_vals::text::xid8[], '{}')) v
        where st.schemaname = n.nspname and st.tablename = c.relname and st.attname = 'change_xid'
      ) as "changeMax"
    from pg_class c
    join pg_namespace n on n.oid = c.relnamespace and n.nspname = current_schema()
    left join pg_stat_user_tables s on s.relid = c.oid
    cross join lateral (
      select (
        c.reltuples < 0
        or coalesce(s.n_mod_since_analyze, 0) > 50 + 0.5 * greatest(c.reltuples, 0)
        or ${accountUnknown(account)}
      ) as whole
    ) w
    where c.relkind = 'r'
      and (
        w.whole
        or (
          coalesce(s.n_mod_since_analyze, 0) > ${CHANGED_ROWS}
          and exists (
            select 1 from pg_attribute a where a.attrelid = c.oid and a.attname = 'change_xid' and not a.attisdropped
          )
        )
      )
    order by c.relname`.execute(db);
  return r.rows;
}

/**
 * Whether more than CHANGED_ROWS of the account's rows carry a change_xid above the largest one the statistics know
 * (none known: yes). Postgres keeps counting a table's changed rows after an ANALYZE of some of its columns, so that
 * count only says a night may have been large; this index range scan, stopped after CHANGED_ROWS + 1 rows, says it was.
 */
async function changesBeyondStatistics(db: Db, table: string, account: string, known: string | null) {
  if (known === null) return true;
  const r = await sql<{ n: string }>`
    select count(*)::text as n from (
      select 1 from ${sql.table(table)}
      where account = ${account} and change_xid > ${known}::xid8
      limit ${CHANGED_ROWS + 1}
    ) beyond`.execute(db);
  return Number(r.rows[0]?.n ?? 0) > CHANGED_ROWS;
}

/**
 * Whether the column is a row's identity within its account (a unique index on (account, it): order_id, exec_id,
 * ex_ord_id). ANALYZE stores such a column's number of distinct values as a fraction of the rows (-1: every row
 * distinct), which no night changes, and the keyset scans' ranges above the histogram read the index's real end: its
 * statistics need no refresh, and they were the dearest part of a night's partial ANALYZE (text order_ids sorted with
 * the collation: partner_order 270-344 ms with order_id, 181-192 ms without, on a kept scale-1 bench schema).
 */
function uniqueInAccount(table: RawBuilder<unknown>, column: RawBuilder<unknown>) {
  return sql<boolean>`exists (
    select 1 from pg_index u join pg_attribute ua on ua.attrelid = u.indrelid and ua.attname = 'account'
    where u.indrelid = ${table} and u.indisunique and u.indnkeyatts = 2
      and u.indkey[0] = ua.attnum and u.indkey[1] = ${column}
  )`;
}

/**
 * A table this account has written to while its statistics do not know the account: with several accounts in one
 * database, a new account's first sync adds a share of the table too small for the threshold, and the planner, taking
 * the account for an empty one, picked a nested loop that ran for minutes (the bench's fourth account).
 */
function accountUnknown(account: string) {
  return sql`(
    coalesce(s.n_mod_since_analyze, 0) > 50
    and exists (
      select 1 from pg_attribute a where a.attrelid = c.oid and a.attname = 'account' and not a.attisdropped
    )
    and not exists (
      select 1 from pg_stats st
      where st.schemaname = n.nspname and st.tablename = c.relname and st.attname = 'account'
        and st.most_common_vals::text::text[] @> array[${account}]::text[]
    )
  )`;
}

/**
 * Rows written to a change-tracking table since its last ANALYZE beyond which the statistics' view of change_xid is
 * too stale to plan a night's changed-since scans: about a tenth of the largest accounts' day (100,000 fills), where a
 * nested loop over the changed rows still costs little.
 */
const CHANGED_ROWS = 10_000;

/** The statistics target of a night's partial ANALYZE (Postgres's default 100): it samples 300 rows per unit. */
const NIGHT_STATISTICS_TARGET = 25;

/** ANALYZE statements at once: the two cores of the machine the job is sized for. */
const ANALYZE_AT_ONCE = 2;
