/** The `run` row: every read and update of a run's record (create, stages, results, outcome, report, delivery). */
import { stampedId } from '../../util/ids.js';
import { sql } from 'kysely';
import { jsonNumber, stringifyJsonLossless } from '../../decimal/json.js';
import { ReportError } from '../../errors.js';
import type { Db } from '../db/database.js';
import type { RunRow } from '../db/schema.js';
import type { LateBreak, OpenBreakCounts, PeriodSplit, Severity } from '../../domain/index.js';
import { closeJudgement, type Judgement } from '../recon/changes.js';
import { parseRunRequests, type RunRequests } from '../../http/meter.js';
import type {
  DigestBreak,
  DigestFailure,
  DigestFigures,
  ReportDigest,
  RollFigures,
  RuleResult,
  StoredRuleResult,
  RunInfo,
  StageInfo,
} from '../../domain/index.js';
import { writeBreaks } from '../recon/breaks.js';
import { replaceBalanceRoll } from '../recon/balance-flows.js';
import { recordWebhookJudgements } from '../recon/webhook-judgements.js';
import type { RunCounts } from '../recon/counts.js';

export type RunCommand = 'run' | 'sync' | 'reconcile' | 'report' | 'deliver';

/** Sortable, readable run id: r20261122T020000Z-3fa9c1. */
export function newRunId(now = new Date()): string {
  return stampedId('r', now);
}

export async function createRun(
  db: Db,
  input: {
    account: string;
    command: RunCommand;
    trigger?: string;
    periodFrom?: string | null;
    periodTo?: string | null;
    configHash?: string;
    id?: string;
    startedAt?: Date;
    /** The batch this is an account's run of (multi-account configs). */
    batchId?: string;
  },
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
      batch_id: input.batchId ?? null,
    })
    .execute();
  return id;
}

/**
 * Merges one stage's timing into run.stages: { "sync.exchange": { startedAt, finishedAt, ms, status, error?, detail?,
 * seq } }.
 * One jsonb `||` in SQL rather than read-modify-write: nothing read back (jsonb numbers come back as
 * LosslessNumber objects) is re-serialized, and two writers cannot lose each other's stage.
 * `requests`, the run's requests so far, replaces run.requests in the same statement: a run
 * killed in a later stage still shows what the earlier ones spent.
 */
/**
 * A stage has started: run.current_stage names it until recordStage records it, so a process
 * that dies in the middle leaves the name for failInterruptedRuns.
 */
export async function markStageStarted(db: Db, runId: string, stage: string): Promise<void> {
  await db.updateTable('run').set({ current_stage: stage }).where('id', '=', runId).execute();
}

export async function recordStage(
  db: Db,
  runId: string,
  stage: string,
  timing: {
    startedAt: Date;
    finishedAt: Date;
    status: 'succeeded' | 'failed' | 'skipped';
    error?: string;
    detail?: unknown;
  },
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
  // seq: the order the stage was first recorded in (jsonb keeps no key order, and two quick stages
  // can share a millisecond of startedAt); a stage recorded again keeps its place.
  const patch = sql`jsonb_build_object(${stage}::text, ${stringifyJsonLossless(entry)}::jsonb || jsonb_build_object('seq', coalesce(stages -> ${stage} -> 'seq', to_jsonb((select count(*) from jsonb_object_keys(stages))))))`;
  await db
    .updateTable('run')
    .set({
      stages: sql`stages || ${patch}` as never,
      // the stage is no longer in progress (a stage recorded without being started leaves another's name)
      current_stage: sql`case when current_stage = ${stage} then null else current_stage end` as never,
      ...(requests ? { requests: stringifyJsonLossless(requests) } : {}),
    })
    .where('id', '=', runId)
    .execute();
}

export async function getRun(db: Db, runId: string): Promise<RunRow | undefined> {
  return db.selectFrom('run').selectAll().where('id', '=', runId).executeTakeFirst();
}

/** The account's runs, newest first. */
export async function recentRuns(db: Db, account: string, limit: number): Promise<RunRow[]> {
  return db
    .selectFrom('run')
    .selectAll()
    .where('account', '=', account)
    .orderBy('started_at', 'desc')
    .limit(limit)
    .execute();
}

