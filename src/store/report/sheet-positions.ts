/** Where the breaks' keys have their rows on the workbook's data sheets: each key's position in the sheet's own query
 * order, one query per sheet.
 */
import { sql, type RawBuilder } from 'kysely';
import type { Db } from '../db/database.js';
import type { Span } from '../db/keyset.js';
import { RECORD_KINDS } from '../../domain/index.js';

/** The streamed data sheets whose row order comes from a query (Balances and Coverage are built in memory). */
export type QueriedSheet = 'partnerOrders' | 'ordersVsFills' | 'fills' | 'deposits' | 'withdrawals';

/**
 * The ranking query of each sheet: the SAME rows and order as the reader that streams the sheet
 * (src/store/recon/partner-reads.ts partnerOrdersCreatedIn; src/store/report/exchange-sheets.ts
 * ordersWithFillsIn, fillsByTimeIn, depositsIn; src/store/recon/exchange-reads.ts withdrawalsIn): the
 * records of the kind whose sheet it is (the registry, src/domain/record-kinds.ts) with their own time
 * (the first of the kind's time columns) in the span, ordered by the keyset (time, key); Exchange
 * orders vs fills by ex_ord_id, its orders those filled in the span or placed in it with cumQty > 0.
 * The keyset orders are total (the key breaks ties of time), so a row's position is deterministic and
 * equals its place on the sheet.
 */
function ranked(sheet: QueriedSheet, account: string, span: Span): RawBuilder<unknown> {
  const kind = Object.values(RECORD_KINDS).find((k) => k.sheet === sheet && k.table && k.key && k.time)!;
  const [table, key, time] = [sql.table(kind.table!), sql.ref(kind.key!), sql.ref(kind.time![0]!)];
  if (kind.alsoOnDaysOf) {
    const also = kind.alsoOnDaysOf;
    return sql`select ${key}::text as key, row_number() over (order by ${key}) as pos from (
        select ${sql.ref(also.foreignKey)} as ${key} from ${sql.table(also.table)}
          where account = ${account} and ${sql.ref(also.time)} >= ${span.from} and ${sql.ref(also.time)} < ${span.to}
        union
        select ${key} from ${table}
          where account = ${account} and ${time} >= ${span.from} and ${time} < ${span.to} and cum_qty > 0
      ) ids`;
  }
  return sql`select ${key}::text as key, row_number() over (order by ${time}, ${key}) as pos
    from ${table} where account = ${account} and ${time} >= ${span.from} and ${time} < ${span.to}`;
}

/** Keys asked per query: an IN list of parameters stays well below the protocol's 65,535. */
const KEYS_PER_QUERY = 10_000;

/**
 * The 1-based data position (header excluded) of each of `keys` on the sheet, for the keys that
 * have a row there; the caller turns it into a sheet part and row (rowPlace). One ranking of the
 * sheet's rows per chunk of keys; only the asked keys come back.
 */
export async function sheetPositions(
  db: Db,
  sheet: QueriedSheet,
  account: string,
  span: Span,
  keys: readonly string[],
): Promise<Map<string, number>> {
  const positions = new Map<string, number>();
  const unique = [...new Set(keys)];
  for (let i = 0; i < unique.length; i += KEYS_PER_QUERY) {
    const chunk = unique.slice(i, i + KEYS_PER_QUERY);
    const { rows } = await sql<{ key: string; pos: string | number | bigint }>`
      select key, pos from (${ranked(sheet, account, span)}) ranked
      where key in (${sql.join(chunk)})`.execute(db);
    for (const r of rows) positions.set(String(r.key), Number(r.pos));
  }
  return positions;
}

/** sheetPositions of every queried sheet that has keys. */
export async function dataSheetPositions(
  db: Db,
  account: string,
  span: Span,
  keys: ReadonlyMap<string, readonly string[]>,
): Promise<Map<QueriedSheet, Map<string, number>>> {
  const out = new Map<QueriedSheet, Map<string, number>>();
  for (const sheet of ['partnerOrders', 'ordersVsFills', 'fills', 'deposits', 'withdrawals'] as const) {
    const list = keys.get(sheet);
    if (list?.length) out.set(sheet, await sheetPositions(db, sheet, account, span, list));
  }
  return out;
}
