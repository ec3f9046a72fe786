/** The records the mailed workbook lists: those open breaks point at, with the records that explain them. */
import { sql } from 'kysely';
import type { Db } from '../db/database.js';
import type { Deposit, FillRec, PartnerOrderRec, Withdrawal } from '../../domain/index.js';
import {
  DEPOSIT_COLUMNS,
  FILL_COLUMNS,
  WITHDRAWAL_COLUMNS,
  toDeposit,
  toStoredFill,
  toWithdrawal,
} from '../db/exchange-rows.js';
import { ordersWithFillsByIds, type OrderWithFills } from './exchange-sheets.js';
import { ORDER_COLUMNS, toPartnerOrderRec } from '../recon/partner-reads.js';

/** Open breaks' keys per record kind that has a data sheet. */
export interface BreakKeys {
  partnerOrder: readonly string[];
  exchangeOrder: readonly string[];
  fill: readonly string[];
  deposit: readonly string[];
  withdrawal: readonly string[];
}

export interface BreakRecords {
  partnerOrders: PartnerOrderRec[];
  ordersVsFills: OrderWithFills[];
  fills: FillRec[];
  deposits: Deposit[];
  withdrawals: Withdrawal[];
}

/** Exchange order and fill ids are bigint: a key of other text names no row (and must not fail the cast). */
const digits = (keys: readonly string[]) => [...new Set(keys.filter((k) => /^\d{1,19}$/.test(k)))];

/**
 * The records each data sheet of the mailed workbook lists, whatever their day (a carried-over break points at an
 * earlier one): the records open breaks name, and what explains them. An exchange order comes with all its fills and
 * a fill with its order; a partner order with the deposits of its transaction hash and a deposit with the partner
 * orders of its hash. Each list in its sheet's order (time, then key; exchange orders by id), so the rows read as the
 * detail's do. One query per sheet, the keys as one array parameter: the size follows the breaks, not the period.
 */
export async function breakRecords(db: Db, account: string, keys: BreakKeys): Promise<BreakRecords> {
  const orderIds = digits(keys.exchangeOrder);
  const execIds = digits(keys.fill);
  const partnerIds = [...new Set(keys.partnerOrder)];
  const depositIds = [...new Set(keys.deposit)];

  const partnerOrders = await sql<Record<string, unknown>>`
    select ${sql.join(ORDER_COLUMNS.map((c) => sql.ref(c)))}, payment_method, external_reference
    from partner_order
    where account = ${account} and order_id in (
      -- A union of key lookups: an OR of the two conditions is a scan of every stored order (0.2 s a night).
      select unnest(${partnerIds}::text[])
      union
      select o.order_id from exchange_deposit d
      join partner_order o on o.account = d.account and o.transaction_hash = d.tx_hash
      where d.account = ${account} and d.deposit_id = any(${depositIds}::text[]))
    order by created_at, order_id`.execute(db);

  const deposits = await sql<Record<string, unknown>>`
    select ${sql.join(DEPOSIT_COLUMNS.map((c) => sql.ref(c)))}
    from exchange_deposit
    where account = ${account} and (deposit_id = any(${depositIds}::text[]) or tx_hash in (
      select transaction_hash from partner_order where account = ${account} and order_id = any(${partnerIds}::text[])))
    order by coalesce(timestamp, first_seen_at), deposit_id`.execute(db);

  const orderIdsWithFills = await sql<{ id: string }>`
    select ex_ord_id::text as id from (
      select unnest(${orderIds}::bigint[]) as ex_ord_id
      union
      select ex_ord_id from exchange_fill where account = ${account} and exec_id = any(${execIds}::bigint[])
    ) ids order by ex_ord_id`.execute(db);

  const fills = await sql<Record<string, unknown>>`
    select ${sql.join(FILL_COLUMNS.map((c) => sql.ref(c)))}, trade_id
    from exchange_fill
    where account = ${account} and (exec_id = any(${execIds}::bigint[]) or ex_ord_id = any(${orderIds}::bigint[]))
    order by timestamp, exec_id`.execute(db);

  const withdrawals = await sql<Record<string, unknown>>`
    select ${sql.join(WITHDRAWAL_COLUMNS.map((c) => sql.ref(c)))}
    from exchange_withdrawal
    where account = ${account} and withdrawal_id = any(${[...new Set(keys.withdrawal)]}::text[])
    order by coalesce(timestamp, first_seen_at), withdrawal_id`.execute(db);

  return {
    partnerOrders: partnerOrders.rows.map((r) => toPartnerOrderRec(r as never)),
    ordersVsFills: await ordersWithFillsByIds(
      db,
      account,
      orderIdsWithFills.rows.map((r) => r.id),
    ),
    fills: fills.rows.map((r) => Object.assign(toStoredFill(r as never), { tradeId: r.trade_id as string | null })),
    deposits: deposits.rows.map((r) => toDeposit(r as never)),
    withdrawals: withdrawals.rows.map((r) => toWithdrawal(r as never)),
  };
}
