/** What fires the schedule: cron triggers (node-cron or injected), validated at start-up, one firing at a time. */
import cron from 'node-cron';
import type { Logger } from '../log/logger.js';
import { ConfigError } from '../errors.js';

/**
 * What makes the scheduler fire. The default is node-cron; tests inject their own clock (or a
 * cron of every second) so a schedule can be observed in seconds.
 */
export interface Trigger {
  start(onFire: (at: Date) => void): void;
  stop(): void;
  /** The next firing, for the log; null when unknown. */
  nextRun(): Date | null;
}

/** Validates the cron expression and the time zone: a bad one is a config error (exit 2) at start-up, not at 02:00. */
export function validateSchedule(expression: string, timezone: string): void {
  const problems: string[] = [];
  const detail = cron.validateDetailed(expression);
  if (!detail.valid)
    problems.push(
      `config key schedule.cron: not a valid cron expression (got ${JSON.stringify(expression)})${detail.errors.length ? `: ${detail.errors.map((e) => `${e.field} ${e.message}`).join('; ')}` : ''}`,
    );
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: timezone });
  } catch {
    problems.push(
      `config key schedule.timezone: not an IANA time zone such as "UTC" or "Europe/Berlin" (got ${JSON.stringify(timezone)})`,
    );
  }
  if (problems.length) throw new ConfigError(problems);
}

/** node-cron in the given time zone; five fields (minute first) or six (seconds first). */
export function cronTrigger(expression: string, timezone: string): Trigger {
  validateSchedule(expression, timezone);
  let task: ReturnType<typeof cron.createTask> | undefined;
  return {
    start(onFire) {
      // noOverlap is node-cron's own guard; the scheduler keeps one too, since it decides what a skipped firing logs.
      task = cron.createTask(expression, (context) => onFire(context.triggeredAt ?? context.date), {
        timezone,
        noOverlap: false,
        name: 'ramp-recon-run',
      });
      void task.start();
    },
    stop() {
      if (!task) return;
      const t = task;
      task = undefined;
      void Promise.resolve(t.stop()).then(() => t.destroy());
    },
    nextRun() {
      return task?.getNextRun() ?? null;
    },
  };
}

export interface SchedulerOptions {
  trigger: Trigger;
  /** One firing's work (a whole run). Its errors are logged; they never stop the schedule. */
  fire: (firedAt: Date) => Promise<void>;
  logger: Logger;
}

/**
 * Fires `fire` on each trigger, never two at once: a firing that comes while the previous run
 * is still busy is skipped and logged (the next firing catches up, since every run re-syncs
 * from the cursors and a look-back). stop() takes no new firings and waits for the current one.
 */
export class Scheduler {
  private current: Promise<void> | null = null;
  private stopping = false;
  private fired = 0;
  private skipped = 0;

  constructor(private readonly options: SchedulerOptions) {}

  start(): void {
    this.options.trigger.start((at) => this.onFire(at));
    const next = this.options.trigger.nextRun();
    this.options.logger.info({ nextRun: next?.toISOString() ?? null }, 'schedule started');
  }

  /** Firings started and firings skipped because a run was still busy. */
  get stats(): { fired: number; skipped: number; busy: boolean } {
    return { fired: this.fired, skipped: this.skipped, busy: this.current !== null };
  }

  private onFire(at: Date): void {
    if (this.stopping) return;
    if (this.current) {
      this.skipped += 1;
      this.options.logger.warn({ firedAt: at.toISOString() }, 'firing skipped: the previous run is still in progress');
      return;
    }
    this.fired += 1;
    const firing = this.fired;
    this.options.logger.info({ firing, firedAt: at.toISOString() }, 'schedule fired');
    this.current = this.options
      .fire(at)
      .catch((err: unknown) => {
        this.options.logger.error({ firing, err }, 'firing failed');
      })
      .finally(() => {
        this.current = null;
        const next = this.stopping ? null : this.options.trigger.nextRun();
        this.options.logger.info({ firing, nextRun: next?.toISOString() ?? null }, 'firing done');
      });
  }

  /** No new firings; resolves when the run in progress (if any) has finished. */
  async stop(): Promise<void> {
    this.stopping = true;
    this.options.trigger.stop();
    if (this.current) await this.current;
  }
}
