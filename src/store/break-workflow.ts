/** The break workflow's store (docs/working-breaks.md): ack, unack, note, assign, list, show, reopen on changed
 * amounts, and the import of a returned workbook.
 */
import { sql, type ColumnType, type Generated, type Kysely, type Selectable, type Transaction } from 'kysely';
import type { Db } from './database.js';
import type { BreakRow, DB } from './schema.js';
import { AppError, EXIT } from '../errors.js';
import {
  amountsAsReported,
  breakId,
  NO_WORKFLOW,
  type Break,
  type BreakEventKind,
  type BreakWorkflow,
  type ReturnedRow,
  type WorkflowEventKind,
  type WorkflowStatus,
} from '../domain/index.js';
import { toBreak } from './break-rows.js';

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

// ------------------------------------------------------------------ errors, actors, amounts

/** A workflow request that cannot be done (unknown break, resolved break, empty reason...): exit 2, one line. */
export class BreakWorkflowError extends AppError {
  constructor(message: string) {
    super('BREAK_WORKFLOW', message, EXIT.usage);
  }
}

/** Who records a change and through what: `cli`, or `workbook:<run id>` for a row of a returned workbook. */
export interface Actor {
  by: string;
  source: string;
  /** When (default: now). */
  at?: Date;
}

/** The figures an acknowledgement accepts. */
export type Amounts = Pick<Break, 'expected' | 'actual' | 'difference' | 'currency'>;

/**
 * Rules whose actual and difference are ages (hours since a state began): they grow at every run,
 * so only the limit (expected) and the currency are the "amounts" an acknowledgement holds to.
 * Otherwise an acknowledged stuck deposit would be reopened by every run.
 */
export const AGE_RULES: ReadonlySet<string> = new Set(['P_STALE', 'E_STALE']);

/** Whether two sets of a break's figures are the same for its acknowledgement (exact text; ages aside, AGE_RULES). */
export function sameAmounts(code: string, a: Amounts, b: Amounts): boolean {
  const same = (x: string | null, y: string | null) => (x ?? '') === (y ?? '');
  if (!same(a.expected, b.expected) || !same(a.currency, b.currency)) return false;
  return AGE_RULES.has(code) || (same(a.actual, b.actual) && same(a.difference, b.difference));
}

/**
 * The figures of an "Amounts as reported" cell (amountsAsReported in src/report/break-text.ts); null when the text is
 * not four ` | `-separated parts.
 */
export function parseAmountsText(text: string): Amounts | null {
  // The cell may come back trimmed (a leading empty expected): split on the bars and their spaces.
  const parts = text.split(/\s*\|\s*/);
  if (parts.length !== 4) return null;
  const [expected, actual, difference, currency] = parts.map((p) => (p.trim() === '' ? null : p.trim()));
  return {
    expected: expected ?? null,
    actual: actual ?? null,
    difference: difference ?? null,
    currency: currency ?? null,
  };
}

/** "1.00 / 1.50 / 0.50 EUR": a break's figures for a sentence; '-' for a missing one. */
export function amountsWords(b: Amounts): string {
  return `${[b.expected, b.actual, b.difference].map((v) => v ?? '-').join(' / ')}${b.currency ? ` ${b.currency}` : ''}`;
}

const describeBreak = (code: string, key: string) => `break ${code} ${key}`;

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
 * lastNote is the newest note or acknowledgement reason, whichever came last (docs/working-breaks.md). Breaks nobody worked on are absent (NO_WORKFLOW).
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
      ? sql`exists (select 1 from break b where b.account = w.account and b.code = w.code and b.key = w.key and b.status = 'open')`
      : sql`(w.code, w.key) in (select * from unnest(${which.map((b) => b.code)}::text[], ${which.map((b) => b.key)}::text[]))`;
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

type Trx = Transaction<WorkflowDB>;

/**
 * The break, locked for this transaction (so a concurrent reconcile waits, then compares against this ack), and its
 * workflow row.
 */