/** The run of the same period that started last before this one (the report's "changes since"), if any. */
export async function previousRunOfPeriod(
  db: Db,
  run: { id: string; account: string; periodFrom: string; periodTo: string; startedAt: Date },
): Promise<{ id: string; startedAt: Date; status: string } | null> {
  const row = await db
    .selectFrom('run')
    .select(['id', 'started_at', 'status'])
    .where('account', '=', run.account)
    .where('period_from', '=', run.periodFrom)
    .where('period_to', '=', run.periodTo)
    .where('started_at', '<', run.startedAt)
    .where('id', '!=', run.id)
    .orderBy('started_at', 'desc')
    .limit(1)
    .executeTakeFirst();
  return row ? { id: row.id, startedAt: row.started_at, status: row.status } : null;
}

/** The newest run or reconcile that is no longer running (null: none yet). */
export async function latestFinishedReconcile(db: Db, account: string): Promise<string | null> {
  const row = await db
    .selectFrom('run')
    .select('id')
    .where('account', '=', account)
    .where('command', 'in', ['run', 'reconcile'])
    .where('status', '!=', 'running')
    .orderBy('started_at', 'desc')
    .limit(1)
    .executeTakeFirst();
  return row?.id ?? null;
}

/** The newest run of the account still marked running, if any. */
export async function newestRunningRun(
  db: Db,
  account: string,
): Promise<{ id: string; command: string; startedAt: Date; trigger: string } | undefined> {
  const row = await db
    .selectFrom('run')
    .select(['id', 'command', 'started_at', 'trigger'])
    .where('account', '=', account)
    .where('status', '=', 'running')
    .orderBy('started_at', 'desc')
    .limit(1)
    .executeTakeFirst();
  return (
    row && {
      id: row.id,
      command: row.command,
      startedAt: new Date(row.started_at as unknown as string | Date),
      trigger: row.trigger,
    }
  );
}

/**
 * Marks runs left 'running' by a process that died (killed, or cut off from the database so
 * that it could not record its end) as failed, in the stage it was in: the last stage started
 * and not recorded as finished (run.current_stage), or 'run' when it died between stages.
 * Only called while holding the run lock: then no other run of the account can really be running.
 */
export async function failInterruptedRuns(
  db: Db,
  account: string,
  now: Date,
): Promise<Array<{ id: string; failedStage: string }>> {
  const rows = await db
    .updateTable('run')
    .set({
      status: 'failed',
      finished_at: now,
      failed_stage: sql`coalesce(current_stage, 'run')` as never,
      error:
        sql`'interrupted' || coalesce(' in stage ' || current_stage, '') || ': the process ended (killed, or its database connection lost) before the run finished; what it had committed is kept and the next run resumes from it'` as never,
      current_stage: null,
    })
    .where('account', '=', account)
    .where('status', '=', 'running')
    .returning(['id', 'failed_stage'])
    .execute();
  return rows.map((r) => ({ id: r.id, failedStage: r.failed_stage ?? 'run' }));
}

/** The run's end: succeeded, or failed in a stage with its error; `requests` is what the run spent. */
export async function finishRun(
  db: Db,
  runId: string,
  outcome:
    | { status: 'succeeded'; requests: RunRequests }
    | { status: 'failed'; failedStage: string; error: string; requests: RunRequests },
): Promise<void> {
  const requests = stringifyJsonLossless(outcome.requests);
  const set =
    outcome.status === 'succeeded'
      ? { status: 'succeeded', finished_at: new Date(), requests, current_stage: null }
      : {
          status: 'failed',
          failed_stage: outcome.failedStage,
          error: outcome.error,
          finished_at: new Date(),
          requests,
          current_stage: null,
        };
  await db.updateTable('run').set(set).where('id', '=', runId).execute();
}

/** Adds fields to one recorded stage's detail (e.g. the open-break count after reconcile). */
export async function mergeStageDetail(
  db: Db,
  runId: string,
  stage: string,
  extra: Record<string, unknown>,
): Promise<void> {
  await db
    .updateTable('run')
    .set({
      stages:
        sql`jsonb_set(stages, ${sql.val([stage, 'detail'])}::text[], coalesce(stages -> ${stage} -> 'detail', '{}'::jsonb) || ${stringifyJsonLossless(extra)}::jsonb)` as never,
    })
    .where('id', '=', runId)
    .where(sql<boolean>`stages ? ${stage}`)
    .execute();
}

/**
 * The reconcile's writes, inside the caller's transaction (`trx`) so a failed run leaves the breaks as they were:
 * the breaks and their events, the run's balance roll, and its counts, rule results, ruleset version and cursors.
 * src/stages/reconcile.ts opens the transaction, and reopens in it the acknowledgements whose amounts changed.
 */
