/** Opening the store: embedded PGlite (with its folder lock) or a Postgres server, behind one typed Kysely handle. */
import { mkdirSync, openSync, closeSync, writeFileSync, readFileSync, unlinkSync } from 'node:fs';
import { join } from 'node:path';
import { Kysely, PostgresDialect } from 'kysely';
import pg from 'pg';
import copyStreams from 'pg-copy-streams';
import type { PGlite } from '@electric-sql/pglite';
import type { DB } from './schema.js';
import { textParsers } from './type-parsers.js';
import { AppError } from '../../errors.js';
import { isAlive } from '../../util/process.js';

export type Db = Kysely<DB>;

/** What a command needs from the store: typed queries, raw scripts (migrations), and closing. */
/** Runs `fn` in one database transaction: committed when it resolves, rolled back when it throws. */
export function inTransaction<T>(db: Db, fn: (trx: Db) => Promise<T>): Promise<T> {
  return db.transaction().execute(fn);
}

export interface Store {
  readonly db: Db;
  readonly kind: 'postgres' | 'embedded';
  /** Runs a multi-statement SQL script (simple query protocol). */
  execScript(script: string): Promise<void>;
  /**
   * Runs fn on one dedicated connection (session-level advisory locks need the same session
   * for lock and unlock; a pool would hand out a different one).
   */
  withSession<T>(fn: (session: Session) => Promise<T>): Promise<T>;
  /**
   * On a Postgres server only: the bytes of `COPY (...) TO STDOUT` (the query text whole, values inlined: COPY takes
   * no parameters), streamed on a session of its own. PGlite's COPY writes to a blob it holds whole, so the embedded
   * store has none and its callers page with queries instead.
   */
  copyOut?(query: string): AsyncIterable<Buffer>;
  close(): Promise<void>;
}

export interface Session {
  /**
   * Calls listener once if this session's connection is lost (terminated by the server, network
   * gone) while it is held. Never called on the embedded database (one in-process session).
   */
  onLost(listener: (err: Error) => void): void;
  exec(script: string): Promise<void>;
  query<R = Record<string, unknown>>(text: string, params?: unknown[]): Promise<R[]>;
}

export interface OpenOptions {
  /** postgres:// URL; absent: embedded PGlite under dataDir. */
  url?: string;
  /** Folder of the embedded database; 'memory://' keeps it in memory (tests). */
  dataDir?: string;
  /** Postgres schema to use (tests isolate files by schema). */
  schema?: string;
  poolSize?: number;
}

export class DatabaseError extends AppError {
  constructor(message: string, cause?: unknown) {
    super('DATABASE', message, 1, { cause });
  }
}

export async function openStore(options: OpenOptions): Promise<Store> {
  return options.url ? openPostgres(options.url, options) : openEmbedded(options.dataDir ?? 'data');
}

function openPostgres(url: string, options: OpenOptions): Store {
  const pool = new pg.Pool({
    connectionString: url,
    max: options.poolSize ?? 4,
    // Per-pool parsers rather than pg's global registry, so nothing else in the process is affected.
    types: {
      getTypeParser: ((oid: number, format?: string) =>
        textParsers[oid] ?? pg.types.getTypeParser(oid, format as 'text')) as typeof pg.types.getTypeParser,
    },
    options: options.schema ? `-c search_path=${options.schema}` : undefined,
  });
  // A connection that goes away (server restarted, backend terminated, network cut) makes its pg
  // Client emit 'error'; with no listener that event kills the process ("Unhandled 'error' event").
  // The pool listens only while a client is idle in it, so every client gets its own listener when
  // it connects, kept for its whole life: a checked-out client between two statements (a Kysely
  // transaction, the run lock's session) is covered too. The query in flight, or the next one on
  // that client, fails with the connection's error (named by asDatabaseUnavailable), and the pool
  // discards the broken client on release and opens a fresh one for the next checkout.
  pool.on('error', () => {});
  pool.on('connect', (client) => {
    client.on('error', () => {});
    // Before the session's first statement (a client runs its queries in order). The job's statements are pages of
    // 5,000 to 50,000 rows, many costed above jit_above_cost: compiling each page's plan cost more than it saved
    // (docs/performance.md). Should it fail, the session keeps the server's setting.
    client.query('set jit = off').catch(() => {});
  });
  const db = new Kysely<DB>({ dialect: new PostgresDialect({ pool }) });
  return {
    db,
    kind: 'postgres',
    async execScript(script) {
      const client = await pool.connect();
      try {
        await client.query(script);
      } finally {
        client.release();
      }
    },
    async withSession(fn) {
      const client = await pool.connect();
      let lostError: Error | undefined;
      const listeners: Array<(err: Error) => void> = [];
      const onError = (err: Error) => {
        if (lostError) return;
        lostError = err;
        for (const l of listeners.splice(0)) l(err);
      };
      client.on('error', onError);
      // pg also ends the client without an 'error' when the server closes the socket cleanly.
      const onEnd = () => onError(new Error('Connection terminated unexpectedly'));
      client.on('end', onEnd);
      try {
        return await fn({
          onLost: (listener) => {
            if (lostError) listener(lostError);
            else listeners.push(listener);
          },
          exec: async (script) => {
            await client.query(script);
          },
          query: async (text, params) => (await client.query(text, params)).rows,
        });
      } finally {
        client.off('error', onError);
        client.off('end', onEnd);
        listeners.length = 0;
        // A lost connection is destroyed, not handed back to the pool.
        client.release(lostError);
      }
    },
    async *copyOut(query) {
      const client = await pool.connect();
      let finished = false;
      let failure: Error | undefined;
      try {
        for await (const chunk of client.query(copyStreams.to(query))) yield chunk as Buffer;
        finished = true;
      } catch (err) {
        failure = err as Error;
        throw err;
      } finally {
        // A COPY left midway (its reader stopped, or it failed) leaves the connection inside the COPY protocol: it is
        // closed rather than handed back to the pool.
        client.release(finished ? undefined : (failure ?? new Error('COPY stopped before its end')));
      }
    },
    async close() {
      await db.destroy();
    },
  };
}

