/** Shared by the kill and fault tests: a fresh store per run target, the CLI, a dump of the stored data and its comparison. */
import { cpSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sql } from 'kysely';
import { parseJsonLossless, stringifyJsonLossless } from '../../src/decimal/json.js';
import { openStore, type Store } from '../../src/store/db/database.js';
import { createTestStore, type StoreKind } from '../helpers/db.js';
import { childEnv } from '../e2e/helpers.js';

/** Tables whose rows are the data a run stores (records, their states, quarantine). */
export const DATA_TABLES = [
  'exchange_fill',
  'exchange_order',
  'exchange_order_state',
  'exchange_order_not_found',
  'exchange_deposit',
  'exchange_deposit_state',
  'exchange_withdrawal',
  'exchange_withdrawal_state',
  'partner_order',
  'partner_order_state',
  'quarantine',
] as const;

/** Columns that say when, how often or by which run a row was written, not what it holds. */
const VOLATILE = new Set([
  'id',
  'first_seen_at',
  'last_seen_at',
  'observed_at',
  'checked_at',
  'not_found_at',
  'seen_count',
  'run_id',
  'resolved_at',
  'change_xid',
]);

function keep(column: string): boolean {
  return !VOLATILE.has(column);
}

export type Dump = Record<string, string[]>;

/** Every data table as sorted row texts (volatile columns left out), and the open breaks (code, key, severity) except the snapshot-count dependent roll-forward. */
export async function dump(store: Store): Promise<Dump> {
  const out: Dump = {};
  for (const table of DATA_TABLES) {
    const { rows } = await sql<{ j: string }>`select to_jsonb(t)::text as j from ${sql.table(table)} t`.execute(
      store.db,
    );
    out[table] = rows
      .map((r) => {
        const o = parseJsonLossless(r.j) as Record<string, unknown>;
        return stringifyJsonLossless(
          Object.fromEntries(
            Object.entries(o)
              .filter(([k]) => keep(k))
              .sort(([a], [b]) => (a < b ? -1 : 1)),
          ),
        );
      })
      .sort();
  }
  const { rows } = await sql<{
    j: string;
  }>`select code || ' ' || key || ' ' || severity || ' ' || status as j from break where code <> 'E_BALANCE_ROLL'`.execute(
    store.db,
  );
  out.break = rows.map((r) => r.j).sort();
  return out;
}

/** Rows of the reference missing from the target (lost) and rows beyond the reference's (duplicated), over all tables. */
export function compare(reference: Dump, target: Dump): { lost: number; duplicated: number; diff: string[] } {
  let lost = 0;
  let duplicated = 0;
  const diff: string[] = [];
  for (const table of Object.keys(reference)) {
    const want = new Map<string, number>();
    for (const r of reference[table] ?? []) want.set(r, (want.get(r) ?? 0) + 1);
    const have = new Map<string, number>();
    for (const r of target[table] ?? []) have.set(r, (have.get(r) ?? 0) + 1);
    for (const [r, n] of want) {
      const m = have.get(r) ?? 0;
      if (m < n) {
        lost += n - m;
        if (diff.length < 10) diff.push(`${table}: missing ${r.slice(0, 300)}`);
      }
    }
    for (const [r, m] of have) {
      const n = want.get(r) ?? 0;
      if (m > n) {
        duplicated += m - n;
        if (diff.length < 10) diff.push(`${table}: extra ${r.slice(0, 300)}`);
      }
    }
  }
  return { lost, duplicated, diff };
}

/** Where a CLI run keeps its data: a copy of a migrated embedded database, or a fresh Postgres schema. */
export interface Target {
  env: NodeJS.ProcessEnv;
  dir: string;
  dump(): Promise<Dump>;
  drop(): Promise<void>;
}

let template: Promise<string> | undefined;

/** A migrated embedded database, made once per test file and copied for each target (migrating costs seconds). */
function embeddedTemplate(): Promise<string> {
  template ??= (async () => {
    const dir = mkdtempSync(join(tmpdir(), 'rr-rel-template-'));
    const t = await createTestStore('embedded', join(dir, 'data'));
    await t.drop();
    return dir;
  })();
  return template;
}

export async function openTarget(
  kind: StoreKind,
  sandboxEnv: Record<string, string>,
  config: unknown,
): Promise<Target> {
  const dir = mkdtempSync(join(tmpdir(), `rr-rel-${kind}-`));
  writeFileSync(join(dir, 'config.json'), JSON.stringify(config));
  const base = {
    ...sandboxEnv,
    REPORTS_DIR: join(dir, 'reports'),
    RAMP_RECON_CONFIG: join(dir, 'config.json'),
    LOG_LEVEL: 'info',
  };
  if (kind === 'embedded') {
    cpSync(join(await embeddedTemplate(), 'data'), join(dir, 'data'), { recursive: true });
    const dataDir = join(dir, 'data');
    return {
      dir,
      env: childEnv({ ...base, RAMP_RECON_DATA_DIR: dataDir }),
      async dump() {
        const store = await openStore({ dataDir });
        try {
          return await dump(store);
        } finally {
          await store.close();
        }
      },
      async drop() {
        rmSync(dir, { recursive: true, force: true });
      },
    };
  }
  const pg = await createTestStore('postgres');
  await pg.store.close();
  return {
    dir,
    env: childEnv({ ...base, RAMP_RECON_DATA_DIR: join(dir, 'data'), DATABASE_URL: pg.url }),
    async dump() {
      const store = await openStore({ url: pg.url!, schema: pg.schema });
      try {
        return await dump(store);
      } finally {
        await store.close();
      }
    },
    async drop() {
      await pg.drop().catch(() => {});
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** Removes the template copy source at the end of a file. */
export async function dropTemplate(): Promise<void> {
  if (template) rmSync(await template, { recursive: true, force: true });
  template = undefined;
}

/** A small deterministic generator (mulberry32) for the seeded kill moments. */
export function seeded(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
