/** The frame of every run-like command: lock, run row, stages recorded one by one, outcome. */
import { setMaxListeners } from 'node:events';
import type { Config } from '../config/load.js';
import { configHash, runSecrets, storedError } from '../config/load.js';
import { retryOnLostConnection, type Store } from '../store/db/database.js';
import type { Logger } from '../log/logger.js';
import { createRequestMeter } from '../http/meter.js';
import {
  createRun,
  failInterruptedRuns,
  finishRun,
  markStageStarted,
  recordStage,
  type RunCommand,
} from '../store/runs/runs.js';
import type { StageContext, StageRunner } from '../stages/context.js';
import type { Period } from '../domain/period.js';
import { LockLostError, withRunLock } from './lock.js';
import { asDatabaseUnavailable, databaseTarget } from '../store/db/database-errors.js';

/** The IO handles a run needs; passed in by the CLI, the scheduler, the demo and the tests. */
export interface RunDeps {
  store: Store;
  config: Config;
  logger: Logger;
  /** The group's secrets (`Group.secrets`): what the run's errors, logs and e-mails are scrubbed of. */
  secrets?: readonly string[];
}

export interface ExecuteOptions {
  command: RunCommand;
  trigger: string;
  period: Period | null;
  /** Wait for a run in progress instead of refusing at once. */
  wait?: boolean;
  signal?: AbortSignal;
  /** The run's "now" (tests inject it); default: the time the lock was acquired. */
  now?: Date;
  /** The batch this run is an account's run of; its row is linked to it. */
  batchId?: string;
  /** Also hold the account's rate group lock (the fleet's workers: one run of a group at a time across machines). */
  rateGroup?: string;
  /** Told the run's id as soon as its row exists (a batch records it before the run ends). */
  onRunCreated?: (runId: string) => void;
  /**
   * Called once a run has failed and its row says so (still under the run lock), to report the failure: its stages
   * go through `stage` and are recorded like the body's. Whatever it throws is logged and never replaces the failure.
   */
  afterFailure?: (ctx: StageContext, stage: StageRunner, failure: RunFailed) => Promise<void>;
}

/** A run's failure as recorded: the stage, the error (scrubbed), and whether the run row could be finished with it. */
export interface RunFailed {
  stage: string;
  error: string;
  /** false: the database refused the run's end (the row stays running); the failure is in no row to report from. */
  recorded: boolean;
}

export interface RunOutcome<T> {
  runId: string;
  status: 'succeeded' | 'failed';
  failedStage?: string;
  error?: string;
  value?: T;
}

/** Runs one named stage: timing recorded in run.stages, failure tagged with the stage's name (the stage contract's). */
export type { StageRunner };

/** A stage's failure, carrying the stage name up to the run record. */
export class StageFailedError extends Error {
  constructor(
    readonly stage: string,
    override readonly cause: unknown,
  ) {
    super(`${stage}: ${errorText(cause)}`);
  }
}

/**
 * The frame of every run-like command (run, sync, reconcile): holds the run lock, creates the
 * run row, runs the body's stages recording each, and finishes the row as succeeded or failed
 * with the failing stage and its error. Stages commit their own work, so a failed run loses
 * nothing already stored and the next run resumes from the cursors.
 */
