/** What an acknowledgement holds to, and what acknowledging, taking an acknowledgement back and a run's changed
 * figures do to a break's workflow (docs/working-breaks.md "Acknowledged while the amounts stay").
 */
import type { Amounts, Break, WorkflowRecord, WorkflowWrite } from '../domain/index.js';
import { findRule, type HeldFigure } from '../rules/catalog.js';
import { amountsWords } from './amounts.js';
import { changeOf, type Decision } from './decision.js';
import { BreakWorkflowError, describeBreak } from './workflow-error.js';

const EVERY_FIGURE: readonly HeldFigure[] = ['expected', 'actual', 'difference', 'currency'];

/**
 * The figures an acknowledgement of this rule's breaks holds to: the rule's descriptor says (src/rules/catalog.ts; an
 * age rule holds only its limit and currency, since its age grows at every run). An unknown code holds every figure.
 */
export function heldFigures(code: string): readonly HeldFigure[] {
  return findRule(code)?.holds ?? EVERY_FIGURE;
}

/** Whether two sets of a break's figures are the same for its acknowledgement: the held ones, as exact text. */
export function sameAmounts(code: string, a: Amounts, b: Amounts): boolean {
  return heldFigures(code).every((f) => (a[f] ?? '') === (b[f] ?? ''));
}

const figuresOf = (b: Amounts): Amounts => ({
  expected: b.expected,
  actual: b.actual,
  difference: b.difference,
  currency: b.currency,
});

const NO_FIGURES: Amounts = Object.freeze({ expected: null, actual: null, difference: null, currency: null });

/**
 * Acknowledging break `b` with `reason`: explained while its figures stay those of now. Only an open break can be
 * acknowledged; the same reason on the same figures records nothing.
 */
export function acknowledge(b: Break, w: WorkflowRecord | undefined, reason: string): Decision {
  if (b.status !== 'open')
    throw new BreakWorkflowError(
      `${describeBreak(b.code, b.key)} is not open (resolved in run ${b.resolvedRun ?? '?'}): ` +
        'only an open break can be acknowledged',
    );
  if (w?.status === 'explained' && w.explanation === reason && sameAmounts(b.code, w.acknowledged, b))
    return { change: changeOf(b, false, w), write: null };
  return {
    change: changeOf(b, true, { status: 'explained', owner: w?.owner ?? null, explanation: reason }),
    write: {
      set: { status: 'explained', explanation: reason, acknowledged: figuresOf(b) },
      event: { kind: 'acknowledged', text: reason },
    },
  };
}

/** Taking an acknowledgement back: unexplained again, explanation and figures cleared; nothing when not explained. */
export function unacknowledge(b: Break, w: WorkflowRecord | undefined, reason: string | null): Decision {
  if (w?.status !== 'explained') return { change: changeOf(b, false, w), write: null };
  return {
    change: changeOf(b, true, { status: 'unexplained', owner: w.owner, explanation: null }),
    write: {
      set: { status: 'unexplained', explanation: null, acknowledged: NO_FIGURES },
      event: { kind: 'unacknowledged', text: reason },
    },
  };
}

/**
 * After a run wrote its breaks: an explained break whose figures are no longer those acknowledged is unexplained
 * again, with an event saying what changed (its explanation stays, for the reader); null while they are the same.
 */
export function reopening(b: Break, acknowledged: Amounts): WorkflowWrite | null {
  if (sameAmounts(b.code, acknowledged, b)) return null;
  return {
    set: { status: 'unexplained' },
    event: { kind: 'reopened', text: `amounts changed: ${amountsWords(acknowledged)} -> ${amountsWords(b)}` },
  };
}
