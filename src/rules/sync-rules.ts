/** Sync rules: unsettled coverage days, stuck cursors and quarantined records as breaks (S_COVERAGE, S_QUARANTINE). */
import type { CoverageRow, QuarantinedRecord, StreamReach } from '../domain/index.js';
import type { Finding } from './types.js';

/**
 * Streams whose name starts with this prefix are cursor checks the sync records: a row
 * `cursor:<name>` with settled = false means that cursor should have advanced and did not.
 */
export const CURSOR_STREAM_PREFIX = 'cursor:';

export function coverageKey(row: Pick<CoverageRow, 'source' | 'stream' | 'day'>): string {
  return row.stream.startsWith(CURSOR_STREAM_PREFIX)
    ? `${row.source}:cursor:${row.stream.slice(CURSOR_STREAM_PREFIX.length)}`
    : `${row.source}:${row.stream}:${row.day}`;
}

/** S_COVERAGE of the stored coverage rows: one finding per unsettled day and stream, or stuck cursor. */
export function coverageFindings(rows: readonly CoverageRow[]): Finding[] {
  const byKey = new Map<string, CoverageRow[]>();
  for (const r of rows) if (!r.settled) byKey.set(coverageKey(r), [...(byKey.get(coverageKey(r)) ?? []), r]);
  return [...byKey].map(([key, list]) => {
    const r = list[0]!;
    const isCursor = r.stream.startsWith(CURSOR_STREAM_PREFIX);
    return {
      key,
      failures: list.map((row) => ({
        check: isCursor
          ? `cursor ${row.stream.slice(CURSOR_STREAM_PREFIX.length)} of ${row.source} did not advance`
          : `${row.source} ${row.stream} of ${row.day} not settled (pages changed during the scan)`,
        expected: 'settled',
        actual: 'unsettled',
        difference: null,
        currency: null,
      })),
      currency: null,
      extras: {
        day: isCursor ? null : r.day,
        detail: {
          source: r.source,
          stream: r.stream,
          coverage: list.map((row) => ({ day: row.day, pages: row.pages, rows: row.rows, detail: row.detail })),
        },
      },
    };
  });
}

// Each source's streams.ts says how far its streams are read; the type is the domain's, so the sources need no rules.
export type { StreamReach } from '../domain/index.js';

const DAY_MS = 86_400_000;

/**
 * S_COVERAGE for each day of `days` (UTC, `YYYY-MM-DD`) and stream that no sync covered: a day
 * listing with no row for the day, or a cursor that has not reached the day's end (a day not over
 * at `now`: the cursor has not entered it). Days starting after `now` are not asked for. Returns
 * the findings and how many (day, stream) pairs were judged.
 */
export function unsyncedDayFindings(
  days: readonly string[],
  now: Date,
  streams: readonly StreamReach[],
): { findings: Finding[]; checked: number } {
  const findings: Finding[] = [];
  let checked = 0;
  for (const day of days) {
    const start = Date.parse(`${day}T00:00:00Z`);
    if (start > now.getTime()) continue;
    const end = start + DAY_MS;
    for (const s of streams) {
      checked += 1;
      let problem: string | null = null;
      if (s.kind === 'days') {
        if (!s.days.has(day)) problem = `no sync listed the ${s.source} ${s.stream} of ${day}`;
      } else {
        const needed = end <= now.getTime() ? end : start + 1;
        if (s.syncedTo === null) problem = `no sync has read the ${s.source} ${s.stream} yet`;
        else if (s.syncedTo < needed)
          problem = `the ${s.source} ${s.stream} are read only up to ${new Date(s.syncedTo).toISOString()}, before the end of ${day}`;
      }
      if (problem === null) continue;
      findings.push({
        key: `${s.source}:${s.stream}:${day}`,
        failures: [{ check: problem, expected: 'synced', actual: 'not synced', difference: null, currency: null }],
        currency: null,
        extras: {
          day,
          detail: {
            day,
            source: s.source,
            stream: s.stream,
            syncedTo: s.kind === 'cursor' && s.syncedTo !== null ? new Date(s.syncedTo).toISOString() : null,
          },
        },
      });
    }
  }
  return { findings, checked };
}

/** The break key of a quarantined record: its own id when it could be read. */
export function quarantineKey(q: Pick<QuarantinedRecord, 'recordKey' | 'endpoint' | 'position' | 'id'>): string {
  if (q.recordKey) return q.recordKey;
  return `${q.endpoint}#${q.position ?? `q${q.id}`}`;
}

/** S_QUARANTINE: one finding per quarantined record (its key). */
export function quarantineFindings(records: readonly QuarantinedRecord[]): Finding[] {
  const byKey = new Map<string, QuarantinedRecord[]>();
  for (const q of records) byKey.set(quarantineKey(q), [...(byKey.get(quarantineKey(q)) ?? []), q]);
  return [...byKey].map(([key, list]) => {
    const q = list[0]!;
    return {
      key,
      failures: list.map((r) => ({
        check: `${r.entity ?? 'record'} from ${r.source} ${r.endpoint} quarantined: ${r.reason}`,
        expected: 'valid record',
        actual: 'invalid',
        difference: null,
        currency: null,
      })),
      currency: null,
      extras: {
        detail: {
          quarantineIds: list.map((r) => r.id),
          entity: q.entity,
          source: q.source,
          firstSeenAt: q.firstSeenAt.toISOString(),
        },
      },
    };
  });
}
