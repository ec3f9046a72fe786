import { sql } from 'kysely';
import type { Db } from './database.js';
import type { Decimal } from '../decimal/decimal.js';
import { toDecimal } from '../decimal/decimal.js';
import type { DayFlows } from '../rules/balance-roll.js';

export interface FlowOptions {
  account: string;
  /** Latest symbols snapshot, mapping a fill's symbol to base and counter currency. */
  symbolsSnapshotId: string | null;
  feeCurrency: 'counter' | 'base';
  /** exchange.withdrawalDebitStates */
  withdrawalDebitStates: readonly string[];
}

/**
 * Per currency and UTC day, the flows with s1.fetched_at < t <= s2.fetched_at, summed in SQL
 * numeric (exact, set-based: a million fills never enter memory). The bounds are read from the
 * snapshot rows themselves so that timestamptz microseconds are compared as stored.
 * A symbol missing from the snapshot falls back to its BASE-COUNTER spelling.
 */
export async function dailyFlows(db: Db, openingId: string, closingId: string, o: FlowOptions): Promise<DayFlows[]> {
  const feeBase = o.feeCurrency === 'base';
  const states = o.withdrawalDebitStates.length ? sql`w.state in (${sql.join([...o.withdrawalDebitStates])})` : sql`false`;
  const result = await sql<{ currency: string; day: string; deposits: Decimal; withdrawals: Decimal; bought: Decimal; sold: Decimal; fees: Decimal }>`
    with bounds as (
      select (select fetched_at from balance_snapshot where id = ${openingId}::bigint) as t1,
             (select fetched_at from balance_snapshot where id = ${closingId}::bigint) as t2
    ),
    f as (
      select f.side, f.qty, f.price, f.fee, to_char(f.timestamp at time zone 'UTC', 'YYYY-MM-DD') as day,
             coalesce(s.base_currency, split_part(f.symbol, '-', 1)) as base,
             coalesce(s.counter_currency, split_part(f.symbol, '-', 2)) as counter
      from exchange_fill f
      cross join bounds b
      left join exchange_symbol s on s.snapshot_id = ${o.symbolsSnapshotId ?? '0'}::bigint and s.symbol = f.symbol
      where f.account = ${o.account} and f.timestamp > b.t1 and f.timestamp <= b.t2
    ),
    moves as (
      select base as currency, day, 0::numeric as deposits, 0::numeric as withdrawals,
             case when side = 'BUY' then qty else 0 end as bought,
             case when side = 'SELL' then qty else 0 end as sold,
             ${feeBase ? sql`fee` : sql`0::numeric`} as fees
      from f
      union all
      select counter, day, 0, 0,
             case when side = 'SELL' then qty * price else 0 end,
             case when side = 'BUY' then qty * price else 0 end,
             ${feeBase ? sql`0::numeric` : sql`fee`}
      from f
      union all
      select d.currency, to_char(d.timestamp at time zone 'UTC', 'YYYY-MM-DD'), d.amount, 0, 0, 0, 0
      from exchange_deposit d cross join bounds b
      where d.account = ${o.account} and d.state = 'COMPLETED' and d.timestamp > b.t1 and d.timestamp <= b.t2
      union all
      select w.currency, to_char(w.timestamp at time zone 'UTC', 'YYYY-MM-DD'), 0, w.amount + coalesce(w.fee, 0), 0, 0, 0
      from exchange_withdrawal w cross join bounds b
      where w.account = ${o.account} and ${states} and w.timestamp > b.t1 and w.timestamp <= b.t2
    )
    select currency, day, sum(deposits) as deposits, sum(withdrawals) as withdrawals, sum(bought) as bought, sum(sold) as sold, sum(fees) as fees
    from moves
    group by currency, day
    order by currency, day`.execute(db);
  return result.rows.map((r) => ({
    currency: r.currency,
    day: r.day,
    deposits: toDecimal(r.deposits),
    withdrawals: toDecimal(r.withdrawals),
    bought: toDecimal(r.bought),
    sold: toDecimal(r.sold),
    fees: toDecimal(r.fees),
  }));
}
