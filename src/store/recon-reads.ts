import { sql } from 'kysely';
import type { Db } from './database.js';
import type { PartnerOrderRow } from './schema.js';
import type { Decimal } from '../decimal/decimal.js';
import { toDecimal } from '../decimal/decimal.js';
import type { FillPrefilter, OrderPrefilter } from '../rules/engine.js';
import type { BalanceSnapshot, CoverageRow, Deposit, ExchangeOrderAgg, FeeSchedule, Fill, PartnerCurrency, PartnerOrder, QuarantinedRecord, SymbolRules, WebhookEventLite, Withdrawal } from '../domain/index.js';

/** Rows per keyset page: bounded memory whatever the period's size. */
export const BATCH_SIZE = 5_000;

/**
 * Pages a keyset query, asking the database for page n+1 as soon as page n has arrived, so the
 * server works on the next page while the rules run over the current one. At most two pages
 * are in memory.
 */
export async function* keysetPages<R, K>(fetch: (after: K | null) => Promise<R[]>, keyOf: (row: R) => K, batchSize: number): AsyncGenerator<R[]> {
  let pending: Promise<R[]> | null = fetch(null);
  while (pending) {
    const rows: R[] = await pending;
    if (rows.length === 0) return;
    pending = rows.length < batchSize ? null : fetch(keyOf(rows[rows.length - 1]!));
    // A failed prefetch must not become an unhandled rejection while the consumer works.
    pending?.catch(() => {});
    yield rows;
  }
}

/** The period as instants: [from 00:00Z, to 00:00Z). */
export interface Span {
  from: Date;
  to: Date;
}

export function toPartnerOrder(r: Pick<PartnerOrderRow, 'order_id' | 'order_type' | 'created_at' | 'created_at_text' | 'order_state' | 'order_state_updated_at' | 'order_state_updated_at_text' | 'input_currency' | 'input_amount' | 'output_currency' | 'output_amount' | 'amount_usd' | 'processing_fee' | 'processing_fee_usd' | 'partner_fee' | 'partner_fee_usd' | 'network_fee' | 'network_fee_usd' | 'target_wallet_address' | 'transaction_hash' | 'not_found_at'>): PartnerOrder {
  return {
    orderId: r.order_id,
    orderType: r.order_type,
    createdAt: r.created_at,
    createdAtText: r.created_at_text,
    orderState: r.order_state,
    orderStateUpdatedAt: r.order_state_updated_at,
    orderStateUpdatedAtText: r.order_state_updated_at_text,
    inputCurrency: r.input_currency,
    inputAmount: r.input_amount,
    outputCurrency: r.output_currency,
    outputAmount: r.output_amount,
    amountUsd: r.amount_usd,
    processingFee: r.processing_fee,
    processingFeeUsd: r.processing_fee_usd,
    partnerFee: r.partner_fee,
    partnerFeeUsd: r.partner_fee_usd,
    networkFee: r.network_fee,
    networkFeeUsd: r.network_fee_usd,
    targetWalletAddress: r.target_wallet_address,
    transactionHash: r.transaction_hash,
    notFound: r.not_found_at !== null,
  };
}

const ORDER_COLUMNS = [
  'order_id', 'order_type', 'created_at', 'created_at_text', 'order_state', 'order_state_updated_at', 'order_state_updated_at_text',
  'input_currency', 'input_amount', 'output_currency', 'output_amount', 'amount_usd', 'processing_fee', 'processing_fee_usd',
  'partner_fee', 'partner_fee_usd', 'network_fee', 'network_fee_usd', 'target_wallet_address', 'transaction_hash', 'not_found_at',
] as const;