export async function recordReconcile(
  trx: Db,
  input: {
    runId: string;
    account: string;
    upserts: Parameters<typeof writeBreaks>[2];
    events: Parameters<typeof writeBreaks>[3];
    balanceRoll: readonly RollFigures[];
    counts: RunCounts;
    ruleResults: readonly RuleResult[];
    rulesetVersion: string;
    cursors: Record<string, string>;
    /** P_WEBHOOK_GAP ran: record the orders it judged (those settled before `cutoff`). */
    webhookJudgement?: { cutoff: Date; now: Date } | null;
    /** The changes this reconcile judged: marked judged in the same transaction as its breaks. */
    judgement: Judgement;
    late: readonly LateBreak[];
  },
): Promise<void> {
  await writeBreaks(trx, input.account, input.upserts, input.events);
  if (input.webhookJudgement)
    await recordWebhookJudgements(
      trx,
      input.account,
      input.runId,
      input.webhookJudgement.cutoff,
      input.webhookJudgement.now,
    );
  await replaceBalanceRoll(trx, input.runId, input.account, input.balanceRoll);
  await closeJudgement(trx, input.account, input.runId, input.judgement, new Date());
  await trx
    .updateTable('run')
    .set({
      counts: JSON.stringify(input.counts),
      rule_results: JSON.stringify(input.ruleResults),
      ruleset_version: input.rulesetVersion,
      cursors: stringifyJsonLossless(input.cursors),
      late_breaks: JSON.stringify(input.late),
    })
    .where('id', '=', input.runId)
    .execute();
}

/**
 * The workbook written for the run, with the counts of open breaks it shows and its e-mail's digest (the e-mail sends
 * these with it).
 */
export async function setReportPath(
  db: Db,
  runId: string,
  path: string,
  breakCounts: OpenBreakCounts,
  digest?: ReportDigest,
): Promise<void> {
  await db
    .updateTable('run')
    .set({
      report_path: path,
      break_counts: JSON.stringify(breakCounts),
      report_digest: digest ? JSON.stringify(digest) : null,
    })
    .where('id', '=', runId)
    .execute();
}

/** An e-mail's outcome: sent, or not sent with the reason. */
export type DeliveryOutcome = { delivered: true } | { delivered: false; error: string };

/** The delivery columns a run and a batch share, for an e-mail's outcome: sent (now), or not sent with the reason. */
export function deliveryColumns(outcome: DeliveryOutcome) {
  return outcome.delivered
    ? { delivered: true, delivered_at: new Date(), delivery_error: null }
    : { delivered: false, delivered_at: null, delivery_error: outcome.error };
}

/** The e-mail's outcome (`deliver <runId>` retries one not sent). */
export async function recordDelivery(db: Db, runId: string, outcome: DeliveryOutcome): Promise<void> {
  await db.updateTable('run').set(deliveryColumns(outcome)).where('id', '=', runId).execute();
}

/**
 * A run whose only failure was the e-mail is complete once the e-mail is sent: its status
 * becomes succeeded, so `runs` and the next morning's reader see it as done.
 */
export async function completeRedeliveredRun(db: Db, runId: string, startedAt: Date): Promise<void> {
  const updated = await db
    .updateTable('run')
    .set({ status: 'succeeded', failed_stage: null, error: null })
    .where('id', '=', runId)
    .where('status', '=', 'failed')
    .where('failed_stage', '=', 'deliver')
    .executeTakeFirst();
  if (Number(updated.numUpdatedRows) > 0)
    await recordStage(db, runId, 'deliver', {
      startedAt,
      finishedAt: new Date(),
      status: 'succeeded',
      detail: { retried: true },
    });
}

/**
 * The run as the report and the e-mail show it (jsonb numbers as plain numbers); only a run of a period can be
 * reported.
 */
