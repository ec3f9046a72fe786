/** Reads of the rows whose key column holds one of a list of keys, grouped by key. */
import { sql, type SelectQueryBuilder } from 'kysely';

/**
 * The rows of `query` whose `column` holds one of `keys`, grouped by that key as valueOf maps them,
 * in the order the database returned them. No keys: an empty map, without a query.
 */
export async function rowsByKey<DB, TB extends keyof DB, O extends Record<C, string | null>, C extends string, V>(
  query: SelectQueryBuilder<DB, TB, O>,
  column: C,
  keys: string[],
  valueOf: (row: O) => V,
): Promise<Map<string, V[]>> {
  const map = new Map<string, V[]>();
  if (keys.length === 0) return map;
  for (const row of await query.where(sql<boolean>`${sql.ref(column)} in (${sql.join(keys)})`).execute()) {
    const key = row[column];
    if (key === null) continue; // never: null is in no list
    const list = map.get(key);
    if (list) list.push(valueOf(row));
    else map.set(key, [valueOf(row)]);
  }
  return map;
}
