/** The break repository: the one row -> Break mapper, open breaks (for a run, each with inPeriod), a run's changes, the
 * lifecycle's reads and writes.
 */
import { sql, type RawBuilder, type SqlBool, type Transaction } from 'kysely';
import { EXCHANGE_ID, judgedForChange } from './changes.js';
import type { Db } from './database.js';
import type { BreakRow, DB } from './schema.js';
import {
  breakId,
  NO_WORKFLOW,
  type Break,
  type BreakEvent,
  type DetectedBreak,
  type ReportedBreak,
  type Severity,
} from '../domain/index.js';
import type { BreakRef, Changes, RunInfo } from '../domain/index.js';
import { spanOf, type Span } from './keyset.js';
import { previousRunOfPeriod } from './runs.js';
import { stringifyJsonLossless } from '../decimal/json.js';
import { reopenChangedAcknowledgements, workflowsOf } from './break-workflow.js';

/** Rows per multi-row statement: well below Postgres' 65535 parameters (~19 per break). */
const WRITE_CHUNK = 500;
const READ_CHUNK = 1_000;

function chunks<T>(list: readonly T[], size: number): T[][] {
  const out: T[][] = [];
  for (let i = 0; i < list.length; i += size) out.push(list.slice(i, i + size));
  return out;
}

/** Stored severities come from the rule catalog; a reader ranks one it does not know last (SEVERITY_RANK). */
const severity = (text: string) => text as Severity;

/** The one mapper from a `break` row to the domain Break. */
export function toBreak(r: BreakRow): Break {
  return {
    code: r.code,
    key: r.key,
    severity: severity(r.severity),
    currency: r.currency,
    expected: r.expected,
    actual: r.actual,
    difference: r.difference,
    message: r.message,
    detail: r.detail,
    status: r.status === 'resolved' ? 'resolved' : 'open',
    firstSeenRun: r.first_seen_run,
    firstSeenAt: r.first_seen_at,
    lastSeenRun: r.last_seen_run,
    lastSeenAt: r.last_seen_at,
    resolvedRun: r.resolved_run,
    resolvedAt: r.resolved_at,
    reopenedCount: Number(r.reopened_count),
  };
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
    .where('account', '=', account)
    .where('code', '=', code)
    .where('status', '=', 'open')
    .execute();
  return rows.map((r) => r.detail);
}

