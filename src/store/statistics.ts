/** Planner statistics after bulk writes: the tables a sync or a reconcile changed by more than autovacuum would wait for. */
import { sql } from 'kysely';
import type { Db } from './database.js';

/**
 * Analyzes this schema's tables never analyzed, and those whose rows changed by more than half since they were last
 * analyzed. A first sync loads a million fills in minutes, well inside autovacuum's nap (and autovacuum may be off):
 * the reconcile and report queries that follow were planned for empty tables (a hash of 5,807 estimated rows over a
 * million real ones: 1.4 s for a 0.3 s query). ANALYZE samples a fixed number of rows, about 0.3 s for the fills table
 * at any size, so it runs in the job's path only for such shifts: a night that adds a tenth to a table (autovacuum's
 * own threshold) leaves it to autovacuum. Returns the tables analyzed.
 */
export async function refreshPlannerStatistics(db: Db): Promise<string[]> {
  const stale = await sql<{ name: string }>`
    select c.relname as name
    from pg_class c
    join pg_namespace n on n.oid = c.relnamespace and n.nspname = current_schema()
    left join pg_stat_user_tables s on s.relid = c.oid
    where c.relkind = 'r'
      and (c.reltuples < 0 or coalesce(s.n_mod_since_analyze, 0) > 50 + 0.5 * greatest(c.reltuples, 0))
    order by c.relname`.execute(db);
  const names = stale.rows.map((r) => r.name);
  for (const name of names) await sql`analyze ${sql.table(name)}`.execute(db);
  return names;
}
