/** The report's reads of the exchange's records, as its data sheets list them: deposits, exchange orders against their
 * fills, fills (their CSV lines: sheet-csv.ts) and the span's symbols, the latest balances.
 */
import { sql } from 'kysely';
import type { Db } from '../db/database.js';
import { numericOrZero, numericOrNull } from '../db/type-parsers.js';
import type { BalanceRec, FillRec, OrderVsFillsRec } from '../../domain/index.js';
import { accountSpanReader, PAGE_SIZE, type Span } from '../db/keyset.js';
import { DEPOSIT_COLUMNS, FILL_COLUMNS, toDeposit, toStoredFill } from '../db/exchange-rows.js';
import { newestSnapshot } from '../sync/snapshots.js';

// ------------------------------------------------------------------ deposits

/** Deposits with their time in the span, by keyset (timestamp, deposit_id). */
export const depositsIn = accountSpanReader(
  (db) => db.selectFrom('exchange_deposit').select(DEPOSIT_COLUMNS),
  { time: 'timestamp', id: 'deposit_id', idType: 'text' },
  toDeposit,
);

// ------------------------------------------------------------------ exchange orders against their fills

/**
 * An exchange order in scope of the order rules (a fill in the span, or created in it with cumQty > 0), against *all*
 * its stored fills; orderSymbol is the order's own (null when not stored).
 */
export type OrderWithFills = OrderVsFillsRec & { orderSymbol: string | null };

/**
 * Exchange orders with at least one fill in the span, and those created in it (their timestamp)
 * with cumQty > 0 even without any stored fill, each against *all* its stored fills
 * (docs/rules.md E_FILL_QTY), summed in SQL numeric (exact), in ex_ord_id order, `pageSize` orders
 * a page. Orders never found come with found = false and the symbol of their fills.
 *
 * The ids in scope are listed once (one scan of the span's fills, ~170,000 ids at bench scale:
 * a few MB), then each page looks up its own ids by index. Paging the id list itself with
 * `ex_ord_id > after` read every fill of the span again on each page (the planner takes the time
 * index for the span, then filters on the id): 0.2 s a page at a fifth of the bench, O(pages x
 * fills) in all. The order is looked up in a lateral subquery with `limit 1` (one row by primary
 * key anyway) so the planner cannot turn it into a hash join that reads every stored order on each page.
 */
export async function* ordersWithFillsIn(
  db: Db,
  account: string,
  span: Span,
  pageSize = PAGE_SIZE,
): AsyncGenerator<OrderWithFills[]> {
  const ids = (
    await sql<{ id: string }>`
      select ex_ord_id::text as id from (
        select ex_ord_id from exchange_fill
        where account = ${account} and timestamp >= ${span.from} and timestamp < ${span.to}
        union
        select ex_ord_id from exchange_order
        where account = ${account} and timestamp >= ${span.from} and timestamp < ${span.to} and cum_qty > 0
      ) ids
      order by ex_ord_id`.execute(db)
  ).rows.map((r) => r.id);
  const fetch = (chunk: string[]) => ordersWithFillsByIds(db, account, chunk);
  // The next page is asked for while the consumer works on this one (as keysetScan does).
  let pending: Promise<OrderWithFills[]> | null = ids.length ? fetch(ids.slice(0, pageSize)) : null;
  for (let at = 0; pending; at += pageSize) {
    const rows = await pending;
    const next = at + pageSize;
    pending = next < ids.length ? fetch(ids.slice(next, next + pageSize)) : null;
    // A failed prefetch must not become an unhandled rejection while the consumer works (or stops early).
    pending?.catch(() => {});
    yield rows;
  }
}

/**
 * Exchange orders by ex_ord_id, each against all its stored fills, in the order of `ids` (digits only: the keys are
 * bigint); an id with no stored order comes with found = false and the symbol of its fills.
 */
