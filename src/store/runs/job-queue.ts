/** What `doctor` reads of the job queue's schema (pg-boss's own tables, beside ours): its version and live workers. */
import { sql } from 'kysely';
import type { Db } from '../db/database.js';

/**
 * The queue's tables live in a schema of their own beside ours: `<search_path>_queue` when DATABASE_URL names a
 * search_path (each test its own), else `ramp_recon_queue`.
 */
export function queueSchema(databaseUrl: string): string {
  const options = new URL(databaseUrl).searchParams.get('options') ?? '';
  const path = /search_path=([A-Za-z_][A-Za-z0-9_]*)/.exec(options)?.[1];
  return path ? `${path}_queue` : 'ramp_recon_queue';
}

export interface QueueStatus {
  /** The schema exists (a worker, `enqueue` or the fleet's `schedule` created it). */
  exists: boolean;
  /** pg-boss's schema version. */
  version: string | null;
  /** Processes heard from within three of their heartbeats, not stopped. */
  live: Array<{ name: string | null; host: string; pid: number; heartbeatOn: Date }>;
}

export async function queueStatus(db: Db, schema: string): Promise<QueueStatus> {
  const found = await sql<{ ok: boolean }>`select to_regnamespace(${schema}) is not null as ok`.execute(db);
  if (!found.rows[0]?.ok) return { exists: false, version: null, live: [] };
  const version = await sql<{ version: string }>`select version::text as version from ${sql.table(`${schema}.version`)}`
    .execute(db)
    .then((r) => r.rows[0]?.version ?? null)
    .catch(() => null);
  const hasInstances = await sql<{
    ok: boolean;
  }>`select to_regclass(${`${schema}.instance`}) is not null as ok`.execute(db);
  if (!hasInstances.rows[0]?.ok) return { exists: true, version, live: [] };
  const live = await sql<{ name: string | null; host: string; pid: number; heartbeat_on: Date }>`
    select name, host, pid, heartbeat_on from ${sql.table(`${schema}.instance`)}
    where stopped_on is null and heartbeat_on > now() - make_interval(secs => heartbeat_seconds * 3)
    order by name, host, pid`.execute(db);
  return {
    exists: true,
    version,
    live: live.rows.map((r) => ({ name: r.name, host: r.host, pid: Number(r.pid), heartbeatOn: r.heartbeat_on })),
  };
}