export async function executeRun<T>(
  deps: RunDeps,
  options: ExecuteOptions,
  body: (ctx: StageContext, stage: StageRunner) => Promise<T>,
): Promise<RunOutcome<T>> {
  const { store, config } = deps;
  const account = config.account;
  const target = databaseTarget(config.database.url, config.database.dataDir);
  return withRunLock(
    store,
    { account, rateGroup: options.rateGroup, wait: options.wait, signal: options.signal, logger: deps.logger },
    async (lock) => {
      const now = options.now ?? new Date();
      const interrupted = await retryOnLostConnection(() => failInterruptedRuns(store.db, account, now));
      if (interrupted.length)
        deps.logger.warn(
          { runs: interrupted },
          'marked runs left running by a process that ended (killed, or cut off from the database) as failed, in the ' +
            'stage each was in',
        );

      const runId = await createRun(store.db, {
        account,
        command: options.command,
        trigger: options.trigger,
        periodFrom: options.period?.from ?? null,
        periodTo: options.period?.to ?? null,
        configHash: configHash(config),
        startedAt: now,
        batchId: options.batchId,
      });
      options.onRunCreated?.(runId);
      const logger = deps.logger.child({ runId });
      // The requests are spent whatever the run's outcome: saved with every stage and at the end.
      const meter = createRequestMeter();
      // The stages stop at their next safe point on a signal (SIGTERM) or when the run lock is lost.
      const signal = options.signal ? AbortSignal.any([options.signal, lock.lost]) : lock.lost;
      // Every request and wait in flight listens to it (pages asked ahead, listings side by side): many
      // listeners are the normal case, not a leak for Node to warn about on stderr.
      setMaxListeners(0, signal);
      const secrets = runSecrets(deps);
      const ctx: StageContext = { store, config, logger, runId, now, signal, meter, secrets };
      // The lock's session gone: a stage still busy fails at once with this, rather than at its next
      // page or statement (what it already committed is kept; it may still commit the transaction in
      // flight, which is idempotent like every write of the stages).
      const lockLost = new Promise<never>((_resolve, reject) => {
        const fail = () => reject(lockLostError(lock.lost.reason, target));
        if (lock.lost.aborted) fail();
        else lock.lost.addEventListener('abort', fail, { once: true });
      });
      lockLost.catch(() => {});
      logger.info({ command: options.command, trigger: options.trigger, period: options.period }, 'run started');

      const stage: StageRunner = async (name, fn, detail) => {
        const startedAt = new Date();
        let work: Promise<unknown> | undefined;
        try {
          options.signal?.throwIfAborted();
          if (lock.lost.aborted) throw lockLostError(lock.lost.reason, target);
          logger.info({ stage: name }, 'stage started');
          await retryOnLostConnection(() => markStageStarted(store.db, runId, name));
          const running = fn();
          work = running;
          const result = await Promise.race([running, lockLost]);
          const finishedAt = new Date();
          const stageDetail = detail ? detail(result) : undefined;
          await retryOnLostConnection(() =>
            recordStage(
              store.db,
              runId,
              name,
              { startedAt, finishedAt, status: 'succeeded', detail: stageDetail },
              meter.snapshot(),
            ),
          );
          logger.info({ stage: name, ms: finishedAt.getTime() - startedAt.getTime() }, 'stage finished');
          return result;
        } catch (caught) {
          if (caught instanceof StageFailedError) throw caught;
          // The stage's own failure is often a consequence of the lost lock (an aborted sync, a
          // query on the terminated session): the lost lock is the reason said.
          const err = lock.lost.aborted ? lockLostError(lock.lost.reason, target) : caught;
          // A stage abandoned while still running: its eventual failure is of no interest any more.
          work?.catch(() => {});
          const error = storedError(errorText(err, config), secrets);
          const failedAt = new Date();
          await retryOnLostConnection(() =>
            recordStage(
              store.db,
              runId,
              name,
              { startedAt, finishedAt: failedAt, status: 'failed', error },
              meter.snapshot(),
            ),
          ).catch((e) =>
            logger.error(
              { error: errorText(e, config) },
              'could not record the failed stage; the run row keeps it as its current stage',
            ),
          );
          throw new StageFailedError(name, err);
        }
      };

      try {
        const value = await body(ctx, stage);
        await retryOnLostConnection(() =>
          finishRun(store.db, runId, { status: 'succeeded', requests: meter.snapshot() }),
        );
        logger.info('run succeeded');
        return { runId, status: 'succeeded' as const, value };
      } catch (err) {
        const failedStage = err instanceof StageFailedError ? err.stage : 'run';
        const cause = err instanceof StageFailedError ? err.cause : err;
        const error = storedError(errorText(cause, config), secrets);
        let recorded = true;
        try {
          await retryOnLostConnection(() =>
            finishRun(store.db, runId, { status: 'failed', failedStage, error, requests: meter.snapshot() }),
          );
        } catch (e) {
          recorded = false;
          // The database is out of reach: the row stays 'running' with its current_stage, and the
          // next run marks it failed in that stage (failInterruptedRuns). The outcome is still told.
          logger.error(
            { error: errorText(e, config) },
            'could not record the failed run; the next run will mark it failed',
          );
        }
        // The error text only: an I/O error object can carry a whole page of records in its
        // properties (query parameters), which has no place in a log line. Details at debug level.
        logger.error(
          { failedStage, error, errorType: cause instanceof Error ? cause.name : typeof cause },
          'run failed',
        );
        logger.debug({ failedStage, err: cause }, 'run failed: error details');
        if (options.afterFailure)
          await options
            .afterFailure(ctx, stage, { stage: failedStage, error, recorded })
            .catch((e: unknown) =>
              logger.error({ error: failureText(e, ctx) }, 'could not report the failed run; the run stays failed'),
            );
        return { runId, status: 'failed' as const, failedStage, error };
      }
    },
  );
}

