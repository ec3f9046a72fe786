/** The reconcile's reads of the exchange's records: the rules' candidates pre-selected in SQL (orders against their
 * fills; the fills' in fill-candidates.ts), deposits and withdrawals the rules look up, balance snapshots.
 */
import { sql, type Selectable } from 'kysely';
import type { Db } from '../db/database.js';
import type { ExchangeFillTable } from '../db/schema.js';
import { toDecimal, type Decimal } from '../../decimal/decimal.js';
import type {
  BalanceSnapshot,
  Deposit,
  ExchangeOrderAgg,
  Fill,
  OrderField,
  OrderPrefilter,
  Withdrawal,
} from '../../domain/index.js';
import {
  accountSpanReader,
  idPages,
  mappedPages,
  scanPages,
  PAGE_SIZE,
  type Span,
  type SpanReader,
} from '../db/keyset.js';
import {
  DEPOSIT_COLUMNS,
  FILL_COLUMNS,
  toDeposit,
  toStoredFill,
  toWithdrawal,
  WITHDRAWAL_COLUMNS,
} from '../db/exchange-rows.js';
import { ordersWithFillsIn } from '../report/exchange-sheets.js';
import { rowsByKey } from './rows-by-key.js';
import { changedOrderIds, changedRow, type ChangedOutsideReader } from './changes.js';
import { conditionSql, keepsSql, refTable, type ConditionColumns } from './prefilter-sql.js';

/**
 * Fills per scan page of fillCandidatesIn (orders: half as many): only the candidates among them travel to the client.
 */
export const SCAN_SIZE = 50_000;

// ------------------------------------------------------------------ deposits and withdrawals

export async function depositsByTxHash(db: Db, account: string, hashes: string[]): Promise<Map<string, Deposit[]>> {
  const deposits = db.selectFrom('exchange_deposit').select(DEPOSIT_COLUMNS).where('account', '=', account);
  return rowsByKey(deposits, 'tx_hash', hashes, toDeposit);
}

/** Every distinct address seen on exchange deposits. */
export async function depositAddresses(db: Db, account: string): Promise<string[]> {
  const rows = await db
    .selectFrom('exchange_deposit')
    .select('address')
    .distinct()
    .where('account', '=', account)
    .execute();
  return rows.map((r) => r.address);
}

export async function openDeposits(db: Db, account: string): Promise<Deposit[]> {
  const rows = await db
    .selectFrom('exchange_deposit')
    .select(DEPOSIT_COLUMNS)
    .where('account', '=', account)
    .where('state', '=', 'UNCONFIRMED')
    .execute();
  return rows.map(toDeposit);
}

export async function openWithdrawals(db: Db, account: string): Promise<Withdrawal[]> {
  const rows = await db
    .selectFrom('exchange_withdrawal')
    .select(WITHDRAWAL_COLUMNS)
    .where('account', '=', account)
    .where('state', '=', 'PENDING')
    .execute();
  return rows.map(toWithdrawal);
}

/** Withdrawals with their time in the span, by keyset (timestamp, withdrawal_id). */
export const withdrawalsIn = accountSpanReader(
  (db) => db.selectFrom('exchange_withdrawal').select(WITHDRAWAL_COLUMNS),
  { time: 'timestamp', id: 'withdrawal_id', idType: 'text' },
  toWithdrawal,
);

/**
 * Withdrawals judged for a change (since that transaction; null: every one) that the span does
 * not hold, by keyset on withdrawal_id: with withdrawalsIn, what E_WITHDRAWAL_BENEFICIARY judges.
 */
export const withdrawalsChangedOutside: ChangedOutsideReader<Withdrawal> = (db, account, span, since, pageSize) => {
  const query = db
    .selectFrom('exchange_withdrawal as w')
    .select(WITHDRAWAL_COLUMNS.map((c) => `w.${c}` as const))
    .where('w.account', '=', account)
    .where(changedRow('w', since))
    .where((eb) =>
      eb.or([eb('w.timestamp', 'is', null), eb('w.timestamp', '<', span.from), eb('w.timestamp', '>=', span.to)]),
    );
  return mappedPages(
    idPages(query, 'w.withdrawal_id', (r) => r.withdrawal_id, pageSize),
    toWithdrawal,
  );
};

// ------------------------------------------------------------------ exchange orders against their fills

