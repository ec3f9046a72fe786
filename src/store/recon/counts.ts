/** Counts and sums of a period's records (run.counts, the Summary's totals) and of the open breaks. */
import { sql, type RawBuilder } from 'kysely';
import type { Db } from '../db/database.js';
import { numericOrZero } from '../db/type-parsers.js';
import type { Span } from '../db/keyset.js';
import type { ExchangeDailyFillRec, Totals } from '../../domain/index.js';
import { fillTotalsOfDays } from '../report/exchange-daily.js';
import type { Decimal } from '../../decimal/decimal.js';

/** run.counts: the records of the period (docs/apis.md "JSON summary"). */
export interface RunCounts {
  partnerOrders: number;
  fills: number;
  exchangeOrders: number;
  deposits: number;
  withdrawals: number;
  balanceSnapshots: number;
  /** Records still unresolved in quarantine (any period). */
  quarantined: number;
}

/**
 * Fills, orders, deposits and withdrawals by their exchange time in the period. partnerOrders,
 * quarantined and balanceSnapshots are known from the rule pass: balanceSnapshots counts the
 * snapshots the balance rules used (the checked pairs and the latest), since the snapshot that
 * closes a nightly period is fetched after it.
 */
export async function countPeriod(
  db: Db,
  account: string,
  span: Span,
  known: { partnerOrders: number; quarantined: number; balanceSnapshots: number },
): Promise<RunCounts> {
  const inSpan = (table: ExchangeTable) => countInSpan(db, account, span, table);
  return {
    partnerOrders: known.partnerOrders,
    fills: await inSpan('exchange_fill'),
    exchangeOrders: await inSpan('exchange_order'),
    deposits: await inSpan('exchange_deposit'),
    withdrawals: await inSpan('exchange_withdrawal'),
    balanceSnapshots: known.balanceSnapshots,
    quarantined: known.quarantined,
  };
}

type ExchangeTable = 'exchange_fill' | 'exchange_order' | 'exchange_deposit' | 'exchange_withdrawal';

/** The account's exchange records of one kind by their exchange time in the span. */
async function countInSpan(db: Db, account: string, span: Span, table: ExchangeTable): Promise<number> {
  const { n } = await db
    .selectFrom(table)
    .select((eb) => eb.fn.countAll<string>().as('n'))
    .where('account', '=', account)
    .where('timestamp', '>=', span.from)
    .where('timestamp', '<', span.to)
    .executeTakeFirstOrThrow();
  return Number(n);
}

/**
 * What the database holds for the period, whatever run stored it: the Summary of a run that failed before its
 * reconcile counted the period (run.counts) shows these instead. Partner orders by creation time, exchange records by
 * their time, balance snapshots fetched in the period, and the records still in quarantine (any period).
 */
export async function storedCounts(db: Db, account: string, span: Span): Promise<RunCounts> {
  const inSpan = (column: string) => sql`${sql.ref(column)} >= ${span.from} and ${sql.ref(column)} < ${span.to}`;
  const [partnerOrders, balanceSnapshots, quarantined] = await Promise.all([
    countWhere(db, 'partner_order', account, inSpan('created_at')),
    countWhere(db, 'balance_snapshot', account, inSpan('fetched_at')),
    countWhere(db, 'quarantine', account, sql`resolved_at is null`),
  ]);
  return countPeriod(db, account, span, { partnerOrders, quarantined, balanceSnapshots });
}

/** The rows of one account's `table` that meet `condition`. */
async function countWhere(db: Db, table: string, account: string, condition: RawBuilder<unknown>): Promise<number> {
  const { rows } = await sql<{ n: string }>`
    select count(*) as n from ${sql.table(table)} where account = ${account} and ${condition}`.execute(db);
  return Number(rows[0]?.n ?? 0);
}

/**
 * The period's records summed per currency or symbol in SQL numeric (the Summary's totals). The fills' totals are
 * added up from `dailyFills`, the period's per-day rows of exchangeDailyIn, rather than read by another scan of a
 * million fills.
 */
