/** Savepoints: part of a transaction that can fail and be undone while the rest of the transaction goes on. */
import { sql } from 'kysely';
import type { Db } from '../db/database.js';

/**
 * Runs `fn` inside a savepoint of the transaction `trx`. When it throws, the transaction is rolled
 * back to the savepoint (usable again, the work before it kept) and the error is thrown as it
 * was; if even that rollback fails (the connection is gone), the first error is still the one thrown.
 */
export async function inSavepoint<T>(trx: Db, fn: () => Promise<T>): Promise<T> {
  await sql`savepoint part`.execute(trx);
  let result: T;
  try {
    result = await fn();
  } catch (err) {
    await sql`rollback to savepoint part`
      .execute(trx)
      .then(() => sql`release savepoint part`.execute(trx))
      .catch(() => {});
    throw err;
  }
  await sql`release savepoint part`.execute(trx);
  return result;
}
