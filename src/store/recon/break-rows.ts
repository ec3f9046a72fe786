/** The one mapper from a `break` row to the domain Break (every reader of the table uses it). */
import type { BreakRow } from '../db/schema.js';
import type { Break, Severity } from '../../domain/index.js';

/** Stored severities come from the rule catalog; a reader ranks one it does not know last (SEVERITY_RANK). */
export const severity = (text: string) => text as Severity;

/** The one mapper from a `break` row to the domain Break. */
export function toBreak(r: BreakRow): Break {
  return {
    code: r.code,
    key: r.key,
    entity: r.entity as Break['entity'],
    severity: severity(r.severity),
    currency: r.currency,
    unit: r.unit as Break['unit'],
    day: r.day,
    expected: r.expected,
    actual: r.actual,
    difference: r.difference,
    message: r.message,
    detail: r.detail,
    status: r.status === 'resolved' ? 'resolved' : 'open',
    firstSeenRun: r.first_seen_run,
    firstSeenAt: r.first_seen_at,
    lastSeenRun: r.last_seen_run,
    lastSeenAt: r.last_seen_at,
    resolvedRun: r.resolved_run,
    resolvedAt: r.resolved_at,
    reopenedCount: Number(r.reopened_count),
  };
}
