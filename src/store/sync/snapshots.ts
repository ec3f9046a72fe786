/** Reference snapshots (currencies, symbols, fees, whitelist, ...): stored only when changed, and the latest of each
 * kind read back.
 */
import { createHash } from 'node:crypto';
import { sql, type SelectQueryBuilder } from 'kysely';
import type { Db } from '../db/database.js';
import type { FeeSchedule, PartnerCurrency, SymbolRules } from '../../domain/index.js';

export interface SnapshotResult {
  id: string;
  /** false when the content equals the latest snapshot of the same kind (nothing inserted). */
  changed: boolean;
}

/**
 * Stores a reference snapshot (currencies, regions, fees, symbols, whitelist, tickers) only when
 * its content differs from the latest one of its kind, so the table reads "in force from when"
 * and re-runs add nothing. Normalized detail rows are written by the caller when `changed`.
 */
export async function saveReferenceSnapshot(
  db: Db,
  input: { account: string; source: 'partner' | 'exchange'; kind: string; fetchedAt: Date; bodyText: string },
): Promise<SnapshotResult> {
  const hash = createHash('sha256').update(input.bodyText).digest('hex');
  const latest = await latestSnapshot(db, input.account, input.source, input.kind);
  if (latest && latest.content_hash === hash) return { id: latest.id, changed: false };
  const inserted = await db
    .insertInto('reference_snapshot')
    .values({
      account: input.account,
      source: input.source,
      kind: input.kind,
      fetched_at: input.fetchedAt,
      content_hash: hash,
      body: input.bodyText,
    })
    .returning('id')
    .executeTakeFirstOrThrow();
  return { id: inserted.id, changed: true };
}

/** Prefix of the hash of a snapshot stored without some of its rows: no sha256 hex starts so. */
const INCOMPLETE = 'incomplete:';

/**
 * A snapshot some of whose rows the database refused (quarantined with its reason): its hash is
 * changed so that it matches no content, and the next fetch of the same content writes a new
 * snapshot, giving the refused rows another try. Kept as "unchanged", they would never be tried
 * again while their quarantine entries were resolved by the next fetch in which they validate.
 */
export async function markSnapshotIncomplete(db: Db, id: string): Promise<void> {
  await db
    .updateTable('reference_snapshot')
    .set({ content_hash: sql<string>`${INCOMPLETE}::text || content_hash` })
    .where('id', '=', id)
    .execute();
}

/** The newest of the snapshots `query` selects (by fetched_at, then the newest id among equal fetch times). */
export function newestSnapshot<DB, TB extends keyof DB, O>(query: SelectQueryBuilder<DB, TB, O>) {
  return query.orderBy(sql.ref('fetched_at'), 'desc').orderBy(sql.ref('id'), 'desc').limit(1).executeTakeFirst();
}

/** The newest snapshot of a kind. */
async function latestSnapshot(
  db: Db,
  account: string,
  source: string,
  kind: string,
): Promise<{ id: string; content_hash: string } | undefined> {
  return newestSnapshot(
    db
      .selectFrom('reference_snapshot')
      .select(['id', 'content_hash'])
      .where('account', '=', account)
      .where('source', '=', source)
      .where('kind', '=', kind),
  );
}

async function latestSnapshotId(db: Db, account: string, source: string, kind: string): Promise<string | null> {
  return (await latestSnapshot(db, account, source, kind))?.id ?? null;
}

export async function latestCurrencies(db: Db, account: string): Promise<Map<string, PartnerCurrency> | null> {
  const id = await latestSnapshotId(db, account, 'partner', 'currencies');
  if (id === null) return null;
  const rows = await db.selectFrom('partner_currency').selectAll().where('snapshot_id', '=', id).execute();
  return new Map(
    rows.map((r) => [
      r.code,
      {
        code: r.code,
        type: r.type,
        precision: r.precision,
        minBuyAmount: r.min_buy_amount,
        maxBuyAmount: r.max_buy_amount,
      },
    ]),
  );
}

export async function latestSymbols(
  db: Db,
  account: string,
): Promise<{ snapshotId: string; symbols: Map<string, SymbolRules> } | null> {
  const id = await latestSnapshotId(db, account, 'exchange', 'symbols');
  if (id === null) return null;
  const rows = await db.selectFrom('exchange_symbol').selectAll().where('snapshot_id', '=', id).execute();
  return {
    snapshotId: id,
    symbols: new Map(
      rows.map((r) => [
        r.symbol,
        {
          symbol: r.symbol,
          baseCurrency: r.base_currency,
          baseScale: r.base_currency_scale,
          counterCurrency: r.counter_currency,
          counterScale: r.counter_currency_scale,
          priceIncrement: r.price_increment,
          lotSize: r.lot_size,
          minOrderSize: r.min_order_size,
          maxOrderSize: r.max_order_size,
        },
      ]),
    ),
  };
}

export async function feeSchedule(db: Db, account: string): Promise<FeeSchedule | null> {
  const rows = await db
    .selectFrom('reference_snapshot as s')
    .innerJoin('exchange_fee_rate as r', 'r.snapshot_id', 's.id')
    .select(['s.fetched_at', 'r.maker_rate', 'r.taker_rate'])
    .where('s.account', '=', account)
    .where('s.source', '=', 'exchange')
    .where('s.kind', '=', 'fees')
    .orderBy('s.fetched_at')
    .execute();
  return rows.length
    ? rows.map((r) => ({ fetchedAt: r.fetched_at, makerRate: r.maker_rate, takerRate: r.taker_rate }))
    : null;
}

export async function latestWhitelist(db: Db, account: string): Promise<Set<string> | null> {
  const id = await latestSnapshotId(db, account, 'exchange', 'whitelist');
  if (id === null) return null;
  const rows = await db
    .selectFrom('exchange_whitelist_entry')
    .select('whitelist_id')
    .where('snapshot_id', '=', id)
    .execute();
  return new Set(rows.map((r) => r.whitelist_id));
}
