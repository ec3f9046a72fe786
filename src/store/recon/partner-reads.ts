/** The reconcile's reads of the partner's records: orders of a period (keyset pages; the Partner orders sheet reads
 * them too), the orders changed outside it, open orders, orders by hash, webhook events.
 */
import { sql } from 'kysely';
import type { Db } from '../db/database.js';
import type { PartnerOrderRow } from '../db/schema.js';
import type { PartnerOrder, WebhookEventLite } from '../../domain/index.js';
import type { PartnerOrderRec } from '../../domain/index.js';
import { accountSpanReader, idPages, keysetPages, mappedPages, type Span } from '../db/keyset.js';
import { changedHashes, changedRow, type ChangedOutsideReader } from './changes.js';
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
export const partnerOrdersCreatedIn = accountSpanReader(
  (db) => db.selectFrom('partner_order').select([...ORDER_COLUMNS, 'payment_method', 'external_reference']),
  { time: 'created_at', id: 'order_id', idType: 'text' },
  toPartnerOrderRec,
);

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
export const partnerOrdersChangedOutside: ChangedOutsideReader<PartnerOrder> = (db, account, span, since, pageSize) =>
  mappedPages(
    since === null
      ? everyOrderOutside(db, account, span, pageSize)
      : changedOrdersOutside(db, account, span, since, pageSize),
    toPartnerOrder,
  );

/** Every stored order not created in the span (a first judgement), by keyset on order_id. */
function everyOrderOutside(db: Db, account: string, span: Span, pageSize: number) {
  const every = db
    .selectFrom('partner_order')
    .select(ORDER_COLUMNS)
    .where('account', '=', account)
    .where((eb) => eb.or([eb('created_at', '<', span.from), eb('created_at', '>=', span.to)]));
  return idPages(every, 'order_id', (r) => r.order_id, pageSize);
}

/**
 * The orders judged for a change since `since` and not created in the span, by keyset on order_id: the changed ids by
 * their two indexes (change_xid, transaction_hash), each branch keeping only orders outside the span, the page's ids
 * taken from them, then only those probed on the key (offset 0 keeps them nested loops). Joined as a set, the planner
 * merged a night's 10,000 changed ids with the whole key index and hashed every order to match the hashes: 250 ms on
 * the bench's nightly run where this takes about half. Each page probes its own orders only: probed before the page
 * was cut, late data with 100,000 changed orders outside the period read every one of them again for each page.
 */
function changedOrdersOutside(db: Db, account: string, span: Span, since: string, pageSize: number) {
  const outside = (alias: string) =>
    sql<boolean>`(${sql.ref(`${alias}.created_at`)} < ${span.from} or ${sql.ref(`${alias}.created_at`)} >= ${span.to})`;
  const columns = sql.join(ORDER_COLUMNS.map((c) => sql.ref(`p.${c}`)));
  const fetch = async (after: string | null) =>
    (
      await sql<Parameters<typeof toPartnerOrder>[0]>`
        select p.* from (
          select ch.order_id from (
            select c.order_id from partner_order c
            where c.account = ${account} and ${changedRow('c', since)} and ${outside('c')}
            union
            select q.order_id from (${changedHashes(account, since)}) h
            cross join lateral (
              select q.order_id from partner_order q
              where q.account = ${account} and q.transaction_hash = h.h and ${outside('q')} offset 0
            ) q
          ) ch
          ${after === null ? sql`` : sql`where ch.order_id > ${after}`}
          order by ch.order_id
          limit ${pageSize}
        ) ch
        cross join lateral (
          select ${columns} from partner_order p where p.account = ${account} and p.order_id = ch.order_id offset 0
        ) p
        order by p.order_id`.execute(db)
    ).rows;
  return keysetPages(fetch, (r) => r.order_id, pageSize);
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
