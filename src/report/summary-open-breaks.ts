/** The Summary's sections on the open breaks: by severity, the earlier days late data changed, by rule, and what
 * changed since the previous run of the period.
 */
import { day, type Row } from './cells.js';
import { lateCounts, SEVERITY_RANK, sortLate, type BreakRef, type RunInfo } from '../domain/index.js';
import { ruleTitle } from '../rules/describe.js';
import { LATE_MEANING, lateSentence } from './late-data.js';
import { CARRIED_OVER_MEANING, EXPLAINED_MEANING, LAST_KNOWN_MEANING, ruleStatusNote } from './summary.js';
import { header, muted, pair, section, type SummarySection } from './summary-layout.js';

/** Changes listed by name on the Summary; beyond that the Breaks sheet has them all. */
export const CHANGES_LISTED = 50;

/** Open breaks per severity: open, of this period, carried over, explained (as last known when not judged). */
export const openBreaksBySeverity: SummarySection = ({ counts, openBreaks, failure }) => {
  const explainedOf = (sev: string) =>
    openBreaks.filter((b) => b.severity === sev && b.workflow?.status === 'explained').length;
  const rows: Row[] = [
    section(failure && !failure.judged ? `Open breaks (${LAST_KNOWN_MEANING})` : 'Open breaks'),
    header('Severity', 'Open', 'Of this period', 'Carried over', 'Explained'),
  ];
  for (const sev of ['high', 'medium', 'low'] as const) {
    const c = counts.severity[sev];
    rows.push({
      cells: [sev, c.total, c.inPeriod, c.carriedOver, explainedOf(sev)],
      cellTones: c.total ? { 0: sev } : undefined,
    });
  }
  rows.push({
    cells: ['total', counts.total, counts.inPeriod, counts.carriedOver, counts.explained ?? 0],
    tone: 'bold',
  });
  rows.push(muted(CARRIED_OVER_MEANING), muted(EXPLAINED_MEANING));
  return rows;
};

/**
 * "Earlier days changed by late data": the breaks of days before the period this run opened,
 * reopened or resolved because their records changed after those days were reconciled, with the
 * day of each record (docs/rules.md "What a run judges").
 */
export const lateData: SummarySection = ({ run }) => lateRows(run.lateBreaks ?? []);

function lateRows(late: NonNullable<RunInfo['lateBreaks']>): Row[] {
  const c = lateCounts(late);
  const rows: Row[] = [section('Earlier days changed by late data')];
  rows.push({
    cells: [lateSentence(c), null, null, null, null, null, null],
    cellTones: c.opened + c.reopened ? { 0: 'medium' } : undefined,
  });
  if (c.total) {
    rows.push(header('Day of the record', 'Change', 'Rule code', 'Key', 'Severity', '', 'Rule'));
    for (const b of sortLate(late).slice(0, CHANGES_LISTED))
      rows.push({
        cells: [day(b.day), b.event, b.code, b.key, b.severity, null, ruleTitle(b.code)],
        tone: b.event === 'resolved' ? 'muted' : undefined,
      });
    if (late.length > CHANGES_LISTED)
      rows.push(muted(`... and ${late.length - CHANGES_LISTED} more (the open ones are marked on the Breaks sheet)`));
  }
  rows.push(muted(LATE_MEANING));
  return rows;
}

/** Open breaks per rule, each with what this run said of the rule. */
export const openBreaksByRule: SummarySection = ({ counts, run }) => {
  const rows: Row[] = [
    section('Open breaks by rule'),
    header('Rule', 'Severity', 'Open', 'Of this period', 'Carried over', 'Explained', 'In this run'),
  ];
  for (const r of counts.rules) {
    const note = ruleStatusNote(run.ruleResults, r.code);
    rows.push({ cells: [r.code, r.severity, r.total, r.inPeriod, r.carriedOver, r.explained ?? 0, note] });
  }
  if (!counts.rules.length) rows.push(muted('(none)'));
  return rows;
};

/** "Compared with the previous run of this period": the counts of new, reopened and resolved breaks, then each one. */
export const changesSincePreviousRun: SummarySection = ({ changes }) => {
  const rows: Row[] = [section('Compared with the previous run of this period')];
  if (changes.previous) {
    rows.push(pair('Previous run', changes.previous.id, changes.previous.status));
    rows.push(pair('Previous run started (UTC)', changes.previous.startedAt));
  } else {
    rows.push(pair('Previous run', '(none: first run of this period)'));
  }
  rows.push(pair('New breaks', changes.opened.length));
  rows.push(pair('Reopened breaks', changes.reopened.length));
  rows.push(pair('Resolved breaks', changes.resolved.length));
  rows.push(pair('Still open', changes.stillOpen));
  const listed: Array<[string, BreakRef]> = [
    ...sortRefs(changes.opened).map((b): [string, BreakRef] => ['new', b]),
    ...sortRefs(changes.reopened).map((b): [string, BreakRef] => ['reopened', b]),
    ...sortRefs(changes.resolved).map((b): [string, BreakRef] => ['resolved', b]),
  ];
  if (!listed.length) return rows;
  rows.push(header('Change', 'Rule', 'Key', 'Severity', '', '', 'Message'));
  for (const [change, b] of listed.slice(0, CHANGES_LISTED))
    rows.push({
      cells: [change, b.code, b.key, b.severity, null, null, b.message],
      tone: change === 'resolved' ? 'muted' : undefined,
    });
  if (listed.length > CHANGES_LISTED)
    rows.push(muted(`... and ${listed.length - CHANGES_LISTED} more (all open ones are on the Breaks sheet)`));
  return rows;
};

function sortRefs(refs: BreakRef[]): BreakRef[] {
  return [...refs].sort(
    (a, b) =>
      (SEVERITY_RANK[a.severity] ?? 9) - (SEVERITY_RANK[b.severity] ?? 9) ||
      a.code.localeCompare(b.code) ||
      a.key.localeCompare(b.key),
  );
}
