/** A page of rows as one JSON parameter for json_to_recordset: the set-based page writes of the exchange and partner syncs. */

/**
 * JSON array of the rows, each row's raw JSON text spliced in as is (no re-serialization). One parameter instead of
 * one per value: the driver and the query builder have nothing to escape or compile per value, and Postgres parses
 * each field with its column's own input function (amounts travel as JSON strings, so numeric gets their exact text).
 */
export function recordsetJson<T extends { raw?: string }>(rows: T[]): string {
  const parts: string[] = [];
  for (const row of rows) {
    const { raw, ...rest } = row;
    const head = JSON.stringify(rest);
    parts.push(raw === undefined ? head : `${head.slice(0, -1)}${head.length > 2 ? ',' : ''}"raw":${raw}}`);
  }
  return `[${parts.join(',')}]`;
}
