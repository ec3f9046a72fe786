import { randomBytes } from 'node:crypto';
import { sql } from 'kysely';
import { stringifyJsonLossless } from '../decimal/json.js';
import type { Db } from './database.js';
import type { RunRow } from './schema.js';
import type { RunRequests } from '../http/meter.js';

export type RunCommand = 'run' | 'sync' | 'reconcile' | 'report' | 'deliver';

/** Sortable, readable run id: r20261122T020000Z-3fa9c1. */
export function newRunId(now = new Date()): string {
  const stamp = now.toISOString().replace(/[-:]/g, '').replace(/\.\d{3}/, '');
  return `r${stamp}-${randomBytes(3).toString('hex')}`;
}

export async function createRun(
  db: Db,
  input: { account: string; command: RunCommand; trigger?: string; periodFrom?: string | null; periodTo?: string | null; configHash?: string; id?: string; startedAt?: Date },
): Promise<string> {
  const id = input.id ?? newRunId(input.startedAt);
  await db
    .insertInto('run')
    .values({
      id,
      account: input.account,
      command: input.command,
      trigger: input.trigger ?? 'cli',
      period_from: input.periodFrom ?? null,
      period_to: input.periodTo ?? null,
      started_at: input.startedAt ?? new Date(),
      status: 'running',
      config_hash: input.configHash ?? null,
    })
    .execute();
  return id;
}

/**
 * Merges one stage's timing into run.stages: { "sync.exchange": { startedAt, finishedAt, ms, status, error?, detail? } }.
 * One jsonb `||` in SQL rather than read-modify-write: nothing read back (jsonb numbers come back as
 * LosslessNumber objects) is re-serialized, and two writers cannot lose each other's stage.
 * `requests`, the run's requests so far, replaces run.requests in the same statement: a run
 * killed in a later stage still shows what the earlier ones spent.
 */
export async function recordStage(
  db: Db,
  runId: string,
  stage: string,
  timing: { startedAt: Date; finishedAt: Date; status: 'succeeded' | 'failed' | 'skipped'; error?: string; detail?: unknown },
  requests?: RunRequests,
): Promise<void> {
  const entry = {
    startedAt: timing.startedAt.toISOString(),
    finishedAt: timing.finishedAt.toISOString(),
    ms: timing.finishedAt.getTime() - timing.startedAt.getTime(),
    status: timing.status,
    ...(timing.error ? { error: timing.error } : {}),
    ...(timing.detail !== undefined ? { detail: timing.detail } : {}),
  };
  const patch = stringifyJsonLossless({ [stage]: entry });
  await db
    .updateTable('run')
    .set({ stages: sql`stages || ${patch}::jsonb` as never, ...(requests ? { requests: stringifyJsonLossless(requests) } : {}) })
    .where('id', '=', runId)
    .execute();
}

export async function getRun(db: Db, runId: string): Promise<RunRow | undefined> {
  return db.selectFrom('run').selectAll().where('id', '=', runId).executeTakeFirst();
}