async function lockBreak(
  trx: Trx,
  account: string,
  code: string,
  key: string,
): Promise<{ b: Break; w: WorkflowRow | undefined }> {
  const row = await trx
    .selectFrom('break')
    .selectAll()
    .where('account', '=', account)
    .where('code', '=', code)
    .where('key', '=', key)
    .forUpdate()
    .executeTakeFirst();
  if (!row)
    throw new BreakWorkflowError(
      `unknown ${describeBreak(code, key)}: no such break in account ${account} (\`ramp-recon breaks list --status all\` lists them)`,
    );
  const w = await trx
    .selectFrom('break_workflow')
    .selectAll()
    .where('account', '=', account)
    .where('code', '=', code)
    .where('key', '=', key)
    .executeTakeFirst();
  return { b: toBreak(row as BreakRow), w };
}

async function addEvent(
  trx: Trx,
  account: string,
  b: Break,
  kind: WorkflowEventKind,
  text: string | null,
  actor: Actor,
): Promise<void> {
  await trx
    .insertInto('break_workflow_event')
    .values({
      account,
      code: b.code,
      key: b.key,
      kind,
      by: actor.by,
      at: actor.at ?? new Date(),
      text,
      source: actor.source,
      expected: b.expected,
      actual: b.actual,
      difference: b.difference,
    })
    .execute();
}

async function upsertWorkflow(
  trx: Trx,
  account: string,
  b: Break,
  set: Partial<Omit<WorkflowRow, 'account' | 'code' | 'key'>>,
  at: Date,
): Promise<void> {
  await trx
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
}

const required = (what: string, text: string | null | undefined): string => {
  const t = (text ?? '').trim();
  if (!t) throw new BreakWorkflowError(`${what} must not be empty`);
  return t;
};

/** What a change did: false when the break already stood so (nothing recorded). */
export interface Change {
  changed: boolean;
  code: string;
  key: string;
  workflow: { status: WorkflowStatus; owner: string | null; explanation: string | null };
}

const changeOf = (
  b: Break,
  changed: boolean,
  w: { status: string; owner: string | null; explanation: string | null } | undefined,
): Change => ({
  changed,
  code: b.code,
  key: b.key,
  workflow: {
    status: w?.status === 'explained' ? 'explained' : 'unexplained',
    owner: w?.owner ?? null,
    explanation: w?.explanation ?? null,
  },
});

async function ackIn(
  trx: Trx,
  account: string,
  b: Break,
  w: WorkflowRow | undefined,
  reason: string,
  actor: Actor,
): Promise<Change> {
  if (b.status !== 'open')
    throw new BreakWorkflowError(
      `${describeBreak(b.code, b.key)} is not open (resolved in run ${b.resolvedRun ?? '?'}): only an open break can be acknowledged`,
    );
  const ackAmounts = {
    expected: w?.ack_expected ?? null,
    actual: w?.ack_actual ?? null,
    difference: w?.ack_difference ?? null,
    currency: w?.ack_currency ?? null,
  };
  if (w?.status === 'explained' && w.explanation === reason && sameAmounts(b.code, ackAmounts, b))
    return changeOf(b, false, w);
  const at = actor.at ?? new Date();
  await upsertWorkflow(
    trx,
    account,
    b,
    {
      status: 'explained',
      explanation: reason,
      ack_expected: b.expected,
      ack_actual: b.actual,
      ack_difference: b.difference,
      ack_currency: b.currency,
    },
    at,
  );
  await addEvent(trx, account, b, 'acknowledged', reason, { ...actor, at });
  return changeOf(b, true, { status: 'explained', owner: w?.owner ?? null, explanation: reason });
}

async function unackIn(
  trx: Trx,
  account: string,
  b: Break,
  w: WorkflowRow | undefined,
  reason: string | null,
  actor: Actor,
): Promise<Change> {
  if (w?.status !== 'explained') return changeOf(b, false, w);
  const at = actor.at ?? new Date();
  await upsertWorkflow(
    trx,
    account,
    b,
    {
      status: 'unexplained',
      explanation: null,
      ack_expected: null,
      ack_actual: null,
      ack_difference: null,
      ack_currency: null,
    },
    at,
  );
  await addEvent(trx, account, b, 'unacknowledged', reason, { ...actor, at });
  return changeOf(b, true, { status: 'unexplained', owner: w.owner, explanation: null });
}

