/** A person's change to one break (ack, unack, note, assign), each in one transaction: the break locked and read,
 * the workflow's decision, its write; and a break's history, shown. The decisions: acknowledgement.ts and
 * owner-and-notes.ts.
 */
import type { Actor, Break, WorkflowRecord } from '../domain/index.js';
import { inTransaction, type Db } from '../store/db/database.js';
import {
  breakHistory,
  lockBreak,
  recordWorkflowChange,
  workflowRecordOf,
  type BreakHistory,
} from '../store/workflow/break-workflow.js';
import { auditBreakChange } from '../store/workflow/audit-log.js';
import { acknowledge, unacknowledge } from './acknowledgement.js';
import type { Change, Decision } from './decision.js';
import { addNote, assignOwner } from './owner-and-notes.js';
import { required, unknownBreak } from './workflow-error.js';

/**
 * Reads the break (locked: a concurrent reconcile waits, then compares against this change) and its workflow row,
 * decides, and writes what the decision says, in one transaction. An unknown break is an error naming it.
 */
function decideOn(
  db: Db,
  account: string,
  code: string,
  key: string,
  actor: Actor,
  decide: (b: Break, w: WorkflowRecord | undefined) => Decision,
): Promise<Change> {
  return inTransaction(db, async (trx) => {
    const b = await lockBreak(trx, account, code, key);
    if (!b) throw unknownBreak(account, code, key);
    const decision = decide(b, await workflowRecordOf(trx, account, code, key));
    if (decision.write) {
      await recordWorkflowChange(trx, account, b, decision.write, actor);
      await auditBreakChange(trx, account, b, decision.write.event, actor);
    }
    return decision.change;
  });
}

/** A person's change to the break `code` / `key` of an account; `value` is what it sets (reason, note, owner). */
type BreakChange<V> = (db: Db, account: string, code: string, key: string, value: V, actor: Actor) => Promise<Change>;

/**
 * A change made by `decision`: it checks the value (a bad one is refused before any transaction) and returns what the
 * value does to the break and its workflow row, which decideOn reads, decides and writes.
 */
function breakChange<V>(decision: (value: V) => (b: Break, w: WorkflowRecord | undefined) => Decision): BreakChange<V> {
  return async (db, account, code, key, value, actor) => decideOn(db, account, code, key, actor, decision(value));
}

/**
 * Acknowledges an open break with a reason: explained while its amounts stay those of now. A
 * resolved or unknown break is an error naming it. The same reason on the same amounts records nothing.
 */
export const ack = breakChange((reason: string) => {
  const text = required('the reason', reason);
  return (b, w) => acknowledge(b, w, text);
});

/** Takes an acknowledgement back (the break is unexplained again); nothing recorded when it was not explained. */
export const unack = breakChange((reason: string | null) => {
  const text = reason?.trim() ? reason.trim() : null;
  return (b, w) => unacknowledge(b, w, text);
});

/** Adds a note to a stored break (open or resolved: a resolved break keeps its notes and takes new ones). */
export const note = breakChange((text: string) => {
  const t = required('the note', text);
  return (b, w) => addNote(b, w, t);
});

/** Sets (or with null clears) a stored break's owner; the same owner records nothing. */
export const assign = breakChange((owner: string | null) => {
  const o = owner === null ? null : required('the owner', owner);
  return (b, w) => assignOwner(b, w, o);
});

/** A stored break, its workflow and its whole history; an unknown break is an error naming it. */
export async function showBreak(db: Db, account: string, code: string, key: string): Promise<BreakHistory> {
  const shown = await breakHistory(db, account, code, key);
  if (!shown) throw unknownBreak(account, code, key);
  return shown;
}
