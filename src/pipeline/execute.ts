/** The frame of every run-like command: lock, run row, stages recorded one by one, outcome. */
import type { Config } from '../config/load.js';
import { configHash, secretValues } from '../config/load.js';
import type { Store } from '../store/database.js';
import type { Logger } from '../log/logger.js';
import { createRequestMeter } from '../http/meter.js';
import { createRun, failInterruptedRuns, finishRun, recordStage, type RunCommand } from '../store/runs.js';
import type { StageContext } from '../stages/context.js';
import type { Period } from '../domain/period.js';
import { withRunLock } from './lock.js';
import { asDatabaseUnavailable, databaseTarget } from '../store/database-errors.js';

/** The IO handles a run needs; passed in by the CLI, the scheduler, the demo and the tests. */
export interface RunDeps {
  store: Store;
  config: Config;
  logger: Logger;
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
}

export interface RunOutcome<T> {
  runId: string;
  status: 'succeeded' | 'failed';
  failedStage?: string;
  error?: string;
  value?: T;
}

/** Runs one named stage: timing recorded in run.stages, failure tagged with the stage's name. */
export type StageRunner = <R>(name: string, fn: () => Promise<R>, detail?: (result: R) => unknown) => Promise<R>;

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
  return withRunLock(store, { account, wait: options.wait, signal: options.signal, logger: deps.logger }, async () => {
    const now = options.now ?? new Date();
    const interrupted = await failInterruptedRuns(store.db, account, now);
    if (interrupted.length) deps.logger.warn({ runIds: interrupted }, 'marked runs left running by a process that ended as failed');

    const runId = await createRun(store.db, {
      account,
      command: options.command,
      trigger: options.trigger,
      periodFrom: options.period?.from ?? null,
      periodTo: options.period?.to ?? null,
      configHash: configHash(config),
      startedAt: now,
    });
    const logger = deps.logger.child({ runId });
    // The requests are spent whatever the run's outcome: saved with every stage and at the end.
    const meter = createRequestMeter();
    const ctx: StageContext = { store, config, logger, runId, now, signal: options.signal, meter };
    const secrets = secretValues(config);
    logger.info({ command: options.command, trigger: options.trigger, period: options.period }, 'run started');

    const stage: StageRunner = async (name, fn, detail) => {
      const startedAt = new Date();
      try {
        options.signal?.throwIfAborted();
        logger.info({ stage: name }, 'stage started');
        const result = await fn();
        const finishedAt = new Date();
        await recordStage(store.db, runId, name, { startedAt, finishedAt, status: 'succeeded', detail: detail ? detail(result) : undefined }, meter.snapshot());
        logger.info({ stage: name, ms: finishedAt.getTime() - startedAt.getTime() }, 'stage finished');
        return result;
      } catch (err) {
        if (err instanceof StageFailedError) throw err;
        const error = scrub(errorText(err, config), secrets);
        await recordStage(store.db, runId, name, { startedAt, finishedAt: new Date(), status: 'failed', error }, meter.snapshot()).catch((e) =>
          logger.error({ err: e }, 'could not record the failed stage'),
        );
        throw new StageFailedError(name, err);
      }
    };

    try {
      const value = await body(ctx, stage);
      await finishRun(store.db, runId, { status: 'succeeded', requests: meter.snapshot() });
      logger.info('run succeeded');
      return { runId, status: 'succeeded' as const, value };
    } catch (err) {
      const failedStage = err instanceof StageFailedError ? err.stage : 'run';
      const cause = err instanceof StageFailedError ? err.cause : err;
      const error = scrub(errorText(cause, config), secrets);
      await finishRun(store.db, runId, { status: 'failed', failedStage, error, requests: meter.snapshot() });
      // The error text only: an I/O error object can carry a whole page of records in its
      // properties (query parameters), which has no place in a log line. Details at debug level.
      logger.error({ failedStage, error, errorType: cause instanceof Error ? cause.name : typeof cause }, 'run failed');
      logger.debug({ failedStage, err: cause }, 'run failed: error details');
      return { runId, status: 'failed' as const, failedStage, error };
    }
  });
}

/** Records a stage that did not run, with the reason, so `runs` shows why. */
export async function skipStage(ctx: StageContext, name: string, reason: string): Promise<void> {
  if (!ctx.runId) return;
  const at = new Date();
  await recordStage(ctx.store.db, ctx.runId, name, { startedAt: at, finishedAt: at, status: 'skipped', detail: { reason } });
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
  const database = config ? asDatabaseUnavailable(err, databaseTarget(config.database.url, config.database.dataDir)) : null;
  if (database) return database.message;
  const fs = err as { code?: string; path?: string; syscall?: string } | null;
  if (fs && typeof fs.code === 'string' && FS_REASONS[fs.code] && typeof fs.path === 'string')
    return `file system: cannot ${fs.syscall === 'open' || fs.syscall === 'mkdir' || fs.syscall === 'rename' ? fs.syscall : 'use'} ${fs.path}: ${FS_REASONS[fs.code]}; check the folder (REPORTS_DIR for workbooks, RAMP_RECON_DATA_DIR for the embedded database) exists and is writable`;
  if (err instanceof Error) {
    // Errors that wrap an I/O cause often say little themselves ("fetch failed"); keep the cause.
    const cause = (err as { cause?: unknown }).cause;
    const causeText = cause instanceof Error && cause.message && !err.message.includes(cause.message) ? ` (${cause.message})` : '';
    return `${err.message}${causeText}`;
  }
  return String(err);
}

/** Secrets masked, and bounded: the text lands in run.error, in logs and in the e-mail. */
function scrub(text: string, secrets: string[]): string {
  const masked = secrets.filter((s) => s.length >= 4).reduce((t, s) => t.split(s).join('********'), text);
  return masked.length > MAX_ERROR_CHARS ? `${masked.slice(0, MAX_ERROR_CHARS)}... (${masked.length - MAX_ERROR_CHARS} more characters)` : masked;
}

const MAX_ERROR_CHARS = 2_000;
