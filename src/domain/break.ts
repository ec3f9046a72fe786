/** The one Break: a rule's finding on one entity, as a rule reports it, as stored with its history, and its lifecycle
 * events.
 */

import { Decimal, decimalText } from '../decimal/decimal.js';
import type { RecordKindName } from './record-kinds.js';

export type Severity = 'high' | 'medium' | 'low';
export type BreakStatus = 'open' | 'resolved';

/** Most severe first; a reader ranks a severity it does not know after these. */
export const SEVERITY_RANK: Readonly<Record<Severity, number>> = { high: 0, medium: 1, low: 2 };

/**
 * What a break's figures (expected, actual, difference) are: an amount or a quantity of the break's
 * currency, a price (in the counter currency), an age in hours, or text (states, hashes, times, or
 * no figure at all). Said by the rule, stored with the break: nothing reads it from the words.
 */
export type FigureUnit = 'amount' | 'price' | 'hours' | 'text';

/** One figure as a rule reports it: an exact Decimal, a text (a state, a hash), or none. */
export type Figure = Decimal | string | null;

/**
 * A break as stored (the `break` table): its latest figures and its history across runs; the figures are exact text
 * (decimal text when `unit` is not 'text').
 */
export interface Break {
  code: string;
  /** The entity the rule judged (an order id, an exec id, a currency...; docs/rules.md "Keys"). */
  key: string;
  /** The kind of record the key names. */
  entity: RecordKindName;
  severity: Severity;
  currency: string | null;
  unit: FigureUnit;
  expected: string | null;
  actual: string | null;
  difference: string | null;
  message: string | null;
  detail: unknown;
  /** The break's own UTC day, for a kind without a record of its own (a roll-forward's divergent day, a coverage day). */
  day: string | null;
  status: BreakStatus;
  firstSeenRun: string;
  firstSeenAt: Date;
  lastSeenRun: string;
  lastSeenAt: Date;
  resolvedRun: string | null;
  resolvedAt: Date | null;
  reopenedCount: number;
}

/** A break as a rule reports it in one run: what it is about, its figures as Decimals (or text), always with a message. */
export type DetectedBreak = Pick<Break, 'code' | 'key' | 'entity' | 'severity' | 'currency' | 'unit' | 'day'> & {
  expected: Figure;
  actual: Figure;
  difference: Figure;
  message: string;
  detail?: unknown;
};

/** A figure as the break table stores it: exact decimal text, or the text itself. */
export function figureText(f: Figure): string | null {
  return f === null ? null : typeof f === 'string' ? f : decimalText(f);
}

/** A stored figure as a Decimal, when the break's unit says its figures are numbers; null otherwise. */
export function figureValue(b: Pick<Break, 'unit'>, text: string | null): Decimal | null {
  if (b.unit === 'text' || text === null || text === '') return null;
  try {
    return new Decimal(text);
  } catch {
    // A figure of a numeric unit that is not a number (a missing fee reported as "present"): no value.
    return null;
  }
}

/**
 * The break's figures as the store holds them, `expected | actual | difference | currency` (each empty when null): the
 * Breaks sheet's hidden "Amounts as reported" column, which the workbook import compares to tell whether a break's
 * amounts changed since the workbook was written.
 */
export function amountsAsReported(b: Pick<Break, 'expected' | 'actual' | 'difference' | 'currency'>): string {
  return [b.expected, b.actual, b.difference, b.currency].map((x) => x ?? '').join(' | ');
}

export type BreakEventKind = 'opened' | 'seen' | 'resolved' | 'reopened';

/** One step of a break's history (the `break_event` table), with the figures of that run. */
export type BreakEvent = Pick<Break, 'code' | 'key' | 'expected' | 'actual' | 'difference'> & {
  runId: string;
  event: BreakEventKind;
  at: Date;
};

/**
 * A break of an earlier day that a run opened, reopened or resolved because its record changed
 * after that day was judged (late data: a fill published late, a deposit listed late, a state
 * changed days later). `day`: the UTC day of the record (docs/rules.md "What a run judges").
 */
export interface LateBreak {
  code: string;
  key: string;
  day: string;
  event: Exclude<BreakEventKind, 'seen'>;
  severity: string;
  message: string | null;
}

/** How many breaks of earlier days a run opened, reopened and resolved on late data. */
export interface LateCounts {
  total: number;
  opened: number;
  reopened: number;
  resolved: number;
}

export function lateCounts(late: readonly Pick<LateBreak, 'event'>[]): LateCounts {
  const n = (event: LateBreak['event']) => late.filter((b) => b.event === event).length;
  return { total: late.length, opened: n('opened'), reopened: n('reopened'), resolved: n('resolved') };
}

/**
 * The late breaks by day (oldest first), then opened before reopened before resolved, then code and key: the order
 * every list shows.
 */
