import type { Db } from './database.js';
import type { Span } from './recon-reads.js';

/** run.counts: the records of the period (DESIGN.md "JSON summary"). */
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
export async function countPeriod(db: Db, account: string, span: Span, known: { partnerOrders: number; quarantined: number; balanceSnapshots: number }): Promise<RunCounts> {
  const inSpan = async (table: 'exchange_fill' | 'exchange_order' | 'exchange_deposit' | 'exchange_withdrawal') => {
    const { n } = await db
      .selectFrom(table)
      .select((eb) => eb.fn.countAll<string>().as('n'))
      .where('account', '=', account)
      .where('timestamp', '>=', span.from)
      .where('timestamp', '<', span.to)
      .executeTakeFirstOrThrow();
    return Number(n);
  };
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
