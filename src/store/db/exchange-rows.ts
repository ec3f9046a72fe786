/** The exchange's deposits, withdrawals and fills as every reader selects them: their stored columns and the mappers to
 * the domain's records (the reconcile's reads, the report's sheets, the mailed records).
 */
import type { Selectable } from 'kysely';
import type { ExchangeDepositTable, ExchangeFillTable, ExchangeWithdrawalTable } from './schema.js';
import type { Deposit, Withdrawal } from '../../domain/index.js';

export const DEPOSIT_COLUMNS = [
  'deposit_id',
  'amount',
  'currency',
  'address',
  'tx_hash',
  'state',
  'timestamp',
  'first_seen_at',
] as const;
export function toDeposit(r: Pick<Selectable<ExchangeDepositTable>, (typeof DEPOSIT_COLUMNS)[number]>): Deposit {
  return {
    depositId: r.deposit_id,
    amount: r.amount,
    currency: r.currency,
    address: r.address,
    txHash: r.tx_hash,
    state: r.state,
    timestamp: r.timestamp,
    firstSeenAt: r.first_seen_at,
  };
}

export const WITHDRAWAL_COLUMNS = [
  'withdrawal_id',
  'amount',
  'fee',
  'currency',
  'beneficiary',
  'state',
  'timestamp',
  'first_seen_at',
] as const;
export function toWithdrawal(
  r: Pick<Selectable<ExchangeWithdrawalTable>, (typeof WITHDRAWAL_COLUMNS)[number]>,
): Withdrawal {
  return {
    withdrawalId: r.withdrawal_id,
    amount: r.amount,
    fee: r.fee,
    currency: r.currency,
    beneficiary: r.beneficiary,
    state: r.state,
    timestamp: r.timestamp,
    firstSeenAt: r.first_seen_at,
  };
}

/** The stored columns of a fill that the rules and the workbook read (the workbook adds trade_id). */
export const FILL_COLUMNS = ['exec_id', 'ex_ord_id', 'side', 'symbol', 'price', 'qty', 'fee', 'timestamp'] as const;

export function toStoredFill(r: Pick<Selectable<ExchangeFillTable>, (typeof FILL_COLUMNS)[number]>) {
  return {
    execId: r.exec_id,
    exOrdId: r.ex_ord_id,
    side: r.side,
    symbol: r.symbol,
    price: r.price,
    qty: r.qty,
    fee: r.fee,
    timestamp: r.timestamp,
  };
}
