/** How the store reads values back: pinned type parsers for pg and PGlite, and numeric results of raw SQL as Decimal.
 *
 */
import { Decimal, toDecimal } from '../../decimal/decimal.js';
import { parseJsonLossless } from '../../decimal/json.js';

/** Postgres type OIDs whose parsing we pin, so pg and PGlite hand back identical values. */
export const OID = { int8: 20, numeric: 1700, json: 114, jsonb: 3802, date: 1082 } as const;

/**
 * int8 stays an exact string (exchange ids are near 10^12 and growing; PGlite would give a
 * lossy JS number), numeric becomes Decimal, json/jsonb go through the lossless parser,
 * and date stays 'YYYY-MM-DD' text (a JS Date would shift it by the local time zone).
 */
export const textParsers: Record<number, (text: string) => unknown> = {
  [OID.int8]: (text) => text,
  [OID.numeric]: (text) => new Decimal(text),
  [OID.json]: (text) => parseJsonLossless(text),
  [OID.jsonb]: (text) => parseJsonLossless(text),
  [OID.date]: (text) => text,
};

/** A numeric from raw SQL (a sum over no rows is NULL) as a Decimal, NULL as 0. */
export const numericOrZero = (v: unknown): Decimal => (v === null || v === undefined ? new Decimal(0) : toDecimal(v));

/** A numeric from raw SQL as a Decimal, NULL kept as null. */
export const numericOrNull = (v: unknown): Decimal | null => (v === null || v === undefined ? null : toDecimal(v));
