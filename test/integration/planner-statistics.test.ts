import { sql } from 'kysely';
import { expect, it } from 'vitest';
import { describeEachStore } from '../helpers/db.js';
import { refreshPlannerStatistics } from '../../src/store/db/statistics.js';

/**
 * Planner statistics with several accounts in one database: a table an account wrote to is analyzed while its
 * statistics do not know that account, even when the account's rows are a small share of the table; once they do,
 * a small change is left to autovacuum.
 */
describeEachStore('planner statistics per account', (ctx) => {
  const cursors = (account: string, n: number, from = 0) =>
    sql`insert into sync_cursor (account, source, name, value)
        select ${account}, 'exchange', 'c' || g, 'v' from generate_series(${from}::int, ${from + n - 1}::int) g`;

  /** Table statistics reach pg_stat_user_tables up to a second after a write (PGSTAT_MIN_INTERVAL): waited for. */
  const counted = async (changed: number, table = 'sync_cursor') => {
    for (let i = 0; i < 50; i++) {
      const r = await sql<{ n: string }>`
        select coalesce(n_mod_since_analyze, 0)::text as n from pg_stat_user_tables
        where relname = ${table} and schemaname = current_schema()`.execute(ctx.store.db);
      if (Number(r.rows[0]?.n ?? 0) >= changed) return;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  };

  it('analyzes a table whose statistics have not seen the account yet, and only then', async () => {
    const db = ctx.store.db;
    await cursors('big', 1_000).execute(db);
    await counted(1_000);
    // the first refresh: every table of the new schema, never analyzed (two at once on a server), and none again
    const first = await refreshPlannerStatistics(db, 'big');
    expect(first).toContain('sync_cursor');
    expect(first.length).toBeGreaterThan(20);
    expect(await refreshPlannerStatistics(db, 'big')).toEqual([]);
    // a second account adds a tenth of the table: below the threshold, but unknown to the statistics
    await cursors('small', 100).execute(db);
    await counted(100);
    expect(await refreshPlannerStatistics(db, 'big')).not.toContain('sync_cursor');
    expect(await refreshPlannerStatistics(db, 'small')).toContain('sync_cursor');
    // known now: another small change waits for autovacuum
    await cursors('small', 100, 100).execute(db);
    await counted(100);
    expect(await refreshPlannerStatistics(db, 'small')).not.toContain('sync_cursor');
  });

  it('analyzes a change-tracking table after a large night, a third of it: its change_xid statistics are stale', async () => {
    const db = ctx.store.db;
    const notes = (from: number, n: number) =>
      sql`insert into recon_change (account, kind, key)
          select 'big', 'exchange_order', g::text from generate_series(${from}::int, ${from + n - 1}::int) g`;
    const more = (from: number, n: number) => cursors('big', n, from);
    await notes(0, 30_000).execute(db);
    await more(10_000, 30_000).execute(db);
    await counted(30_000, 'recon_change');
    await counted(30_000);
    await refreshPlannerStatistics(db, 'big');
    // 12,000 rows more in each (40%, below half): the table with change_xid is analyzed, the other one is not
    await notes(30_000, 12_000).execute(db);
    await more(40_000, 12_000).execute(db);
    await counted(12_000, 'recon_change');
    await counted(12_000);
    const analyzed = await refreshPlannerStatistics(db, 'big');
    expect(analyzed).toContain('recon_change');
    expect(analyzed).not.toContain('sync_cursor');
    // its change_xid statistics now know the night (an ANALYZE of the indexed columns and change_xid)
    const beyond = await sql<{ n: string }>`
      select count(*)::text as n from recon_change
      where change_xid > (
        select max(v) from pg_stats st,
          unnest(coalesce(st.histogram_bounds::text::xid8[], '{}') || coalesce(st.most_common_vals::text::xid8[], '{}')) v
        where st.schemaname = current_schema() and st.tablename = 'recon_change' and st.attname = 'change_xid'
      )`.execute(db);
    expect(beyond.rows[0]!.n).toBe('0');
    // a small night after it waits for autovacuum
    await notes(42_000, 500).execute(db);
    await counted(500, 'recon_change');
    expect(await refreshPlannerStatistics(db, 'big')).not.toContain('recon_change');
  });

  it("a large night's ANALYZE refreshes the time's histogram and leaves a row's identity within the account alone", async () => {
    const db = ctx.store.db;
    // exchange_order: primary key (account, ex_ord_id), indexes on the time and change_xid
    const orders = (from: number, n: number) =>
      sql`insert into exchange_order (account, ex_ord_id, ord_status, timestamp, raw)
          select 'ids', g, 'FILLED', timestamptz '2026-11-01' + g * interval '1 minute', '{}'
          from generate_series(${from}::int, ${from + n - 1}::int) g`;
    const highest = async (column: string) => {
      const r = await sql<{ v: string | null }>`
        select (histogram_bounds::text::text[])[array_length(histogram_bounds::text::text[], 1)] as v
        from pg_stats where schemaname = current_schema() and tablename = 'exchange_order' and attname = ${column}`.execute(
        db,
      );
      return r.rows[0]?.v ?? null;
    };
    await orders(1, 30_000).execute(db);
    await counted(30_000, 'exchange_order');
    expect(await refreshPlannerStatistics(db, 'ids')).toContain('exchange_order');
    const idsBefore = await highest('ex_ord_id');
    expect(Number(idsBefore)).toBeLessThanOrEqual(30_000);
    // 12,000 orders more (40%, below half, above CHANGED_ROWS): the night's partial ANALYZE
    await orders(30_001, 12_000).execute(db);
    await counted(12_000, 'exchange_order');
    expect(await refreshPlannerStatistics(db, 'ids')).toContain('exchange_order');
    // the time's histogram reaches into the night, the ids' is the one before it (its n_distinct is a fraction: -1)
    expect(Date.parse(String(await highest('timestamp')))).toBeGreaterThan(Date.parse('2026-11-21T20:00:00Z'));
    expect(await highest('ex_ord_id')).toBe(idsBefore);
  });

  it("a large night's ANALYZE samples at a quarter of the default target and leaves the account's statistics alone", async () => {
    const db = ctx.store.db;
    const fills = (account: string, from: number, n: number) =>
      sql`insert into exchange_fill (account, exec_id, ex_ord_id, side, symbol, price, qty, fee, timestamp, raw)
          select ${account}, g, g / 5, 'BUY', 'ETH-USD', 1, 1, 0, timestamptz '2026-11-01' + g * interval '1 second', '{}'
          from generate_series(${from}::int, ${from + n - 1}::int) g`;
    const stats = async (column: string) =>
      (
        await sql<{ bounds: number | null; common: string | null }>`
          select array_length(histogram_bounds::text::text[], 1) as bounds, most_common_vals::text as common
          from pg_stats where schemaname = current_schema() and tablename = 'exchange_fill' and attname = ${column}`.execute(
          db,
        )
      ).rows[0];
    await fills('acme', 1, 20_000).execute(db);
    await fills('globex', 20_001, 10_000).execute(db);
    await counted(30_000, 'exchange_fill');
    expect(await refreshPlannerStatistics(db, 'acme')).toContain('exchange_fill');
    // the whole ANALYZE: the default target's 101 histogram bounds, both accounts among the common values
    expect((await stats('timestamp'))?.bounds).toBe(101);
    const accounts = (await stats('account'))?.common;
    expect(accounts).toMatch(/acme/);
    expect(accounts).toMatch(/globex/);
    // a large night of acme's (12,000 fills): the partial ANALYZE at target 25, the account column left as it was
    await fills('acme', 30_001, 12_000).execute(db);
    await counted(12_000, 'exchange_fill');
    expect(await refreshPlannerStatistics(db, 'acme')).toContain('exchange_fill');
    expect((await stats('timestamp'))?.bounds).toBe(26);
    expect((await stats('change_xid'))?.bounds ?? 0).toBeLessThanOrEqual(26);
    expect((await stats('account'))?.common).toBe(accounts);
  });
});