/** ordersWithFillsIn as the order rules take it (the pages the rules would read without the prefilter). */
export const exchangeOrdersWithFillsIn: SpanReader<ExchangeOrderAgg> = (db, account, span, pageSize) =>
  mappedPages(ordersWithFillsIn(db, account, span, pageSize), (r) => ({
    exOrdId: r.exOrdId,
    found: r.found,
    symbol: r.orderSymbol,
    side: r.side,
    ordStatus: r.status,
    cumQty: r.cumQty,
    leavesQty: r.leavesQty,
    avgPx: r.avgPx,
    fillCount: r.fills,
    fillQty: r.fillQty,
    fillNotional: r.notional,
  }));

/**
 * Exchange orders in scope of the order rules (a fill in the span, or created in it with
 * cumQty > 0: an order whose fills never arrived) that could fail an order rule, pre-selected in SQL
 * numeric (exact) over pages of `scanSize` orders (sums of *all* their stored fills, as
 * ordersWithFillsIn). Orders not stored are never loaded (the order rules do not apply;
 * E_FILL_ORPHAN reports their fills). A stored order is loaded when any rule's description in `filter` keeps it
 * (store/recon/prefilter-sql.ts). Each page says how many stored orders it left out that each rule counts as passed
 * (`passed`, by rule code). `changedSince` (docs/rules.md "What a run judges"): also the orders judged for a change
 * since that transaction (null: every stored order), when they are in the rules' scope (a fill or cumQty > 0);
 * absent: the period alone.
 */
export async function* exchangeOrderCandidatesIn(
  db: Db,
  account: string,
  span: Span,
  filter: OrderPrefilter,
  scanSize = SCAN_SIZE / 2,
  changedSince?: string | null,
): AsyncGenerator<{ passed: Record<string, number>; orders: ExchangeOrderAgg[] }> {
  const sym = refTable(filter.symbols, { name: 'symbol', type: 'text' }, 's');
  const columns: ConditionColumns<OrderField> = {
    fields: {
      ordStatus: sql.ref('o.ord_status'),
      cumQty: sql.ref('o.cum_qty'),
      leavesQty: sql.ref('o.leaves_qty'),
      avgPx: sql.ref('o.avg_px'),
      size: sql.ref('q.qty'),
      fillCount: sql.ref('a.fill_count'),
      fillQty: sql.ref('a.fill_qty'),
      fillNotional: sql.ref('a.fill_notional'),
    },
    symbol: sym,
    unlisted: sql`(s.symbol is null)`,
  };
  // Whether each rule counts an order as judged (before the prefilter: the stats count those it left out).
  const counted = filter.counted.map((c, i) =>
    c.when
      ? sql`coalesce(${conditionSql(c.when, columns)}, false) as ${sql.ref(`counted_${i}`)}`
      : sql`true as ${sql.ref(`counted_${i}`)}`,
  );
  const passed = filter.counted.map(
    (_, i) =>
      sql`count(*) filter (where in_scope and found and not candidate and ${sql.ref(`counted_${i}`)})::bigint as ${sql.ref(`passed_${i}`)}`,
  );
  const lowest = changedSince === null ? null : await lowestOrderFilledIn(db, account, span);
  const fetch = async (after: string | null) => {
    const rows = (
      await sql<OrderAggRow & { scanned: string; last_id: string | null } & Record<`passed_${number}`, string>>`
      with ids as (${orderScopeIds({ account, span, changedSince, after, limit: scanSize }, lowest)}),
      sym as (select * from ${sym.recordset}),
      agg as materialized (
        select ids.ex_ord_id, (o.ex_ord_id is not null) as found, o.symbol, o.side, o.ord_status, o.cum_qty, o.leaves_qty, o.avg_px,
               a.fill_count, a.fill_qty, a.fill_notional,
               -- an order judged for a change is in the rules' scope when it has a fill or cumQty > 0
               (ids.in_span or a.fill_count > 0 or coalesce(o.cum_qty > 0, false)) as in_scope,
               (o.ex_ord_id is not null and ${keepsSql(filter.couldFail, columns)}) as candidate
               ${sql.join(
                 counted.map((c) => sql`, ${c}`),
                 sql``,
               )}
        from ids
        cross join lateral (
          select count(*)::bigint as fill_count, coalesce(sum(f.qty), 0) as fill_qty, coalesce(sum(f.qty * f.price), 0) as fill_notional
          from exchange_fill f where f.account = ${account} and f.ex_ord_id = ids.ex_ord_id
        ) a
        left join lateral (select * from exchange_order o where o.account = ${account} and o.ex_ord_id = ids.ex_ord_id) o on true
        left join sym s on s.symbol = o.symbol
        cross join lateral (select coalesce(o.cum_qty, 0) + coalesce(o.leaves_qty, 0) as qty) q
      ),
      stats as (
        select count(*)::bigint as scanned, max(ex_ord_id) as last_id
               ${sql.join(
                 passed.map((p) => sql`, ${p}`),
                 sql``,
               )}
        from agg
      )
      select st.*, c.*
      from stats st left join (select * from agg where candidate and in_scope) c on true
      order by c.ex_ord_id`.execute(db)
    ).rows;
    const head = rows[0];
    return {
      scanned: head ? Number(head.scanned) : 0,
      last: head?.last_id ?? null,
      passed: Object.fromEntries(
        filter.counted.map((c, i) => [c.code, head ? Number(head[`passed_${i}`]) : 0]),
      ) as Record<string, number>,
      orders: rows.filter((r) => r.ex_ord_id !== null).map(toOrderAgg),
    };
  };
  for await (const page of scanPages(fetch, scanSize)) yield { passed: page.passed, orders: page.orders };
}

