/** The break repository: open breaks (for a run, each with inPeriod and the days late data moved), the lifecycle's
 * reads and writes.
 */
import { sql, type SqlBool } from 'kysely';
import { byEntity, changedRecord, placedIn, recordDay } from './record-sql.js';
import type { Db } from '../db/database.js';
import type { BreakRow } from '../db/schema.js';
import { toBreak } from './break-rows.js';
import {
  breakId,
  DATED_KINDS,
  NO_WORKFLOW,
  RECORD_KINDS,
  type Break,
  type BreakEvent,
  type DetectedBreak,
  type ReportedBreak,
} from '../../domain/index.js';
import { spanOf, type Span } from '../db/keyset.js';
import { stringifyJsonLossless } from '../../decimal/json.js';
import { workflowsOf } from '../workflow/break-workflow.js';

/** Rows per multi-row statement: well below Postgres' 65535 parameters (~19 per break). */
const WRITE_CHUNK = 500;
const READ_CHUNK = 1_000;

function chunks<T>(list: readonly T[], size: number): T[][] {
  const out: T[][] = [];
  for (let i = 0; i < list.length; i += size) out.push(list.slice(i, i + size));
  return out;
}

/**
 * Every open break of the account, whatever run found it. Unordered (the report sorts them), or
 * by severity: high, medium, low, then code and key, a stable order for diffs between runs.
 */
export async function loadOpenBreaks(db: Db, account: string, order: 'none' | 'severity' = 'none'): Promise<Break[]> {
  const rows = await db
    .selectFrom('break')
    .selectAll()
    .where('account', '=', account)
    .where('status', '=', 'open')
    .$if(order === 'severity', (qb) =>
      qb
        .orderBy(sql`case severity when 'high' then 0 when 'medium' then 1 when 'low' then 2 else 3 end`)
        .orderBy('code')
        .orderBy('key'),
    )
    .execute();
  return rows.map(toBreak);
}

/** The details of the account's open breaks of one rule (a rule that keeps what it must judge again there). */
export async function openBreakDetails(db: Db, account: string, code: string): Promise<unknown[]> {
  const rows = await db
    .selectFrom('break')
    .select('detail')
    .where((eb) => eb.and({ account, code, status: 'open' }))
    .execute();
  return rows.map((r) => r.detail);
}

/** Every open break of the account, and every stored break (any status) detected again now. */
export async function previousBreaks(db: Db, account: string, detected: readonly DetectedBreak[]): Promise<Break[]> {
  const byId = new Map((await loadOpenBreaks(db, account)).map((b) => [breakId(b.code, b.key), b]));
  const keysByCode = new Map<string, string[]>();
  for (const d of detected)
    if (!byId.has(breakId(d.code, d.key))) keysByCode.set(d.code, [...(keysByCode.get(d.code) ?? []), d.key]);
  for (const [code, keys] of keysByCode)
    for (const part of chunks(keys, READ_CHUNK)) {
      const rows = await db
        .selectFrom('break')
        .selectAll()
        .where('account', '=', account)
        .where('code', '=', code)
        .where('key', 'in', part)
        .execute();
      for (const r of rows) byId.set(breakId(r.code, r.key), toBreak(r));
    }
  return [...byId.values()];
}

/** The run whose open breaks are reported: its id and account, and its period (`to` exclusive). */
export interface ReportedRun {
  id: string;
  account: string;
  periodFrom: string | null;
  periodTo: string | null;
}

/**
 * Every open break of the run's account, whatever run found it, each with inPeriod: whether its
 * record belongs to the run's period, decided in this one query for every break (docs/rules.md
 * "This period or carried over"): by the record its entity and key name (record-sql.ts), or by the
 * break's own day. Unordered, or by severity then code and key (the JSON summary). A run without a
 * period has no break of its period.
 */
