/** What the syncs record about their own completeness: a stream's coverage of a day, how far a stream is read, and a
 * record set aside as invalid.
 */

export interface CoverageRow {
  source: string;
  stream: string;
  day: string;
  settled: boolean;
  pages: number;
  rows: number;
  detail: unknown;
}

/**
 * How far one stream of a source is known to be read, for the days of a period that no coverage
 * row settles by itself (docs/rules.md "Sync completeness"): a listing by day (partner orders)
 * settles the days it has a row for; a stream synced from its cursor up to the sync's start
 * (exchange fills, orders, trades, deposits, withdrawals) settles every day its cursor has passed.
 * Each source's streams.ts builds its own; rules/sync-rules.ts judges them.
 */
export type StreamReach =
  | { source: string; stream: string; kind: 'days'; days: ReadonlySet<string> }
  | { source: string; stream: string; kind: 'cursor'; syncedTo: number | null };

export interface QuarantinedRecord {
  id: string;
  source: string;
  endpoint: string;
  entity: string | null;
  recordKey: string | null;
  position: number | null;
  reason: string;
  firstSeenAt: Date;
}