/**
 * The lowest order id among the fills of the span (null: none), read through the time index (offset 0: ordered by
 * order id, min() would walk the order index and filter every older fill on its time).
 */
async function lowestOrderFilledIn(db: Db, account: string, span: Span): Promise<string | null> {
  const r = await sql<{ lowest: string | null }>`
    select min(ex_ord_id)::text as lowest from (
      select ex_ord_id from exchange_fill
      where account = ${account} and timestamp >= ${span.from} and timestamp < ${span.to} offset 0
    ) f`.execute(db);
  return r.rows[0]?.lowest ?? null;
}

/**
 * One scan page of a candidates read: the account's records of the span, and those judged for a change since
 * `changedSince` (null: every stored one; undefined: none), the first `limit` of them above the key `after`.
 */
interface ScanPage {
  account: string;
  span: Span;
  changedSince: string | null | undefined;
  after: string | null;
  limit: number;
}

/**
 * The next `limit` order ids above `after` in scope of the order rules, each with whether the
 * period puts it there (`in_span`): a fill in the span, or created in it with cumQty > 0; and the
 * orders judged for a change (changedOrderIds) when `changedSince` is given. Each branch takes its
 * own first `limit` ids on its index, so a page costs what it returns, not the table.
 */
function orderScopeIds({ account, span, changedSince, after, limit }: ScanPage, lowest: string | null) {
  const above = after === null ? sql`` : sql`and ex_ord_id > ${after}::bigint`;
  // The period's fills from the lowest order id among them: walked in order id order, the branch otherwise read every
  // older fill of the account first (a night: a million fills before the first of its 100,000).
  const fromLowest = lowest === null ? sql`and false` : sql`and ex_ord_id >= ${lowest}::bigint`;
  if (changedSince === null)
    // Never judged: every stored order with a fill or a filled quantity.
    return sql`
      select ex_ord_id, bool_or(in_span) as in_span from (
        (select distinct ex_ord_id, false as in_span from exchange_fill where account = ${account} ${above} order by 1 limit ${limit})
        union all (select ex_ord_id, false from exchange_order where account = ${account} and cum_qty > 0 ${above} order by 1 limit ${limit})
      ) u group by ex_ord_id order by ex_ord_id limit ${limit}`;
  const changed =
    changedSince === undefined
      ? sql``
      : sql`union all (select ex_ord_id, false from (${changedOrderIds(account, changedSince, after, limit)}) c)`;
  return sql`
    select ex_ord_id, bool_or(in_span) as in_span from (
      (select distinct ex_ord_id, true as in_span from exchange_fill
        where account = ${account} and timestamp >= ${span.from} and timestamp < ${span.to} ${fromLowest} ${above}
        order by 1 limit ${limit})
      union all (select ex_ord_id, true from exchange_order
        where account = ${account} and timestamp >= ${span.from} and timestamp < ${span.to} and cum_qty > 0 ${above} order by 1 limit ${limit})
      ${changed}
    ) u group by ex_ord_id order by ex_ord_id limit ${limit}`;
}

