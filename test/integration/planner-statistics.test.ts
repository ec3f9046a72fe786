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
  const counted = async (changed: number) => {
    for (let i = 0; i < 50; i++) {
      const r = await sql<{ n: string }>`
        select coalesce(n_mod_since_analyze, 0)::text as n from pg_stat_user_tables
        where relname = 'sync_cursor' and schemaname = current_schema()`.execute(ctx.store.db);
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
});
