/** What the syncs record about their own completeness: a stream's coverage of a day, and a record set aside as invalid.
 *
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
