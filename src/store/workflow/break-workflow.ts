/** The break workflow's SQL (docs/working-breaks.md): its tables, where people stand on breaks, the locked break and
 * its workflow row, the writes of a change and its event, the explained breaks whose figures differ from the
 * acknowledged ones, list and show, and the record of an imported workbook. What a change does is decided in
 * src/workflow/, which calls these.
 */
import { sql, type ColumnType, type Generated, type Kysely, type Selectable, type Transaction } from 'kysely';
import type { Db } from '../db/database.js';
import type { BreakRow, DB } from '../db/schema.js';
import {
  breakId,
  NO_WORKFLOW,
  type Actor,
  type Amounts,
  type Break,
  type BreakEventKind,
  type BreakWorkflow,
  type WorkflowEventKind,
  type WorkflowRecord,
  type WorkflowWrite,
} from '../../domain/index.js';
import { toBreak } from '../recon/break-rows.js';

// ------------------------------------------------------------------ tables (sql/0011_break_workflow.sql)

type Time = ColumnType<Date, Date | string | undefined, Date | string>;

export interface BreakWorkflowTable {
  account: string;
  code: string;
  key: string;
  status: ColumnType<string, string | undefined, string>;
  owner: string | null;
  explanation: string | null;
  ack_expected: string | null;
  ack_actual: string | null;
  ack_difference: string | null;
  ack_currency: string | null;
  updated_at: Time;
}

export interface BreakWorkflowEventTable {
  id: Generated<string>;
  account: string;
  code: string;
  key: string;
  kind: string;
  by: string;
  at: Time;
  text: string | null;
  source: string;
  expected: string | null;
  actual: string | null;
  difference: string | null;
}

export interface BreakImportTable {
  account: string;
  run_id: string;
  sha256: string;
  by: string;
  at: Time;
  applied: number;
  skipped: number;
}

/** The store's schema with the workflow's tables (kept here, beside the only code that uses them). */
export interface WorkflowDB extends DB {
  break_workflow: BreakWorkflowTable;
  break_workflow_event: BreakWorkflowEventTable;
  break_import: BreakImportTable;
}

type WDb = Kysely<WorkflowDB>;
const wdb = (db: Db | Transaction<DB>): WDb => db as unknown as WDb;
type WorkflowRow = Selectable<BreakWorkflowTable>;

// ------------------------------------------------------------------ reading the workflow

function toWorkflow(
  r: WorkflowRow | undefined,
  note: { text: string | null; by: string; at: Date } | undefined,
): BreakWorkflow {
  if (!r) return { ...NO_WORKFLOW };
  return {
    status: r.status === 'explained' ? 'explained' : 'unexplained',
    owner: r.owner,
    explanation: r.explanation,
    lastNote: note?.text ?? null,
    lastNoteBy: note?.by ?? null,
    lastNoteAt: note?.at ?? null,
    updatedAt: r.updated_at,
  };
}

/**
 * The workflow of breaks of the account: of its open breaks (`open`), or of the given ones.
 * lastNote is the newest note or acknowledgement reason, whichever came last (docs/working-breaks.md). Breaks nobody
 * worked on are absent (NO_WORKFLOW).
 */
export async function workflowsOf(
  db: Db | Transaction<DB>,
  account: string,
  which: 'open' | readonly { code: string; key: string }[],
): Promise<Map<string, BreakWorkflow>> {
  const out = new Map<string, BreakWorkflow>();
  if (which !== 'open' && which.length === 0) return out;
  const filter =
    which === 'open'
      ? sql`exists (select 1 from break b
          where b.account = w.account and b.code = w.code and b.key = w.key and b.status = 'open')`
      : sql`(w.code, w.key) in
          (select * from unnest(${which.map((b) => b.code)}::text[], ${which.map((b) => b.key)}::text[]))`;
  const rows = await sql<WorkflowRow & { note_text: string | null; note_by: string | null; note_at: Date | null }>`
    select w.*, n.text as note_text, n.by as note_by, n.at as note_at
    from break_workflow w
    left join lateral (
      select e.text, e.by, e.at from break_workflow_event e
      where e.account = w.account and e.code = w.code and e.key = w.key and e.kind in ('noted', 'acknowledged')
      order by e.id desc limit 1
    ) n on true
    where w.account = ${account} and ${filter}`.execute(db);
  for (const r of rows.rows)
    out.set(
      breakId(r.code, r.key),
      toWorkflow(r, r.note_by ? { text: r.note_text, by: r.note_by, at: r.note_at as Date } : undefined),
    );
  return out;
}

// ------------------------------------------------------------------ changes

/** The stored break, locked for the caller's transaction when `lock`; undefined when there is none. */
async function storedBreak(
  db: Db,
  account: string,
  code: string,
  key: string,
  lock: boolean,
): Promise<Break | undefined> {
  const row = await db
    .selectFrom('break')
    .selectAll()
    .where((eb) => eb.and({ account, code, key }))
    .$if(lock, (q) => q.forUpdate())
    .executeTakeFirst();
  return row ? toBreak(row) : undefined;
}