/** What changed in this run against the previous run of the same period: breaks opened, reopened and resolved. */
export async function loadChanges(db: Db, run: RunInfo, openBreaks: Break[]): Promise<Changes> {
  const previous = await previousRunOfPeriod(db, run);
  const ref = (b: BreakRef): BreakRef => ({ code: b.code, key: b.key, severity: b.severity, message: b.message });
  const opened = openBreaks.filter((b) => b.firstSeenRun === run.id);
  const resolvedRows = await db
    .selectFrom('break')
    .select(['code', 'key', 'severity', 'message'])
    .where('account', '=', run.account)
    .where('resolved_run', '=', run.id)
    .where('status', '=', 'resolved')
    .execute();
  const reopenedKeys = await db
    .selectFrom('break_event')
    .select(['code', 'key'])
    .where('account', '=', run.account)
    .where('run_id', '=', run.id)
    .where('event', '=', 'reopened')
    .execute();
  const reopenedSet = new Set(reopenedKeys.map((r) => breakId(r.code, r.key)));
  const reopened = openBreaks.filter((b) => b.firstSeenRun !== run.id && reopenedSet.has(breakId(b.code, b.key)));
  return {
    previous,
    opened: opened.map(ref),
    reopened: reopened.map(ref),
    resolved: resolvedRows.map((r) => ref({ ...r, severity: severity(r.severity) })),
    stillOpen: openBreaks.length - opened.length - reopened.length,
  };
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

const PARTNER_SCOPED = new Set([
  'P_FEE_USD',
  'P_AMOUNT_USD',
  'P_PARTNER_FEE_RATE',
  'P_FEE_BOUNDS',
  'P_PRECISION',
  'P_STATE',
  'P_WEBHOOK_GAP',
  'X_DEPOSIT_MISSING',
  'X_DEPOSIT_AMOUNT',
]);
const ORDER_SCOPED = new Set(['E_FILL_QTY', 'E_FILL_AVGPX', 'E_SYMBOL_RULES']);
const FILL_SCOPED = new Set(['E_FILL_ORPHAN', 'E_FEE_RATE', 'E_SYMBOL_RULES']);
const isInt8 = (k: string) => /^-?\d{1,19}$/.test(k);

/** The run whose open breaks are reported: its id and account, and its period (`to` exclusive). */
export interface ReportedRun {
  id: string;
  account: string;
  periodFrom: string | null;
  periodTo: string | null;
}

/** The entity each rule's key names, for "this period" (docs/rules.md "This period or carried over"). */
const PARTNER_ORDER_KEYED = [...PARTNER_SCOPED, 'P_STALE'];
const EXCHANGE_ORDER_KEYED = ['E_FILL_QTY', 'E_FILL_AVGPX'];
const FILL_KEYED = ['E_FILL_ORPHAN', 'E_FEE_RATE'];
const DAY_AT_END = ':[0-9]{4}-[0-9]{2}-[0-9]{2}$';

/**
 * Every open break of the run's account, whatever run found it, each with inPeriod: whether its
 * entity belongs to the run's period, decided in this one query for every break (docs/rules.md
 * "This period or carried over"). Unordered, or by severity then code and key (the JSON summary).
 * A run without a period has no break of its period.
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
  const { from, to } = spanOf({ from: run.periodFrom, to: run.periodTo });
  const [fromDay, toDay] = [run.periodFrom, run.periodTo];
  const inSpan = (time: RawBuilder<unknown>) => sql`${time} >= ${from} and ${time} < ${to}`;
  const exchangeId = sql`(case when b.key ~ ${EXCHANGE_ID} then b.key::bigint end)`;
  const partnerOrder = sql`exists (select 1 from partner_order o where o.account = b.account and o.order_id = b.key and ${inSpan(sql.ref('o.created_at'))})`;
  const fill = sql`exists (select 1 from exchange_fill f where f.account = b.account and f.exec_id = ${exchangeId} and ${inSpan(sql.ref('f.timestamp'))})`;
  // An exchange order belongs to each period in which it was placed or has a fill (the order rules' scope).
  const exchangeOrder = sql`(exists (select 1 from exchange_order x where x.account = b.account and x.ex_ord_id = ${exchangeId} and ${inSpan(sql.ref('x.timestamp'))})
    or exists (select 1 from exchange_fill f where f.account = b.account and f.ex_ord_id = ${exchangeId} and ${inSpan(sql.ref('f.timestamp'))}))`;
  // A record without a timestamp is placed where E_STALE ages it from: when it was first stored.
  const deposit = sql`exists (select 1 from exchange_deposit d where d.account = b.account and d.deposit_id = b.key and ${inSpan(sql`coalesce(d.timestamp, d.first_seen_at)`)})`;
  const withdrawal = sql`exists (select 1 from exchange_withdrawal w where w.account = b.account and w.withdrawal_id = b.key and ${inSpan(sql`coalesce(w.timestamp, w.first_seen_at)`)})`;
  const rows = await sql<BreakRow & { in_period: boolean }>`
    select b.*, coalesce(case
      when b.code = any(${PARTNER_ORDER_KEYED}::text[]) then ${partnerOrder}
      when b.code = any(${EXCHANGE_ORDER_KEYED}::text[]) then ${exchangeOrder}
      when b.code = any(${FILL_KEYED}::text[]) then ${fill}
      when b.code = 'E_SYMBOL_RULES' then ${fill} or ${exchangeOrder}
      when b.code = 'E_STALE' then ${deposit} or ${withdrawal}
      when b.code = 'E_WITHDRAWAL_BENEFICIARY' then ${withdrawal}
      when b.code = 'S_COVERAGE' and b.key ~ ${DAY_AT_END} then right(b.key, 10) >= ${fromDay} and right(b.key, 10) < ${toDay}
      when b.code = 'E_BALANCE_ROLL' and jsonb_typeof(b.detail -> 'latestPairFirstDivergentDay') = 'string'
        then b.detail ->> 'latestPairFirstDivergentDay' >= ${fromDay} and b.detail ->> 'latestPairFirstDivergentDay' < ${toDay}
      -- no day of its own (E_BALANCE_SANITY, S_QUARANTINE, a stuck cursor, a code no longer in the catalog): new in this run
      else b.first_seen_run = ${run.id}
    end, false) as in_period
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

/**
 * Of the given breaks (opened, reopened or resolved by a run of `span`), those whose record lies
 * on a day before the span and was judged for a change since `since`: what late data changed about
 * earlier days. A record's day: a partner order's creation; an exchange order's placement (else its
 * first fill); a fill's, deposit's or withdrawal's time (first stored, without one). Keys without a
 * record of their own are left to the caller (E_BALANCE_ROLL's day is in its detail). `since` null:
 * the account's first judgement, nothing is late.
 */
export async function lateBreakFacts(
  db: Db,
  account: string,
  span: Span,
  since: string | null,
  breaks: readonly { code: string; key: string }[],
): Promise<LateBreakFact[]> {
  if (since === null || breaks.length === 0) return [];
  const out: LateBreakFact[] = [];
  const exchangeId = sql`(case when b.key ~ ${EXCHANGE_ID} then b.key::bigint end)`;
  const day = (time: RawBuilder<unknown>) => sql`to_char(${time} at time zone 'UTC', 'YYYY-MM-DD')`;
  const orderDay = sql`(select coalesce(${day(sql.ref('x.timestamp'))}, (select ${day(sql`min(f.timestamp)`)} from exchange_fill f where f.account = ${account} and f.ex_ord_id = x.ex_ord_id))
    from exchange_order x where x.account = ${account} and x.ex_ord_id = ${exchangeId})`;
  const fillDay = sql`(select ${day(sql.ref('f.timestamp'))} from exchange_fill f where f.account = ${account} and f.exec_id = ${exchangeId})`;
  const fillChanged = sql`exists (select 1 from exchange_fill f where f.account = ${account} and f.exec_id = ${exchangeId} and ${judgedForChange.fill('f', account, since)})`;
  const depositDay = sql`(select ${day(sql`coalesce(d.timestamp, d.first_seen_at)`)} from exchange_deposit d where d.account = ${account} and d.deposit_id = b.key)`;
  const withdrawalDay = sql`(select ${day(sql`coalesce(w.timestamp, w.first_seen_at)`)} from exchange_withdrawal w where w.account = ${account} and w.withdrawal_id = b.key)`;
  for (const part of chunks(breaks, READ_CHUNK)) {
    const rows = await sql<{
      code: string;
      key: string;
      day: string | null;
      changed: boolean | null;
      filled_in_span: boolean | null;
    }>`
      select b.code, b.key, r.day, r.changed,
        -- an order of an earlier day with a fill in the period belongs to the period too (its rules' scope)
        b.code = any(${[...EXCHANGE_ORDER_KEYED, 'E_SYMBOL_RULES']}::text[]) and exists (select 1 from exchange_fill f
          where f.account = ${account} and f.ex_ord_id = ${exchangeId} and f.timestamp >= ${span.from} and f.timestamp < ${span.to}) as filled_in_span
      from unnest(${part.map((x) => x.code)}::text[], ${part.map((x) => x.key)}::text[]) as b(code, key)
      cross join lateral (
        select case
          when b.code = any(${PARTNER_ORDER_KEYED}::text[]) then (select ${day(sql.ref('o.created_at'))} from partner_order o where o.account = ${account} and o.order_id = b.key)
          when b.code = any(${EXCHANGE_ORDER_KEYED}::text[]) then ${orderDay}
          when b.code = any(${FILL_KEYED}::text[]) then ${fillDay}
          when b.code = 'E_SYMBOL_RULES' then coalesce(${fillDay}, ${orderDay})
          when b.code = 'E_STALE' then coalesce(${depositDay}, ${withdrawalDay})
          when b.code = 'E_WITHDRAWAL_BENEFICIARY' then ${withdrawalDay}
        end as day,
        case
          when b.code = any(${PARTNER_ORDER_KEYED}::text[]) then exists (select 1 from partner_order o where o.account = ${account} and o.order_id = b.key and ${judgedForChange.partnerOrder('o', account, since)})
          when b.code = any(${EXCHANGE_ORDER_KEYED}::text[]) then ${judgedForChange.exchangeOrder(exchangeId, account, since)}
          when b.code = any(${FILL_KEYED}::text[]) then ${fillChanged}
          when b.code = 'E_SYMBOL_RULES' then ${fillChanged} or ${judgedForChange.exchangeOrder(exchangeId, account, since)}
          when b.code = 'E_STALE' then exists (select 1 from exchange_deposit d where d.account = ${account} and d.deposit_id = b.key and ${judgedForChange.payment('d', since)})
            or exists (select 1 from exchange_withdrawal w where w.account = ${account} and w.withdrawal_id = b.key and ${judgedForChange.payment('w', since)})
          when b.code = 'E_WITHDRAWAL_BENEFICIARY' then exists (select 1 from exchange_withdrawal w where w.account = ${account} and w.withdrawal_id = b.key and ${judgedForChange.payment('w', since)})
          else false
        end as changed
      ) r`.execute(db);
    const fromDay = span.from.toISOString().slice(0, 10);
    for (const r of rows.rows)
      if (r.changed === true && r.filled_in_span !== true && r.day !== null && r.day < fromDay)
        out.push({ code: r.code, key: r.key, day: r.day });
  }
  return out;
}

/**
 * Which of the given (scoped) breaks' entities are in this run's scope, asked of the store for
 * just those keys, so scope never needs the period's full key set in memory: the period's records
 * (docs/rules.md "Keys, severities, scopes"), and with `changedSince` the records judged for a
 * change since that transaction (null: every stored record; store/changes.ts judgedForChange).
 */
export async function inScopeKeys(
  db: Db,
  account: string,
  span: Span,
  breaks: readonly { code: string; key: string }[],
  changedSince?: string | null,
): Promise<Set<string>> {
  const inScope = new Set<string>();
  const keysOf = (codes: Set<string>, int8 = false) => [
    ...new Set(breaks.filter((b) => codes.has(b.code) && (!int8 || isInt8(b.key))).map((b) => b.key)),
  ];
  const mark = (codes: Set<string>, found: Iterable<string>) => {
    const set = new Set(found);
    for (const b of breaks) if (codes.has(b.code) && set.has(b.key)) inScope.add(breakId(b.code, b.key));
  };
  const changed = (condition: RawBuilder<SqlBool>) => (changedSince === undefined ? sql<SqlBool>`false` : condition);
  const since = changedSince ?? null;
  const period = (time: string) => sql<SqlBool>`(${sql.ref(time)} >= ${span.from} and ${sql.ref(time)} < ${span.to})`;
  for (const part of chunks(keysOf(PARTNER_SCOPED), READ_CHUNK)) {
    const rows = await sql<{ id: string }>`
      select o.order_id as id from partner_order o
      where o.account = ${account} and o.order_id in (${sql.join(part)})
        and (${period('o.created_at')} or ${changed(judgedForChange.partnerOrder('o', account, since))})`.execute(db);
    mark(
      PARTNER_SCOPED,
      rows.rows.map((r) => r.id),
    );
  }
  for (const part of chunks(keysOf(ORDER_SCOPED, true), READ_CHUNK)) {
    // A fill in the span, or created in it with cumQty > 0 (its fills may never arrive); or judged for a change.
    const rows = await sql<{ id: string }>`
      select k.id::text as id from unnest(${`{${part.join(',')}}`}::bigint[]) as k(id)
      where exists (select 1 from exchange_fill f where f.account = ${account} and f.ex_ord_id = k.id and ${period('f.timestamp')})
         or exists (select 1 from exchange_order x where x.account = ${account} and x.ex_ord_id = k.id and ${period('x.timestamp')} and x.cum_qty > 0)
         or ${changed(judgedForChange.exchangeOrder(sql.ref('k.id'), account, since))}`.execute(db);
    mark(
      ORDER_SCOPED,
      rows.rows.map((r) => r.id),
    );
  }
  for (const part of chunks(keysOf(FILL_SCOPED, true), READ_CHUNK)) {
    const rows = await sql<{ id: string }>`
      select f.exec_id::text as id from exchange_fill f
      where f.account = ${account} and f.exec_id = any(${`{${part.join(',')}}`}::bigint[])
        and (${period('f.timestamp')} or ${changed(judgedForChange.fill('f', account, since))})`.execute(db);
    mark(
      FILL_SCOPED,
      rows.rows.map((r) => r.id),
    );
  }
  const W = new Set(['E_WITHDRAWAL_BENEFICIARY']);
  for (const part of chunks(keysOf(W), READ_CHUNK)) {
    const rows = await sql<{ id: string }>`
      select w.withdrawal_id as id from exchange_withdrawal w
      where w.account = ${account} and w.withdrawal_id in (${sql.join(part)})
        and (${period('w.timestamp')} or ${changed(judgedForChange.payment('w', since))})`.execute(db);
    mark(
      W,
      rows.rows.map((r) => r.id),
    );
  }
  return inScope;
}

/**
 * Writes the lifecycle's rows and events (inside the caller's transaction), then, in the same
 * transaction, makes every acknowledged break whose amounts changed unexplained again
 * (reopenChangedAcknowledgements): no run can show a break as explained on amounts nobody accepted.
 */
export async function writeBreaks(
  trx: Transaction<DB>,
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
          severity: b.severity,
          currency: b.currency,
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
          severity: eb.ref('excluded.severity'),
          currency: eb.ref('excluded.currency'),
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
  // Every written break has its event, all of the one run: amounts change only through them.
  const run = events[0];
  if (run) await reopenChangedAcknowledgements(trx, account, run.runId, run.at);
}