export async function ordersWithFillsByIds(db: Db, account: string, ids: readonly string[]): Promise<OrderWithFills[]> {
  if (!ids.length) return [];
  const { rows } = await sql<Record<string, unknown>>`
      select ids.ex_ord_id, o.ex_ord_id is not null as found, o.symbol as order_symbol, coalesce(o.symbol, agg.symbol) as symbol, o.side, o.ord_type,
        o.ord_status, o.cum_qty, o.leaves_qty, o.avg_px,
        agg.fills, agg.qty, agg.notional, agg.fees, agg.first_fill, agg.last_fill
      from unnest(string_to_array(${ids.join(',')}, ',')::bigint[]) with ordinality as ids(ex_ord_id, n)
      left join lateral (select * from exchange_order o where o.account = ${account} and o.ex_ord_id = ids.ex_ord_id limit 1) o on true
      cross join lateral (
        select count(*) as fills, coalesce(sum(f.qty), 0) as qty, coalesce(sum(f.qty * f.price), 0) as notional,
          coalesce(sum(f.fee), 0) as fees, min(f.timestamp) as first_fill, max(f.timestamp) as last_fill, min(f.symbol) as symbol
        from exchange_fill f where f.account = ${account} and f.ex_ord_id = ids.ex_ord_id
      ) agg
      order by ids.n`.execute(db);
  return rows.map((r) => ({
    exOrdId: String(r.ex_ord_id),
    found: r.found === true,
    orderSymbol: (r.order_symbol as string | null) ?? null,
    symbol: (r.symbol as string | null) ?? null,
    side: (r.side as string | null) ?? null,
    ordType: (r.ord_type as string | null) ?? null,
    status: (r.ord_status as string | null) ?? null,
    cumQty: numericOrNull(r.cum_qty),
    leavesQty: numericOrNull(r.leaves_qty),
    avgPx: numericOrNull(r.avg_px),
    fills: Number(r.fills),
    fillQty: numericOrZero(r.qty),
    notional: numericOrZero(r.notional),
    fees: numericOrZero(r.fees),
    firstFill: (r.first_fill as Date | null) ?? null,
    lastFill: (r.last_fill as Date | null) ?? null,
  }));
}

// ------------------------------------------------------------------ fills

/** Fills with their time in the span, as the workbook lists them: by keyset (timestamp, exec_id). */
export const fillsByTimeIn = accountSpanReader(
  (db) => db.selectFrom('exchange_fill').select([...FILL_COLUMNS, 'trade_id']),
  { time: 'timestamp', id: 'exec_id', idType: 'bigint' },
  // tradeId set on the fill as built, not spread into a copy: a million rows per report
  (r): FillRec => Object.assign(toStoredFill(r), { tradeId: r.trade_id }),
);

/**
 * The distinct symbols of the account's fills or exchange orders with their time in the span (by the time index, not
 * the account's whole history); an order without a symbol adds none.
 */
export async function symbolsIn(
  db: Db,
  table: 'exchange_fill' | 'exchange_order',
  account: string,
  span: Span,
): Promise<string[]> {
  const rows = await db
    .selectFrom(table)
    .select('symbol')
    .distinct()
    .where('account', '=', account)
    .where('timestamp', '>=', span.from)
    .where('timestamp', '<', span.to)
    .execute();
  return rows.flatMap((r) => (r.symbol === null ? [] : [r.symbol]));
}

// ------------------------------------------------------------------ balances

/** The balances of the newest snapshot of one exchange account, by currency (none: empty). */
export async function latestBalances(db: Db, account: string, exchangeAccount: string): Promise<BalanceRec[]> {
  const latestSnap = await newestSnapshot(
    db
      .selectFrom('balance_snapshot')
      .select(['id', 'fetched_at'])
      .where('account', '=', account)
      .where('exchange_account', '=', exchangeAccount),
  );
  if (!latestSnap) return [];
  return (
    await db.selectFrom('balance').selectAll().where('snapshot_id', '=', latestSnap.id).orderBy('currency').execute()
  ).map((r) => ({
    currency: r.currency,
    balance: r.balance,
    available: r.available,
    balanceLocal: r.balance_local,
    rate: r.rate,
    fetchedAt: latestSnap.fetched_at,
  }));
}