async function openEmbedded(dataDir: string): Promise<Store> {
  const inMemory = dataDir.startsWith('memory://');
  let releaseLock = () => {};
  if (!inMemory) {
    mkdirSync(dataDir, { recursive: true });
    releaseLock = lockDataDir(dataDir);
  }
  // Loaded only for the embedded store: a run on a server does not pay PGlite's module at start-up (about 20 ms).
  const [{ PGlite }, { PGliteDialect }] = await Promise.all([
    import('@electric-sql/pglite'),
    import('kysely-pglite-dialect'),
  ]);
  let pglite: PGlite;
  try {
    pglite = await PGlite.create(inMemory ? dataDir : join(dataDir, 'pg'), { parsers: textParsers });
  } catch (err) {
    releaseLock();
    throw new DatabaseError(`cannot open the embedded database in ${dataDir}: ${(err as Error).message}`, err);
  }
  const db = new Kysely<DB>({ dialect: new PGliteDialect(pglite) });
  return {
    db,
    kind: 'embedded',
    async execScript(script) {
      await pglite.exec(script);
    },
    async withSession(fn) {
      // PGlite has a single session; Kysely's driver serializes its own use of it.
      return fn({
        onLost: () => {},
        exec: async (script) => {
          await pglite.exec(script);
        },
        query: async (text, params) => (await pglite.query(text, params)).rows as never,
      });
    },
    async close() {
      await db.destroy();
      // Kysely closes its driver only if a query went through it; migrations use the raw session.
      if (!pglite.closed) await pglite.close();
      releaseLock();
    },
  };
}

/**
 * PGlite is a single-process database: two processes opening the same folder would corrupt it.
 * A lock file with our pid refuses a second opener; a lock left by a dead process is taken over.
 */
function lockDataDir(dataDir: string): () => void {
  const lockPath = join(dataDir, 'ramp-recon.lock');
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      const fd = openSync(lockPath, 'wx');
      writeFileSync(fd, String(process.pid));
      closeSync(fd);
      let released = false;
      const release = () => {
        if (released) return;
        released = true;
        try {
          unlinkSync(lockPath);
        } catch {
          /* already gone */
        }
      };
      process.once('exit', release);
      return release;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
      const holder = Number(readFileSync(lockPath, 'utf8').trim());
      if (Number.isInteger(holder) && holder > 0 && holder !== process.pid && isAlive(holder)) {
        throw new EmbeddedBusyError(dataDir, holder);
      }
      unlinkSync(lockPath);
    }
  }
  throw new EmbeddedBusyError(dataDir, 0);
}

export class EmbeddedBusyError extends AppError {
  constructor(dataDir: string, pid: number) {
    super(
      'DATABASE_BUSY',
      `the embedded database in ${dataDir} is in use by another ramp-recon process${pid ? ` (pid ${pid})` : ''}; wait for it to finish, or set DATABASE_URL to use a Postgres server`,
      1,
    );
  }
}

/**
 * A statement that failed because its connection was gone, not because of what it asked: the
 * server terminated the session (57P01 admin shutdown, 57P02 crash, 57P03 starting up), or the
 * socket closed. After a restart or pg_terminate_backend every idle connection of the pool is
 * dead, and the pool can hand out one whose end it has not yet seen: such a statement never ran.
 */
export function isConnectionLost(err: unknown): boolean {
  const e = err as { code?: string; message?: string } | null;
  if (!e) return false;
  if (e.code === '57P01' || e.code === '57P02' || e.code === '57P03' || e.code === 'ECONNRESET' || e.code === 'EPIPE')
    return true;
  return /Connection terminated|connection is closed|Client has encountered a connection error|not queryable/i.test(
    e.message ?? '',
  );
}

/**
 * Runs fn again (up to `attempts` times, 100 ms more each time) while it fails with a lost
 * connection, so that the pool works through its dead connections to a fresh one. Only for
 * statements that are safe to repeat: reads, and single-statement writes that set a state
 * (the run row's stage, status and outcome). A stage's own writes are not retried here: its
 * failure fails the run and the next run resumes from the committed cursors.
 */
export async function retryOnLostConnection<T>(fn: () => Promise<T>, attempts = 6): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await fn();
    } catch (err) {
      if (attempt >= attempts || !isConnectionLost(err)) throw err;
      await new Promise((r) => setTimeout(r, 100 * attempt));
    }
  }
}
