/** The run lock's SQL on Postgres: a session-level advisory lock keyed by schema and account. */
import type { Session } from '../db/database.js';

/**
 * Advisory locks are database-wide, while our tables live in a schema: the schema is part of the
 * key, so two deployments (or two test files) in different schemas of one database never block
 * each other, and two runs on the same tables always do.
 */
const LOCK_KEY_SQL = `hashtext(current_schema() || ':' || $1)`;

/** Takes the lock on this session if it is free; never waits. */
export async function tryAdvisoryLock(session: Session, key: string): Promise<boolean> {
  const rows = await session.query<{ locked: boolean }>(`select pg_try_advisory_lock(${LOCK_KEY_SQL}) as locked`, [
    key,
  ]);
  return rows[0]?.locked === true;
}

/** Releases the lock held by this session. */
export async function advisoryUnlock(session: Session, key: string): Promise<void> {
  await session.query(`select pg_advisory_unlock(${LOCK_KEY_SQL})`, [key]);
}
