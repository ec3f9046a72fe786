/** Store functions of partner orders and their events, day coverage, currencies and quotes. */
import { sql, type RawBuilder } from 'kysely';
import type { Db } from '../db/database.js';
import { recordset, type RecordsetColumns } from './recordset.js';
import { resolveQuarantined, resolving } from './quarantine.js';
import { addDays, dayStart } from '../../util/dates.js';
import type { NewPartnerCurrency, NewPartnerOrder, NewPartnerQuote } from '../db/schema.js';

export type OrderSource = 'poll' | 'refresh' | 'webhook';

export interface UpsertOrdersResult {
  inserted: string[];
  updated: string[];
  /** Rows already stored with the same or a newer state (nothing written). */
  unchanged: number;
}

// The stored state time to compare with; rows written before 0003 (or by hand) have no key.
const storedKey = sql<string>`coalesce(partner_order.order_state_updated_key, partner_order.order_state_updated_at_text)`;

/** A partner order's columns besides raw, as upsertPartnerOrders reads them. */
const PARTNER_ORDER_COLUMNS: RecordsetColumns = [
  ['order_id', 'text'],
  ['external_reference', 'text'],
  ['sub_partner_id', 'text'],
  ['order_type', 'text'],
  ['created_at', 'timestamptz'],
  ['created_at_text', 'text'],
  ['order_state', 'text'],
  ['order_state_updated_at', 'timestamptz'],
  ['order_state_updated_at_text', 'text'],
  ['order_state_updated_key', 'text'],
  ['payment_method', 'text'],
  ['input_currency', 'text'],
  ['input_amount', 'numeric'],
  ['output_currency', 'text'],
  ['output_amount', 'numeric'],
  ['amount_usd', 'numeric'],
  ['processing_fee', 'numeric'],
  ['processing_fee_usd', 'numeric'],
  ['partner_fee', 'numeric'],
  ['partner_fee_usd', 'numeric'],
  ['network_fee', 'numeric'],
  ['network_fee_usd', 'numeric'],
  ['user_id', 'text'],
  ['target_wallet_address', 'text'],
  ['transaction_hash', 'text'],
];

/**
 * Upserts partner orders in one statement, keyed by (account, orderId). A row replaces the stored
 * one only when its orderStateUpdatedAt is newer (nanosecond key), so a late PENDING never
 * overwrites COMPLETED. With the same state time, a polled row replaces a different stored body
 * (the polled order is the reference; an event's createdAt is the event's time, not the order's),
 * and a webhook row never does. An event never rewrites created_at of a stored order.
 * Every observed (state, time) goes to partner_order_state. Idempotent: the same rows again write nothing.
 * `resolvedKeys`: order ids whose open quarantine entries the same statement resolves (orders that validated now), so
 * that a page without a bad record is one statement, needing no transaction around it.
 */
export async function upsertPartnerOrders(
  db: Db,
  account: string,
  rows: NewPartnerOrder[],
  source: OrderSource,
  now: Date,
  resolvedKeys: string[] = [],
): Promise<UpsertOrdersResult> {
  if (rows.length === 0) {
    await resolveQuarantined(db, account, 'partner_order', resolvedKeys);
    return { inserted: [], updated: [], unchanged: 0 };
  }
  // "on conflict do update" cannot touch one row twice per statement: keep the newest per id.
  const byId = new Map<string, NewPartnerOrder>();
  for (const r of rows) {
    const prev = byId.get(r.order_id);
    if (!prev || prev.order_state_updated_key <= r.order_state_updated_key) byId.set(r.order_id, r);
  }
  const unique = [...byId.values()];
  // The rows as recordset.ts reads them, in key order so that pages written side by
  // side lock their orders in the same order.
  const at = now.toISOString();
  const keep =
    source === 'webhook'
      ? sql`${storedKey} < excluded.order_state_updated_key`
      : sql`(${storedKey} < excluded.order_state_updated_key
          or (${storedKey} = excluded.order_state_updated_key and partner_order.raw is distinct from excluded.raw)
          or partner_order.not_found_at is not null)`;
  const returned = (
    await sql<{ order_id: string; inserted: boolean }>`
    with ${statesInsert(account, rows, source, now)},${resolvedKeys.length ? sql` ${resolving(account, 'partner_order', resolvedKeys)},` : sql``} x as materialized (
      select * from ${recordset(unique, PARTNER_ORDER_COLUMNS)}
    )
    insert into partner_order (account, order_id, external_reference, sub_partner_id, order_type, created_at,
      created_at_text, order_state, order_state_updated_at, order_state_updated_at_text, order_state_updated_key,
      payment_method, input_currency, input_amount, output_currency, output_amount, amount_usd, processing_fee,
      processing_fee_usd, partner_fee, partner_fee_usd, network_fee, network_fee_usd, user_id, target_wallet_address,
      transaction_hash, raw, first_seen_at, last_seen_at, not_found_at)
    select ${account}, x.order_id, x.external_reference, x.sub_partner_id, x.order_type, x.created_at,
      x.created_at_text, x.order_state, x.order_state_updated_at, x.order_state_updated_at_text,
      x.order_state_updated_key, x.payment_method, x.input_currency, x.input_amount, x.output_currency,
      x.output_amount, x.amount_usd, x.processing_fee, x.processing_fee_usd, x.partner_fee, x.partner_fee_usd,
      x.network_fee, x.network_fee_usd, x.user_id, x.target_wallet_address, x.transaction_hash, x.raw,
      ${at}::timestamptz, ${at}::timestamptz, null
    from x order by x.order_id
    on conflict (account, order_id) do update set
      external_reference = excluded.external_reference, sub_partner_id = excluded.sub_partner_id,
      order_type = excluded.order_type,
      ${source === 'webhook' ? sql`` : sql`created_at = excluded.created_at, created_at_text = excluded.created_at_text,`}
      order_state = excluded.order_state, order_state_updated_at = excluded.order_state_updated_at,
      order_state_updated_at_text = excluded.order_state_updated_at_text,
      order_state_updated_key = excluded.order_state_updated_key, payment_method = excluded.payment_method,
      input_currency = excluded.input_currency, input_amount = excluded.input_amount,
      output_currency = excluded.output_currency, output_amount = excluded.output_amount,
      amount_usd = excluded.amount_usd, processing_fee = excluded.processing_fee,
      processing_fee_usd = excluded.processing_fee_usd, partner_fee = excluded.partner_fee,
      partner_fee_usd = excluded.partner_fee_usd, network_fee = excluded.network_fee,
      network_fee_usd = excluded.network_fee_usd, user_id = excluded.user_id,
      target_wallet_address = excluded.target_wallet_address, transaction_hash = excluded.transaction_hash,
      raw = excluded.raw, last_seen_at = excluded.last_seen_at, not_found_at = null
    where ${keep}
    returning order_id, xmax = 0 as inserted`.execute(db)
  ).rows;
  const inserted = returned.filter((r) => r.inserted).map((r) => r.order_id);
  const updated = returned.filter((r) => !r.inserted).map((r) => r.order_id);
  return { inserted, updated, unchanged: unique.length - returned.length };
}