async function noteIn(
  trx: Trx,
  account: string,
  b: Break,
  w: WorkflowRow | undefined,
  text: string,
  actor: Actor,
): Promise<Change> {
  const at = actor.at ?? new Date();
  await upsertWorkflow(trx, account, b, {}, at);
  await addEvent(trx, account, b, 'noted', text, { ...actor, at });
  return changeOf(b, true, w);
}

async function assignIn(
  trx: Trx,
  account: string,
  b: Break,
  w: WorkflowRow | undefined,
  owner: string | null,
  actor: Actor,
): Promise<Change> {
  if ((w?.owner ?? null) === owner) return changeOf(b, false, w);
  const at = actor.at ?? new Date();
  await upsertWorkflow(trx, account, b, { owner }, at);
  await addEvent(trx, account, b, 'assigned', owner, { ...actor, at });
  return changeOf(b, true, { status: w?.status ?? 'unexplained', owner, explanation: w?.explanation ?? null });
}

function change<T>(db: Db, fn: (trx: Trx) => Promise<T>): Promise<T> {
  return wdb(db).transaction().execute(fn);
}

/**
 * Acknowledges an open break with a reason: explained while its amounts stay those of now. A
 * resolved or unknown break is an error naming it. The same reason on the same amounts records nothing.
 */
export async function ack(
  db: Db,
  account: string,
  code: string,
  key: string,
  reason: string,
  actor: Actor,
): Promise<Change> {
  const text = required('the reason', reason);
  return change(db, async (trx) => {
    const { b, w } = await lockBreak(trx, account, code, key);
    return ackIn(trx, account, b, w, text, actor);
  });
}

/** Takes an acknowledgement back (the break is unexplained again); nothing recorded when it was not explained. */
export async function unack(
  db: Db,
  account: string,
  code: string,
  key: string,
  reason: string | null,
  actor: Actor,
): Promise<Change> {
  const text = reason?.trim() ? reason.trim() : null;
  return change(db, async (trx) => {
    const { b, w } = await lockBreak(trx, account, code, key);
    return unackIn(trx, account, b, w, text, actor);
  });
}

/** Adds a note to a stored break (open or resolved: a resolved break keeps its notes and takes new ones). */
export async function note(
  db: Db,
  account: string,
  code: string,
  key: string,
  text: string,
  actor: Actor,
): Promise<Change> {
  const t = required('the note', text);
  return change(db, async (trx) => {
    const { b, w } = await lockBreak(trx, account, code, key);
    return noteIn(trx, account, b, w, t, actor);
  });
}

/** Sets (or with null clears) a stored break's owner; the same owner records nothing. */
export async function assign(
  db: Db,
  account: string,
  code: string,
  key: string,
  owner: string | null,
  actor: Actor,
): Promise<Change> {
  const o = owner === null ? null : required('the owner', owner);
  return change(db, async (trx) => {
    const { b, w } = await lockBreak(trx, account, code, key);
    return assignIn(trx, account, b, w, o, actor);
  });
}

/**
 * Inside the transaction that writes a run's breaks: every explained break whose amounts are no
 * longer the acknowledged ones becomes unexplained again, with a 'reopened' event by ramp-recon
 * saying what changed (its explanation stays, for the reader). Returns how many were reopened.
 */
