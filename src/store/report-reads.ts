import { sql } from 'kysely';
import type { Db } from './database.js';
import { Decimal, toDecimal } from '../decimal/decimal.js';
import { AppError } from '../errors.js';
import { parseRunRequests } from '../http/meter.js';
import { dayStart } from '../util/dates.js';
import { toPartnerOrder } from './recon-reads.js';
import type {
  BalanceRec,
  BalanceRollRec,
  CoverageRec,
  DepositRec,
  FillRec,
  OrderVsFillsRec,
  PartnerDailyRec,
  PartnerOrderRec,
  RuleResult,
  RunInfo,
  StageInfo,
  Totals,
  WebhookStats,
  WithdrawalRec,
} from '../report/model.js';
import { Precision, type SymbolScales } from '../report/precision.js';

/**
 * Loaders: the store -> the report's plain data. Big tables are read in keyset-paginated
 * batches (never OFFSET, never a whole table): Kysely's stream() on PGlite buffers the full
 * result, so paging by key is the only bounded way on both databases.
 * A page lives (with its prefetched successor) while the workbook writes it, long enough for V8
 * to promote it to the old generation, where it piles up as garbage until a full GC: 5,000-row
 * pages let the heap grow to ~200 MB over a ~30 MB live set, 1,000-row pages to ~130 MB, at the
 * same speed (the writer, not the queries, sets the pace).
 */
export const BATCH = 1000;

export class ReportError extends AppError {
  constructor(message: string) {
    super('REPORT', message, 1);
  }
}

export interface PeriodBounds {
  account: string;
  from: Date;
  to: Date;
}

// ------------------------------------------------------------------ run

export async function loadRun(db: Db, runId: string): Promise<RunInfo> {
  const row = await db.selectFrom('run').selectAll().where('id', '=', runId).executeTakeFirst();
  if (!row) throw new ReportError(`run ${runId} not found; list runs with \`ramp-recon runs\``);
  if (!row.period_from || !row.period_to) throw new ReportError(`run ${runId} (${row.command}) has no period; only runs of a period can be reported`);
  return {
    id: row.id,
    account: row.account,
    command: row.command,
    status: row.status,
    periodFrom: row.period_from,
    periodTo: row.period_to,
    startedAt: row.started_at,
    finishedAt: row.finished_at,
    failedStage: row.failed_stage,
    error: row.error,
    stages: plainStages(row.stages),
    counts: plainCounts(row.counts),
    requests: parseRunRequests(row.requests),
    ruleResults: plainRules(row.rule_results),
    rulesetVersion: row.ruleset_version,
    configHash: row.config_hash,
  };
}

/** jsonb comes back through the lossless parser: numbers are LosslessNumber objects. */
function num(v: unknown): number | null {
  if (v === null || v === undefined || v === '') return null;
  const n = Number(typeof v === 'object' ? String(v) : v);
  return Number.isFinite(n) ? n : null;
}

function plainCounts(value: unknown): Record<string, number> {
  const out: Record<string, number> = {};
  if (value && typeof value === 'object') for (const [k, v] of Object.entries(value)) {
    const n = num(v);
    if (n !== null) out[k] = n;
  }
  return out;
}

function plainStages(value: unknown): Record<string, StageInfo> {
  const out: Record<string, StageInfo> = {};
  if (value && typeof value === 'object')
    for (const [k, v] of Object.entries(value as Record<string, Record<string, unknown>>)) {
      if (!v || typeof v !== 'object') continue;
      out[k] = {
        status: typeof v.status === 'string' ? v.status : undefined,
        ms: num(v.ms) ?? undefined,
        error: typeof v.error === 'string' ? v.error : undefined,
      };
    }
  return out;
}

function plainRules(value: unknown): RuleResult[] {
  if (!Array.isArray(value)) return [];
  return value
    .filter((r): r is Record<string, unknown> => !!r && typeof r === 'object')
    .map((r) => ({
      code: String(r.code ?? ''),
      severity: String(r.severity ?? ''),
      description: String(r.description ?? ''),
      status: String(r.status ?? ''),
      checked: num(r.checked),
      breaks: num(r.breaks),
      reason: typeof r.reason === 'string' ? r.reason : undefined,
    }));
}

