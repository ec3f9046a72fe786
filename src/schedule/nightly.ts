/** The nightly schedule: fires one pipeline run per trigger until a signal stops it. */
import type { Config } from '../config/load.js';
import { accountConfigs, requireSources } from '../config/load.js';
import { runBatch } from '../pipeline/batch.js';
import { ConfigError } from '../errors.js';
import type { Store } from '../store/database.js';
import { EmbeddedBusyError } from '../store/database.js';
import type { Logger } from '../log/logger.js';
import { RunLockedError } from '../pipeline/lock.js';
import { runPipeline } from '../pipeline/run.js';
import { yesterday } from '../util/dates.js';
import { cronTrigger, Scheduler, validateSchedule, type Trigger } from './scheduler.js';
import { installSignalHandlers, type SignalTarget, type StopSignal } from './signals.js';

export { Scheduler, cronTrigger, validateSchedule, type Trigger } from './scheduler.js';

export interface ScheduleDeps {
  config: Config;
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
  const { config, logger } = deps;
  // A multi-account config: each account's sources are checked by its own run (a missing one fails that account only).
  if (!config.multiAccount) requireSources(config, ['partner', 'exchange']);
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
    { cron: config.schedule.cron, timezone: config.schedule.timezone, lookbackDays: config.partner.lookbackDays },
    'schedule: firing `run` for the previous UTC day',
  );
  scheduler.start();
  try {
    await done;
  } finally {
    uninstall();
  }
}

/** One firing: yesterday's run (the same as `ramp-recon run`), on a store opened for it. */
export async function fireRun(deps: ScheduleDeps, firedAt: Date): Promise<void> {
  const { config, logger } = deps;
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
    if (config.multiAccount) {
      // Several accounts: the night's batch, every account of the config and one group e-mail.
      const batch = await runBatch({ store, logger }, accountConfigs(config), {
        period,
        trigger: 'schedule',
        email: true,
      });
      const fields = {
        batchId: batch.batchId,
        period,
        status: batch.status,
        verdict: batch.report?.digest.verdict ?? null,
        report: batch.report?.path ?? null,
        failed: batch.runs.filter((r) => r.result?.status !== 'succeeded').map((r) => r.account),
      };
      if (batch.status === 'succeeded') logger.info(fields, 'scheduled batch succeeded');
      else logger.error(fields, 'scheduled batch failed');
      return;
    }
    const result = await runPipeline({ store, config, logger }, { period, trigger: 'schedule', email: true });
    const fields = {
      runId: result.runId,
      period,
      status: result.status,
      openBreaks: result.openBreaks,
      report: result.reportPath ?? null,
      ...(result.failedStage ? { failedStage: result.failedStage, error: result.error } : {}),
    };
    if (result.status === 'succeeded') logger.info(fields, 'scheduled run succeeded');
    else logger.error(fields, 'scheduled run failed');
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

/** The fleet's nightly schedule: registered in pg-boss, this process planning (and unless --no-work, working) batches. */
async function scheduleOnQueue(deps: ScheduleDeps, options: ScheduleOptions): Promise<void> {
  const { config, logger } = deps;
  const { openBoss, scheduleFleet } = await import('./fleet.js');
  const store = await deps.openStore();
  const boss = await openBoss(config, logger, 'schedule');
  let stopped!: () => void;
  const done = new Promise<void>((resolve) => (stopped = resolve));
  const uninstall = installSignalHandlers({
    logger,
    target: options.signalTarget,
    onForceful: options.onForceful,
    graceful: 'finishing the jobs in hand and taking no new one',
    onGraceful: () => stopped(),
  });
  try {
    await scheduleFleet(
      { store, boss, config, logger },
      { work: options.work !== false, concurrency: config.workers.concurrency },
    );
    await done;
    await boss.stop({ graceful: true, close: true, timeout: 24 * 3600_000 });
    logger.info('schedule stopped');
  } finally {
    uninstall();
    await store.close();
  }
}
