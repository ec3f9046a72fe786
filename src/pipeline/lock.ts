import type { Store, Session } from '../store/database.js';
import type { Logger } from '../log/logger.js';
import { AppError, EXIT } from '../errors.js';

/** How often a waiting run (--wait) asks for the lock again. */
const WAIT_POLL_MS = 1_000;

/** A run refused because another one holds the lock: exit 1, with who holds it. */
export class RunLockedError extends AppError {
  constructor(message: string) {
    super('RUN_LOCKED', message, EXIT.failed);
  }
}

export interface LockOptions {
  account: string;
  /** Wait for the run in progress to finish instead of refusing at once. */
  wait?: boolean;
  signal?: AbortSignal;
  logger?: Logger;
}

/**
 * Runs in this process, per store and account. The scheduler and tests share a process with
 * their runs; on the embedded database this flag is the whole lock inside the process (the
 * data-folder lock file already keeps other processes out).
 */
const heldInProcess = new WeakMap<Store, Set<string>>();

/**
 * Runs fn while holding the account's run lock, so two runs (or a run and a manual `sync` /
 * `reconcile`) never interleave their cursors and break updates.
 *
 * Postgres: a session-level advisory lock on one dedicated connection, held for the whole of
 * fn. A session lock (not a transaction lock) because the stages commit many transactions of
 * their own; it is released by unlock, or by the server when the process dies, so a killed run
 * never leaves the lock behind. Waiting polls pg_try_advisory_lock rather than blocking in
 * pg_advisory_lock, so that a signal can interrupt the wait.
 */
export async function withRunLock<T>(store: Store, options: LockOptions, fn: () => Promise<T>): Promise<T> {
  const held = heldInProcess.get(store) ?? new Set<string>();
  heldInProcess.set(store, held);
  const key = `ramp-recon:run:${options.account}`;

  let waitedLogged = false;
  const waitOrRefuse = async (describe: () => Promise<string>) => {
    const what = await describe();
    if (!options.wait) throw new RunLockedError(`${what}; try again when it has finished, or pass --wait to wait for it`);
    if (!waitedLogged) {
      options.logger?.info(`${what}; waiting for it to finish (--wait)`);
      waitedLogged = true;
    }
    await sleep(WAIT_POLL_MS, options.signal);
  };

  // In-process first: cheap, and the only exclusion on the embedded database.
  while (held.has(key)) await waitOrRefuse(() => describeRunning(store, options.account));
  held.add(key);
  try {
    if (store.kind === 'embedded') return await fn();
    return await store.withSession(async (session) => {
      for (;;) {
        if (await tryLock(session, key)) break;
        await waitOrRefuse(() => describeRunning(store, options.account));
      }
      try {
        return await fn();
      } finally {
        await session.query(`select pg_advisory_unlock(${LOCK_KEY_SQL})`, [key]).catch(() => {
          // The connection is gone: the server released the lock with it.
        });
      }
    });
  } finally {
    held.delete(key);
  }
}

/**
 * Advisory locks are database-wide, while our tables live in a schema: the schema is part of the
 * key, so two deployments (or two test files) in different schemas of one database never block
 * each other, and two runs on the same tables always do.
 */
const LOCK_KEY_SQL = `hashtext(current_schema() || ':' || $1)`;

async function tryLock(session: Session, key: string): Promise<boolean> {
  const rows = await session.query<{ locked: boolean }>(`select pg_try_advisory_lock(${LOCK_KEY_SQL}) as locked`, [key]);
  return rows[0]?.locked === true;
}

/** "another run is in progress (started at ..., run id ...)" from the newest running run row. */
export async function describeRunning(store: Store, account: string): Promise<string> {
  try {
    const row = await store.db
      .selectFrom('run')
      .select(['id', 'command', 'started_at', 'trigger'])
      .where('account', '=', account)
      .where('status', '=', 'running')
      .orderBy('started_at', 'desc')
      .limit(1)
      .executeTakeFirst();
    if (row) {
      const started = new Date(row.started_at as unknown as string | Date).toISOString();
      return `another run is in progress (started at ${started}, run id ${row.id}, command ${row.command}, trigger ${row.trigger})`;
    }
  } catch {
    /* the description is best effort; the refusal stands */
  }
  return 'another run is in progress';
}

/**
 * Marks runs left 'running' by a process that died as failed. Only called while holding the
 * lock: then no other run of the account can really be running.
 */
export async function failInterruptedRuns(store: Store, account: string, now: Date): Promise<string[]> {
  const rows = await store.db
    .updateTable('run')
    .set({
      status: 'failed',
      finished_at: now,
      error: 'interrupted: the process ended before the run finished (what it had committed is kept; the next run resumes from it)',
    })
    .where('account', '=', account)
    .where('status', '=', 'running')
    .returning('id')
    .execute();
  return rows.map((r) => r.id);
}

function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason ?? new Error('aborted'));
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal?.reason ?? new Error('aborted'));
    };
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}
