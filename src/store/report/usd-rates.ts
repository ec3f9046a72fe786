/** Reads the USD rates of a run's report: the latest balance snapshot's rates and the period's partner orders per input
 * currency.
 */
import { sql } from 'kysely';
import type { Db } from '../db/database.js';
import type { Span } from '../db/keyset.js';
import { latestBalances } from './exchange-sheets.js';
import { Decimal } from '../../decimal/decimal.js';

/** What a run's amounts are valued in USD from (report/usd-rates.ts UsdRates says which source wins). */
export interface UsdRateInputs {
  balances: Array<{ currency: string; rate: Decimal; fetchedAt?: Date }>;
  partner: Array<{ currency: string; inputAmount: Decimal; amountUsd: Decimal }>;
  /** The period the partner orders are of. */
  period?: { from: Date; to: Date };
}

/** The latest balance snapshot's rates and the period's partner orders per input currency. */
export async function usdRateInputs(
  db: Db,
  account: string,
  exchangeAccount: string,
  span: Span,
): Promise<UsdRateInputs> {
  const balances = await latestBalances(db, account, exchangeAccount);
  // numeric sums come back as Decimal through the type parsers (type-parsers.ts).
  const partner = await sql<{ currency: string; input: Decimal; usd: Decimal }>`
    select input_currency as currency, sum(input_amount) as input, sum(amount_usd) as usd
    from partner_order
    where account = ${account} and created_at >= ${span.from} and created_at < ${span.to} and amount_usd is not null
    group by input_currency`.execute(db);
  return {
    balances,
    period: { from: span.from, to: span.to },
    partner: partner.rows.map((p) => ({
      currency: p.currency,
      inputAmount: new Decimal(p.input),
      amountUsd: new Decimal(p.usd),
    })),
  };
}