export async function loadRun(db: Db, runId: string): Promise<RunInfo> {
  const row = await getRun(db, runId);
  if (!row) throw new ReportError(`run ${runId} not found; list runs with \`ramp-recon runs\``);
  if (!row.period_from || !row.period_to)
    throw new ReportError(`run ${runId} (${row.command}) has no period; only runs of a period can be reported`);
  return {
    id: row.id,
    account: row.account,
    command: row.command,
    status: row.status,
    periodFrom: row.period_from,
    periodTo: row.period_to,
    startedAt: row.started_at,
    finishedAt: row.finished_at,
    failedStage: row.failed_stage,
    error: row.error,
    stages: plainStages(row.stages),
    counts: plainCounts(row.counts),
    requests: parseRunRequests(row.requests),
    ruleResults: plainRules(row.rule_results),
    rulesetVersion: row.ruleset_version,
    configHash: row.config_hash,
    breakCounts: plainBreakCounts(row.break_counts),
    reportDigest: plainDigest(row.report_digest),
    lateBreaks: readLateBreaks(row.late_breaks),
  };
}

/** run.late_breaks as reconcile wrote it (LateBreak[]); [] for a run without one (not reconciled, or older). */
export function readLateBreaks(value: unknown): LateBreak[] {
  if (!Array.isArray(value)) return [];
  const text = (v: unknown) => (typeof v === 'string' ? v : null);
  return value.flatMap((v: Record<string, unknown> | null) => {
    const event = text(v?.event);
    if (
      !v ||
      !text(v.code) ||
      !text(v.key) ||
      !text(v.day) ||
      (event !== 'opened' && event !== 'reopened' && event !== 'resolved')
    )
      return [];
    return [
      {
        code: text(v.code)!,
        key: text(v.key)!,
        day: text(v.day)!,
        event,
        severity: text(v.severity) ?? '',
        message: text(v.message),
      },
    ];
  });
}

function plainCounts(value: unknown): Record<string, number> {
  const out: Record<string, number> = {};
  if (value && typeof value === 'object')
    for (const [k, v] of Object.entries(value)) {
      const n = jsonNumber(v);
      if (n !== null) out[k] = n;
    }
  return out;
}

/**
 * run.break_counts as written by setReportPath (jsonb numbers come back as LosslessNumber); null when absent or not
 * that shape.
 */
function plainBreakCounts(value: unknown): OpenBreakCounts | null {
  const obj = value as Record<string, unknown> | null;
  if (!obj || typeof obj !== 'object' || !obj.severity || !Array.isArray(obj.rules)) return null;
  const splitOf = (v: unknown): PeriodSplit => {
    const o = (v && typeof v === 'object' ? v : {}) as Record<string, unknown>;
    return {
      total: jsonNumber(o.total) ?? 0,
      inPeriod: jsonNumber(o.inPeriod) ?? 0,
      carriedOver: jsonNumber(o.carriedOver) ?? 0,
    };
  };
  const severity = obj.severity as Record<string, unknown>;
  return {
    ...splitOf(obj),
    explained: jsonNumber(obj.explained) ?? 0,
    severity: { high: splitOf(severity.high), medium: splitOf(severity.medium), low: splitOf(severity.low) },
    rules: (obj.rules as Array<Record<string, unknown>>).map((r) => ({
      code: String(r.code),
      severity: String(r.severity) as Severity,
      ...splitOf(r),
      explained: jsonNumber(r.explained) ?? 0,
    })),
  };
}

/**
 * run.report_digest as written by setReportPath (its numbers come back as LosslessNumber); null when absent or not that
 * shape.
 */
export function plainDigest(value: unknown): ReportDigest | null {
  const o = value as Record<string, unknown> | null;
  if (!o || typeof o !== 'object' || typeof o.period !== 'string' || !o.headline || !Array.isArray(o.topBreaks))
    return null;
  const h = o.headline as Record<string, unknown>;
  const tone = h.tone === 'ok' || h.tone === 'explained' ? h.tone : 'bad';
  return {
    period: o.period,
    ...(o.partial === true ? { partial: true } : {}),
    attachmentName: String(o.attachmentName ?? ''),
    ...(typeof o.detailDir === 'string' ? { detailDir: o.detailDir } : {}),
    headline: { tone, text: String(h.text ?? ''), detail: String(h.detail ?? ''), status: String(h.status ?? '') },
    topBreaks: (o.topBreaks as Array<Record<string, unknown>>).map((b): DigestBreak => ({
      code: String(b.code),
      key: String(b.key),
      severity: String(b.severity),
      sentence: String(b.sentence ?? ''),
      ageDays: jsonNumber(b.ageDays) ?? 0,
      usdImpact: typeof b.usdImpact === 'string' ? b.usdImpact : null,
      inPeriod: b.inPeriod === true,
      explained: b.explained === true,
      why: b.why === 'largest' ? 'largest' : 'oldest',
    })),
    ...(o.late && typeof o.late === 'object' ? { late: plainLate(o.late as Record<string, unknown>) } : {}),
    ...(o.figures && typeof o.figures === 'object'
      ? { figures: plainFigures(o.figures as Record<string, unknown>) }
      : {}),
    ...(o.failure && typeof o.failure === 'object'
      ? { failure: plainFailure(o.failure as Record<string, unknown>) }
      : {}),
    writtenAt: String(o.writtenAt ?? ''),
  };
}

