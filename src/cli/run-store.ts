/** The store of a run-like command (run, sync, reconcile, a batch): opened with --wait semantics, signals handled. */
import type { Config } from '../config/load.js';
import { EmbeddedBusyError, type Store } from '../store/db/database.js';
import type { Logger } from '../log/logger.js';
import { RunLockedError } from '../pipeline/lock.js';
import { installSignalHandlers } from '../schedule/signals.js';
import { openMigratedStore } from './context.js';

/**
 * The frame of every run-like command (run, sync, reconcile): the first SIGTERM/SIGINT aborts at
 * the next safe point (committed work is kept, the next run resumes), a second exits at once; the
 * store is opened (with --wait semantics) and always closed.
 */
export async function withRunStore<T>(
  config: Config,
  logger: Logger,
  options: { wait?: boolean },
  fn: (store: Store, signal: AbortSignal) => Promise<T>,
): Promise<T> {
  const abort = new AbortController();
  const uninstall = installSignalHandlers({
    logger,
    graceful: 'stopping at the next safe point; what is committed is kept and the next run resumes from it',
    onGraceful: (signal) => abort.abort(new Error(`interrupted by ${signal}`)),
  });
  try {
    const store = await openRunStore(config, logger, { wait: options.wait, signal: abort.signal });
    try {
      return await fn(store, abort.signal);
    } finally {
      await store.close();
    }
  } finally {
    uninstall();
  }
}

/**
 * Opens the store for a run-like command. On the embedded database a second process is kept
 * out by the data-folder lock: said as "another run is in progress" (exit 1), or, with --wait,
 * retried until the holder has finished.
 */
export async function openRunStore(
  config: Config,
  logger: Logger,
  options: { wait?: boolean; signal?: AbortSignal } = {},
): Promise<Store> {
  let logged = false;
  for (;;) {
    try {
      return await openMigratedStore(config, logger);
    } catch (err) {
      if (!(err instanceof EmbeddedBusyError)) throw err;
      const what = `another run is in progress: ${err.message}`;
      if (!options.wait) throw new RunLockedError(`${what} (or pass --wait to wait for it)`);
      if (!logged) {
        logger.info(`${what}; waiting for it to finish (--wait)`);
        logged = true;
      }
      options.signal?.throwIfAborted();
      await new Promise((r) => setTimeout(r, 1_000));
    }
  }
}