/** The break, locked for the caller's transaction (a concurrent reconcile waits, then compares against this change). */
export async function lockBreak(db: Db, account: string, code: string, key: string): Promise<Break | undefined> {
  return storedBreak(db, account, code, key, true);
}

const recordOf = (r: WorkflowRow): WorkflowRecord => ({
  status: r.status === 'explained' ? 'explained' : 'unexplained',
  owner: r.owner,
  explanation: r.explanation,
  acknowledged: {
    expected: r.ack_expected,
    actual: r.ack_actual,
    difference: r.ack_difference,
    currency: r.ack_currency,
  },
});

/** A break's workflow row; undefined when nobody worked on it. */
export async function workflowRecordOf(
  db: Db,
  account: string,
  code: string,
  key: string,
): Promise<WorkflowRecord | undefined> {
  const r = await wdb(db)
    .selectFrom('break_workflow')
    .selectAll()
    .where((eb) => eb.and({ account, code, key }))
    .executeTakeFirst();
  return r ? recordOf(r) : undefined;
}

/** The workflow row's columns a change sets. */
function columnsOf(set: WorkflowWrite['set']): Partial<Omit<WorkflowRow, 'account' | 'code' | 'key'>> {
  const { acknowledged, ...rest } = set;
  if (!acknowledged) return rest;
  return {
    ...rest,
    ack_expected: acknowledged.expected,
    ack_actual: acknowledged.actual,
    ack_difference: acknowledged.difference,
    ack_currency: acknowledged.currency,
  };
}

/**
 * Writes a change to break `b`'s workflow (the row created when there is none) and its event, with the break's
 * figures of now, both at the actor's time (default: now).
 */
export async function recordWorkflowChange(
  db: Db,
  account: string,
  b: Break,
  write: WorkflowWrite,
  actor: Actor,
): Promise<void> {
  const at = actor.at ?? new Date();
  const set = columnsOf(write.set);
  await wdb(db)
    .insertInto('break_workflow')
    .values({
      account,
      code: b.code,
      key: b.key,
      status: 'unexplained',
      owner: null,
      explanation: null,
      ack_expected: null,
      ack_actual: null,
      ack_difference: null,
      ack_currency: null,
      ...set,
      updated_at: at,
    })
    .onConflict((oc) => oc.columns(['account', 'code', 'key']).doUpdateSet({ ...set, updated_at: at }))
    .execute();
  await wdb(db)
    .insertInto('break_workflow_event')
    .values({
      account,
      code: b.code,
      key: b.key,
      kind: write.event.kind,
      by: actor.by,
      at,
      text: write.event.text,
      source: actor.source,
      expected: b.expected,
      actual: b.actual,
      difference: b.difference,
    })
    .execute();
}

/**
 * The explained breaks of the account whose figures are not, as exact text, the acknowledged ones: the candidates
 * for a reopen (which figures an acknowledgement holds to is the workflow's to say: src/workflow/acknowledgement.ts).
 */
export async function explainedWithChangedFigures(
  db: Db,
  account: string,
): Promise<Array<{ break: Break; acknowledged: Amounts }>> {
  const rows = await wdb(db)
    .selectFrom('break_workflow as w')
    .innerJoin('break as b', (j) =>
      j.onRef('b.account', '=', 'w.account').onRef('b.code', '=', 'w.code').onRef('b.key', '=', 'w.key'),
    )
    .selectAll('b')
    .select(['w.ack_expected', 'w.ack_actual', 'w.ack_difference', 'w.ack_currency'])
    .where('w.account', '=', account)
    .where('w.status', '=', 'explained')
    .where(
      sql<boolean>`(b.expected, b.actual, b.difference, b.currency)
        is distinct from (w.ack_expected, w.ack_actual, w.ack_difference, w.ack_currency)`,
    )
    .execute();
  return rows.map((r) => ({
    break: toBreak(r as unknown as BreakRow),
    acknowledged: {
      expected: r.ack_expected,
      actual: r.ack_actual,
      difference: r.ack_difference,
      currency: r.ack_currency,
    },
  }));
}

// ------------------------------------------------------------------ list and show

export type ListStatus = 'open' | 'explained' | 'unexplained' | 'resolved' | 'all';
export const LIST_STATUSES: readonly ListStatus[] = ['open', 'explained', 'unexplained', 'resolved', 'all'];

export interface ListFilter {
  status: ListStatus;
  rule?: string;
  owner?: string;
  limit: number;
}

export type WorkedBreak = Break & { workflow: BreakWorkflow };

