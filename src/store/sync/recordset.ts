/** A page of rows as the source of a set-based write: the page writes of the exchange and partner syncs. */
import { sql, type RawBuilder } from 'kysely';

/** The columns of a page's rows besides raw, each with its SQL type, in the order `x` gives them. */
export type RecordsetColumns = readonly (readonly [name: string, type: string])[];

/**
 * The rows as a FROM item named x: their fields as one JSON parameter read by json_to_recordset with `columns`, and
 * their raw records, each spliced in as received (no re-serialization), as a second parameter read by
 * jsonb_array_elements, zipped row by row by ROWS FROM. One or two parameters instead of one per value: the driver and
 * the query builder have nothing to escape or compile per value, and Postgres parses each field with its column's
 * own input function (amounts travel as JSON strings, so numeric gets their exact text). The raw records apart: read
 * inside the fields, json_to_recordset lexes each one twice (as a field, then as jsonb), about a quarter of an orders
 * page's time in Postgres.
 */
export function recordset<T extends { raw: string }>(
  rows: readonly T[],
  columns: RecordsetColumns,
): RawBuilder<unknown> {
  const fields: string[] = [];
  const raws: string[] = [];
  for (const row of rows) {
    const { raw, ...rest } = row;
    fields.push(JSON.stringify(rest));
    raws.push(raw);
  }
  const typed = sql.join(columns.map(([name, type]) => sql`${sql.id(name)} ${sql.raw(type)}`));
  const names = sql.join([...columns.map(([name]) => sql.id(name)), sql.id('raw')]);
  return sql`rows from (json_to_recordset(${`[${fields.join(',')}]`}::json) as (${typed}),
    jsonb_array_elements(${`[${raws.join(',')}]`}::jsonb)) as x(${names})`;
}
