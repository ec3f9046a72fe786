/** The detail's "Exchange orders vs fills" file as CSV lines Postgres writes, on a server: the orders of
 * ordersWithFillsIn (exchange-sheets.ts), each against all its stored fills, in ex_ord_id order, printed as csv.ts
 * prints orderVsFillsRow (report/sheets.ts), so 170,000 orders cost no row, Decimal or Date on the client.
 */
import { sql, type RawBuilder } from 'kysely';
import type { Span } from '../db/keyset.js';
import {
  copiedLines,
  csvFieldSql,
  csvLineSql,
  csvLookupSql,
  decimalText,
  isoText,
  literal,
  type CsvPage,
  type CsvReader,
} from './csv-text.js';
import { symbolsIn } from './exchange-sheets.js';

/** What the sheet works out per row that SQL cannot know: a symbol's VWAP decimals and the Open breaks field. */
export interface OrderVsFillsPrint {
  /** The VWAP decimals of a symbol (null: an order with no symbol); asked once per symbol. */
  vwapDp: (symbol: string | null) => number;
  /** The Open breaks field (ready CSV text) of each exchange order that has one. */
  breakFields: ReadonlyMap<string, string>;
}

/**
 * n / d rounded half away from zero to `dp` decimals (an integer expression), exactly as decimal.ts roundedQuotient:
 * floor(|n| 10^dp / |d| + 1/2) by numeric's exact integer division, scaled back through an exponent literal.
 */
function roundedQuotientSql(
  n: RawBuilder<unknown>,
  d: RawBuilder<unknown>,
  dp: RawBuilder<unknown>,
): RawBuilder<unknown> {
  const k = sql`div(abs(${n}) * ('1e' || ${dp})::numeric * 2 + abs(${d}), 2 * abs(${d}))`;
  return sql`((case when sign(${n}) * sign(${d}) < 0 then '-' else '' end) || ${k}::text || 'e-' || ${dp})::numeric`;
}

/**
 * The lines by one COPY (the store must have copyOut: a server). The VWAP decimals of every symbol a row can show are
 * looked up in a literal: the symbols of the span's stored orders and `fillSymbols`, the span's fill symbols (an
 * order created before the span is listed for its fills in the span, which carry its symbol; an order not stored
 * shows the smallest symbol of its fills). Any other symbol, possible only where an order's fills carry another
 * symbol than the order or several symbols, is rounded to the decimals of no symbol.
 */
export async function* orderVsFillsCsvLines(
  reader: Required<CsvReader>,
  account: string,
  span: Span,
  print: OrderVsFillsPrint,
  fillSymbols: readonly string[],
): AsyncGenerator<CsvPage> {
  const symbols = new Set([...(await symbolsIn(reader.db, 'exchange_order', account, span)), ...fillSymbols]);
  const dps = JSON.stringify(Object.fromEntries([...symbols].map((s) => [s, print.vwapDp(s)])));
  const a = literal(account);
  const from = sql`${literal(span.from.toISOString())}::timestamptz`;
  const to = sql`${literal(span.to.toISOString())}::timestamptz`;
  const amount = (expr: RawBuilder<unknown>) => csvFieldSql(decimalText(expr), true);
  const vwap = sql`case when agg.qty = 0 then null else ${roundedQuotientSql(sql`agg.notional`, sql`agg.qty`, sql`p.dp`)} end`;
  const line = csvLineSql([
    csvFieldSql(sql`ids.ex_ord_id`, true),
    sql<string>`case when o.ex_ord_id is null then 'NO (orphan)' else 'yes' end`,
    csvFieldSql(sql`s.symbol`),
    csvFieldSql(sql`o.side`),
    csvFieldSql(sql`o.ord_type`),
    csvFieldSql(sql`o.ord_status`),
    csvFieldSql(sql`agg.fills`, true),
    amount(sql`o.cum_qty`),
    amount(sql`agg.qty`),
    amount(sql`agg.qty - o.cum_qty`),
    amount(sql`o.avg_px`),
    amount(sql`v.vwap`),
    amount(sql`v.vwap - o.avg_px`),
    amount(sql`agg.notional`),
    amount(sql`agg.fees`),
    csvFieldSql(isoText('agg.first_fill'), true),
    csvFieldSql(isoText('agg.last_fill'), true),
    csvLookupSql(print.breakFields, sql`ids.ex_ord_id`),
  ]);
  yield* copiedLines(
    reader.db,
    reader.copyOut.bind(reader),
    sql`
      with ids as (
        select ex_ord_id from exchange_fill where account = ${a} and timestamp >= ${from} and timestamp < ${to}
        union
        select ex_ord_id from exchange_order
        where account = ${a} and timestamp >= ${from} and timestamp < ${to} and cum_qty > 0
      )
      select ${line}
      from ids
      left join lateral (select * from exchange_order o where o.account = ${a} and o.ex_ord_id = ids.ex_ord_id limit 1) o
        on true
      cross join lateral (
        select count(*) as fills, coalesce(sum(f.qty), 0) as qty, coalesce(sum(f.qty * f.price), 0) as notional,
          coalesce(sum(f.fee), 0) as fees, min(f.timestamp) as first_fill, max(f.timestamp) as last_fill,
          min(f.symbol) as symbol
        from exchange_fill f where f.account = ${a} and f.ex_ord_id = ids.ex_ord_id
      ) agg
      cross join lateral (select coalesce(o.symbol, agg.symbol) as symbol) s
      cross join lateral (select coalesce((${literal(dps)}::jsonb ->> s.symbol)::int, ${sql.lit(print.vwapDp(null))}) as dp) p
      cross join lateral (select ${vwap} as vwap) v
      order by ids.ex_ord_id`,
  );
}