// ------------------------------------------------------------------ precision

export async function loadPrecision(db: Db, account: string): Promise<Precision> {
  const latest = async (source: string, kind: string) =>
    (
      await db
        .selectFrom('reference_snapshot')
        .select('id')
        .where('account', '=', account)
        .where('source', '=', source)
        .where('kind', '=', kind)
        .orderBy('fetched_at', 'desc')
        .orderBy('id', 'desc')
        .limit(1)
        .executeTakeFirst()
    )?.id;
  const partner = new Map<string, { precision: number; type: string }>();
  const currenciesId = await latest('partner', 'currencies');
  if (currenciesId) {
    const rows = await db.selectFrom('partner_currency').select(['code', 'precision', 'type']).where('snapshot_id', '=', currenciesId).execute();
    for (const r of rows) partner.set(r.code, { precision: Number(r.precision), type: r.type });
  }
  const symbols = new Map<string, SymbolScales>();
  const symbolsId = await latest('exchange', 'symbols');
  if (symbolsId) {
    const rows = await db.selectFrom('exchange_symbol').selectAll().where('snapshot_id', '=', symbolsId).execute();
    for (const r of rows)
      symbols.set(r.symbol, {
        base: r.base_currency,
        counter: r.counter_currency,
        baseScale: r.base_currency_scale === null ? null : Number(r.base_currency_scale),
        counterScale: r.counter_currency_scale === null ? null : Number(r.counter_currency_scale),
        priceScale: r.price_increment ? r.price_increment.decimalPlaces() : null,
      });
  }
  return new Precision({ partner, symbols });
}

// ------------------------------------------------------------------ totals and small tables

const dec = (v: unknown): Decimal => (v === null || v === undefined ? new Decimal(0) : toDecimal(v));
const decOrNull = (v: unknown): Decimal | null => (v === null || v === undefined ? null : toDecimal(v));

export async function loadTotals(db: Db, b: PeriodBounds, debitStates: readonly string[]): Promise<Totals> {
  const partner = await sql<{ currency: string; orders: string; volume: unknown; fees: unknown; amount_usd: unknown; fees_usd: unknown }>`
    select input_currency as currency, count(*) as orders, sum(input_amount) as volume,
      sum(coalesce(processing_fee, 0) + coalesce(partner_fee, 0) + coalesce(network_fee, 0)) as fees,
      sum(amount_usd) as amount_usd,
      sum(coalesce(processing_fee_usd, 0) + coalesce(partner_fee_usd, 0) + coalesce(network_fee_usd, 0)) as fees_usd
    from partner_order where account = ${b.account} and created_at >= ${b.from} and created_at < ${b.to}
    group by input_currency order by input_currency`.execute(db);
  const fills = await sql<{ symbol: string; fills: string; qty: unknown; notional: unknown; fees: unknown }>`
    select symbol, count(*) as fills, sum(qty) as qty, sum(qty * price) as notional, sum(fee) as fees
    from exchange_fill where account = ${b.account} and timestamp >= ${b.from} and timestamp < ${b.to}
    group by symbol order by symbol`.execute(db);
  const deposits = await sql<{ currency: string; count: string; amount: unknown }>`
    select currency, count(*) as count, sum(amount) filter (where state = 'COMPLETED') as amount
    from exchange_deposit where account = ${b.account} and timestamp >= ${b.from} and timestamp < ${b.to}
    group by currency order by currency`.execute(db);
  const withdrawals = await sql<{ currency: string; count: string; amount: unknown; fee: unknown }>`
    select currency, count(*) as count,
      sum(amount) filter (where state = any(${[...debitStates]}::text[])) as amount,
      sum(coalesce(fee, 0)) filter (where state = any(${[...debitStates]}::text[])) as fee
    from exchange_withdrawal where account = ${b.account} and timestamp >= ${b.from} and timestamp < ${b.to}
    group by currency order by currency`.execute(db);
  return {
    partner: partner.rows.map((r) => ({ currency: r.currency, orders: Number(r.orders), volume: dec(r.volume), fees: dec(r.fees), amountUsd: dec(r.amount_usd), feesUsd: dec(r.fees_usd) })),
    fills: fills.rows.map((r) => ({ symbol: r.symbol, fills: Number(r.fills), qty: dec(r.qty), notional: dec(r.notional), fees: dec(r.fees) })),
    deposits: deposits.rows.map((r) => ({ currency: r.currency, count: Number(r.count), amount: dec(r.amount) })),
    withdrawals: withdrawals.rows.map((r) => ({ currency: r.currency, count: Number(r.count), amount: dec(r.amount), fee: dec(r.fee) })),
  };
}