/**
 * State history: each observed (state, state time) once, whoever saw it first. A data-modifying CTE (named st) of the
 * statement that upserts the orders: one round trip per page, not two.
 */
function statesInsert(account: string, rows: NewPartnerOrder[], source: OrderSource, now: Date): RawBuilder<unknown> {
  const seen = new Map<string, NewPartnerOrder>();
  for (const r of rows) seen.set(`${r.order_id}|${r.order_state}|${r.order_state_updated_at_text}`, r);
  const states = JSON.stringify(
    [...seen.values()].map((r) => ({
      order_id: r.order_id,
      order_state: r.order_state,
      order_state_updated_at: r.order_state_updated_at,
      order_state_updated_at_text: r.order_state_updated_at_text,
    })),
  );
  return sql`st as (
    insert into partner_order_state (account, order_id, order_state, order_state_updated_at, order_state_updated_at_text,
      observed_at, source)
    select ${account}, x.order_id, x.order_state, x.order_state_updated_at, x.order_state_updated_at_text,
      ${now.toISOString()}::timestamptz, ${source}
    from json_to_recordset(${states}::json) as x(order_id text, order_state text, order_state_updated_at timestamptz,
      order_state_updated_at_text text)
    order by x.order_id, x.order_state_updated_at_text
    on conflict do nothing)`;
}

/** A refresh by id answered 404: recorded once (the first time), cleared when the order is seen again. */
export async function markOrdersNotFound(db: Db, account: string, orderIds: string[], now: Date): Promise<number> {
  if (orderIds.length === 0) return 0;
  const r = await db
    .updateTable('partner_order')
    .set({ not_found_at: now })
    .where('account', '=', account)
    .where('order_id', 'in', orderIds)
    .where('not_found_at', 'is', null)
    .executeTakeFirst();
  return Number(r.numUpdatedRows ?? 0);
}

export interface OpenOrder {
  orderId: string;
  /** Wire text of createdAt. */
  createdAt: string;
  /**
   * Orders of its day created at or after it: where it stands in the day's newest-first list,
   * so a listing that passes it reads listingCost(rank) pages.
   */
  rank: number;
}

export interface OpenOrdersOfDay {
  /** UTC creation day. */
  day: string;
  /** Stored orders of the day still PENDING or WITHDRAWING, newest first. */
  open: OpenOrder[];
}

/**
 * Stored orders still PENDING or WITHDRAWING, grouped by their UTC creation day, each with its
 * place in the day's newest-first list: the refresh picks the cheapest way per day.
 */
