/** Where the breaks' keys have their rows on the workbook's data sheets: each key's position in the sheet's own query
 * order, one query per sheet.
 */
import { sql, type RawBuilder } from 'kysely';
import type { Db } from './database.js';
import type { Span } from './keyset.js';

/** The streamed data sheets whose row order comes from a query (Balances and Coverage are built in memory). */
export type QueriedSheet = 'partnerOrders' | 'ordersVsFills' | 'fills' | 'deposits' | 'withdrawals';

/**
 * The ranking query of each sheet: the SAME rows and order as the reader that streams the sheet
 * (src/store/partner-reads.ts partnerOrdersCreatedIn, src/store/exchange-reads.ts ordersWithFillsIn,
 * fillsByTimeIn, depositsIn, withdrawalsIn): the period span on the same time column, ordered by the
 * keyset (time, id), or by ex_ord_id for Exchange orders vs fills. The keyset orders are total (the
 * id breaks ties of time), so a row's position is deterministic and equals its place on the sheet.
 */
function ranked(sheet: QueriedSheet, account: string, span: Span): RawBuilder<unknown> {
  switch (sheet) {
    case 'partnerOrders':
      return sql`select order_id as key, row_number() over (order by created_at, order_id) as pos
        from partner_order where account = ${account} and created_at >= ${span.from} and created_at < ${span.to}`;
    case 'fills':
      return sql`select exec_id::text as key, row_number() over (order by timestamp, exec_id) as pos
        from exchange_fill where account = ${account} and timestamp >= ${span.from} and timestamp < ${span.to}`;
    case 'deposits':
      return sql`select deposit_id as key, row_number() over (order by timestamp, deposit_id) as pos
        from exchange_deposit where account = ${account} and timestamp >= ${span.from} and timestamp < ${span.to}`;
    case 'withdrawals':
      return sql`select withdrawal_id as key, row_number() over (order by timestamp, withdrawal_id) as pos
        from exchange_withdrawal where account = ${account} and timestamp >= ${span.from} and timestamp < ${span.to}`;
    case 'ordersVsFills':
      return sql`select ex_ord_id::text as key, row_number() over (order by ex_ord_id) as pos from (
          select ex_ord_id from exchange_fill where account = ${account} and timestamp >= ${span.from} and timestamp < ${span.to}
          union
          select ex_ord_id from exchange_order where account = ${account} and timestamp >= ${span.from} and timestamp < ${span.to} and cum_qty > 0
        ) ids`;
  }
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