export async function openBreaksOfRun(
  db: Db,
  run: ReportedRun,
  order: 'none' | 'severity' = 'none',
): Promise<ReportedBreak[]> {
  // Where people stand on them (docs/working-breaks.md): only breaks someone worked on have a row.
  const workflows = await workflowsOf(db, run.account, 'open');
  const workflow = (b: Break) => workflows.get(breakId(b.code, b.key)) ?? { ...NO_WORKFLOW };
  if (!run.periodFrom || !run.periodTo)
    return (await loadOpenBreaks(db, run.account, order)).map((b) => ({
      ...b,
      inPeriod: false,
      workflow: workflow(b),
    }));
  const span = spanOf({ from: run.periodFrom, to: run.periodTo });
  const [fromDay, toDay] = [run.periodFrom, run.periodTo];
  const placed = byEntity(
    sql.ref('b.entity'),
    (kind) => placedIn(kind, run.account, sql.ref('b.key'), span),
    // no record of its own (a balance, quarantine, a stuck cursor): new in this run
    sql`b.first_seen_run = ${run.id}`,
  );
  const rows = await sql<BreakRow & { in_period: boolean }>`
    select b.*, coalesce(case when b.day is not null then b.day >= ${fromDay} and b.day < ${toDay} else ${placed} end,
      false) as in_period
    from break b
    where b.account = ${run.account} and b.status = 'open'
    ${order === 'severity' ? sql`order by case b.severity when 'high' then 0 when 'medium' then 1 when 'low' then 2 else 3 end, b.code, b.key` : sql.raw('')}`.execute(
    db,
  );
  return rows.rows.map((r) => {
    const b = toBreak(r);
    return { ...b, inPeriod: r.in_period === true, workflow: workflow(b) };
  });
}

/**
 * A lifecycle event of a run whose break's record lies on an earlier day and was judged for a change: late data moved
 * that day's answer.
 */
export interface LateBreakFact {
  code: string;
  key: string;
  /** UTC day of the break's record (docs/rules.md "What a run judges"). */
  day: string;
}

type BreakOfRecord = Pick<Break, 'code' | 'key' | 'entity' | 'day'>;

/** Kinds whose own day before the period is judged again only for late data (a roll-forward pair). */
const LATE_DAY_KINDS = Object.values(RECORD_KINDS)
  .filter((k) => k.ownDayJudgedForChanges)
  .map((k) => k.name);

/**
 * Of the given breaks (opened, reopened or resolved by a run of `span`), those about a day before
 * the span that late data moved: a record of an earlier day judged for a change since `since` (and
 * not also placed in the span, as an order of an earlier day filled in it), or a break with a day of
 * its own before the span of a kind judged again only for late data (a roll-forward pair; a coverage
 * day of another period is not). A record's day: its kind's
 * time (record-sql.ts recordDay). `since` null: the account's first judgement, nothing is late.
 */
export async function lateBreakFacts(
  db: Db,
  account: string,
  span: Span,
  since: string | null,
  breaks: readonly BreakOfRecord[],
): Promise<LateBreakFact[]> {
  if (since === null || breaks.length === 0) return [];
  const out: LateBreakFact[] = [];
  const key = sql.ref('b.key');
  const fromDay = span.from.toISOString().slice(0, 10);
  for (const part of chunks(breaks, READ_CHUNK)) {
    const rows = await sql<{ code: string; key: string; day: string | null; late: boolean | null }>`
      select b.code, b.key, r.day,
        case when b.day is not null then b.entity = any(${LATE_DAY_KINDS}::text[])
          else ${byEntity(sql.ref('b.entity'), (kind) => changedRecord(kind, account, key, since), sql`false`)}
            and not ${byEntity(sql.ref('b.entity'), (kind) => placedIn(kind, account, key, span), sql`false`)}
        end as late
      from unnest(${part.map((x) => x.code)}::text[], ${part.map((x) => x.key)}::text[],
        ${part.map((x) => x.entity)}::text[], ${part.map((x) => x.day)}::text[]) as b(code, key, entity, day)
      cross join lateral (
        select coalesce(b.day, ${byEntity(sql.ref('b.entity'), (kind) => recordDay(kind, account, key), sql`null`)}) as day
      ) r`.execute(db);
    for (const r of rows.rows)
      if (r.late === true && r.day !== null && r.day < fromDay) out.push({ code: r.code, key: r.key, day: r.day });
  }
  return out;
}