/** Partner orders created in the span, by keyset (created_at, order_id), one page at a time. */
export async function* partnerOrdersCreatedIn(db: Db, account: string, span: Span, batchSize = BATCH_SIZE): AsyncGenerator<PartnerOrder[]> {
  // Pages on the stored value's exact text: created_at keeps microseconds, a JS Date only
  // milliseconds, and a page ending inside a millisecond would return rows again (or forever).
  const fetch = (after: { at: string; id: string } | null) => {
    let q = db
      .selectFrom('partner_order')
      .select([...ORDER_COLUMNS, sql<string>`created_at::text`.as('created_key')])
      .where('account', '=', account)
      .where('created_at', '>=', span.from)
      .where('created_at', '<', span.to);
    if (after) q = q.where(sql<boolean>`(created_at, order_id) > (${after.at}::timestamptz, ${after.id})`);
    return q.orderBy('created_at').orderBy('order_id').limit(batchSize).execute();
  };
  for await (const rows of keysetPages(fetch, (r) => ({ at: r.created_key, id: r.order_id }), batchSize)) yield rows.map(toPartnerOrder);
}

/** Every stored order still PENDING or WITHDRAWING (P_STALE), whatever its creation date. */
export async function openPartnerOrders(db: Db, account: string): Promise<PartnerOrder[]> {
  const rows = await db.selectFrom('partner_order').select(ORDER_COLUMNS).where('account', '=', account).where('order_state', 'in', ['PENDING', 'WITHDRAWING']).execute();
  return rows.map(toPartnerOrder);
}

function toDeposit(r: { deposit_id: string; amount: Decimal; currency: string; address: string; tx_hash: string | null; state: string; timestamp: Date | null; first_seen_at: Date }): Deposit {
  return { depositId: r.deposit_id, amount: r.amount, currency: r.currency, address: r.address, txHash: r.tx_hash, state: r.state, timestamp: r.timestamp, firstSeenAt: r.first_seen_at };
}

const DEPOSIT_COLUMNS = ['deposit_id', 'amount', 'currency', 'address', 'tx_hash', 'state', 'timestamp', 'first_seen_at'] as const;

export async function depositsByTxHash(db: Db, account: string, hashes: string[]): Promise<Map<string, Deposit[]>> {
  const map = new Map<string, Deposit[]>();
  if (hashes.length === 0) return map;
  const rows = await db.selectFrom('exchange_deposit').select(DEPOSIT_COLUMNS).where('account', '=', account).where('tx_hash', 'in', hashes).execute();
  for (const r of rows) map.set(r.tx_hash!, [...(map.get(r.tx_hash!) ?? []), toDeposit(r)]);
  return map;
}

export async function webhookEventsByOrder(db: Db, account: string, orderIds: string[]): Promise<Map<string, WebhookEventLite[]>> {
  const map = new Map<string, WebhookEventLite[]>();
  if (orderIds.length === 0) return map;
  const rows = await db.selectFrom('webhook_event').select(['order_id', 'order_state', 'order_state_updated_at_text']).where('account', '=', account).where('order_id', 'in', orderIds).execute();
  for (const r of rows) map.set(r.order_id, [...(map.get(r.order_id) ?? []), { orderState: r.order_state, orderStateUpdatedAtText: r.order_state_updated_at_text }]);
  return map;
}

export async function depositAddresses(db: Db, account: string): Promise<string[]> {
  const rows = await db.selectFrom('exchange_deposit').select('address').distinct().where('account', '=', account).execute();
  return rows.map((r) => r.address);
}

/**
 * Exchange orders with at least one fill in the span, with the sums of *all* their stored fills
 * computed in SQL numeric (exact), by keyset on ex_ord_id.
 */
