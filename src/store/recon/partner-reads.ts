/** Reads of the partner's records for reconcile and report: orders of a period (keyset pages), open orders, webhook
 * events, daily sums.
 */
import { sql } from 'kysely';
import type { Db } from '../db/database.js';
import { numericOrZero } from '../db/type-parsers.js';
import type { PartnerOrderRow } from '../db/schema.js';
import type { PartnerOrder, WebhookEventLite } from '../../domain/index.js';
import type { PartnerDailyRec, PartnerOrderRec, WebhookStats } from '../../domain/index.js';
import {
  CSV_PAGE_SIZE,
  csvFieldSql,
  csvLookupSql,
  csvPages,
  decimalText,
  isoText,
  type CsvPage,
  type CsvReader,
} from '../report/csv-text.js';
import { idPages, PAGE_SIZE, spanPages, timeKey, type Span } from '../db/keyset.js';
import { changedHashes, changedRow } from './changes.js';
import { rowsByKey } from './rows-by-key.js';

export function toPartnerOrder(
  r: Pick<
    PartnerOrderRow,
    | 'order_id'
    | 'order_type'
    | 'created_at'
    | 'created_at_text'
    | 'order_state'
    | 'order_state_updated_at'
    | 'order_state_updated_at_text'
    | 'input_currency'
    | 'input_amount'
    | 'output_currency'
    | 'output_amount'
    | 'amount_usd'
    | 'processing_fee'
    | 'processing_fee_usd'
    | 'partner_fee'
    | 'partner_fee_usd'
    | 'network_fee'
    | 'network_fee_usd'
    | 'target_wallet_address'
    | 'transaction_hash'
    | 'not_found_at'
  >,
): PartnerOrder {
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

export const ORDER_COLUMNS = [
  'order_id',
  'order_type',
  'created_at',
  'created_at_text',
  'order_state',
  'order_state_updated_at',
  'order_state_updated_at_text',
  'input_currency',
  'input_amount',
  'output_currency',
  'output_amount',
  'amount_usd',
  'processing_fee',
  'processing_fee_usd',
  'partner_fee',
  'partner_fee_usd',
  'network_fee',
  'network_fee_usd',
  'target_wallet_address',
  'transaction_hash',
  'not_found_at',
] as const;

/**
 * Partner orders created in the span, by keyset (created_at, order_id), one page at a time, with
 * the columns only the workbook shows (payment method, external reference).
 */
export async function* partnerOrdersCreatedIn(
  db: Db,
  account: string,
  span: Span,
  pageSize = PAGE_SIZE,
): AsyncGenerator<PartnerOrderRec[]> {
  const query = db
    .selectFrom('partner_order')
    .select([...ORDER_COLUMNS, 'payment_method', 'external_reference', timeKey('created_at')])
    .where('account', '=', account);
  const columns = { time: 'created_at', id: 'order_id', idType: 'text' } as const;
  for await (const rows of spanPages(query, columns, span, pageSize)) yield rows.map(toPartnerOrderRec);
}

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

/** A partner order as the workbook lists it: with the columns only the workbook shows. */
export function toPartnerOrderRec(
  r: Parameters<typeof toPartnerOrder>[0] & Pick<PartnerOrderRow, 'payment_method' | 'external_reference'>,
): PartnerOrderRec {
  return { ...toPartnerOrder(r), paymentMethod: r.payment_method, externalReference: r.external_reference };
}

/**
 * Partner orders judged for a change since that transaction (null: every stored order) and not
 * created in the span, by keyset on order_id: the order changed, or it carries a hash a changed
 * deposit or order carries or gave up (the claimants of a deposit, docs/rules.md X_DEPOSIT_MISSING).
 */
export async function* partnerOrdersChangedOutside(
  db: Db,
  account: string,
  span: Span,
  since: string | null,
  pageSize = PAGE_SIZE,
): AsyncGenerator<PartnerOrder[]> {
  // The changed ids by their two indexes (change_xid, transaction_hash): an OR would read every order.
  const changed =
    since === null
      ? null
      : sql<{
          order_id: string;
        }>`select order_id from partner_order c where account = ${account} and ${changedRow('c', since)}
          union select order_id from partner_order where account = ${account} and transaction_hash in (${changedHashes(account, since)})`;
  const query = db
    .selectFrom('partner_order')
    .select(ORDER_COLUMNS)
    .where('account', '=', account)
    .where((eb) => eb.or([eb('created_at', '<', span.from), eb('created_at', '>=', span.to)]))
    .$if(changed !== null, (q) => q.where(sql<boolean>`order_id in (${changed})`));
  for await (const rows of idPages(query, 'order_id', (r) => r.order_id, pageSize)) yield rows.map(toPartnerOrder);
}

/** Every stored order still PENDING or WITHDRAWING (P_STALE), whatever its creation date. */
export async function openPartnerOrders(db: Db, account: string): Promise<PartnerOrder[]> {
  const rows = await db
    .selectFrom('partner_order')
    .select(ORDER_COLUMNS)
    .where('account', '=', account)
    .where('order_state', 'in', ['PENDING', 'WITHDRAWING'])
    .execute();
  return rows.map(toPartnerOrder);
}

/**
 * Every stored partner order carrying one of the hashes, by hash, whatever its creation day: the
 * claimants of each hash's deposits (one deposit settles at most one order, docs/rules.md).
 */
export async function partnerOrdersByTxHash(
  db: Db,
  account: string,
  hashes: string[],
): Promise<Map<string, PartnerOrder[]>> {
  const orders = db.selectFrom('partner_order').select(ORDER_COLUMNS).where('account', '=', account);
  return rowsByKey(orders, 'transaction_hash', hashes, toPartnerOrder);
}

export async function webhookEventsByOrder(
  db: Db,
  account: string,
  orderIds: string[],
): Promise<Map<string, WebhookEventLite[]>> {
  const events = db
    .selectFrom('webhook_event')
    .select(['order_id', 'order_state', 'order_state_updated_at_text'])
    .where('account', '=', account);
  return rowsByKey(events, 'order_id', orderIds, (r) => ({
    orderState: r.order_state,
    orderStateUpdatedAtText: r.order_state_updated_at_text,
  }));
}

/** Webhook events received in the span, with the schema drift the report counts (docs/apis.md "Partner webhooks"). */
export async function webhookStatsIn(db: Db, account: string, span: Span): Promise<WebhookStats> {
  const res = await sql<{ events: string; duplicates: string | null; drifted: string }>`
    select count(*) as events, sum(duplicate_count) as duplicates, count(*) filter (where cardinality(extra_fields) > 0) as drifted
    from webhook_event where account = ${account} and received_at >= ${span.from} and received_at < ${span.to}`.execute(
    db,
  );
  const fields = await sql<{ field: string }>`
    select distinct unnest(extra_fields) as field
    from webhook_event where account = ${account} and received_at >= ${span.from} and received_at < ${span.to}
    order by 1 limit 50`.execute(db);
  const conflicts = await sql<{ n: string }>`
    select count(*) as n from webhook_event_conflict where account = ${account} and first_seen_at >= ${span.from} and first_seen_at < ${span.to}`.execute(
    db,
  );
  const r = res.rows[0];
  return {
    conflicts: Number(conflicts.rows[0]?.n ?? 0),
    events: Number(r?.events ?? 0),
    duplicates: Number(r?.duplicates ?? 0),
    drifted: Number(r?.drifted ?? 0),
    driftFields: fields.rows.map((f) => f.field),
  };
}

/** Per UTC day and input currency: a handful of rows per day, loaded whole. */
export async function partnerDailyIn(db: Db, account: string, span: Span): Promise<PartnerDailyRec[]> {
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
    from partner_order where account = ${account} and created_at >= ${span.from} and created_at < ${span.to}
    group by 1, 2 order by 1, 2`.execute(db);
  return res.rows.map((r) => ({
    day: String(r.day),
    currency: String(r.currency),
    orders: Number(r.orders),
    completed: Number(r.completed),
    pending: Number(r.pending),
    withdrawing: Number(r.withdrawing),
    failed: Number(r.failed),
    volume: numericOrZero(r.volume),
    processingFee: numericOrZero(r.processing_fee),
    partnerFee: numericOrZero(r.partner_fee),
    networkFee: numericOrZero(r.network_fee),
    amountUsd: numericOrZero(r.amount_usd),
    feesUsd: numericOrZero(r.fees_usd),
  }));
}
