/** The period's fills, deposits and withdrawals per UTC day, summed in SQL numeric (the Exchange daily sheet). */
import { sql } from 'kysely';
import type { Db } from '../db/database.js';
import { numericOrZero } from '../db/type-parsers.js';
import type { Span } from '../db/keyset.js';
import type { ExchangeDailyAgg, ExchangeDailyFillRec, Totals } from '../../domain/index.js';

/**
 * Per UTC day of the exchange timestamp: fills per symbol, deposits and withdrawals per currency. The sums follow
 * periodTotals (so a day's rows add up to the Summary's totals): a deposit's amount counts once COMPLETED, a
 * withdrawal's amount and fee once in a debit state; every record is counted. A few rows per day, loaded whole.
 */
export async function exchangeDailyIn(
  db: Db,
  account: string,
  span: Span,
  debitStates: readonly string[],
): Promise<ExchangeDailyAgg> {
  // Grouped by the date and printed once per group: to_char on each of a million fills was a third of the scan.
  const utcDate = sql`(timestamp at time zone 'UTC')::date`;
  const fills = await sql<{
    day: string;
    symbol: string;
    fills: string;
    qty: unknown;
    notional: unknown;
    fees: unknown;
  }>`
    select to_char(${utcDate}, 'YYYY-MM-DD') as day, symbol,
      count(*) as fills, sum(qty) as qty, sum(qty * price) as notional, sum(fee) as fees
    from exchange_fill where account = ${account} and timestamp >= ${span.from} and timestamp < ${span.to}
    group by ${utcDate}, 2 order by 1, 2`.execute(db);
  const deposits = await sql<{ day: string; currency: string; count: string; completed: string; amount: unknown }>`
    select to_char(${utcDate}, 'YYYY-MM-DD') as day, currency, count(*) as count,
      count(*) filter (where state = 'COMPLETED') as completed,
      sum(amount) filter (where state = 'COMPLETED') as amount
    from exchange_deposit where account = ${account} and timestamp >= ${span.from} and timestamp < ${span.to}
    group by ${utcDate}, 2 order by 1, 2`.execute(db);
  const debit = [...debitStates];
  const withdrawals = await sql<{
    day: string;
    currency: string;
    count: string;
    debited: string;
    amount: unknown;
    fee: unknown;
  }>`
    select to_char(${utcDate}, 'YYYY-MM-DD') as day, currency, count(*) as count,
      count(*) filter (where state = any(${debit}::text[])) as debited,
      sum(amount) filter (where state = any(${debit}::text[])) as amount,
      sum(coalesce(fee, 0)) filter (where state = any(${debit}::text[])) as fee
    from exchange_withdrawal where account = ${account} and timestamp >= ${span.from} and timestamp < ${span.to}
    group by ${utcDate}, 2 order by 1, 2`.execute(db);
  return {
    fills: fills.rows.map((r) => ({
      day: String(r.day),
      symbol: r.symbol,
      fills: Number(r.fills),
      qty: numericOrZero(r.qty),
      notional: numericOrZero(r.notional),
      fees: numericOrZero(r.fees),
    })),
    deposits: deposits.rows.map((r) => ({
      day: String(r.day),
      currency: r.currency,
      count: Number(r.count),
      completed: Number(r.completed),
      amount: numericOrZero(r.amount),
    })),
    withdrawals: withdrawals.rows.map((r) => ({
      day: String(r.day),
      currency: r.currency,
      count: Number(r.count),
      debited: Number(r.debited),
      amount: numericOrZero(r.amount),
      fee: numericOrZero(r.fee),
    })),
  };
}

/**
 * The period's fills per symbol (the Summary's totals), added up from the per-day rows of exchangeDailyIn: the same
 * records (UTC days of the span), exact Decimal sums, so no second scan of the period's fills.
 */
export function fillTotalsOfDays(days: readonly ExchangeDailyFillRec[]): Totals['fills'] {
  const bySymbol = new Map<string, Totals['fills'][number]>();
  for (const d of days) {
    const t = bySymbol.get(d.symbol);
    if (!t)
      bySymbol.set(d.symbol, { symbol: d.symbol, fills: d.fills, qty: d.qty, notional: d.notional, fees: d.fees });
    else {
      t.fills += d.fills;
      t.qty = t.qty.plus(d.qty);
      t.notional = t.notional.plus(d.notional);
      t.fees = t.fees.plus(d.fees);
    }
  }
  // In symbol order, by code unit: the same order whatever the server's collation.
  return [...bySymbol.values()].sort((a, b) => (a.symbol < b.symbol ? -1 : a.symbol > b.symbol ? 1 : 0));
}

/** The period's fills per UTC day, from the per-day rows of exchangeDailyIn (coverageOfDays's stored counts). */
export function fillCountsOfDays(days: readonly ExchangeDailyFillRec[]): Map<string, number> {
  const perDay = new Map<string, number>();
  for (const d of days) perDay.set(d.day, (perDay.get(d.day) ?? 0) + d.fills);
  return perDay;
}