export async function* exchangeOrdersWithFillsIn(db: Db, account: string, span: Span, batchSize = BATCH_SIZE): AsyncGenerator<ExchangeOrderAgg[]> {
  const fetch = async (after: string | null) =>
    (
      await sql<OrderAggRow>`
      with ids as (
        select distinct ex_ord_id from exchange_fill
        where account = ${account} and timestamp >= ${span.from} and timestamp < ${span.to}
          ${after === null ? sql`` : sql`and ex_ord_id > ${after}::bigint`}
        order by ex_ord_id
        limit ${batchSize}
      ),
      -- per order by index (exchange_fill_order), not a join the planner may turn into a scan of
      -- every stored fill on each page
      sums as (
        select ids.ex_ord_id, a.fill_count, a.fill_qty, a.fill_notional
        from ids cross join lateral (
          select count(*)::bigint as fill_count, sum(f.qty) as fill_qty, sum(f.qty * f.price) as fill_notional
          from exchange_fill f where f.account = ${account} and f.ex_ord_id = ids.ex_ord_id
        ) a
      )
      select s.ex_ord_id, (o.ex_ord_id is not null) as found, o.symbol, o.side, o.cum_qty, o.leaves_qty, o.avg_px,
             s.fill_count, s.fill_qty, s.fill_notional
      from sums s left join lateral (select * from exchange_order o where o.account = ${account} and o.ex_ord_id = s.ex_ord_id) o on true
      order by s.ex_ord_id`.execute(db)
    ).rows;
  for await (const rows of keysetPages(fetch, (r) => r.ex_ord_id, batchSize))
    yield rows.map(toOrderAgg);
}

/**
 * Exchange orders with a fill in the span that could fail an order rule, pre-selected in SQL
 * numeric (exact) over pages of `scanSize` orders (sums of *all* their stored fills, as
 * exchangeOrdersWithFillsIn). Orders not stored are never loaded (the order rules do not apply;
 * E_FILL_ORPHAN reports their fills). A stored order is loaded when its symbol is not in
 * `filter.symbols`, its fill qty differs from cumQty, its VWAP could be farther than half an
 * increment from avgPx (compared as |notional - avgPx x qty| against half an increment x |qty|,
 * with a 1e-50 relative margin for the rules' Decimal division), or its quantity could be outside
 * the size limits (same margin); any unknown (NULL) input loads it. Each page says how many
 * stored orders it left out (`passed`) and how many of those E_FILL_AVGPX judges (`passedWithAvgPx`).
 */
export async function* exchangeOrderCandidatesIn(
  db: Db,
  account: string,
  span: Span,
  filter: OrderPrefilter,
  scanSize = SCAN_SIZE / 2,
): AsyncGenerator<{ passed: number; passedWithAvgPx: number; orders: ExchangeOrderAgg[] }> {
  const symbolsJson = JSON.stringify(filter.symbols.map((x) => ({ symbol: x.symbol, half_inc: x.halfIncrement, min_size: x.minOrderSize, max_size: x.maxOrderSize })));
  const fetch = async (after: string | null) => {
    const rows = (
      await sql<OrderAggRow & { scanned: string; last_id: string | null; passed: string; passed_avg: string }>`
      with ids as (
        select distinct ex_ord_id from exchange_fill
        where account = ${account} and timestamp >= ${span.from} and timestamp < ${span.to}
          ${after === null ? sql`` : sql`and ex_ord_id > ${after}::bigint`}
        order by ex_ord_id
        limit ${scanSize}
      ),
      sym as (select * from jsonb_to_recordset(${symbolsJson}::jsonb) as x(symbol text, half_inc numeric, min_size numeric, max_size numeric)),
      agg as materialized (
        select ids.ex_ord_id, (o.ex_ord_id is not null) as found, o.symbol, o.side, o.cum_qty, o.leaves_qty, o.avg_px,
               a.fill_count, a.fill_qty, a.fill_notional,
               coalesce(o.ex_ord_id is not null and (
                 s.symbol is null
                 or a.fill_qty <> coalesce(o.cum_qty, 0)
                 or o.avg_px is not null and a.fill_qty <> 0
                    and abs(a.fill_notional - o.avg_px * a.fill_qty) > s.half_inc * abs(a.fill_qty) - (abs(a.fill_notional) + abs(o.avg_px * a.fill_qty)) * 1e-50
                 or s.min_size is not null and q.qty < s.min_size + abs(q.qty) * 1e-50
                 or s.max_size is not null and s.max_size <> 0 and q.qty > s.max_size - abs(q.qty) * 1e-50
               ), true) as candidate
        from ids
        cross join lateral (
          select count(*)::bigint as fill_count, sum(f.qty) as fill_qty, sum(f.qty * f.price) as fill_notional
          from exchange_fill f where f.account = ${account} and f.ex_ord_id = ids.ex_ord_id
        ) a
        left join lateral (select * from exchange_order o where o.account = ${account} and o.ex_ord_id = ids.ex_ord_id) o on true
        left join sym s on s.symbol = o.symbol
        cross join lateral (select coalesce(o.cum_qty, 0) + coalesce(o.leaves_qty, 0) as qty) q
      ),
      stats as (
        select count(*)::bigint as scanned, max(ex_ord_id) as last_id,
               count(*) filter (where found and not candidate)::bigint as passed,
               count(*) filter (where found and not candidate and avg_px is not null and fill_qty <> 0)::bigint as passed_avg
        from agg
      )
      select st.scanned, st.last_id, st.passed, st.passed_avg, c.*
      from stats st left join (select * from agg where candidate) c on true
      order by c.ex_ord_id`.execute(db)
    ).rows;
    const head = rows[0];
    return {
      scanned: head ? Number(head.scanned) : 0,
      last: head?.last_id ?? null,
      passed: head ? Number(head.passed) : 0,
      passedWithAvgPx: head ? Number(head.passed_avg) : 0,
      orders: rows.filter((r) => r.ex_ord_id !== null).map(toOrderAgg),
    };
  };
  let pending: ReturnType<typeof fetch> | null = fetch(null);
  while (pending) {
    const page: Awaited<ReturnType<typeof fetch>> = await pending;
    if (page.scanned === 0) return;
    pending = page.scanned < scanSize || page.last === null ? null : fetch(page.last);
    pending?.catch(() => {});
    yield { passed: page.passed, passedWithAvgPx: page.passedWithAvgPx, orders: page.orders };
  }
}