/** The run lock's loss as the stage records it: names the database, like asDatabaseUnavailable. */
function lockLostError(reason: unknown, target: string): Error {
  const cause = (reason as { cause?: unknown })?.cause ?? reason;
  const why = cause instanceof Error ? cause.message : String(cause);
  return new LockLostError(
    `database: lost the session holding the run lock on ${target} (${why}); the server released the lock with it, so the run stopped rather than overlap another run; what was committed is kept and the next run resumes from it`,
    reason,
  );
}

/** Records a stage that did not run, with the reason, so `runs` shows why. */
export async function skipStage(ctx: StageContext, name: string, reason: string): Promise<void> {
  if (!ctx.runId) return;
  const at = new Date();
  await recordStage(ctx.store.db, ctx.runId, name, {
    startedAt: at,
    finishedAt: at,
    status: 'skipped',
    detail: { reason },
  });
  ctx.logger.info({ stage: name, reason }, 'stage skipped');
}

/** File-system error codes in words, for "file system: cannot write <path>: ...". */
const FS_REASONS: Record<string, string> = {
  EACCES: 'permission denied',
  EPERM: 'operation not permitted',
  ENOENT: 'no such file or folder',
  ENOSPC: 'no space left on the device',
  EROFS: 'read-only file system',
  ENOTDIR: 'a part of the path is a file, not a folder',
  EISDIR: 'is a folder',
  EMFILE: 'too many open files',
};

/**
 * The text a failed stage records: which part failed (database, an API, SMTP, the file system),
 * what was tried and what to do. API and SMTP errors name themselves; a database connection error
 * or a file-system error is named here from its code.
 */
export function errorText(err: unknown, config?: Pick<Config, 'database'>): string {
  const database = config
    ? asDatabaseUnavailable(err, databaseTarget(config.database.url, config.database.dataDir))
    : null;
  if (database) return database.message;
  const fs = err as { code?: string; path?: string; syscall?: string } | null;
  if (fs && typeof fs.code === 'string' && FS_REASONS[fs.code] && typeof fs.path === 'string')
    return `file system: cannot ${fs.syscall === 'open' || fs.syscall === 'mkdir' || fs.syscall === 'rename' ? fs.syscall : 'use'} ${fs.path}: ${FS_REASONS[fs.code]}; check the folder (REPORTS_DIR for workbooks, RAMP_RECON_DATA_DIR for the embedded database) exists and is writable`;
  if (err instanceof Error) {
    // Errors that wrap an I/O cause often say little themselves ("fetch failed"); keep the cause.
    const cause = (err as { cause?: unknown }).cause;
    const causeText =
      cause instanceof Error && cause.message && !err.message.includes(cause.message) ? ` (${cause.message})` : '';
    return `${err.message}${causeText}`;
  }
  return String(err);
}

/** An error as a failed stage records it (the stage's cause, the run's secrets masked, bounded): for the failure e-mail. */
export function failureText(err: unknown, ctx: Pick<StageContext, 'config' | 'secrets'>): string {
  const cause = err instanceof StageFailedError ? err.cause : err;
  return storedError(errorText(cause, ctx.config), runSecrets(ctx));
}
