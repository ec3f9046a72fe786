/** The `batch` and `batch_account` rows: a multi-account night, each account's outcome and the group report. */
import { stampedId } from '../../util/ids.js';
import { jsonNumber } from '../../decimal/json.js';
import { ReportError } from '../../errors.js';
import { storedError } from '../../config/load.js';
import type { Selectable } from 'kysely';
import type { Db } from '../db/database.js';
import type { BatchTable } from '../db/schema.js';
import type { Period } from '../../domain/period.js';
import { deliveryColumns, type DeliveryOutcome } from './runs.js';

export type BatchAccountStatus = 'pending' | 'running' | 'succeeded' | 'failed';

/** Each account's status, by account: what a group report was written for. */
export type AccountStates = Record<string, BatchAccountStatus>;

export interface BatchAccount {
  account: string;
  position: number;
  status: BatchAccountStatus;
  runId: string | null;
  failedStage: string | null;
  error: string | null;
  startedAt: Date | null;
  finishedAt: Date | null;
  worker: string | null;
  attempts: number;
}

export interface BatchInfo {
  id: string;
  trigger: string;
  periodFrom: string;
  periodTo: string;
  startedAt: Date;
  finishedAt: Date | null;
  status: string;
  reportPath: string | null;
  reportDigest: unknown;
  delivered: boolean;
  deliveredAt: Date | null;
  deliveryError: string | null;
  /** The accounts' statuses the last group report was written for (null: none written yet). */
  reportedStates: AccountStates | null;
  /** 1 for the first group report, 2 for its first amendment, ...; 0 before any. */
  reportVersion: number;
  /** When the group report goes out anyway (fleet batches). */
  deadlineAt: Date | null;
  /** In config order. */
  accounts: BatchAccount[];
}

/** Sortable, readable batch id: b20261122T020000Z-3fa9c1 (a run's is r...). */
export function newBatchId(now = new Date()): string {
  return stampedId('b', now);
}

/** What planning a batch takes: its trigger and period, its accounts in config order, when, and its deadline. */
export interface PlanInput {
  trigger: string;
  period: Period;
  accounts: readonly string[];
  startedAt?: Date;
  id?: string;
  deadlineAt?: Date;
}

/**
 * A batch planned, once: a scheduled night already planned (by another scheduler) is not planned again, and its id is
 * returned with `created: false` (sql/0020's unique index on scheduled periods).
 */
export async function planBatch(db: Db, input: PlanInput): Promise<{ id: string; created: boolean }> {
  const id = input.id ?? newBatchId(input.startedAt);
  return db.transaction().execute(async (tx) => {
    const inserted = await tx
      .insertInto('batch')
      .values({
        id,
        trigger: input.trigger,
        period_from: input.period.from,
        period_to: input.period.to,
        started_at: input.startedAt ?? new Date(),
        status: 'running',
        deadline_at: input.deadlineAt ?? null,
      })
      .onConflict((oc) => oc.columns(['period_from', 'period_to']).where('trigger', '=', 'schedule').doNothing())
      .returning('id')
      .executeTakeFirst();
    if (!inserted) {
      const existing = await tx
        .selectFrom('batch')
        .select('id')
        .where('trigger', '=', 'schedule')
        .where('period_from', '=', input.period.from)
        .where('period_to', '=', input.period.to)
        .executeTakeFirstOrThrow();
      return { id: existing.id, created: false };
    }
    await tx
      .insertInto('batch_account')
      .values(input.accounts.map((account, position) => ({ batch_id: id, account, position, status: 'pending' })))
      .execute();
    return { id, created: true };
  });
}

/**
 * The group report the accounts' current statuses call for: null when one was already written for exactly these (a
 * repeated fan-in), else its version and the statuses the previous report showed (null for the first). Read only:
 * the report is recorded (recordGroupReported) once it is written and sent, so a worker that dies in between leaves
 * it to the job's retry (the fleet's report jobs of one batch run one at a time).
 */
export async function pendingGroupReport(
  db: Db,
  batchId: string,
): Promise<{ version: number; previous: AccountStates | null; states: AccountStates } | null> {
  const batch = await loadBatch(db, batchId);
  if (reportedAsTheyStand(batch)) return null;
  return { version: batch.reportVersion + 1, previous: batch.reportedStates, states: statesOf(batch) };
}

/** The accounts' current statuses, by account. */
function statesOf(batch: BatchInfo): AccountStates {
  return Object.fromEntries(batch.accounts.map((a) => [a.account, a.status]));
}

/**
 * A group report was written for exactly the accounts' current statuses (a report sent at the deadline, before the
 * last account ended, is not one for the statuses that followed).
 */
export function reportedAsTheyStand(batch: BatchInfo): boolean {
  return batch.reportedStates !== null && sameStates(batch.reportedStates, statesOf(batch));
}

/** The group report of these statuses is written and sent. */
export async function recordGroupReported(
  db: Db,
  batchId: string,
  report: { version: number; states: AccountStates },
): Promise<void> {
  await db
    .updateTable('batch')
    .set({ reported_states: JSON.stringify(report.states), report_version: report.version })
    .where('id', '=', batchId)
    .execute();
}

function plainStates(value: unknown): AccountStates | null {
  if (!value || typeof value !== 'object') return null;
  return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, String(v) as BatchAccountStatus]));
}

function sameStates(a: AccountStates, b: AccountStates): boolean {
  const keys = new Set([...Object.keys(a), ...Object.keys(b)]);
  return [...keys].every((k) => a[k] === b[k]);
}