function toOrderAgg(r: OrderAggRow): ExchangeOrderAgg {
  return {
    exOrdId: r.ex_ord_id,
    found: r.found,
    symbol: r.symbol,
    side: r.side,
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
  cum_qty: Decimal | null;
  leaves_qty: Decimal | null;
  avg_px: Decimal | null;
  fill_count: string;
  fill_qty: Decimal;
  fill_notional: Decimal;
}

/** Fills in the span with whether their order is stored / answered 404, by keyset on exec_id. */
export async function* fillsIn(db: Db, account: string, span: Span, batchSize = BATCH_SIZE): AsyncGenerator<Fill[]> {
  const fetch = (after: string | null) => {
    let q = db
      .selectFrom('exchange_fill as f')
      .leftJoin('exchange_order as o', (j) => j.onRef('o.account', '=', 'f.account').onRef('o.ex_ord_id', '=', 'f.ex_ord_id'))
      .leftJoin('exchange_order_not_found as n', (j) => j.onRef('n.account', '=', 'f.account').onRef('n.ex_ord_id', '=', 'f.ex_ord_id'))
      .select(['f.exec_id', 'f.ex_ord_id', 'f.side', 'f.symbol', 'f.price', 'f.qty', 'f.fee', 'f.timestamp', 'o.ex_ord_id as order_id', 'n.ex_ord_id as not_found_id'])
      .where('f.account', '=', account)
      .where('f.timestamp', '>=', span.from)
      .where('f.timestamp', '<', span.to);
    if (after !== null) q = q.where('f.exec_id', '>', after);
    return q.orderBy('f.exec_id').limit(batchSize).execute();
  };
  for await (const rows of keysetPages(fetch, (r) => r.exec_id, batchSize))
    yield rows.map(toFill);
}

/** Fills per scan page of fillCandidatesIn: only the candidates among them travel to the client. */
export const SCAN_SIZE = 50_000;

interface FillRow {
  exec_id: string;
  ex_ord_id: string;
  side: string;
  symbol: string;
  price: Decimal;
  qty: Decimal;
  fee: Decimal;
  timestamp: Date;
  order_id: string | null;
  not_found_id: string | null;
}

/**
 * Fills in the span that could fail a per-fill rule, pre-selected in SQL numeric (exact), by
 * scan pages of `scanSize` fills in exec_id order. Each page says how many fills it scanned,
 * so the rules can count the others as checked (engine addPassedFills). A fill is loaded when
 * its order is not stored, its symbol is not in `filter.symbols`, its price is not a multiple
 * of the increment (price 0 exempt) or its qty of the lot size, or its fee is farther than the
 * tolerance from both the maker and the taker expectation of its day. The fee test keeps a
 * margin of 1e-50 x (|fee| + |expected|) on the passing side, far more than the error of the
 * rules' 60-digit Decimal products, so a fill the rules could flag is never left out; any
 * unknown (NULL) input loads the fill. The pure rules then decide on the loaded fills.
 */
export async function* fillCandidatesIn(db: Db, account: string, span: Span, filter: FillPrefilter, scanSize = SCAN_SIZE): AsyncGenerator<{ scanned: number; fills: Fill[] }> {
  const basis = filter.feeBasis === 'notional' ? sql`p.qty * p.price` : sql`p.qty`;
  const feeCouldFail = filter.rates
    ? sql`coalesce(abs(p.fee - ${basis} * r.taker) > s.tol - (abs(p.fee) + abs(${basis} * r.taker)) * 1e-50
                   and abs(p.fee - ${basis} * r.maker) > s.tol - (abs(p.fee) + abs(${basis} * r.maker)) * 1e-50, true)`
    : sql`false`;
  const symbolsJson = JSON.stringify(filter.symbols.map((x) => ({ symbol: x.symbol, inc: x.priceIncrement, lot: x.lotSize, tol: x.feeTolerance })));
  const ratesJson = JSON.stringify((filter.rates ?? []).map((r) => ({ day: r.day, maker: r.makerRate, taker: r.takerRate })));
  const fetch = async (after: string | null) => {
    const rows = (
      await sql<FillRow & { scanned: string; last_exec_id: string | null }>`
      with page as materialized (
        select f.exec_id, f.ex_ord_id, f.side, f.symbol, f.price, f.qty, f.fee, f.timestamp
        from exchange_fill f
        where f.account = ${account} and f.timestamp >= ${span.from} and f.timestamp < ${span.to}
          ${after === null ? sql`` : sql`and f.exec_id > ${after}::bigint`}
        order by f.exec_id
        limit ${scanSize}
      ),
      stats as (select count(*)::bigint as scanned, max(exec_id) as last_exec_id from page),
      sym as (select * from jsonb_to_recordset(${symbolsJson}::jsonb) as x(symbol text, inc numeric, lot numeric, tol numeric)),
      rates as (select * from jsonb_to_recordset(${ratesJson}::jsonb) as x(day date, maker numeric, taker numeric)),
      cand as (
        select p.*
        from page p
        left join sym s on s.symbol = p.symbol
        left join rates r on r.day = (p.timestamp at time zone 'UTC')::date
        where s.symbol is null
           or not exists (select 1 from exchange_order o where o.account = ${account} and o.ex_ord_id = p.ex_ord_id)
           or coalesce(s.inc <> 0 and p.price <> 0 and mod(p.price, s.inc) <> 0, true) and s.inc is not null
           or coalesce(s.lot <> 0 and mod(p.qty, s.lot) <> 0, true) and s.lot is not null
           or ${feeCouldFail}
      )
      select st.scanned, st.last_exec_id, c.*, o.ex_ord_id as order_id, n.ex_ord_id as not_found_id
      from stats st
      left join cand c on true
      left join exchange_order o on o.account = ${account} and o.ex_ord_id = c.ex_ord_id
      left join exchange_order_not_found n on n.account = ${account} and n.ex_ord_id = c.ex_ord_id
      order by c.exec_id`.execute(db)
    ).rows;
    const head = rows[0];
    const scanned = head ? Number(head.scanned) : 0;
    return { scanned, last: head?.last_exec_id ?? null, fills: rows.filter((r) => r.exec_id !== null).map(toFill) };
  };
  let pending: ReturnType<typeof fetch> | null = fetch(null);
  while (pending) {
    const page: Awaited<ReturnType<typeof fetch>> = await pending;
    if (page.scanned === 0) return;
    pending = page.scanned < scanSize || page.last === null ? null : fetch(page.last);
    pending?.catch(() => {});
    yield { scanned: page.scanned, fills: page.fills };
  }
}

function toFill(r: FillRow): Fill {
  return {
    execId: r.exec_id,
    exOrdId: r.ex_ord_id,
    side: r.side,
    symbol: r.symbol,
    price: r.price,
    qty: r.qty,
    fee: r.fee,
    timestamp: r.timestamp,
    orderFound: r.order_id !== null,
    orderNotFound: r.not_found_id !== null,
  };
}

export async function openDeposits(db: Db, account: string): Promise<Deposit[]> {
  const rows = await db.selectFrom('exchange_deposit').select(DEPOSIT_COLUMNS).where('account', '=', account).where('state', '=', 'UNCONFIRMED').execute();
  return rows.map(toDeposit);
}

const WITHDRAWAL_COLUMNS = ['withdrawal_id', 'amount', 'fee', 'currency', 'beneficiary', 'state', 'timestamp', 'first_seen_at'] as const;
function toWithdrawal(r: { withdrawal_id: string; amount: Decimal; fee: Decimal | null; currency: string; beneficiary: string; state: string | null; timestamp: Date | null; first_seen_at: Date }): Withdrawal {
  return { withdrawalId: r.withdrawal_id, amount: r.amount, fee: r.fee, currency: r.currency, beneficiary: r.beneficiary, state: r.state, timestamp: r.timestamp, firstSeenAt: r.first_seen_at };
}

export async function openWithdrawals(db: Db, account: string): Promise<Withdrawal[]> {
  const rows = await db.selectFrom('exchange_withdrawal').select(WITHDRAWAL_COLUMNS).where('account', '=', account).where('state', '=', 'PENDING').execute();
  return rows.map(toWithdrawal);
}

export async function withdrawalsIn(db: Db, account: string, span: Span): Promise<Withdrawal[]> {
  const rows = await db.selectFrom('exchange_withdrawal').select(WITHDRAWAL_COLUMNS).where('account', '=', account).where('timestamp', '>=', span.from).where('timestamp', '<', span.to).execute();
  return rows.map(toWithdrawal);
}

async function latestSnapshotId(db: Db, account: string, source: string, kind: string): Promise<string | null> {
  const row = await db
    .selectFrom('reference_snapshot')
    .select('id')
    .where('account', '=', account)
    .where('source', '=', source)
    .where('kind', '=', kind)
    .orderBy('fetched_at', 'desc')
    .orderBy('id', 'desc')
    .limit(1)
    .executeTakeFirst();
  return row?.id ?? null;
}

export async function latestCurrencies(db: Db, account: string): Promise<Map<string, PartnerCurrency> | null> {
  const id = await latestSnapshotId(db, account, 'partner', 'currencies');
  if (id === null) return null;
  const rows = await db.selectFrom('partner_currency').selectAll().where('snapshot_id', '=', id).execute();
  return new Map(rows.map((r) => [r.code, { code: r.code, type: r.type, precision: r.precision, minBuyAmount: r.min_buy_amount, maxBuyAmount: r.max_buy_amount }]));
}

export async function latestSymbols(db: Db, account: string): Promise<{ snapshotId: string; symbols: Map<string, SymbolRules> } | null> {
  const id = await latestSnapshotId(db, account, 'exchange', 'symbols');
  if (id === null) return null;
  const rows = await db.selectFrom('exchange_symbol').selectAll().where('snapshot_id', '=', id).execute();
  return {
    snapshotId: id,
    symbols: new Map(
      rows.map((r) => [
        r.symbol,
        { symbol: r.symbol, baseCurrency: r.base_currency, baseScale: r.base_currency_scale, counterCurrency: r.counter_currency, counterScale: r.counter_currency_scale, priceIncrement: r.price_increment, lotSize: r.lot_size, minOrderSize: r.min_order_size, maxOrderSize: r.max_order_size },
      ]),
    ),
  };
}

export async function feeSchedule(db: Db, account: string): Promise<FeeSchedule | null> {
  const rows = await db
    .selectFrom('reference_snapshot as s')
    .innerJoin('exchange_fee_rate as r', 'r.snapshot_id', 's.id')
    .select(['s.fetched_at', 'r.maker_rate', 'r.taker_rate'])
    .where('s.account', '=', account)
    .where('s.source', '=', 'exchange')
    .where('s.kind', '=', 'fees')
    .orderBy('s.fetched_at')
    .execute();
  return rows.length ? rows.map((r) => ({ fetchedAt: r.fetched_at, makerRate: r.maker_rate, takerRate: r.taker_rate })) : null;
}

export async function latestWhitelist(db: Db, account: string): Promise<Set<string> | null> {
  const id = await latestSnapshotId(db, account, 'exchange', 'whitelist');
  if (id === null) return null;
  const rows = await db.selectFrom('exchange_whitelist_entry').select('whitelist_id').where('snapshot_id', '=', id).execute();
  return new Set(rows.map((r) => r.whitelist_id));
}

/** Balance snapshot headers of one exchange account, oldest first. */
export async function balanceSnapshotHeaders(db: Db, account: string, exchangeAccount: string): Promise<{ id: string; fetchedAt: Date }[]> {
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

export async function balanceSnapshots(db: Db, headers: { id: string; fetchedAt: Date }[]): Promise<Map<string, BalanceSnapshot>> {
  const map = new Map<string, BalanceSnapshot>(headers.map((h) => [h.id, { id: h.id, fetchedAt: h.fetchedAt, balances: [] }]));
  if (headers.length === 0) return map;
  const rows = await db.selectFrom('balance').selectAll().where('snapshot_id', 'in', headers.map((h) => h.id)).execute();
  for (const r of rows) map.get(r.snapshot_id)?.balances.push({ currency: r.currency, balance: r.balance, available: r.available, balanceLocal: r.balance_local, rate: r.rate });
  return map;
}

/** Coverage rows the sync left unsettled (S_COVERAGE), plus how many rows there are in all. */
export async function coverage(db: Db, account: string): Promise<{ unsettled: CoverageRow[]; total: number }> {
  const rows = await db.selectFrom('sync_coverage').select(['source', 'stream', 'day', 'settled', 'pages', 'rows', 'detail']).where('account', '=', account).where('settled', '=', false).execute();
  const { n } = await db.selectFrom('sync_coverage').select((eb) => eb.fn.countAll<string>().as('n')).where('account', '=', account).executeTakeFirstOrThrow();
  return { unsettled: rows.map((r) => ({ source: r.source, stream: r.stream, day: String(r.day), settled: r.settled, pages: r.pages, rows: r.rows, detail: r.detail })), total: Number(n) };
}

export async function unresolvedQuarantine(db: Db, account: string): Promise<QuarantinedRecord[]> {
  const rows = await db
    .selectFrom('quarantine')
    .select(['id', 'source', 'endpoint', 'entity', 'record_key', 'position', 'reason', 'first_seen_at'])
    .where('account', '=', account)
    .where('resolved_at', 'is', null)
    .orderBy('id')
    .execute();
  return rows.map((r) => ({ id: r.id, source: r.source, endpoint: r.endpoint, entity: r.entity, recordKey: r.record_key, position: r.position, reason: r.reason, firstSeenAt: r.first_seen_at }));
}