/** Webhook events received in the period, with the schema drift DESIGN.md asks the report to count. */
export async function loadWebhookStats(db: Db, b: PeriodBounds): Promise<WebhookStats> {
  const res = await sql<{ events: string; duplicates: string | null; drifted: string }>`
    select count(*) as events, sum(duplicate_count) as duplicates, count(*) filter (where cardinality(extra_fields) > 0) as drifted
    from webhook_event where account = ${b.account} and received_at >= ${b.from} and received_at < ${b.to}`.execute(db);
  const fields = await sql<{ field: string }>`
    select distinct unnest(extra_fields) as field
    from webhook_event where account = ${b.account} and received_at >= ${b.from} and received_at < ${b.to}
    order by 1 limit 50`.execute(db);
  const r = res.rows[0];
  return {
    events: Number(r?.events ?? 0),
    duplicates: Number(r?.duplicates ?? 0),
    drifted: Number(r?.drifted ?? 0),
    driftFields: fields.rows.map((f) => f.field),
  };
}

/** Per UTC day and input currency: a handful of rows per day, loaded whole. */
export async function loadPartnerDaily(db: Db, b: PeriodBounds): Promise<PartnerDailyRec[]> {
  const res = await sql<Record<string, unknown>>`
    select to_char(created_at at time zone 'UTC', 'YYYY-MM-DD') as day, input_currency as currency,
      count(*) as orders,
      count(*) filter (where order_state = 'COMPLETED') as completed,
      count(*) filter (where order_state = 'PENDING') as pending,
      count(*) filter (where order_state = 'WITHDRAWING') as withdrawing,
      count(*) filter (where order_state = 'FAILED') as failed,
      sum(input_amount) as volume,
      sum(processing_fee) as processing_fee, sum(partner_fee) as partner_fee, sum(network_fee) as network_fee,
      sum(amount_usd) as amount_usd,
      sum(coalesce(processing_fee_usd, 0) + coalesce(partner_fee_usd, 0) + coalesce(network_fee_usd, 0)) as fees_usd
    from partner_order where account = ${b.account} and created_at >= ${b.from} and created_at < ${b.to}
    group by 1, 2 order by 1, 2`.execute(db);
  return res.rows.map((r) => ({
    day: String(r.day),
    currency: String(r.currency),
    orders: Number(r.orders),
    completed: Number(r.completed),
    pending: Number(r.pending),
    withdrawing: Number(r.withdrawing),
    failed: Number(r.failed),
    volume: dec(r.volume),
    processingFee: dec(r.processing_fee),
    partnerFee: dec(r.partner_fee),
    networkFee: dec(r.network_fee),
    amountUsd: dec(r.amount_usd),
    feesUsd: dec(r.fees_usd),
  }));
}

