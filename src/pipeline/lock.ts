/** The account's run lock: in-process exclusion, and on Postgres a session advisory lock held for the whole run. */
import type { Store } from '../store/db/database.js';
import { advisoryUnlock, tryAdvisoryLock } from '../store/runs/run-lock.js';
import { newestRunningRun } from '../store/runs/runs.js';
import type { Logger } from '../log/logger.js';
import { AppError, EXIT } from '../errors.js';
import { DatabaseUnavailableError } from '../store/db/database-errors.js';

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
  /**
   * Also hold the lock of this rate group, on the same session: one run of the group's accounts at a time across every
   * process (the fleet's workers, whose request budgets are their own). The run waits for it (or is refused without
   * `wait`) as for the account's lock.
   */
  rateGroup?: string;
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
export async function withRunLock<T>(
  store: Store,
  options: LockOptions,
  fn: (lock: HeldLock) => Promise<T>,
): Promise<T> {
  const held = heldInProcess.get(store) ?? new Set<string>();
  heldInProcess.set(store, held);
  const key = `ramp-recon:run:${options.account}`;
  const groupKey = options.rateGroup === undefined ? null : `ramp-recon:rate-group:${options.rateGroup}`;
  const describeGroup = async () => `another run of rate group ${options.rateGroup ?? ''} is in progress`;

  const describeAccount = () => describeRunning(store, options.account);
  // Each lock's wait is logged once.
  const waitedFor = new Set<() => Promise<string>>();
  const waitOrRefuse = async (describe: () => Promise<string>) => {
    const what = await describe();
    if (!options.wait)
      throw new RunLockedError(`${what}; try again when it has finished, or pass --wait to wait for it`);
    if (!waitedFor.has(describe)) {
      options.logger?.info(`${what}; waiting for it to finish (--wait)`);
      waitedFor.add(describe);
    }
    await sleep(WAIT_POLL_MS, options.signal);
  };

  // In-process first: cheap, and the only exclusion on the embedded database.
  while (held.has(key)) await waitOrRefuse(describeAccount);
  held.add(key);
  let heldGroup: string | null = null;
  try {
    if (groupKey !== null) {
      while (held.has(groupKey)) await waitOrRefuse(describeGroup);
      held.add((heldGroup = groupKey));
    }
    // The embedded database's lock is the data-folder lock file and this process: it cannot be lost.
    if (store.kind === 'embedded') return await fn({ lost: new AbortController().signal });
    return await store.withSession(async (session) => {
      for (;;) {
        if (await tryAdvisoryLock(session, key)) break;
        await waitOrRefuse(describeAccount);
      }
      // The account's lock first, then its group's, always in that order. pg-boss's groupConcurrency alone let two
      // workers that fetched at the same instant each claim a job of one group (both saw no active job of it).
      try {
        if (groupKey !== null)
          for (;;) {
            if (await tryAdvisoryLock(session, groupKey)) break;
            await waitOrRefuse(describeGroup);
          }
      } catch (err) {
        await advisoryUnlock(session, key).catch(() => {});
        throw err;
      }
      // The server drops a session's advisory locks with the session: once the session is gone
      // another run may take the lock, so this run must stop (its stage fails with this reason).
      const lost = new AbortController();
      session.onLost((err) => {
        options.logger?.error({ error: err.message }, "the run lock's database session was lost; stopping the run");
        lost.abort(new LockLostError(`database: the session holding the run lock was lost (${err.message})`, err));
      });
      try {
        return await fn({ lost: lost.signal });
      } finally {
        // A lost connection: the server released the locks with it.
        if (groupKey !== null) await advisoryUnlock(session, groupKey).catch(() => {});
        await advisoryUnlock(session, key).catch(() => {});
      }
    });
  } finally {
    if (heldGroup !== null) held.delete(heldGroup);
    held.delete(key);
  }
}

/** What the body of withRunLock gets: `lost` fires when the lock can no longer be trusted. */
export interface HeldLock {
  lost: AbortSignal;
}

/**
 * The lock's session went away (server restart, pg_terminate_backend, network): the server has
 * released the advisory lock, so the run stops rather than overlap a run that may take it now.
 * The message names the database, like asDatabaseUnavailable's (the stage records it).
 */
export class LockLostError extends DatabaseUnavailableError {}

/** "another run is in progress (started at ..., run id ...)" from the newest running run row. */
export async function describeRunning(store: Store, account: string): Promise<string> {
  try {
    const row = await newestRunningRun(store.db, account);
    if (row) {
      const started = row.startedAt.toISOString();
      return `another run is in progress (started at ${started}, run id ${row.id}, command ${row.command}, trigger ${row.trigger})`;
    }
  } catch {
    /* the description is best effort; the refusal stands */
  }
  return 'another run is in progress';
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
