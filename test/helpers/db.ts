import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe } from 'vitest';
import { openStore, type Store } from '../../src/store/db/database.js';
import { migrate } from '../../src/store/db/migrate.js';

export type StoreKind = 'embedded' | 'postgres';

/** Embedded always; real Postgres too when TEST_DATABASE_URL is set (CI sets it). */
export const storeKinds: StoreKind[] = process.env.TEST_DATABASE_URL ? ['embedded', 'postgres'] : ['embedded'];

export interface TestStore {
  store: Store;
  /** postgres:// URL (with search_path) for child processes, or undefined for embedded. */
  url?: string;
  schema?: string;
  drop(): Promise<void>;
}

/**
 * A migrated store of its own: an in-memory PGlite, or a fresh schema on the test server so
 * that test files never see each other's rows.
 */
export async function createTestStore(kind: StoreKind, dataDir = 'memory://'): Promise<TestStore> {
  if (kind === 'embedded') {
    const store = await openStore({ dataDir });
    await migrate(store);
    return { store, drop: () => store.close() };
  }
  const baseUrl = process.env.TEST_DATABASE_URL;
  if (!baseUrl) throw new Error('TEST_DATABASE_URL is not set');
  const schema = `rr_${randomBytes(6).toString('hex')}`;
  const admin = new pg.Client({ connectionString: baseUrl });
  await admin.connect();
  await admin.query(`create schema ${schema}`);
  await admin.end();
  const url = withSearchPath(baseUrl, schema);
  const store = await openStore({ url, schema });
  await migrate(store);
  return {
    store,
    url,
    schema,
    async drop() {
      await store.close();
      const c = new pg.Client({ connectionString: baseUrl });
      await c.connect();
      await c.query(`drop schema if exists ${schema} cascade`);
      await c.end();
    },
  };
}

/**
 * Runs `fn` on the database a CLI child wrote: the test's Postgres store, or the embedded data folder `dataDir`, opened
 * for `fn` only (the embedded database admits one process: call it while no CLI runs).
 */
export async function withCliStore<T>(
  pg: TestStore | undefined,
  dataDir: string,
  fn: (store: Store) => Promise<T>,
): Promise<T> {
  if (pg) return fn(pg.store);
  const store = await openStore({ dataDir });
  try {
    return await fn(store);
  } finally {
    await store.close();
  }
}

/** A postgres URL whose connections use the given schema (libpq `options`, honoured by pg). */
export function withSearchPath(url: string, schema: string): string {
  const u = new URL(url);
  u.searchParams.set('options', `-c search_path=${schema}`);
  return u.toString();
}

/**
 * Runs a suite once per store kind, each with its own migrated store, e.g.
 * `describeEachStore('fills', (ctx) => it('...', async () => ctx.store.db...))`.
 */
export function describeEachStore(
  title: string,
  fn: (ctx: { readonly store: Store; readonly kind: StoreKind; readonly test: TestStore }) => void,
): void {
  for (const kind of storeKinds) {
    describe(`${title} [${kind}]`, () => {
      let test: TestStore | undefined;
      const ctx = {
        kind,
        get store(): Store {
          if (!test) throw new Error('store not ready');
          return test.store;
        },
        get test(): TestStore {
          if (!test) throw new Error('store not ready');
          return test;
        },
      };
      beforeAll(async () => {
        test = await createTestStore(kind);
      });
      afterAll(async () => {
        await test?.drop();
      });
      fn(ctx);
    });
  }
}

/** Tables whose rows record the transaction that last changed them (sql/0017 change tracking). */
const TRACKED = [
  'partner_order',
  'exchange_order',
  'exchange_fill',
  'exchange_deposit',
  'exchange_withdrawal',
  'webhook_event',
] as const;

/**
 * The newest change recorded in each tracked table: equal before and after a re-run means the
 * re-run changed nothing a reconcile would judge again (re-seeing a record is no change).
 */
export async function latestChanges(db: Store['db']): Promise<Record<string, string | null>> {
  const out: Record<string, string | null> = {};
  for (const t of TRACKED)
    out[t] =
      (await sql<{ x: string | null }>`select max(change_xid)::text as x from ${sql.table(t)}`.execute(db)).rows[0]
        ?.x ?? null;
  return out;
}

/** Rows without their change_xid: which transaction wrote a row differs between two stores by design. */
export function withoutChangeXid<T extends Record<string, unknown>>(rows: T[]): Array<Omit<T, 'change_xid'>> {
  return rows.map(({ change_xid: _x, ...rest }) => rest);
}