export async function loadCoverage(db: Db, b: PeriodBounds, period: { from: string; to: string }): Promise<CoverageRec[]> {
  const rows = await db
    .selectFrom('sync_coverage')
    .selectAll()
    .where('account', '=', b.account)
    .where('day', '>=', period.from)
    .where('day', '<', period.to)
    .orderBy('source')
    .orderBy('stream')
    .orderBy('day')
    .execute();
  return rows.map((r) => ({
    source: r.source,
    stream: r.stream,
    day: String(r.day),
    pages: Number(r.pages),
    rows: Number(r.rows),
    quarantined: Number(r.quarantined),
    settled: r.settled,
    runId: r.run_id,
  }));
}

/** The roll-forward of this run (balance_roll, written by reconcile) and the latest balance snapshot. */
export async function loadBalances(db: Db, runId: string, account: string, exchangeAccount: string): Promise<{ rolls: BalanceRollRec[]; latest: BalanceRec[] }> {
  const latestSnap = await db
    .selectFrom('balance_snapshot')
    .select(['id', 'fetched_at'])
    .where('account', '=', account)
    .where('exchange_account', '=', exchangeAccount)
    .orderBy('fetched_at', 'desc')
    .orderBy('id', 'desc')
    .limit(1)
    .executeTakeFirst();
  const latest: BalanceRec[] = latestSnap
    ? (await db.selectFrom('balance').selectAll().where('snapshot_id', '=', latestSnap.id).orderBy('currency').execute()).map((r) => ({
        currency: r.currency,
        balance: r.balance,
        available: r.available,
        balanceLocal: r.balance_local,
        rate: r.rate,
        fetchedAt: latestSnap.fetched_at,
      }))
    : [];
  return { rolls: await loadBalanceRoll(db, runId), latest };
}

/**
 * balance_roll (sql/0004_recon.sql, written by reconcile): one row per currency and snapshot pair
 * checked in this run. Read with raw SQL so the report still works on a store migrated before it.
 */
async function loadBalanceRoll(db: Db, runId: string): Promise<BalanceRollRec[]> {
  const exists = await sql<{ t: string | null }>`select to_regclass('balance_roll')::text as t`.execute(db);
  if (!exists.rows[0]?.t) return [];
  const res = await sql<Record<string, unknown>>`
    select currency, opening, deposits, withdrawals, bought, sold, fees, expected_closing, actual_closing, residual,
      first_divergent_day::text as first_divergent_day, opening_at, closing_at
    from balance_roll where run_id = ${runId}
    order by currency, closing_at desc, opening_at desc`.execute(db);
  return res.rows.map((r) => ({
    currency: String(r.currency),
    opening: decOrNull(r.opening),
    deposits: decOrNull(r.deposits),
    withdrawals: decOrNull(r.withdrawals),
    bought: decOrNull(r.bought),
    sold: decOrNull(r.sold),
    fees: decOrNull(r.fees),
    expectedClosing: decOrNull(r.expected_closing),
    actualClosing: decOrNull(r.actual_closing),
    residual: decOrNull(r.residual),
    firstDivergentDay: r.first_divergent_day === null || r.first_divergent_day === undefined ? null : String(r.first_divergent_day).slice(0, 10),
    openingAt: (r.opening_at as Date | null) ?? null,
    closingAt: (r.closing_at as Date | null) ?? null,
  }));
}

// ------------------------------------------------------------------ streams (keyset pages)

/**
 * Yields every row of a keyset-paged query: fetch(after) returns the page after the given key.
 * The next page is requested before the current one is consumed, so the database works while
 * the workbook is written; at most two pages are held.
 */
async function* keyset<T, K>(fetch: (after: K | null) => Promise<T[]>, keyOf: (row: T) => K, batch: number): AsyncGenerator<T> {
  let pending: Promise<T[]> | null = fetch(null);
  while (pending) {
    const rows: T[] = await pending;
    const last = rows[rows.length - 1];
    pending = last !== undefined && rows.length >= batch ? fetch(keyOf(last)) : null;
    // an unconsumed prefetch must not surface as an unhandled rejection if the consumer stops early
    pending?.catch(() => {});
    yield* rows;
  }
}

type TsKey = { ts: string; id: string };

