/** The nightly schedule: fires one pipeline run per trigger until a signal stops it. */
import type { Group } from '../config/load.js';
import { requireSources } from '../config/load.js';
import { runBatch, type BatchResult } from '../pipeline/batch.js';
import { ConfigError } from '../errors.js';
import type { Store } from '../store/db/database.js';
import { EmbeddedBusyError } from '../store/db/database.js';
import type { Logger } from '../log/logger.js';
import { RunLockedError } from '../pipeline/lock.js';
import { yesterday } from '../util/dates.js';
import { cronTrigger, Scheduler, validateSchedule, type Trigger } from './scheduler.js';
import { firstStopSignal, installSignalHandlers, type SignalTarget, type StopSignal } from './signals.js';

export { Scheduler, cronTrigger, validateSchedule, type Trigger } from './scheduler.js';

export interface ScheduleDeps {
  /** The config: the group's schedule and every account of the night's batch. */
  group: Group;
  logger: Logger;
  /**
   * Opens (and migrates) the store for one firing. The store is opened per firing and closed
   * after it: on the embedded database the data-folder lock is then free between firings, so a
   * manual `run` works while the scheduler waits for the next night.
   */
  openStore: () => Promise<Store>;
}

export interface ScheduleOptions {
  /** Several accounts on Postgres: also work the account jobs in this process (default true; `--no-work`: false). */
  work?: boolean;
  /** Default: node-cron with schedule.cron in schedule.timezone. */
  trigger?: Trigger;
  /** Default: one `run` of yesterday (UTC, relative to the firing), exactly what `ramp-recon run` does. */
  fire?: (firedAt: Date) => Promise<void>;
  signalTarget?: SignalTarget;
  onForceful?: (signal: StopSignal) => void;
}

/**
 * `ramp-recon schedule`: fires runs until SIGTERM / SIGINT. The first signal stops new
 * firings and waits for the run in progress (whose stages commit as they go); the returned
 * promise then resolves and the caller exits 0. A second signal exits at once.
 */
export async function runSchedule(deps: ScheduleDeps, options: ScheduleOptions = {}): Promise<void> {
  const { group, logger } = deps;
  const config = group.settings;
  // A multi-account config: each account's sources are checked by its own run (a missing one fails that account only).
  if (!config.multiAccount) requireSources(group.accounts[0]!.config, ['partner', 'exchange']);
  validateSchedule(config.schedule.cron, config.schedule.timezone);
  // Fail at start-up, not at the first firing, when the database is unreachable or its schema cannot be updated.
  // A manual run holding the embedded database right now is no reason not to start.
  try {
    await (await deps.openStore()).close();
  } catch (err) {
    if (!(err instanceof EmbeddedBusyError)) throw err;
    logger.warn(`${err.message}; starting the schedule anyway`);
  }

  // Several accounts on a Postgres server: the fleet's schedule, in the job queue (docs/workers.md).
  if (config.multiAccount && config.database.url && !options.fire && !options.trigger)
    return scheduleOnQueue(deps, options);
  if (options.work === false)
    throw new ConfigError([
      '--no-work: only for several accounts (`accounts` in the config) on Postgres (DATABASE_URL), where workers run ' +
        'the account jobs; this schedule runs its night in its own process',
    ]);
  const fire = options.fire ?? ((firedAt: Date) => fireRun(deps, firedAt));
  const trigger = options.trigger ?? cronTrigger(config.schedule.cron, config.schedule.timezone);
  const scheduler = new Scheduler({ trigger, fire, logger });

  let stopped!: () => void;
  const done = new Promise<void>((resolve) => (stopped = resolve));
  const uninstall = installSignalHandlers({
    logger,
    target: options.signalTarget,
    onForceful: options.onForceful,
    onGraceful: () => {
      void scheduler.stop().then(() => {
        logger.info(scheduler.stats, 'schedule stopped');
        stopped();
      });
    },
  });
  logger.info(
    {
      cron: config.schedule.cron,
      timezone: config.schedule.timezone,
      lookbackDays: group.accounts.map((a) => a.config.partner.lookbackDays).join('/'),
    },
    'schedule: firing `run` for the previous UTC day',
  );
  scheduler.start();
  try {
    await done;
  } finally {
    uninstall();
  }
}

/** One firing: yesterday's batch (the same as `ramp-recon run`: a config without accounts is a batch of one). */
export async function fireRun(deps: ScheduleDeps, firedAt: Date): Promise<void> {
  const { group, logger } = deps;
  const period = yesterday(firedAt);
  let store: Store;
  try {
    store = await deps.openStore();
  } catch (err) {
    if (err instanceof EmbeddedBusyError) {
      logger.warn({ period }, `firing skipped: ${err.message}`);
      return;
    }
    throw err;
  }
  try {
    const batch = await runBatch({ store, group, logger }, group.accounts, {
      period,
      trigger: 'schedule',
      email: true,
    });
    const single = group.settings.multiAccount ? undefined : batch.runs[0]!;
    // A batch of one refused before its run (another run holds the lock): the firing is skipped, as it always was.
    if (single?.refusal) throw single.refusal;
    logFiring(logger, batch, period);
  } catch (err) {
    if (err instanceof RunLockedError) {
      logger.warn({ period }, `firing skipped: ${err.message}`);
      return;
    }
    throw err;
  } finally {
    await store.close();
  }
}

/** The firing's log line: the batch (a batch of one: its run) and how it ended. */
function logFiring(logger: Logger, batch: BatchResult, period: { from: string; to: string }): void {
  const failed = batch.runs.filter((r) => r.result?.status !== 'succeeded');
  const single = batch.runs.length === 1 ? batch.runs[0]!.result : null;
  const fields = {
    batchId: batch.batchId,
    period,
    status: batch.status,
    ...(single
      ? { runId: single.runId, openBreaks: single.openBreaks, report: single.reportPath ?? null }
      : { verdict: batch.report?.digest.verdict ?? null, report: batch.report?.path ?? null }),
    ...(single?.failedStage ? { failedStage: single.failedStage, error: single.error } : {}),
    failed: failed.map((r) => r.account),
  };
  const what = single ? 'scheduled run' : 'scheduled batch';
  if (batch.status === 'succeeded') logger.info(fields, `${what} succeeded`);
  else logger.error(fields, `${what} failed`);
}

/** The fleet's nightly schedule: registered in pg-boss, this process planning (and unless --no-work, working) batches. */
async function scheduleOnQueue(deps: ScheduleDeps, options: ScheduleOptions): Promise<void> {
  const { group, logger } = deps;
  const [{ openBoss }, { scheduleFleet }] = await Promise.all([
    import('../fleet/queues.js'),
    import('../fleet/schedule.js'),
  ]);
  const store = await deps.openStore();
  const boss = await openBoss(group.settings, logger, 'schedule');
  const { stopped, uninstall } = firstStopSignal({
    logger,
    target: options.signalTarget,
    onForceful: options.onForceful,
    graceful: 'finishing the jobs in hand and taking no new one',
  });
  try {
    await scheduleFleet(
      { store, boss, group, logger },
      { work: options.work !== false, concurrency: group.settings.workers.concurrency },
    );
    await stopped;
    await boss.stop({ graceful: true, close: true, timeout: 24 * 3600_000 });
    logger.info('schedule stopped');
  } finally {
    uninstall();
    await store.close();
  }
}
