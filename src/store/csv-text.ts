/** Values as the detail CSV prints them, formatted by Postgres: the text paths of the biggest detail files. */
import { sql, type RawBuilder } from 'kysely';

/**
 * A timestamptz as ISO 8601 UTC with milliseconds, cut (not rounded) to the millisecond as a JS Date cuts the stored
 * microseconds: what csv.ts prints of a Date.
 */
export function isoText(column: string): RawBuilder<string> {
  return sql<string>`to_char(${sql.ref(column)} at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`;
}

/** A numeric as its exact text without trailing zeros: what Decimal's toFixed() prints (csv.ts). */
export function decimalText(expr: RawBuilder<unknown>): RawBuilder<string | null> {
  return sql<string | null>`trim_scale(${expr})::text`;
}