export async function* streamPartnerOrders(db: Db, b: PeriodBounds, batch = BATCH): AsyncGenerator<PartnerOrderRec> {
  const pages = keyset(
    (cursor: TsKey | null) =>
      db
      .selectFrom('partner_order')
      .select([
        'order_id', 'order_type', 'created_at', 'created_at_text', 'order_state', 'order_state_updated_at', 'order_state_updated_at_text',
        'payment_method', 'input_currency', 'input_amount', 'output_currency', 'output_amount', 'amount_usd', 'processing_fee',
        'processing_fee_usd', 'partner_fee', 'partner_fee_usd', 'network_fee', 'network_fee_usd', 'target_wallet_address',
        'transaction_hash', 'external_reference', 'not_found_at',
        sql<string>`created_at::text`.as('ts_key'),
      ])
      .where('account', '=', b.account)
      .where('created_at', '>=', b.from)
      .where('created_at', '<', b.to)
      .$if(cursor !== null, (qb) => qb.where(sql`(created_at, order_id)`, '>', sql`(${cursor?.ts}::timestamptz, ${cursor?.id}::text)`))
      .orderBy('created_at')
      .orderBy('order_id')
      .limit(batch)
      .execute(),
    (r) => ({ ts: r.ts_key, id: r.order_id }),
    batch,
  );
  for await (const r of pages) yield { ...toPartnerOrder(r), paymentMethod: r.payment_method, externalReference: r.external_reference };
}

export async function* streamFills(db: Db, b: PeriodBounds, batch = BATCH): AsyncGenerator<FillRec> {
  const pages = keyset(
    (cursor: TsKey | null) =>
      db
      .selectFrom('exchange_fill')
      .select(['exec_id', 'ex_ord_id', 'trade_id', 'side', 'symbol', 'price', 'qty', 'fee', 'timestamp', sql<string>`timestamp::text`.as('ts_key')])
      .where('account', '=', b.account)
      .where('timestamp', '>=', b.from)
      .where('timestamp', '<', b.to)
      .$if(cursor !== null, (qb) => qb.where(sql`(timestamp, exec_id)`, '>', sql`(${cursor?.ts}::timestamptz, ${cursor?.id}::bigint)`))
      .orderBy('timestamp')
      .orderBy('exec_id')
      .limit(batch)
      .execute(),
    (r) => ({ ts: r.ts_key, id: r.exec_id }),
    batch,
  );
  for await (const r of pages)
    yield { execId: r.exec_id, exOrdId: r.ex_ord_id, tradeId: r.trade_id, side: r.side, symbol: r.symbol, price: r.price, qty: r.qty, fee: r.fee, timestamp: r.timestamp };
}

export async function* streamDeposits(db: Db, b: PeriodBounds, batch = BATCH): AsyncGenerator<DepositRec> {
  const pages = keyset(
    (cursor: TsKey | null) =>
      db
      .selectFrom('exchange_deposit')
      .select(['deposit_id', 'amount', 'currency', 'address', 'tx_hash', 'state', 'timestamp', sql<string>`timestamp::text`.as('ts_key')])
      .where('account', '=', b.account)
      .where('timestamp', '>=', b.from)
      .where('timestamp', '<', b.to)
      .$if(cursor !== null, (qb) => qb.where(sql`(timestamp, deposit_id)`, '>', sql`(${cursor?.ts}::timestamptz, ${cursor?.id}::text)`))
      .orderBy('timestamp')
      .orderBy('deposit_id')
      .limit(batch)
      .execute(),
    (r) => ({ ts: r.ts_key, id: r.deposit_id }),
    batch,
  );
  for await (const r of pages)
    yield { depositId: r.deposit_id, amount: r.amount, currency: r.currency, address: r.address, txHash: r.tx_hash, state: r.state, timestamp: r.timestamp };
}

