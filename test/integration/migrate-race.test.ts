import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { openStore, type Store } from '../../src/store/db/database.js';
import { migrate } from '../../src/store/db/migrate.js';
import { withSearchPath } from '../helpers/db.js';

/**
 * Schedulers, workers and `migrate` started together on a fresh database: every migrator waits on the migration lock
 * before it touches the schema, so none fails on another's `create table schema_migration` and each file is applied
 * once. Real Postgres only (the embedded database has one process).
 */
const baseUrl = process.env.TEST_DATABASE_URL;

describe.skipIf(!baseUrl)('migrators started together on a fresh database [postgres]', () => {
  it('all succeed and apply each migration exactly once, round after round', { timeout: 120_000 }, async () => {
    const admin = new pg.Client({ connectionString: baseUrl });
    await admin.connect();
    try {
      for (let round = 0; round < 8; round++) {
        const schema = `rr_mig_${randomBytes(5).toString('hex')}`;
        await admin.query(`create schema ${schema}`);
        const stores: Store[] = [];
        try {
          for (let i = 0; i < 4; i++)
            stores.push(await openStore({ url: withSearchPath(baseUrl!, schema), schema, poolSize: 2 }));
          const results = await Promise.allSettled(stores.map((s) => migrate(s)));
          const failed = results.filter((r) => r.status === 'rejected').map((r) => String(r.reason));
          expect(failed, `round ${round}`).toEqual([]);
          const applied = results.flatMap((r) => (r.status === 'fulfilled' ? r.value.applied : []));
          expect(new Set(applied).size, `round ${round}`).toBe(applied.length);
          const rows = await admin.query(`select count(*)::int as n from ${schema}.schema_migration`);
          expect(rows.rows[0].n).toBe(applied.length);
        } finally {
          await Promise.all(stores.map((s) => s.close()));
          await admin.query(`drop schema ${schema} cascade`);
        }
      }
    } finally {
      await admin.end();
    }
  });
});