export function sortLate<T extends Pick<LateBreak, 'day' | 'event' | 'code' | 'key'>>(late: readonly T[]): T[] {
  const rank = { opened: 0, reopened: 1, resolved: 2 } as const;
  return [...late].sort(
    (a, b) =>
      a.day.localeCompare(b.day) ||
      rank[a.event] - rank[b.event] ||
      a.code.localeCompare(b.code) ||
      a.key.localeCompare(b.key),
  );
}

/** A break's identity within an account: (code, key). */
export const breakId = (code: string, key: string) => `${code}\u0000${key}`;

/**
 * An open break as one run reports it: inPeriod says whether its entity belongs to that run's
 * period (docs/rules.md "This period or carried over"); the others are carried over, from other
 * days or earlier runs. Computed by the store for the run's period, never stored on the break.
 */
export type ReportedBreak = Break & { inPeriod: boolean; workflow: BreakWorkflow };

/**
 * Where a person stands on a break (the `break_workflow` table; docs: docs/working-breaks.md).
 * explained: acknowledged with a reason while its amounts still equal those acknowledged; a
 * change of amounts reopens it (unexplained) with an event saying so.
 */
export type WorkflowStatus = 'unexplained' | 'explained';

export interface BreakWorkflow {
  status: WorkflowStatus;
  owner: string | null;
  /** The reason given when it was acknowledged (null unless explained, or after a reopen). */
  explanation: string | null;
  lastNote: string | null;
  lastNoteBy: string | null;
  lastNoteAt: Date | null;
  /** The last workflow change of any kind (null: nobody has touched it). */
  updatedAt: Date | null;
}

/** A break nobody has worked on yet. */
export const NO_WORKFLOW: Readonly<BreakWorkflow> = Object.freeze({
  status: 'unexplained',
  owner: null,
  explanation: null,
  lastNote: null,
  lastNoteBy: null,
  lastNoteAt: null,
  updatedAt: null,
});

export type WorkflowEventKind = 'acknowledged' | 'unacknowledged' | 'noted' | 'assigned' | 'reopened';

/** One change a person (or the data, for 'reopened') made to a break's workflow: who, when and why. */
export interface WorkflowEvent {
  code: string;
  key: string;
  kind: WorkflowEventKind;
  by: string;
  at: Date;
  /** The reason, the note, the new owner, or what changed (reopened). */
  text: string | null;
  /** cli, or workbook:<run id> for a row of a returned workbook. */
  source: string;
  /** The break's amounts when the event was recorded. */
  expected: string | null;
  actual: string | null;
  difference: string | null;
}

/** Open breaks split by period: total = inPeriod + carriedOver. */
export interface PeriodSplit {
  total: number;
  inPeriod: number;
  carriedOver: number;
}

/**
 * The counts of a run's open breaks that the workbook's Summary, the e-mail's subject and body and
 * the `--json` summary all show: overall, per severity, and per rule (every rule with an open break).
 */
export interface OpenBreakCounts extends PeriodSplit {
  /** Open breaks acknowledged with a reason (still open, still counted in total; counted apart here). */
  explained: number;
  severity: Record<Severity, PeriodSplit>;
  /** Every rule with an open break, most breaks first, then by code. */
  rules: Array<PeriodSplit & { code: string; severity: Severity; explained: number }>;
}

const split = (): PeriodSplit => ({ total: 0, inPeriod: 0, carriedOver: 0 });

function addTo(s: PeriodSplit, inPeriod: boolean): void {
  s.total += 1;
  if (inPeriod) s.inPeriod += 1;
  else s.carriedOver += 1;
}

/** The one function that counts a run's open breaks; every place that shows a count takes it from here. */
export function openBreakCounts(
  breaks: readonly (Pick<ReportedBreak, 'code' | 'severity' | 'inPeriod'> & {
    workflow?: Pick<BreakWorkflow, 'status'>;
  })[],
): OpenBreakCounts {
  const counts: OpenBreakCounts = {
    ...split(),
    explained: 0,
    severity: { high: split(), medium: split(), low: split() },
    rules: [],
  };
  const rules = new Map<string, PeriodSplit & { code: string; severity: Severity; explained: number }>();
  for (const b of breaks) {
    const explained = b.workflow?.status === 'explained';
    addTo(counts, b.inPeriod);
    if (explained) counts.explained += 1;
    // A severity the catalog does not know counts in the total only (SEVERITY_RANK ranks it last).
    if (Object.hasOwn(counts.severity, b.severity)) addTo(counts.severity[b.severity], b.inPeriod);
    let rule = rules.get(b.code);
    if (!rule) rules.set(b.code, (rule = { code: b.code, severity: b.severity, ...split(), explained: 0 }));
    addTo(rule, b.inPeriod);
    if (explained) rule.explained += 1;
  }
  counts.rules = [...rules.values()].sort((a, b) => b.total - a.total || a.code.localeCompare(b.code));
  return counts;
}