export async function* streamWithdrawals(db: Db, b: PeriodBounds, batch = BATCH): AsyncGenerator<WithdrawalRec> {
  const pages = keyset(
    (cursor: TsKey | null) =>
      db
      .selectFrom('exchange_withdrawal')
      .select(['withdrawal_id', 'amount', 'fee', 'currency', 'beneficiary', 'state', 'timestamp', sql<string>`timestamp::text`.as('ts_key')])
      .where('account', '=', b.account)
      .where('timestamp', '>=', b.from)
      .where('timestamp', '<', b.to)
      .$if(cursor !== null, (qb) => qb.where(sql`(timestamp, withdrawal_id)`, '>', sql`(${cursor?.ts}::timestamptz, ${cursor?.id}::text)`))
      .orderBy('timestamp')
      .orderBy('withdrawal_id')
      .limit(batch)
      .execute(),
    (r) => ({ ts: r.ts_key, id: r.withdrawal_id }),
    batch,
  );
  for await (const r of pages)
    yield { withdrawalId: r.withdrawal_id, amount: r.amount, fee: r.fee, currency: r.currency, beneficiary: r.beneficiary, state: r.state, timestamp: r.timestamp };
}

/**
 * Exchange orders with at least one fill in the period, each against *all* its stored fills
 * (docs/rules.md E_FILL_QTY), paged by ex_ord_id. Orders never found are listed as orphans.
 * The page's ids are asked as `ex_ord_id > after` (ids are positive), a plain range the
 * (account, ex_ord_id) index serves: each page starts where the last ended instead of sorting
 * the whole period's fills again.
 */
export async function* streamOrdersVsFills(db: Db, b: PeriodBounds, batch = BATCH): AsyncGenerator<OrderVsFillsRec> {
  let after: string | null = null;
  for (;;) {
    const res: { rows: Array<Record<string, unknown>> } = await sql<Record<string, unknown>>`
      with ids as (
        select distinct ex_ord_id from exchange_fill
        where account = ${b.account} and timestamp >= ${b.from} and timestamp < ${b.to}
          and ex_ord_id > ${after ?? '-1'}::bigint
        order by ex_ord_id limit ${batch}
      )
      select ids.ex_ord_id, o.ex_ord_id is not null as found, coalesce(o.symbol, agg.symbol) as symbol, o.side, o.ord_type,
        o.ord_status, o.cum_qty, o.leaves_qty, o.avg_px,
        agg.fills, agg.qty, agg.notional, agg.fees, agg.first_fill, agg.last_fill
      from ids
      left join exchange_order o on o.account = ${b.account} and o.ex_ord_id = ids.ex_ord_id
      cross join lateral (
        select count(*) as fills, coalesce(sum(f.qty), 0) as qty, coalesce(sum(f.qty * f.price), 0) as notional,
          coalesce(sum(f.fee), 0) as fees, min(f.timestamp) as first_fill, max(f.timestamp) as last_fill, min(f.symbol) as symbol
        from exchange_fill f where f.account = ${b.account} and f.ex_ord_id = ids.ex_ord_id
      ) agg
      order by ids.ex_ord_id`.execute(db);
    for (const r of res.rows)
      yield {
        exOrdId: String(r.ex_ord_id),
        found: r.found === true,
        symbol: (r.symbol as string | null) ?? null,
        side: (r.side as string | null) ?? null,
        ordType: (r.ord_type as string | null) ?? null,
        status: (r.ord_status as string | null) ?? null,
        cumQty: decOrNull(r.cum_qty),
        leavesQty: decOrNull(r.leaves_qty),
        avgPx: decOrNull(r.avg_px),
        fills: Number(r.fills),
        fillQty: dec(r.qty),
        notional: dec(r.notional),
        fees: dec(r.fees),
        firstFill: (r.first_fill as Date | null) ?? null,
        lastFill: (r.last_fill as Date | null) ?? null,
      };
    const last = res.rows[res.rows.length - 1];
    if (!last || res.rows.length < batch) return;
    after = String(last.ex_ord_id);
  }
}

export function periodBounds(account: string, period: { from: string; to: string }): PeriodBounds {
  return { account, from: dayStart(period.from), to: dayStart(period.to) };
}
