/** The report's reads of the partner's records: the period's webhook figures (Summary, `--json`), the daily sums per
 * input currency (the Partner orders sheet's CSV lines: sheet-csv.ts).
 */
import { sql } from 'kysely';
import type { Db } from '../db/database.js';
import { numericOrZero } from '../db/type-parsers.js';
import type { PartnerDailyRec, WebhookStats } from '../../domain/index.js';
import type { Span } from '../db/keyset.js';

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
