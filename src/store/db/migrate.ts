/** Schema migrations: the sql/ files applied in order, each once, checksummed. */
import { readdirSync, readFileSync } from 'node:fs';
import { join, dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createHash } from 'node:crypto';
import type { Store } from './database.js';
import { AppError } from '../../errors.js';

/** sql/ at the package root, found from both src/store/db/ (tests) and dist/src/store/db/ (built CLI). */
export function defaultSqlDir(): string {
  const here = dirname(fileURLToPath(import.meta.url));
  for (const candidate of [join(here, '..', '..', '..', 'sql'), join(here, '..', '..', '..', '..', 'sql')]) {
    try {
      readdirSync(candidate);
      return candidate;
    } catch {
      /* try the next */
    }
  }
  throw new AppError('SQL_DIR_MISSING', `cannot find the sql/ folder next to ${here}`);
}

export interface MigrationResult {
  applied: string[];
  alreadyApplied: string[];
}

const MIGRATION_FILE = /^(\d{4})_[a-z0-9_]+\.sql$/;
// Arbitrary constant: the advisory lock that serializes concurrent migrators on one database.
const MIGRATION_LOCK = 7_416_001;

/**
 * Applies sql/NNNN_name.sql files in order, each in its own transaction, recording each in
 * schema_migration with a checksum. Concurrent migrators wait on an advisory lock, taken before anything else (also
 * the creation of schema_migration); an edited,
 * already-applied file is an error rather than being silently skipped.
 */
export async function migrate(store: Store, sqlDir = defaultSqlDir()): Promise<MigrationResult> {
  const files = readdirSync(sqlDir)
    .filter((f) => MIGRATION_FILE.test(f))
    .sort();
  const result: MigrationResult = { applied: [], alreadyApplied: [] };
  await store.withSession(async (session) => {
    // The lock first: two migrators on a fresh database would otherwise both run the `create table if not exists`
    // below, and one fails on the other's half-created table (a unique violation in pg_type).
    await session.exec(`select pg_advisory_lock(${MIGRATION_LOCK})`);
    try {
      await session.exec(`
        create table if not exists schema_migration (
          name text primary key,
          checksum text not null,
          applied_at timestamptz not null default now()
        )`);
      const rows = await session.query<{ name: string; checksum: string }>(
        'select name, checksum from schema_migration',
      );
      const done = new Map(rows.map((r) => [r.name, r.checksum]));
      for (const file of files) {
        const text = readFileSync(join(sqlDir, file), 'utf8');
        const checksum = createHash('sha256').update(text).digest('hex');
        const previous = done.get(file);
        if (previous !== undefined) {
          if (previous !== checksum)
            throw new AppError(
              'MIGRATION_CHANGED',
              `migration ${file} was changed after it was applied; add a new migration instead`,
            );
          result.alreadyApplied.push(file);
          continue;
        }
        try {
          await session.exec(
            `begin;\n${text}\n;insert into schema_migration (name, checksum) values ('${file}', '${checksum}');\ncommit;`,
          );
        } catch (err) {
          await session.exec('rollback').catch(() => {});
          throw new AppError('MIGRATION_FAILED', `migration ${file} failed: ${(err as Error).message}`, 1, {
            cause: err,
          });
        }
        result.applied.push(file);
      }
    } finally {
      await session.exec(`select pg_advisory_unlock(${MIGRATION_LOCK})`);
    }
  });
  return result;
}

export interface MigrationStatus {
  applied: string[];
  /** Files not applied yet (every command applies them before it starts). */
  pending: string[];
  /** Files edited after they were applied (migrate refuses to run). */
  changed: string[];
}

/** What migrate would do, without doing it (and without creating schema_migration): for `doctor`. */
export async function migrationStatus(store: Store, sqlDir = defaultSqlDir()): Promise<MigrationStatus> {
  const files = readdirSync(sqlDir)
    .filter((f) => MIGRATION_FILE.test(f))
    .sort();
  const done = await store.withSession(async (session) => {
    const exists = await session.query<{ t: string | null }>(`select to_regclass('schema_migration')::text as t`);
    if (!exists[0]?.t) return new Map<string, string>();
    return new Map(
      (await session.query<{ name: string; checksum: string }>('select name, checksum from schema_migration')).map(
        (r) => [r.name, r.checksum],
      ),
    );
  });
  const status: MigrationStatus = { applied: [], pending: [], changed: [] };
  for (const file of files) {
    const previous = done.get(file);
    if (previous === undefined) status.pending.push(file);
    else if (
      previous !==
      createHash('sha256')
        .update(readFileSync(join(sqlDir, file), 'utf8'))
        .digest('hex')
    )
      status.changed.push(file);
    else status.applied.push(file);
  }
  return status;
}
