/** The job queue on pg-boss: its queues, how a batch's jobs are named, and opening it on our Postgres. */
import { createHash } from 'node:crypto';
import { PgBoss } from 'pg-boss';
import type { GroupSettings } from '../config/load.js';
import { ConfigError } from '../errors.js';
import type { Logger } from '../log/logger.js';
import { queueSchema } from '../store/runs/job-queue.js';
import { errorText } from '../pipeline/execute.js';
import { workerName } from '../pipeline/batch.js';

export { queueSchema } from '../store/runs/job-queue.js';

/**
 * One job per account of a batch. Each carries its account's rate group (the account's own name by default) and
 * workers take at most one job of a group at a time across the fleet (groupConcurrency): never two live jobs of one
 * account, nor of one organisation. (pg-boss enforces group limits on standard queues only, not on singleton ones.)
 */
export const ACCOUNT_QUEUE = 'ramp-recon-account';
/**
 * An account job that failed for good without its handler saying so (its worker killed or silent on its last attempt):
 * pg-boss moves it here (deadLetter), and a worker records the account as failed on the batch.
 */
export const LOST_QUEUE = 'ramp-recon-account-lost';
/** The group report of a batch: one active per batch; sent when the last account ends, and at the deadline. */
export const REPORT_QUEUE = 'ramp-recon-report';
/** The nightly schedule's firing: plans yesterday's batch (one per night, however many schedulers fire). */
export const NIGHTLY_QUEUE = 'ramp-recon-nightly';

export interface AccountJob {
  batchId: string;
  account: string;
}
export interface ReportJob {
  batchId: string;
  deadline?: boolean;
}

/** Workers need a server: the embedded database is one process's. */
export function requireServer(settings: Pick<GroupSettings, 'database'>, command: string): string {
  if (settings.database.url) return settings.database.url;
  throw new ConfigError([
    `${command}: workers need a Postgres server shared by every machine (DATABASE_URL); the embedded database is one ` +
      "process's, so use `ramp-recon run` (or `schedule`) there",
  ]);
}

/** pg-boss on our database, started, its queues created: the monitor fails a job whose worker fell silent. */
export async function openBoss(settings: GroupSettings, logger: Logger, command: string): Promise<PgBoss> {
  const url = requireServer(settings, command);
  const w = settings.workers;
  const boss = new PgBoss({
    connectionString: url,
    schema: queueSchema(url),
    application_name: `ramp-recon ${command}`,
    // a dead worker's job is failed (and retried) within one heartbeat plus one monitor pass
    monitorIntervalSeconds: Math.min(60, w.heartbeatSeconds),
    instanceName: `${command} ${workerName()}`,
    max: 4,
  });
  boss.on('error', (err: unknown) => logger.warn({ error: errorText(err) }, 'job queue: error (pg-boss retries)'));
  await boss.start();
  const retry = {
    retryLimit: w.retryLimit,
    retryDelay: w.retryDelaySeconds,
    retryBackoff: true,
    // heartbeats, not a long expiry, tell a dead worker: its account runs elsewhere within minutes
    heartbeatSeconds: w.heartbeatSeconds,
    expireInSeconds: 12 * 3600,
  };
  // the dead letter queue exists before the queue that names it
  await boss.createQueue(LOST_QUEUE, { policy: 'standard', retryLimit: w.retryLimit, retryDelay: w.retryDelaySeconds });
  await boss.createQueue(ACCOUNT_QUEUE, { policy: 'standard', deadLetter: LOST_QUEUE, ...retry });
  await boss.createQueue(REPORT_QUEUE, { policy: 'singleton', ...retry });
  await boss.createQueue(NIGHTLY_QUEUE, { policy: 'singleton', ...retry });
  return boss;
}

/** A job's own id, the same for the same batch and part: a UUID from their hash. */
export function jobId(batchId: string, part: string): string {
  const h = createHash('sha256').update(`${batchId}:${part}`).digest('hex');
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-5${h.slice(13, 16)}-a${h.slice(17, 20)}-${h.slice(20, 32)}`;
}
