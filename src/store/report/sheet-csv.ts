/** The data sheets' CSV lines Postgres writes, for the detail's Partner orders and Fills files: the rows of
 * partnerOrdersCreatedIn (recon/partner-reads.ts) and fillsByTimeIn (exchange-sheets.ts), in their order, printed as
 * report/csv.ts prints each sheet's row.
 */
import { sql, type RawBuilder } from 'kysely';
import type { Span } from '../db/keyset.js';
import {
  CSV_PAGE_SIZE,
  csvFieldSql,
  csvLookupSql,
  csvPages,
  decimalText,
  isoText,
  type CsvPage,
  type CsvReader,
} from './csv-text.js';
import { symbolsIn } from './exchange-sheets.js';

/**
 * The orders of partnerOrdersCreatedIn, in the same order, as the Partner orders sheet's CSV lines (csv.ts csvLine of
 * partnerOrderRow): written by Postgres (csv-text.ts), so the detail's hundred thousand orders cost no Decimal, Date
 * or row object on the client. `breakFields`: the Open breaks field (ready CSV text) of each order that has one.
 */
export function partnerOrderCsvPages(
  reader: CsvReader,
  account: string,
  span: Span,
  breakFields: ReadonlyMap<string, string>,
  pageSize = CSV_PAGE_SIZE,
): AsyncGenerator<CsvPage> {
  const amount = (column: string) => csvFieldSql(decimalText(sql.ref(column)), true);
  const text = (column: string) => csvFieldSql(sql.ref(column));
  return csvPages(
    reader,
    {
      table: 'partner_order',
      account,
      span,
      columns: { time: 'created_at', id: 'order_id', idType: 'text' },
      fields: [
        csvFieldSql(isoText('created_at'), true),
        text('order_id'),
        text('order_type'),
        text('order_state'),
        csvFieldSql(isoText('order_state_updated_at'), true),
        text('input_currency'),
        amount('input_amount'),
        text('output_currency'),
        amount('output_amount'),
        amount('amount_usd'),
        amount('processing_fee'),
        amount('processing_fee_usd'),
        amount('partner_fee'),
        amount('partner_fee_usd'),
        amount('network_fee'),
        amount('network_fee_usd'),
        text('payment_method'),
        text('target_wallet_address'),
        text('transaction_hash'),
        text('external_reference'),
        csvLookupSql(breakFields, sql`order_id`),
      ],
    },
    pageSize,
  );
}

/**
 * The fills of fillsByTimeIn, in the same order, as the Fills sheet's CSV lines (csv.ts csvLine of fillRow): written
 * by Postgres (csv-text.ts), so a million fills cost no Decimal, Date or row object on the client. trim_scale drops the
 * trailing zeros numeric keeps, as Decimal's toFixed() does; the time is cut to milliseconds, as a JS Date cuts it.
 * The caller gives the two columns the sheet works out, as ready CSV field texts: `feeField(symbol)`, the fee's
 * currency (asked once per symbol of the span), and `breakFields`, the Open breaks field of each fill that has one.
 */
export async function* fillCsvPages(
  reader: CsvReader,
  account: string,
  span: Span,
  print: { feeField: (symbol: string) => string; breakFields: ReadonlyMap<string, string> },
  pageSize = CSV_PAGE_SIZE,
  /** The span's symbols when the caller knows them (the report's per-day sums); otherwise read here. */
  spanSymbols?: readonly string[],
): AsyncGenerator<CsvPage> {
  const symbols = spanSymbols ?? (await symbolsIn(reader.db, 'exchange_fill', account, span));
  const feeFields = new Map(symbols.map((symbol) => [symbol, print.feeField(symbol)]));
  const field = (expr: RawBuilder<unknown>) => csvFieldSql(expr, true);
  yield* csvPages(
    reader,
    {
      table: 'exchange_fill',
      account,
      span,
      columns: { time: 'timestamp', id: 'exec_id', idType: 'bigint' },
      fields: [
        field(isoText('timestamp')),
        field(sql`exec_id`),
        field(sql`ex_ord_id`),
        field(sql`trade_id`),
        csvFieldSql(sql`symbol`),
        csvFieldSql(sql`side`),
        field(decimalText(sql`price`)),
        field(decimalText(sql`qty`)),
        field(decimalText(sql`qty * price`)),
        field(decimalText(sql`fee`)),
        csvLookupSql(feeFields, sql`symbol`),
        csvLookupSql(print.breakFields, sql`exec_id`),
      ],
    },
    pageSize,
  );
}