/**
 * Which of the given breaks' records are in this run's scope, asked of the store for just those
 * keys, so scope never needs the period's full key set in memory: the period's records (placed in
 * the span: docs/rules.md "Keys, severities, scopes"), and with `changedSince` the records judged
 * for a change since that transaction (null: every stored record; store/recon/changes.ts judgedForChange).
 * A break whose entity has no record of its own is never in scope here.
 */
export async function inScopeKeys(
  db: Db,
  account: string,
  span: Span,
  breaks: readonly Pick<Break, 'code' | 'key' | 'entity'>[],
  changedSince?: string | null,
): Promise<Set<string>> {
  const inScope = new Set<string>();
  for (const kind of DATED_KINDS) {
    const mine = breaks.filter((b) => b.entity === kind.name);
    const keys = [...new Set(mine.map((b) => b.key))];
    for (const part of chunks(keys, READ_CHUNK)) {
      const key = sql.ref('k.key');
      const changed =
        changedSince === undefined ? sql<SqlBool>`false` : changedRecord(kind, account, key, changedSince);
      const rows = await sql<{ key: string }>`
        select k.key from unnest(${part}::text[]) as k(key)
        where ${placedIn(kind, account, key, span)} or ${changed}`.execute(db);
      const found = new Set(rows.rows.map((r) => r.key));
      for (const b of mine) if (found.has(b.key)) inScope.add(breakId(b.code, b.key));
    }
  }
  return inScope;
}

/**
 * Writes the lifecycle's rows and events (inside the caller's transaction). The caller then reopens, in the same
 * transaction, every acknowledged break whose amounts changed (reopenChangedAcknowledgements in
 * src/workflow/reopen.ts): no run can show a break as explained on amounts nobody accepted.
 */
export async function writeBreaks(
  trx: Db,
  account: string,
  upserts: readonly Break[],
  events: readonly BreakEvent[],
): Promise<void> {
  for (const part of chunks(upserts, WRITE_CHUNK)) {
    await trx
      .insertInto('break')
      .values(
        part.map((b) => ({
          account,
          code: b.code,
          key: b.key,
          entity: b.entity,
          severity: b.severity,
          currency: b.currency,
          unit: b.unit,
          day: b.day,
          expected: b.expected,
          actual: b.actual,
          difference: b.difference,
          message: b.message,
          detail: b.detail === null || b.detail === undefined ? null : stringifyJsonLossless(b.detail),
          status: b.status,
          first_seen_run: b.firstSeenRun,
          first_seen_at: b.firstSeenAt,
          last_seen_run: b.lastSeenRun,
          last_seen_at: b.lastSeenAt,
          resolved_run: b.resolvedRun,
          resolved_at: b.resolvedAt,
          reopened_count: b.reopenedCount,
        })),
      )
      .onConflict((oc) =>
        oc.columns(['account', 'code', 'key']).doUpdateSet((eb) => ({
          entity: eb.ref('excluded.entity'),
          severity: eb.ref('excluded.severity'),
          currency: eb.ref('excluded.currency'),
          unit: eb.ref('excluded.unit'),
          day: eb.ref('excluded.day'),
          expected: eb.ref('excluded.expected'),
          actual: eb.ref('excluded.actual'),
          difference: eb.ref('excluded.difference'),
          message: eb.ref('excluded.message'),
          detail: eb.ref('excluded.detail'),
          status: eb.ref('excluded.status'),
          // first_seen_* are never overwritten: a break keeps its age across runs.
          last_seen_run: eb.ref('excluded.last_seen_run'),
          last_seen_at: eb.ref('excluded.last_seen_at'),
          resolved_run: eb.ref('excluded.resolved_run'),
          resolved_at: eb.ref('excluded.resolved_at'),
          reopened_count: eb.ref('excluded.reopened_count'),
        })),
      )
      .execute();
  }
  for (const part of chunks(events, WRITE_CHUNK)) {
    await trx
      .insertInto('break_event')
      .values(
        part.map((e) => ({
          account,
          code: e.code,
          key: e.key,
          run_id: e.runId,
          event: e.event,
          expected: e.expected,
          actual: e.actual,
          difference: e.difference,
          at: e.at,
        })),
      )
      .execute();
  }
}