function toOrderAgg(r: OrderAggRow): ExchangeOrderAgg {
  return {
    exOrdId: r.ex_ord_id,
    found: r.found,
    symbol: r.symbol,
    side: r.side,
    ordStatus: r.ord_status,
    cumQty: r.cum_qty,
    leavesQty: r.leaves_qty,
    avgPx: r.avg_px,
    fillCount: Number(r.fill_count),
    fillQty: toDecimal(r.fill_qty),
    fillNotional: toDecimal(r.fill_notional),
  };
}

interface OrderAggRow {
  ex_ord_id: string;
  found: boolean;
  symbol: string | null;
  side: string | null;
  ord_status: string | null;
  cum_qty: Decimal | null;
  leaves_qty: Decimal | null;
  avg_px: Decimal | null;
  fill_count: string;
  fill_qty: Decimal;
  fill_notional: Decimal;
}

// ------------------------------------------------------------------ fills

/**
 * Fills in the span with whether their order is stored / answered 404, by keyset on exec_id (the pages the per-fill
 * rules would read without the prefilter).
 */
export async function* fillsIn(db: Db, account: string, span: Span, pageSize = PAGE_SIZE): AsyncGenerator<Fill[]> {
  const query = db
    .selectFrom('exchange_fill as f')
    .leftJoin('exchange_order as o', (j) =>
      j.onRef('o.account', '=', 'f.account').onRef('o.ex_ord_id', '=', 'f.ex_ord_id'),
    )
    .leftJoin('exchange_order_not_found as n', (j) =>
      j.onRef('n.account', '=', 'f.account').onRef('n.ex_ord_id', '=', 'f.ex_ord_id'),
    )
    .select(FILL_COLUMNS.map((c) => `f.${c}` as const))
    .select(['o.ex_ord_id as order_id', 'o.ord_type', 'o.side as order_side', 'o.symbol as order_symbol'])
    .select('n.ex_ord_id as not_found_id')
    .where('f.account', '=', account)
    .where('f.timestamp', '>=', span.from)
    .where('f.timestamp', '<', span.to);
  for await (const rows of idPages(query, 'f.exec_id', (r) => r.exec_id, pageSize)) yield rows.map(toFill);
}

/** A fill as the rules' queries select it: the stored columns, and whether its order is stored or known missing. */
export type FillRow = Pick<Selectable<ExchangeFillTable>, (typeof FILL_COLUMNS)[number]> & {
  order_id: string | null;
  ord_type: string | null;
  order_side: string | null;
  order_symbol: string | null;
  not_found_id: string | null;
};

/** A fill as the rules read it, from its row as fillsIn and fillCandidatesIn select it. */
export function toFill(r: FillRow): Fill {
  return {
    ...toStoredFill(r),
    orderFound: r.order_id !== null,
    orderNotFound: r.not_found_id !== null,
    ordType: r.ord_type ?? null,
    orderSide: r.order_side ?? null,
    orderSymbol: r.order_symbol ?? null,
  };
}

// ------------------------------------------------------------------ balance snapshots

/** Balance snapshot headers of one exchange account, oldest first. */
export async function balanceSnapshotHeaders(
  db: Db,
  account: string,
  exchangeAccount: string,
): Promise<{ id: string; fetchedAt: Date }[]> {
  const rows = await db
    .selectFrom('balance_snapshot')
    .select(['id', 'fetched_at'])
    .where('account', '=', account)
    .where('exchange_account', '=', exchangeAccount)
    .orderBy('fetched_at')
    .orderBy('id')
    .execute();
  return rows.map((r) => ({ id: r.id, fetchedAt: r.fetched_at }));
}

export async function balanceSnapshots(
  db: Db,
  headers: { id: string; fetchedAt: Date }[],
): Promise<Map<string, BalanceSnapshot>> {
  const map = new Map<string, BalanceSnapshot>(
    headers.map((h) => [h.id, { id: h.id, fetchedAt: h.fetchedAt, balances: [] }]),
  );
  if (headers.length === 0) return map;
  const rows = await db
    .selectFrom('balance')
    .selectAll()
    .where(
      'snapshot_id',
      'in',
      headers.map((h) => h.id),
    )
    .execute();
  for (const r of rows)
    map.get(r.snapshot_id)?.balances.push({
      currency: r.currency,
      balance: r.balance,
      available: r.available,
      balanceLocal: r.balance_local,
      rate: r.rate,
    });
  return map;
}
