/** What every step of the partner sync shares: its state and figures, order validation, storage and quarantine. */
import { createHash } from 'node:crypto';
import { inTransaction } from '../../store/db/database.js';
import type { HttpResponse } from '../../http/client.js';
import type { Progress } from '../../util/progress.js';
import { stringifyParsedJson } from '../../decimal/json.js';
import { upsertPartnerOrders, type OrderSource } from '../../store/sync/partner-orders.js';
import type { NewPartnerOrder } from '../../store/db/schema.js';
import { quarantineResponse, type BadRecord, type RecordOrigin } from '../common/quarantine.js';
import { mayHoldUnstorableText, printable, unstorableText } from '../common/storable.js';
import { writeOrSplit } from '../common/record-fallback.js';
import type { PartnerClient } from './client.js';
import {
  fastPartnerOrder,
  formatPartnerIssues,
  partnerOrderSchema,
  readableKey,
  type PartnerOrder,
} from './schemas.js';
import { orderToRow, requireTimestampKey } from './transform.js';
import type { SourceEnv } from '../source.js';

export const SOURCE = 'partner' as const;
export const ORDERS_ENDPOINT = '/orders';

export interface DayCoverage {
  day: string;
  /** Pages read over all passes. */
  pages: number;
  /** Distinct orders of the day seen in any pass. */
  rows: number;
  quarantined: number;
  /**
   * The listing is complete: one clean pass of a day that was over, or two consecutive passes
   * that agreed. false becomes an S_COVERAGE break.
   */
  settled: boolean;
  /** Settled by a pass that began after the day was over: later runs do not list the day again. */
  closed: boolean;
  passes: Array<{ pages: number; rows: number; distinct: number; duplicates: number; outsideDay: number }>;
}

export interface PartnerFigures {
  /** Distinct valid orders received in this sync (day, wallet, reference listings and refresh). */
  orders: number;
  /** Orders written (new, or a newer state / changed body). */
  inserted: number;
  updated: number;
  pages: number;
  quarantined: number;
  refreshed: number;
  notFound: number;
  quotes: number;
  quoteErrors: number;
  /** Wallet listings made (whole history or bounded by days). */
  wallets: number;
  /** Wallets whose whole history was read in this sync (first sync of the wallet, or asked). */
  walletHistories: number;
  references: number;
  /** Days of the period not listed: their stored listing is final (closed by an earlier run). */
  skippedDays: string[];
  /** Past days listed again by the refresh because that costs fewer requests than fetching their open orders by id. */
  relistedForRefresh: string[];
  /** Reference snapshots that changed (a new dated row) this time. */
  snapshots: { currencies: boolean | null; regions: boolean | null; paymentMethods: boolean | null };
  coverage: DayCoverage[];
}

export function emptyPartnerFigures(): PartnerFigures {
  return {
    orders: 0,
    inserted: 0,
    updated: 0,
    pages: 0,
    quarantined: 0,
    refreshed: 0,
    notFound: 0,
    quotes: 0,
    quoteErrors: 0,
    wallets: 0,
    walletHistories: 0,
    references: 0,
    skippedDays: [],
    relistedForRefresh: [],
    snapshots: { currencies: null, regions: null, paymentMethods: null },
    coverage: [],
  };
}

/** What every step of one partner sync shares: the environment every source receives, and the partner's own state. */
export interface PartnerSync extends SourceEnv {
  client: PartnerClient;
  progress: Progress;
  result: PartnerFigures;
  /**
   * orderId -> digest of the raw text already written in this sync: a repeat is not written
   * again. A digest, not the text: a first sync of 100,000 orders would otherwise hold them all.
   */
  written: Map<string, string>;
  /** Quarantined records of this sync (endpoint + raw text): one record seen on two passes counts once. */
  quarantined: Set<string>;
}

/** The orders of one response, validated record by record. */
export interface ValidatedOrders {
  /** Order ids of the response (valid and, when readable, invalid records), in response order. */
  ids: string[];
  /** UTC creation day of each valid order. */
  createdDays: string[];
  /** Timestamp key (timestampKey) of the oldest valid order's createdAt; null when none validated. */
  oldestCreatedKey: string | null;
  /** `position`: the record's index in its response (a quarantine entry names it). */
  valid: Array<{ order: PartnerOrder; rawText: string; position: number }>;
  invalid: BadRecord[];
}

/**
 * The orders of consecutive responses as one write (readListing): each record keeps the position of its own
 * response.
 */
export function mergeValidated(pages: readonly ValidatedOrders[]): ValidatedOrders {
  if (pages.length === 1) return pages[0]!;
  const out: ValidatedOrders = { ids: [], createdDays: [], oldestCreatedKey: null, valid: [], invalid: [] };
  for (const p of pages) {
    out.ids.push(...p.ids);
    out.createdDays.push(...p.createdDays);
    out.valid.push(...p.valid);
    out.invalid.push(...p.invalid);
    if (p.oldestCreatedKey !== null && (out.oldestCreatedKey === null || p.oldestCreatedKey < out.oldestCreatedKey))
      out.oldestCreatedKey = p.oldestCreatedKey;
  }
  return out;
}

