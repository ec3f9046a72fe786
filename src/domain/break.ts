/** The one Break: a rule's finding on one entity, as a rule reports it, as stored with its history, and its lifecycle events. */

export type Severity = 'high' | 'medium' | 'low';
export type BreakStatus = 'open' | 'resolved';

/** Most severe first; a reader ranks a severity it does not know after these. */
export const SEVERITY_RANK: Readonly<Record<Severity, number>> = { high: 0, medium: 1, low: 2 };

/** A break as stored (the `break` table): its latest figures and its history across runs; amounts are decimal strings. */
export interface Break {
  code: string;
  /** The entity the rule judged (an order id, an exec id, a currency...; docs/rules.md "Keys"). */
  key: string;
  severity: Severity;
  currency: string | null;
  expected: string | null;
  actual: string | null;
  difference: string | null;
  message: string | null;
  detail: unknown;
  status: BreakStatus;
  firstSeenRun: string;
  firstSeenAt: Date;
  lastSeenRun: string;
  lastSeenAt: Date;
  resolvedRun: string | null;
  resolvedAt: Date | null;
  reopenedCount: number;
}

/** A break as a rule reports it in one run: the figures only, always with a message. */
export type DetectedBreak = Pick<Break, 'code' | 'key' | 'severity' | 'currency' | 'expected' | 'actual' | 'difference'> & {
  message: string;
  detail?: unknown;
};

export type BreakEventKind = 'opened' | 'seen' | 'resolved' | 'reopened';

/** One step of a break's history (the `break_event` table), with the figures of that run. */
export type BreakEvent = Pick<Break, 'code' | 'key' | 'expected' | 'actual' | 'difference'> & {
  runId: string;
  event: BreakEventKind;
  at: Date;
};

/** A break's identity within an account: (code, key). */
export const breakId = (code: string, key: string) => `${code}\u0000${key}`;