/** A split of stored figures ({ total, inPeriod, carriedOver }) read as text or as counts; absent: undefined. */
function storedSplit<T>(raw: unknown, read: (v: unknown) => T): { total: T; inPeriod: T; carriedOver: T } | undefined {
  if (!raw || typeof raw !== 'object') return undefined;
  const o = raw as Record<string, unknown>;
  return { total: read(o.total), inPeriod: read(o.inPeriod), carriedOver: read(o.carriedOver) };
}

function plainFigures(o: Record<string, unknown>): DigestFigures {
  const stake = (o.moneyAtStake ?? {}) as Record<string, unknown>;
  const text = (v: unknown) => String(v ?? '0');
  const count = (v: unknown) => jsonNumber(v) ?? 0;
  const more = {
    shortfalls: storedSplit(stake.shortfalls, text),
    surpluses: storedSplit(stake.surpluses, text),
    noFigure: storedSplit(stake.noFigure, count),
    noMoney: storedSplit(stake.noMoney, count),
  };
  return {
    moneyAtStake: {
      total: String(stake.total ?? '0'),
      inPeriod: String(stake.inPeriod ?? '0'),
      carriedOver: String(stake.carriedOver ?? '0'),
      unvalued: jsonNumber(stake.unvalued) ?? 0,
      // the figures written since shortfalls and surpluses were told apart (absent before)
      ...Object.fromEntries(Object.entries(more).filter(([, v]) => v !== undefined)),
    },
    closingUsd: typeof o.closingUsd === 'string' ? o.closingUsd : null,
    closingUnvalued: Array.isArray(o.closingUnvalued) ? o.closingUnvalued.map(String) : [],
  };
}

function plainFailure(o: Record<string, unknown>): DigestFailure {
  const stored =
    o.stored && typeof o.stored === 'object'
      ? Object.fromEntries(
          Object.entries(o.stored as Record<string, unknown>).map(([k, v]) => [k, jsonNumber(v) ?? 0] as const),
        )
      : null;
  return {
    stage: String(o.stage ?? 'run'),
    error: typeof o.error === 'string' ? o.error : null,
    judged: o.judged === true,
    stored,
  };
}

function plainLate(o: Record<string, unknown>): NonNullable<ReportDigest['late']> {
  const breaks = readLateBreaks(o.breaks);
  return {
    total: jsonNumber(o.total) ?? breaks.length,
    opened: jsonNumber(o.opened) ?? 0,
    reopened: jsonNumber(o.reopened) ?? 0,
    resolved: jsonNumber(o.resolved) ?? 0,
    breaks,
  };
}

function plainStages(value: unknown): Record<string, StageInfo> {
  const out: Record<string, StageInfo> = {};
  if (value && typeof value === 'object')
    for (const [k, v] of Object.entries(value as Record<string, Record<string, unknown>>)) {
      if (!v || typeof v !== 'object') continue;
      out[k] = {
        status: typeof v.status === 'string' ? v.status : undefined,
        ms: jsonNumber(v.ms) ?? undefined,
        error: typeof v.error === 'string' ? v.error : undefined,
        startedAt: typeof v.startedAt === 'string' ? v.startedAt : undefined,
        finishedAt: typeof v.finishedAt === 'string' ? v.finishedAt : undefined,
        seq: jsonNumber(v.seq) ?? undefined,
      };
    }
  return out;
}

function plainRules(value: unknown): StoredRuleResult[] {
  if (!Array.isArray(value)) return [];
  return value
    .filter((r): r is Record<string, unknown> => !!r && typeof r === 'object')
    .map((r) => ({
      code: String(r.code ?? ''),
      severity: String(r.severity ?? ''),
      description: String(r.description ?? ''),
      status: String(r.status ?? ''),
      checked: jsonNumber(r.checked),
      breaks: jsonNumber(r.breaks),
      reason: typeof r.reason === 'string' ? r.reason : undefined,
    }));
}