/** Validates each record on its own: one bad record never costs its neighbours. */
export function validateOrders(records: unknown[]): ValidatedOrders {
  const out: ValidatedOrders = { ids: [], createdDays: [], oldestCreatedKey: null, valid: [], invalid: [] };
  for (const [position, record] of records.entries()) {
    const quick = fastPartnerOrder(record);
    const parsed = quick !== null ? ({ success: true, data: quick } as const) : partnerOrderSchema.safeParse(record);
    const rawText = stringifyParsedJson(record);
    // Text the database cannot hold (NUL, a lone surrogate) anywhere in the record: jsonb refuses its raw body too.
    const textIssue = mayHoldUnstorableText(rawText) ? unstorableText(record) : null;
    if (!parsed.success || textIssue !== null) {
      const key = readableKey(record, 'orderId');
      out.ids.push(key ?? `#${position}`);
      const reason = [parsed.success ? null : formatPartnerIssues(parsed.error), textIssue]
        .filter((r) => r !== null)
        .join('; ');
      out.invalid.push({
        recordKey: key === null ? null : printable(key),
        position,
        rawText,
        reason: printable(reason),
      });
      continue;
    }
    const order = parsed.data;
    out.ids.push(order.orderId);
    const createdKey = requireTimestampKey(order.createdAt);
    out.createdDays.push(createdKey.slice(0, 10));
    if (out.oldestCreatedKey === null || createdKey < out.oldestCreatedKey) out.oldestCreatedKey = createdKey;
    out.valid.push({ order, rawText, position });
  }
  return out;
}

/**
 * Returns how many valid orders the database still refused (quarantined with its reason).
 * Stores the validated orders of one response in one transaction: valid orders are upserted
 * (with state history), invalid ones quarantined with their raw text, the rest of the page still
 * lands. A record that validates resolves its earlier quarantine entries.
 */
export async function storeOrders(
  env: PartnerSync,
  validated: ValidatedOrders,
  source: OrderSource,
  endpoint: string,
): Promise<number> {
  const rows: NewPartnerOrder[] = [];
  const items: Array<{ row: NewPartnerOrder; rawText: string; position: number }> = [];
  for (const { order, rawText, position } of validated.valid) {
    // The same body seen again in this sync (next pass, wallet listing) is not written twice.
    const digest = createHash('sha1').update(rawText).digest('base64');
    if (env.written.get(order.orderId) === digest) continue;
    env.written.set(order.orderId, digest);
    const row = orderToRow(order, rawText);
    rows.push(row);
    items.push({ row, rawText, position });
  }
  let bad = validated.invalid;
  let refusedCount = 0;
  const validIds = validated.valid.map((v) => v.order.orderId);
  if (rows.length || bad.length || validIds.length) {
    // A page the database still refuses is written again order by order: each refused order is
    // quarantined with the database's reason (its raw body kept), the rest committed.
    const split = await writeOrSplit(
      env.db,
      items,
      async () => {
        // A page without a bad record is one statement (orders, their states, resolved quarantine): no transaction.
        if (bad.length === 0) {
          const r = await upsertPartnerOrders(env.db, env.account, rows, source, env.now, validIds);
          env.result.inserted += r.inserted.length;
          env.result.updated += r.updated.length;
          return;
        }
        await inTransaction(env.db, async (trx) => {
          const r = await upsertPartnerOrders(trx, env.account, rows, source, env.now);
          env.result.inserted += r.inserted.length;
          env.result.updated += r.updated.length;
          await quarantineResponse(trx, origin(env, endpoint, 'partner_order'), bad, validIds);
        });
      },
      async (trx, it) => {
        const r = await upsertPartnerOrders(trx, env.account, [it.row], source, env.now);
        env.result.inserted += r.inserted.length;
        env.result.updated += r.updated.length;
      },
      async (trx, _kept, refused) => {
        const refusedIds = new Set(refused.map((r) => r.item.row.order_id));
        bad = [
          ...bad,
          ...refused.map((r) => ({
            recordKey: r.item.row.order_id,
            position: r.item.position,
            rawText: r.item.rawText,
            reason: r.reason,
          })),
        ];
        await quarantineResponse(
          trx,
          origin(env, endpoint, 'partner_order'),
          bad,
          validIds.filter((id) => !refusedIds.has(id)),
        );
      },
    );
    if (split) {
      refusedCount = split.refused.length;
      // A refused order is written again by the next pass or run: it is not "written" yet.
      for (const r of split.refused) env.written.delete(r.item.row.order_id);
      env.logger.warn(
        { endpoint, refused: split.refused.map((r) => ({ orderId: r.item.row.order_id, reason: r.reason })) },
        'partner orders page refused by the database; written order by order, the refused orders quarantined',
      );
    }
  }
  countQuarantined(env, endpoint, bad);
  if (bad.length)
    env.logger.warn({ endpoint, quarantined: bad.length, first: bad[0]?.reason }, 'invalid partner orders quarantined');
  return refusedCount;
}

export function origin(env: PartnerSync, endpoint: string, entity: string): RecordOrigin {
  return { account: env.account, source: SOURCE, endpoint, entity, runId: env.runId };
}

/** Counts quarantined records once per sync however often they were seen. */
export function countQuarantined(env: PartnerSync, endpoint: string, records: BadRecord[]): void {
  for (const r of records) env.quarantined.add(`${endpoint}\n${r.rawText}`);
  env.result.quarantined = env.quarantined.size;
}

/** Quarantines a whole response (not a list, not the expected object) outside any other write. */
export async function quarantineBody(
  env: PartnerSync,
  endpoint: string,
  entity: string,
  bad: BadRecord,
): Promise<void> {
  await quarantineResponse(env.db, origin(env, endpoint, entity), [bad]);
  countQuarantined(env, endpoint, [bad]);
}

export async function quarantinePage(
  env: PartnerSync,
  endpoint: string,
  response: HttpResponse,
  reason: string,
): Promise<void> {
  await quarantineBody(env, endpoint, 'partner_order_page', {
    recordKey: null,
    position: null,
    rawText: response.text,
    reason,
  });
}
