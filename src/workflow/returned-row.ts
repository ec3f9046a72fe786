/** What a filled-in row of a returned workbook asks for, and what becomes of it against its break now: applied,
 * unchanged, or skipped with the reason (docs/working-breaks.md "The workbook as the way back in").
 */
import {
  amountsAsReported,
  type Break,
  type BreakWorkflow,
  type ReturnedRow,
  type WorkflowRecord,
  type WorkflowStatus,
} from '../domain/index.js';
import { acknowledge, sameAmounts, unacknowledge } from './acknowledgement.js';
import { amountsWords, parseAmountsText } from './amounts.js';
import type { Decision } from './decision.js';
import { addNote, assignOwner } from './owner-and-notes.js';

export type ImportAction =
  | { kind: 'assigned'; owner: string }
  | { kind: 'unacknowledged' }
  | { kind: 'acknowledged'; reason: string }
  | { kind: 'noted'; text: string };

type RowPlan = { actions: ImportAction[] } | { skip: string };

/** Whether a row was filled in at all (a row nobody touched is not read). */
export const filledIn = (r: ReturnedRow): boolean => Boolean(r.owner || r.explanation || r.explained);

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

export type RowOutcome = { skip: string } | { unchanged: true } | { apply: ImportAction[]; break: Break };

/**
 * What becomes of a filled-in row: `b` its break now (undefined: no such break), `w` where people stood on it when
 * the import began. A row that would change something is skipped when its break is gone or its amounts changed since
 * that workbook was written (the "Amounts as reported" cell against the break's figures, for its acknowledgement).
 */
export function rowOutcome(r: ReturnedRow, b: Break | undefined, w: BreakWorkflow): RowOutcome {
  if (!b) return { skip: 'unknown: no such break' };
  const plan = planRow(r, w);
  if ('skip' in plan) return plan;
  if (plan.actions.length === 0) return { unchanged: true };
  if (b.status !== 'open') return { skip: `gone: resolved in run ${b.resolvedRun ?? '?'}` };
  const then = r.amounts === null ? null : parseAmountsText(r.amounts);
  if (then === null ? (r.amounts ?? '') !== amountsAsReported(b) : !sameAmounts(b.code, then, b))
    return {
      skip:
        'amounts changed since that workbook: ' +
        `${then ? amountsWords(then) : JSON.stringify(r.amounts ?? '')} -> ${amountsWords(b)}`,
    };
  return { apply: plan.actions, break: b };
}

/** What one action of an applied row does to the break's workflow as it stands (the row's earlier action may have
 * changed it).
 */
export function actionDecision(b: Break, w: WorkflowRecord | undefined, a: ImportAction): Decision {
  if (a.kind === 'assigned') return assignOwner(b, w, a.owner);
  if (a.kind === 'unacknowledged') return unacknowledge(b, w, null);
  if (a.kind === 'acknowledged') return acknowledge(b, w, a.reason);
  return addNote(b, w, a.text);
}
