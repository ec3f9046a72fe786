/** The break lifecycle: applies one run's detections to the stored breaks (opened, seen, resolved, reopened). */
import {
  breakId,
  figureText,
  type Break,
  type BreakEvent,
  type BreakEventKind,
  type DetectedBreak,
} from '../domain/index.js';
import { findRule } from './catalog.js';

/** What this run knows about each rule, to decide whether an undetected break may be resolved. */
export interface ResolvePolicy {
  /** The rule ran in this run (not "not checked"). */
  checked(code: string): boolean;
  /** The entity was in scope but the rule could not judge it (unknown currency/symbol). */
  skipped(code: string, key: string): boolean;
  /** The break's record is in this run's scope (asked for a rule of reach 'records'). */
  inScope(code: string, key: string): boolean;
  /** The rule judged the break's record in this run (asked for a rule of reach 'judged'). */
  judged(code: string, key: string): boolean;
}

export interface LifecycleResult {
  /** Rows to write (new, seen, reopened or resolved), complete. */
  upserts: Break[];
  events: BreakEvent[];
  counts: Record<BreakEventKind, number>;
}

/**
 * Applies one run's detections to the stored breaks (docs/rules.md "Break lifecycle").
 * previous must hold every open break of the account and every stored break (any status)
 * whose (code, key) is detected now; anything else is irrelevant to this run.
 */
export function applyLifecycle(input: {
  runId: string;
  now: Date;
  previous: readonly Break[];
  detected: readonly DetectedBreak[];
  policy: ResolvePolicy;
}): LifecycleResult {
  const { runId, now, policy } = input;
  const previous = new Map(input.previous.map((b) => [breakId(b.code, b.key), b]));
  const upserts: Break[] = [];
  const events: BreakEvent[] = [];
  const counts: Record<BreakEventKind, number> = { opened: 0, seen: 0, resolved: 0, reopened: 0 };
  const seenNow = new Set<string>();
  const event = (b: Break, kind: BreakEventKind) => {
    counts[kind] += 1;
    events.push({
      code: b.code,
      key: b.key,
      runId,
      event: kind,
      expected: b.expected,
      actual: b.actual,
      difference: b.difference,
      at: now,
    });
  };

  for (const d of input.detected) {
    const id = breakId(d.code, d.key);
    if (seenNow.has(id)) continue; // a rule reports one break per key; guard against a double
    seenNow.add(id);
    // Stored as exact text: the figures a later run compares with, whatever representation the rule used.
    const figures = {
      entity: d.entity,
      severity: d.severity,
      currency: d.currency,
      unit: d.unit,
      day: d.day,
      expected: figureText(d.expected),
      actual: figureText(d.actual),
      difference: figureText(d.difference),
      message: d.message,
      detail: d.detail ?? null,
    };
    const old = previous.get(id);
    if (!old) {
      const b: Break = {
        code: d.code,
        key: d.key,
        ...figures,
        status: 'open',
        firstSeenRun: runId,
        firstSeenAt: now,
        lastSeenRun: runId,
        lastSeenAt: now,
        resolvedRun: null,
        resolvedAt: null,
        reopenedCount: 0,
      };
      upserts.push(b);
      event(b, 'opened');
    } else if (old.status === 'resolved') {
      // Reopened: history (first seen, earlier resolution events) is kept.
      const b: Break = {
        ...old,
        ...figures,
        status: 'open',
        lastSeenRun: runId,
        lastSeenAt: now,
        resolvedRun: null,
        resolvedAt: null,
        reopenedCount: old.reopenedCount + 1,
      };
      upserts.push(b);
      event(b, 'reopened');
    } else {
      const b: Break = { ...old, ...figures, lastSeenRun: runId, lastSeenAt: now };
      upserts.push(b);
      event(b, 'seen');
    }
  }

  for (const [id, old] of previous) {
    if (old.status !== 'open' || seenNow.has(id)) continue;
    if (!policy.checked(old.code) || policy.skipped(old.code, old.key)) continue;
    const def = findRule(old.code);
    // A code no longer in the catalog (older rule set): nothing checks it any more, left as is.
    if (!def) continue;
    if (def.reach === 'records' && !policy.inScope(old.code, old.key)) continue;
    if (def.reach === 'judged' && !policy.judged(old.code, old.key)) continue;
    const b: Break = { ...old, status: 'resolved', resolvedRun: runId, resolvedAt: now };
    upserts.push(b);
    event(b, 'resolved');
  }
  return { upserts, events, counts };
}