export async function listOpenOrdersByDay(db: Db, account: string): Promise<OpenOrdersOfDay[]> {
  const day = sql<string>`to_char(created_at at time zone 'UTC', 'YYYY-MM-DD')`;
  const openDays = (
    await db
      .selectFrom('partner_order')
      .select(day.as('day'))
      .distinct()
      .where('account', '=', account)
      .where('order_state', 'in', ['PENDING', 'WITHDRAWING'])
      .execute()
  ).map((r) => r.day);
  if (openDays.length === 0) return [];
  // Ranks over every order of those days only (an order stuck for months must not make each
  // night rank the months between); ties count as listed before.
  const ranked = db
    .selectFrom('partner_order')
    .select([
      'order_id',
      'order_state',
      'created_at',
      'created_at_text',
      day.as('day'),
      sql<string>`count(*) over (partition by ${day} order by created_at desc range between unbounded preceding and current row)`.as(
        'rank',
      ),
    ])
    .where('account', '=', account)
    .where((eb) =>
      eb.or(
        openDays.map((d) =>
          eb.and([eb('created_at', '>=', dayStart(d)), eb('created_at', '<', dayStart(addDays(d, 1)))]),
        ),
      ),
    )
    .as('ranked');
  const rows = await db
    .selectFrom(ranked)
    .select(['order_id', 'created_at_text', 'day', 'rank'])
    .where('order_state', 'in', ['PENDING', 'WITHDRAWING'])
    .orderBy('day')
    .orderBy('created_at', 'desc')
    .orderBy('order_id')
    .execute();
  const byDay = new Map<string, OpenOrder[]>();
  for (const r of rows) {
    const order: OpenOrder = { orderId: r.order_id, createdAt: r.created_at_text, rank: Number(r.rank) };
    const list = byDay.get(r.day);
    if (list) list.push(order);
    else byDay.set(r.day, [order]);
  }
  return [...byDay].map(([d, open]) => ({ day: d, open }));
}

/** Every distinct address seen on exchange deposits (the rules compare them without a :tag). */
export { depositAddresses as listExchangeDepositAddresses } from '../recon/exchange-reads.js';

export interface WebhookEventInput {
  eventId: string;
  orderId: string;
  orderState: string;
  orderStateUpdatedAt: string;
  orderStateUpdatedKey: string;
  createdAtText: string | null;
  remoteAddr: string | null;
  extraFields: string[];
  raw: string;
}

export interface CoverageInput {
  day: string;
  stream: string;
  pages: number;
  rows: number;
  quarantined: number;
  settled: boolean;
  detail: unknown;
}

/**
 * One row per (source, stream, day), written once per listing of the day: its pages add to the
 * earlier runs' (every request ever made for the day), the rest is the latest listing's
 * (listClosedDays reads its settled and quarantined; the report counts rows from the store).
 */
export async function saveCoverage(
  db: Db,
  account: string,
  runId: string | null,
  c: CoverageInput,
  now: Date,
): Promise<void> {
  // What the latest listing says replaces the stored figures; only pages add up.
  const latest = {
    rows: c.rows,
    quarantined: c.quarantined,
    settled: c.settled,
    detail: JSON.stringify(c.detail),
    run_id: runId,
    updated_at: now,
  };
  await db
    .insertInto('sync_coverage')
    .values({ account, source: 'partner', stream: c.stream, day: c.day, pages: c.pages, ...latest })
    .onConflict((oc) =>
      oc
        .columns(['account', 'source', 'stream', 'day'])
        .doUpdateSet((eb) => ({ pages: eb('sync_coverage.pages', '+', c.pages), ...latest })),
    )
    .execute();
}

/**
 * Days of `days` whose stored order listing (the coverage rows of `stream`, the partner's day
 * listings of orders) is final: settled by a complete pass that began after
 * the day was over (detail.closedAt, written by the day sync) and with nothing quarantined (a
 * later read may find the record fixed). Later runs do not list such a day again.
 */
export async function listClosedDays(db: Db, account: string, stream: string, days: string[]): Promise<Set<string>> {
  if (days.length === 0) return new Set();
  const rows = await db
    .selectFrom('sync_coverage')
    .select('day')
    .where('account', '=', account)
    .where('source', '=', 'partner')
    .where('stream', '=', stream)
    .where('day', 'in', days)
    .where('settled', '=', true)
    .where('quarantined', '=', 0)
    .where(sql<boolean>`detail->>'closedAt' is not null`)
    .execute();
  return new Set(rows.map((r) => String(r.day)));
}

/** Normalized currency rows of a new currencies snapshot. */
export async function saveCurrencies(db: Db, snapshotId: string, rows: NewPartnerCurrency[]): Promise<void> {
  if (rows.length === 0) return;
  const unique = [...new Map(rows.map((r) => [r.code, r])).values()];
  await db
    .insertInto('partner_currency')
    .values(unique.map((r) => ({ ...r, snapshot_id: snapshotId })))
    .onConflict((oc) => oc.doNothing())
    .execute();
}

/** One quote per run and pair/amount: a re-run of the same run id stores nothing new. */
export async function saveQuote(
  db: Db,
  account: string,
  runId: string | null,
  fetchedAt: Date,
  q: NewPartnerQuote,
): Promise<boolean> {
  const r = await db
    .insertInto('partner_quote')
    .values({ ...q, account, run_id: runId, fetched_at: fetchedAt })
    .onConflict((oc) => oc.doNothing())
    .executeTakeFirst();
  return Number(r.numInsertedOrUpdatedRows ?? 0) > 0;
}