/** An attempt of an account's job failed and will be retried: the account waits again, its last error kept. */
export async function retryBatchAccount(
  db: Db,
  batchId: string,
  account: string,
  outcome: { runId?: string | null; failedStage?: string | null; error: string },
  secrets: readonly string[],
): Promise<void> {
  await db
    .updateTable('batch_account')
    .set({
      status: 'pending',
      ...(outcome.runId ? { run_id: outcome.runId } : {}),
      failed_stage: outcome.failedStage ?? null,
      error: storedError(outcome.error, secrets),
    })
    .where('batch_id', '=', batchId)
    .where('account', '=', account)
    .execute();
}

/** The batch has ended when every account has: succeeded, or failed for good. */
export function batchEnded(batch: Pick<BatchInfo, 'accounts'>): boolean {
  return batch.accounts.every((a) => a.status === 'succeeded' || a.status === 'failed');
}

/** An account's run has started (one more attempt), on this worker. */
export async function startBatchAccount(db: Db, batchId: string, account: string, worker: string): Promise<void> {
  await db
    .updateTable('batch_account')
    .set((eb) => ({
      status: 'running',
      started_at: new Date(),
      finished_at: null,
      worker,
      attempts: eb('attempts', '+', 1),
    }))
    .where('batch_id', '=', batchId)
    .where('account', '=', account)
    .execute();
}

/** The account's run row, as soon as it exists: `runs` links the batch to it while it runs. */
export async function setBatchAccountRun(db: Db, batchId: string, account: string, runId: string): Promise<void> {
  await db
    .updateTable('batch_account')
    .set({ run_id: runId })
    .where('batch_id', '=', batchId)
    .where('account', '=', account)
    .execute();
}

/** An account's outcome: succeeded, or failed with the stage and error its run recorded (or why it never ran). */
export async function finishBatchAccount(
  db: Db,
  batchId: string,
  account: string,
  outcome: {
    status: 'succeeded' | 'failed';
    runId?: string | null;
    failedStage?: string | null;
    error?: string | null;
  },
  secrets: readonly string[],
): Promise<void> {
  await db
    .updateTable('batch_account')
    .set({
      status: outcome.status,
      ...(outcome.runId ? { run_id: outcome.runId } : {}),
      failed_stage: outcome.failedStage ?? null,
      error: outcome.error ? storedError(outcome.error, secrets) : null,
      finished_at: new Date(),
    })
    .where('batch_id', '=', batchId)
    .where('account', '=', account)
    .execute();
}

/** The batch has ended: succeeded when every account did, failed otherwise. */
export async function finishBatch(db: Db, batchId: string, status: 'succeeded' | 'failed'): Promise<void> {
  await db.updateTable('batch').set({ status, finished_at: new Date() }).where('id', '=', batchId).execute();
}

/** The group workbook written for the batch and the digest its e-mail shows. */
export async function setBatchReport(db: Db, batchId: string, path: string, digest: unknown): Promise<void> {
  await db
    .updateTable('batch')
    .set({ report_path: path, report_digest: JSON.stringify(digest) })
    .where('id', '=', batchId)
    .execute();
}

/** The group e-mail's outcome, its error's secrets masked. */
export async function recordBatchDelivery(
  db: Db,
  batchId: string,
  outcome: DeliveryOutcome,
  secrets: readonly string[],
): Promise<void> {
  const stored = outcome.delivered ? outcome : { ...outcome, error: storedError(outcome.error, secrets) };
  await db.updateTable('batch').set(deliveryColumns(stored)).where('id', '=', batchId).execute();
}

export async function loadBatch(db: Db, batchId: string): Promise<BatchInfo> {
  const found = await findBatch(db, batchId);
  if (!found) throw new ReportError(`batch ${batchId} not found; list batches with \`ramp-recon runs\``);
  return found;
}

export async function findBatch(db: Db, batchId: string): Promise<BatchInfo | undefined> {
  return (await readBatches(db, db.selectFrom('batch').selectAll().where('id', '=', batchId)))[0];
}

/** The newest batches, newest first, each with its accounts (two queries, whatever the number of batches). */
export async function recentBatches(db: Db, limit: number): Promise<BatchInfo[]> {
  return readBatches(db, db.selectFrom('batch').selectAll().orderBy('started_at', 'desc').limit(limit));
}

/** The batches a query selects, in its order, with all their accounts read in one more query. */
async function readBatches(db: Db, query: { execute(): Promise<Array<Selectable<BatchTable>>> }): Promise<BatchInfo[]> {
  const rows = await query.execute();
  if (!rows.length) return [];
  const accounts = await db
    .selectFrom('batch_account')
    .selectAll()
    .where(
      'batch_id',
      'in',
      rows.map((r) => r.id),
    )
    .orderBy('position')
    .execute();
  return rows.map((row) => ({
    id: row.id,
    trigger: row.trigger,
    periodFrom: row.period_from,
    periodTo: row.period_to,
    startedAt: row.started_at,
    finishedAt: row.finished_at,
    status: row.status,
    reportPath: row.report_path,
    reportDigest: row.report_digest,
    delivered: row.delivered,
    deliveredAt: row.delivered_at,
    deliveryError: row.delivery_error,
    reportedStates: plainStates(row.reported_states),
    reportVersion: jsonNumber(row.report_version) ?? 0,
    deadlineAt: row.deadline_at,
    accounts: accounts
      .filter((a) => a.batch_id === row.id)
      .map((a) => ({
        account: a.account,
        position: jsonNumber(a.position) ?? 0,
        status: a.status as BatchAccountStatus,
        runId: a.run_id,
        failedStage: a.failed_stage,
        error: a.error,
        startedAt: a.started_at,
        finishedAt: a.finished_at,
        worker: a.worker,
        attempts: jsonNumber(a.attempts) ?? 0,
      })),
  }));
}