export async function reopenChangedAcknowledgements(
  trx: Transaction<DB>,
  account: string,
  runId: string,
  at: Date = new Date(),
): Promise<number> {
  const t = trx as unknown as Trx;
  const candidates = await t
    .selectFrom('break_workflow as w')
    .innerJoin('break as b', (j) =>
      j.onRef('b.account', '=', 'w.account').onRef('b.code', '=', 'w.code').onRef('b.key', '=', 'w.key'),
    )
    .selectAll('b')
    .select(['w.ack_expected', 'w.ack_actual', 'w.ack_difference', 'w.ack_currency'])
    .where('w.account', '=', account)
    .where('w.status', '=', 'explained')
    .where(
      sql<boolean>`(b.expected, b.actual, b.difference, b.currency) is distinct from (w.ack_expected, w.ack_actual, w.ack_difference, w.ack_currency)`,
    )
    .execute();
  let reopened = 0;
  for (const r of candidates) {
    const b = toBreak(r as unknown as BreakRow);
    const acked = {
      expected: r.ack_expected,
      actual: r.ack_actual,
      difference: r.ack_difference,
      currency: r.ack_currency,
    };
    if (sameAmounts(b.code, acked, b)) continue;
    await t
      .updateTable('break_workflow')
      .set({ status: 'unexplained', updated_at: at })
      .where('account', '=', account)
      .where('code', '=', b.code)
      .where('key', '=', b.key)
      .execute();
    await addEvent(t, account, b, 'reopened', `amounts changed: ${amountsWords(acked)} -> ${amountsWords(b)}`, {
      by: 'ramp-recon',
      source: `run:${runId}`,
      at,
    });
    reopened += 1;
  }
  return reopened;
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

/** A stored break, its workflow and its whole history; an unknown break is an error naming it. */
export async function showBreak(db: Db, account: string, code: string, key: string): Promise<BreakHistory> {
  const row = await db
    .selectFrom('break')
    .selectAll()
    .where('account', '=', account)
    .where('code', '=', code)
    .where('key', '=', key)
    .executeTakeFirst();
  if (!row)
    throw new BreakWorkflowError(
      `unknown ${describeBreak(code, key)}: no such break in account ${account} (\`ramp-recon breaks list --status all\` lists them)`,
    );
  const b = toBreak(row);
  const workflow = (await workflowsOf(db, account, [b])).get(breakId(code, key)) ?? { ...NO_WORKFLOW };
  const lifecycle = await db
    .selectFrom('break_event')
    .selectAll()
    .where('account', '=', account)
    .where('code', '=', code)
    .where('key', '=', key)
    .orderBy('at')
    .orderBy('id')
    .execute();
  const flow = await wdb(db)
    .selectFrom('break_workflow_event')
    .selectAll()
    .where('account', '=', account)
    .where('code', '=', code)
    .where('key', '=', key)
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

// ------------------------------------------------------------------ import of a returned workbook

export type ImportAction =
  | { kind: 'assigned'; owner: string }
  | { kind: 'unacknowledged' }
  | { kind: 'acknowledged'; reason: string }
  | { kind: 'noted'; text: string };

export interface ImportResult {
  runId: string;
  sha256: string;
  by: string;
  /** Set when this file was imported before: nothing was done. */
  alreadyImported: { at: Date; by: string } | null;
  applied: Array<{ row: number; code: string; key: string; actions: ImportAction[] }>;
  skipped: Array<{ row: number; code: string; key: string; reason: string }>;
  /** Filled-in rows that asked for nothing new (the pre-filled owner and explanation, unchanged). */
  unchanged: number;
}

type RowPlan = { actions: ImportAction[] } | { skip: string };

/** What a filled-in row asks for against the break's workflow now: only what changes state. */
export function planRow(
  r: ReturnedRow,
  w: { status: WorkflowStatus; owner: string | null; explanation: string | null; lastNote: string | null },
): RowPlan {
  const answer = r.explained?.toLowerCase() ?? null;
  if (answer !== null && answer !== 'yes' && answer !== 'no')
    return { skip: `Explained? must be yes or no (got "${r.explained}")` };
  if (answer === 'yes' && !r.explanation) return { skip: 'Explained? is yes but the Explanation is empty' };
  const actions: ImportAction[] = [];
  if (r.owner && r.owner !== w.owner) actions.push({ kind: 'assigned', owner: r.owner });
  if (answer === 'no' && w.status === 'explained') actions.push({ kind: 'unacknowledged' });
  if (answer === 'yes' && r.explanation && !(w.status === 'explained' && w.explanation === r.explanation))
    actions.push({ kind: 'acknowledged', reason: r.explanation });
  // The sheet pre-fills Explanation with the current one: only a text that is news becomes a note.
  if (answer !== 'yes' && r.explanation && r.explanation !== w.lastNote && r.explanation !== w.explanation)
    actions.push({ kind: 'noted', text: r.explanation });
  return { actions };
}

/**
 * Records the filled-in rows of a returned workbook of run `runId` (docs/working-breaks.md), in
 * one transaction: per row only what changes state; rows whose break is gone or whose amounts
 * changed since that workbook are skipped with the reason. A file (by sha256) is applied once.
 */
export async function importReturnedRows(
  db: Db,
  account: string,
  input: { runId: string; sha256: string; rows: readonly ReturnedRow[]; by: string; at?: Date },
): Promise<ImportResult> {
  const run = await db.selectFrom('run').select(['id', 'account']).where('id', '=', input.runId).executeTakeFirst();
  if (!run || run.account !== account)
    throw new BreakWorkflowError(
      `the workbook is of run ${input.runId}, which account ${account} does not have: import it into the database that wrote it`,
    );
  const at = input.at ?? new Date();
  const actor: Actor = { by: input.by, source: `workbook:${input.runId}`, at };
  const result: ImportResult = {
    runId: input.runId,
    sha256: input.sha256,
    by: input.by,
    alreadyImported: null,
    applied: [],
    skipped: [],
    unchanged: 0,
  };
  return change(db, async (trx) => {
    const done = await trx
      .selectFrom('break_import')
      .select(['at', 'by'])
      .where('account', '=', account)
      .where('sha256', '=', input.sha256)
      .executeTakeFirst();
    if (done) return { ...result, alreadyImported: { at: done.at, by: done.by } };
    const filled = input.rows.filter((r) => r.owner || r.explanation || r.explained);
    const workflows = await workflowsOf(trx as unknown as Db, account, filled);
    for (const r of filled) {
      const row = await trx
        .selectFrom('break')
        .selectAll()
        .where('account', '=', account)
        .where('code', '=', r.code)
        .where('key', '=', r.key)
        .forUpdate()
        .executeTakeFirst();
      if (!row) {
        result.skipped.push({ row: r.row, code: r.code, key: r.key, reason: 'unknown: no such break' });
        continue;
      }
      const b = toBreak(row as BreakRow);
      const plan = planRow(r, workflows.get(breakId(r.code, r.key)) ?? NO_WORKFLOW);
      if ('skip' in plan) {
        result.skipped.push({ row: r.row, code: r.code, key: r.key, reason: plan.skip });
        continue;
      }
      if (plan.actions.length === 0) {
        result.unchanged += 1;
        continue;
      }
      if (b.status !== 'open') {
        result.skipped.push({
          row: r.row,
          code: r.code,
          key: r.key,
          reason: `gone: resolved in run ${b.resolvedRun ?? '?'}`,
        });
        continue;
      }
      const then = r.amounts === null ? null : parseAmountsText(r.amounts);
      if (then === null ? (r.amounts ?? '') !== amountsAsReported(b) : !sameAmounts(b.code, then, b)) {
        result.skipped.push({
          row: r.row,
          code: r.code,
          key: r.key,
          reason: `amounts changed since that workbook: ${then ? amountsWords(then) : JSON.stringify(r.amounts ?? '')} -> ${amountsWords(b)}`,
        });
        continue;
      }
      for (const a of plan.actions) {
        const w = await trx
          .selectFrom('break_workflow')
          .selectAll()
          .where('account', '=', account)
          .where('code', '=', b.code)
          .where('key', '=', b.key)
          .executeTakeFirst();
        if (a.kind === 'assigned') await assignIn(trx, account, b, w, a.owner, actor);
        else if (a.kind === 'unacknowledged') await unackIn(trx, account, b, w, null, actor);
        else if (a.kind === 'acknowledged') await ackIn(trx, account, b, w, a.reason, actor);
        else await noteIn(trx, account, b, w, a.text, actor);
      }
      result.applied.push({ row: r.row, code: r.code, key: r.key, actions: plan.actions });
    }
    await trx
      .insertInto('break_import')
      .values({
        account,
        run_id: input.runId,
        sha256: input.sha256,
        by: input.by,
        at,
        applied: result.applied.length,
        skipped: result.skipped.length,
      })
      .execute();
    return result;
  });
}
