/** The break repository: the one row -> Break mapper, open breaks (for a run, each with inPeriod), a run's changes, the lifecycle's reads and writes. */
import { sql, type RawBuilder, type Transaction } from 'kysely';
import type { Db } from './database.js';
import type { BreakRow, DB } from './schema.js';
import { breakId, NO_WORKFLOW, type Break, type BreakEvent, type DetectedBreak, type ReportedBreak, type Severity } from '../domain/index.js';
import type { BreakRef, Changes, RunInfo } from '../report/model.js';
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
    .$if(order === 'severity', (qb) => qb.orderBy(sql`case severity when 'high' then 0 when 'medium' then 1 when 'low' then 2 else 3 end`).orderBy('code').orderBy('key'))
    .execute();
  return rows.map(toBreak);
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
  for (const d of detected) if (!byId.has(breakId(d.code, d.key))) keysByCode.set(d.code, [...(keysByCode.get(d.code) ?? []), d.key]);
  for (const [code, keys] of keysByCode)
    for (const part of chunks(keys, READ_CHUNK)) {
      const rows = await db.selectFrom('break').selectAll().where('account', '=', account).where('code', '=', code).where('key', 'in', part).execute();
      for (const r of rows) byId.set(breakId(r.code, r.key), toBreak(r));
    }
  return [...byId.values()];
}

const PARTNER_SCOPED = new Set(['P_FEE_USD', 'P_AMOUNT_USD', 'P_PARTNER_FEE_RATE', 'P_FEE_BOUNDS', 'P_PRECISION', 'P_STATE', 'P_WEBHOOK_GAP', 'X_DEPOSIT_MISSING', 'X_DEPOSIT_AMOUNT']);
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
/** An exchange id as the key: the pattern a bigint column can be compared with (ids are near 10^12). */
const EXCHANGE_ID = '^[0-9]{1,18}$';
const DAY_AT_END = ':[0-9]{4}-[0-9]{2}-[0-9]{2}$';

/**
 * Every open break of the run's account, whatever run found it, each with inPeriod: whether its
 * entity belongs to the run's period, decided in this one query for every break (docs/rules.md
 * "This period or carried over"). Unordered, or by severity then code and key (the JSON summary).
 * A run without a period has no break of its period.
 */
export async function openBreaksOfRun(db: Db, run: ReportedRun, order: 'none' | 'severity' = 'none'): Promise<ReportedBreak[]> {
  // Where people stand on them (README "Working breaks"): only breaks someone worked on have a row.
  const workflows = await workflowsOf(db, run.account, 'open');
  const workflow = (b: Break) => workflows.get(breakId(b.code, b.key)) ?? { ...NO_WORKFLOW };
  if (!run.periodFrom || !run.periodTo) return (await loadOpenBreaks(db, run.account, order)).map((b) => ({ ...b, inPeriod: false, workflow: workflow(b) }));
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
    ${order === 'severity' ? sql`order by case b.severity when 'high' then 0 when 'medium' then 1 when 'low' then 2 else 3 end, b.code, b.key` : sql.raw('')}`.execute(db);
  return rows.rows.map((r) => {
    const b = toBreak(r);
    return { ...b, inPeriod: r.in_period === true, workflow: workflow(b) };
  });
}

/**
 * Which of the given (scoped) breaks' entities are in this run's scope, asked of the store for
 * just those keys, so scope never needs the period's full key set in memory.
 */
export async function inScopeKeys(db: Db, account: string, span: Span, breaks: readonly { code: string; key: string }[]): Promise<Set<string>> {
  const inScope = new Set<string>();
  const keysOf = (codes: Set<string>, int8 = false) => [...new Set(breaks.filter((b) => codes.has(b.code) && (!int8 || isInt8(b.key))).map((b) => b.key))];
  const mark = (codes: Set<string>, found: Iterable<string>) => {
    const set = new Set(found);
    for (const b of breaks) if (codes.has(b.code) && set.has(b.key)) inScope.add(breakId(b.code, b.key));
  };
  for (const part of chunks(keysOf(PARTNER_SCOPED), READ_CHUNK)) {
    const rows = await db.selectFrom('partner_order').select('order_id').where('account', '=', account).where('order_id', 'in', part).where('created_at', '>=', span.from).where('created_at', '<', span.to).execute();
    mark(PARTNER_SCOPED, rows.map((r) => r.order_id));
  }
  for (const part of chunks(keysOf(ORDER_SCOPED, true), READ_CHUNK)) {
    const rows = await db.selectFrom('exchange_fill').select('ex_ord_id').distinct().where('account', '=', account).where('ex_ord_id', 'in', part).where('timestamp', '>=', span.from).where('timestamp', '<', span.to).execute();
    mark(ORDER_SCOPED, rows.map((r) => r.ex_ord_id));
    // Orders created in the period with cumQty > 0 are in scope without a fill (their fills may never arrive).
    const created = await db.selectFrom('exchange_order').select('ex_ord_id').where('account', '=', account).where('ex_ord_id', 'in', part).where('timestamp', '>=', span.from).where('timestamp', '<', span.to).where(sql<boolean>`cum_qty > 0`).execute();
    mark(ORDER_SCOPED, created.map((r) => r.ex_ord_id));
  }
  for (const part of chunks(keysOf(FILL_SCOPED, true), READ_CHUNK)) {
    const rows = await db.selectFrom('exchange_fill').select('exec_id').where('account', '=', account).where('exec_id', 'in', part).where('timestamp', '>=', span.from).where('timestamp', '<', span.to).execute();
    mark(FILL_SCOPED, rows.map((r) => r.exec_id));
  }
  const W = new Set(['E_WITHDRAWAL_BENEFICIARY']);
  for (const part of chunks(keysOf(W), READ_CHUNK)) {
    const rows = await db.selectFrom('exchange_withdrawal').select('withdrawal_id').where('account', '=', account).where('withdrawal_id', 'in', part).where('timestamp', '>=', span.from).where('timestamp', '<', span.to).execute();
    mark(W, rows.map((r) => r.withdrawal_id));
  }
  return inScope;
}

/**
 * Writes the lifecycle's rows and events (inside the caller's transaction), then, in the same
 * transaction, makes every acknowledged break whose amounts changed unexplained again
 * (reopenChangedAcknowledgements): no run can show a break as explained on amounts nobody accepted.
 */
export async function writeBreaks(trx: Transaction<DB>, account: string, upserts: readonly Break[], events: readonly BreakEvent[]): Promise<void> {
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
      .values(part.map((e) => ({ account, code: e.code, key: e.key, run_id: e.runId, event: e.event, expected: e.expected, actual: e.actual, difference: e.difference, at: e.at })))
      .execute();
  }
  // Every written break has its event, all of the one run: amounts change only through them.
  const run = events[0];
  if (run) await reopenChangedAcknowledgements(trx, account, run.runId, run.at);
}