export async function periodTotals(
  db: Db,
  account: string,
  span: Span,
  debitStates: readonly string[],
  dailyFills: readonly ExchangeDailyFillRec[],
): Promise<Totals> {
  const partner = await sql<{
    currency: string;
    orders: string;
    volume: unknown;
    fees: unknown;
    amount_usd: unknown;
    fees_usd: unknown;
  }>`
    select input_currency as currency, count(*) as orders, sum(input_amount) as volume,
      sum(coalesce(processing_fee, 0) + coalesce(partner_fee, 0) + coalesce(network_fee, 0)) as fees,
      sum(amount_usd) as amount_usd,
      sum(coalesce(processing_fee_usd, 0) + coalesce(partner_fee_usd, 0) + coalesce(network_fee_usd, 0)) as fees_usd
    from partner_order where account = ${account} and created_at >= ${span.from} and created_at < ${span.to}
    group by input_currency order by input_currency`.execute(db);
  const deposits = await sql<{ currency: string; count: string; amount: unknown }>`
    select currency, count(*) as count, sum(amount) filter (where state = 'COMPLETED') as amount
    from exchange_deposit where account = ${account} and timestamp >= ${span.from} and timestamp < ${span.to}
    group by currency order by currency`.execute(db);
  const withdrawals = await sql<{ currency: string; count: string; amount: unknown; fee: unknown }>`
    select currency, count(*) as count,
      sum(amount) filter (where state = any(${[...debitStates]}::text[])) as amount,
      sum(coalesce(fee, 0)) filter (where state = any(${[...debitStates]}::text[])) as fee
    from exchange_withdrawal where account = ${account} and timestamp >= ${span.from} and timestamp < ${span.to}
    group by currency order by currency`.execute(db);
  return {
    partner: partner.rows.map((r) => ({
      currency: r.currency,
      orders: Number(r.orders),
      volume: numericOrZero(r.volume),
      fees: numericOrZero(r.fees),
      amountUsd: numericOrZero(r.amount_usd),
      feesUsd: numericOrZero(r.fees_usd),
    })),
    fills: fillTotalsOfDays(dailyFills),
    deposits: deposits.rows.map((r) => ({
      currency: r.currency,
      count: Number(r.count),
      amount: numericOrZero(r.amount),
    })),
    withdrawals: withdrawals.rows.map((r) => ({
      currency: r.currency,
      count: Number(r.count),
      amount: numericOrZero(r.amount),
      fee: numericOrZero(r.fee),
    })),
  };
}

/** Open breaks of the account, whatever run found them. */
export async function countOpenBreaks(db: Db, account: string): Promise<number> {
  const row = await db
    .selectFrom('break')
    .select((eb) => eb.fn.countAll<string>().as('n'))
    .where('account', '=', account)
    .where('status', '=', 'open')
    .executeTakeFirst();
  return Number(row?.n ?? 0);
}

/** Partner fees of the period's COMPLETED orders per UTC day of creation and input currency, with their USD twins. */
export async function partnerFeesByDay(
  db: Db,
  account: string,
  span: Span,
): Promise<Array<{ day: string; currency: string; fee: Decimal; feeUsd: Decimal }>> {
  const res = await sql<{ day: string; currency: string; fee: unknown; fee_usd: unknown }>`
    select to_char(created_at at time zone 'UTC', 'YYYY-MM-DD') as day, input_currency as currency,
      sum(coalesce(partner_fee, 0)) as fee, sum(coalesce(partner_fee_usd, 0)) as fee_usd
    from partner_order
    where account = ${account} and created_at >= ${span.from} and created_at < ${span.to} and order_state = 'COMPLETED'
    group by 1, 2 order by 1, 2`.execute(db);
  return res.rows.map((r) => ({
    day: String(r.day),
    currency: r.currency,
    fee: numericOrZero(r.fee),
    feeUsd: numericOrZero(r.fee_usd),
  }));
}
