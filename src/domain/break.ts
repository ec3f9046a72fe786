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

/**
 * An open break as one run reports it: inPeriod says whether its entity belongs to that run's
 * period (docs/rules.md "This period or carried over"); the others are carried over, from other
 * days or earlier runs. Computed by the store for the run's period, never stored on the break.
 */
export type ReportedBreak = Break & { inPeriod: boolean };

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
  severity: Record<Severity, PeriodSplit>;
  /** Every rule with an open break, most breaks first, then by code. */
  rules: Array<PeriodSplit & { code: string; severity: Severity }>;
}

const split = (): PeriodSplit => ({ total: 0, inPeriod: 0, carriedOver: 0 });

function addTo(s: PeriodSplit, inPeriod: boolean): void {
  s.total += 1;
  if (inPeriod) s.inPeriod += 1;
  else s.carriedOver += 1;
}

/** The one function that counts a run's open breaks; every place that shows a count takes it from here. */
export function openBreakCounts(breaks: readonly Pick<ReportedBreak, 'code' | 'severity' | 'inPeriod'>[]): OpenBreakCounts {
  const counts: OpenBreakCounts = { ...split(), severity: { high: split(), medium: split(), low: split() }, rules: [] };
  const rules = new Map<string, PeriodSplit & { code: string; severity: Severity }>();
  for (const b of breaks) {
    addTo(counts, b.inPeriod);
    // A severity the catalog does not know counts in the total only (SEVERITY_RANK ranks it last).
    if (Object.hasOwn(counts.severity, b.severity)) addTo(counts.severity[b.severity], b.inPeriod);
    let rule = rules.get(b.code);
    if (!rule) rules.set(b.code, (rule = { code: b.code, severity: b.severity, ...split() }));
    addTo(rule, b.inPeriod);
  }
  counts.rules = [...rules.values()].sort((a, b) => b.total - a.total || a.code.localeCompare(b.code));
  return counts;
}