/** Breaks of the account with their workflow, by severity then code and key; `more`: the limit cut the list. */
export async function listBreaks(
  db: Db,
  account: string,
  filter: ListFilter,
): Promise<{ breaks: WorkedBreak[]; more: boolean }> {
  const rows = await wdb(db)
    .selectFrom('break as b')
    .leftJoin('break_workflow as w', (j) =>
      j.onRef('w.account', '=', 'b.account').onRef('w.code', '=', 'b.code').onRef('w.key', '=', 'b.key'),
    )
    .selectAll('b')
    .where('b.account', '=', account)
    .$if(filter.status === 'open' || filter.status === 'explained' || filter.status === 'unexplained', (qb) =>
      qb.where('b.status', '=', 'open'),
    )
    .$if(filter.status === 'resolved', (qb) => qb.where('b.status', '=', 'resolved'))
    .$if(filter.status === 'explained', (qb) => qb.where('w.status', '=', 'explained'))
    .$if(filter.status === 'unexplained', (qb) =>
      qb.where(sql<boolean>`coalesce(w.status, 'unexplained') = 'unexplained'`),
    )
    .$if(filter.rule !== undefined, (qb) => qb.where('b.code', '=', filter.rule as string))
    .$if(filter.owner !== undefined, (qb) => qb.where('w.owner', '=', filter.owner as string))
    .orderBy(sql`case b.severity when 'high' then 0 when 'medium' then 1 when 'low' then 2 else 3 end`)
    .orderBy('b.code')
    .orderBy('b.key')
    .limit(filter.limit + 1)
    .execute();
  const more = rows.length > filter.limit;
  const breaks = rows.slice(0, filter.limit).map((r) => toBreak(r as unknown as BreakRow));
  const workflows = await workflowsOf(db, account, breaks);
  return {
    breaks: breaks.map((b) => ({ ...b, workflow: workflows.get(breakId(b.code, b.key)) ?? { ...NO_WORKFLOW } })),
    more,
  };
}

/** One entry of a break's history: a run's lifecycle event, or a person's (or a reopen's) workflow event. */
export type HistoryEntry =
  | {
      type: 'lifecycle';
      at: Date;
      event: BreakEventKind;
      runId: string;
      by: 'ramp-recon';
      expected: string | null;
      actual: string | null;
      difference: string | null;
    }
  | {
      type: 'workflow';
      at: Date;
      event: WorkflowEventKind;
      by: string;
      source: string;
      text: string | null;
      expected: string | null;
      actual: string | null;
      difference: string | null;
    };

export interface BreakHistory {
  break: WorkedBreak;
  /** Oldest first: the lifecycle (break_event) and the workflow (break_workflow_event) merged by time. */
  events: HistoryEntry[];
}

/** A stored break, its workflow and its whole history; undefined when there is no such break. */
export async function breakHistory(
  db: Db,
  account: string,
  code: string,
  key: string,
): Promise<BreakHistory | undefined> {
  const b = await storedBreak(db, account, code, key, false);
  if (!b) return undefined;
  const workflow = (await workflowsOf(db, account, [b])).get(breakId(code, key)) ?? { ...NO_WORKFLOW };
  const lifecycle = await db
    .selectFrom('break_event')
    .selectAll()
    .where((eb) => eb.and({ account, code, key }))
    .orderBy('at')
    .orderBy('id')
    .execute();
  const flow = await wdb(db)
    .selectFrom('break_workflow_event')
    .selectAll()
    .where((eb) => eb.and({ account, code, key }))
    .orderBy('id')
    .execute();
  const entries: Array<HistoryEntry & { order: number }> = [
    ...lifecycle.map((e, i) => ({
      type: 'lifecycle' as const,
      at: e.at,
      event: e.event as BreakEventKind,
      runId: e.run_id,
      by: 'ramp-recon' as const,
      expected: e.expected,
      actual: e.actual,
      difference: e.difference,
      order: i,
    })),
    ...flow.map((e, i) => ({
      type: 'workflow' as const,
      at: e.at,
      event: e.kind as WorkflowEventKind,
      by: e.by,
      source: e.source,
      text: e.text,
      expected: e.expected,
      actual: e.actual,
      difference: e.difference,
      order: lifecycle.length + i,
    })),
  ];
  // By time; at the same instant a run's lifecycle comes before what it caused (a reopen), then recording order.
  entries.sort((x, y) => x.at.getTime() - y.at.getTime() || x.order - y.order);
  return { break: { ...b, workflow }, events: entries.map(({ order: _order, ...e }) => e) };
}

// ------------------------------------------------------------------ the record of an imported workbook

/** When and by whom the file with this SHA-256 was imported into the account; undefined when never. */
export async function importOf(db: Db, account: string, sha256: string): Promise<{ at: Date; by: string } | undefined> {
  return wdb(db)
    .selectFrom('break_import')
    .select(['at', 'by'])
    .where('account', '=', account)
    .where('sha256', '=', sha256)
    .executeTakeFirst();
}

/** Records that a returned workbook was imported (a file, by its SHA-256, is applied once). */
export async function recordImport(
  db: Db,
  i: { account: string; runId: string; sha256: string; by: string; at: Date; applied: number; skipped: number },
): Promise<void> {
  await wdb(db)
    .insertInto('break_import')
    .values({
      account: i.account,
      run_id: i.runId,
      sha256: i.sha256,
      by: i.by,
      at: i.at,
      applied: i.applied,
      skipped: i.skipped,
    })
    .execute();
}
