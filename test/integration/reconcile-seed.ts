import { sql } from 'kysely';
import type { Config } from '../../src/config/load.js';
import { fileConfigSchema } from '../../src/config/schema.js';
import type { Db } from '../../src/store/db/database.js';
import type { Store } from '../../src/store/db/database.js';
import { silentLogger } from '../../src/log/logger.js';
import type { StageContext } from '../../src/stages/context.js';
import { createRun } from '../../src/store/runs/runs.js';
import { EXCHANGE_STREAM_CURSORS } from '../../src/sources/exchange/streams.js';

/** A config as loadConfig would build it, from a file-config object. */
export function makeConfig(file: Record<string, unknown> = {}): Config {
  return {
    ...fileConfigSchema.parse(file),
    configFile: null,
    database: { dataDir: 'memory://' },
    reportsDir: 'reports',
    logLevel: 'silent',
  } as unknown as Config;
}

export const NOW = new Date('2026-11-12T03:00:00Z');

export async function newContext(
  store: Store,
  config: Config,
  id: string,
  period: { from: string; to: string },
  now = NOW,
): Promise<StageContext> {
  await createRun(store.db, {
    account: config.account,
    command: 'reconcile',
    id,
    periodFrom: period.from,
    periodTo: period.to,
    startedAt: now,
  });
  return { store, config, logger: silentLogger(), runId: id, now };
}

/**
 * Marks everything stored so far as judged for `account`, as a reconcile that judged it would
 * (sql/0017 reconcile_watermark): the next reconcile judges its period and what changes after.
 */
export async function markJudged(store: Store, account: string): Promise<void> {
  const id = `judged-before-${account}`;
  await createRun(store.db, { account, command: 'reconcile', id });
  await sql`insert into reconcile_watermark (account, judged_snapshot, run_id, judged_at)
    values (${account}, pg_current_snapshot(), ${id}, now())`.execute(store.db);
}

type OrderInput = {
  id: string;
  created: string;
  state?: string;
  updated?: string;
  type?: string;
  inputCurrency?: string;
  inputAmount?: string;
  outputAmount?: string;
  amountUsd?: string | null;
  processingFeeUsd?: string;
  wallet?: string;
  tx?: string | null;
};

export async function insertOrder(db: Db, o: OrderInput): Promise<void> {
  const updated = o.updated ?? o.created.replace('00:00Z', '05:00Z');
  await db
    .insertInto('partner_order')
    .values({
      order_id: o.id,
      order_type: o.type ?? 'BUY',
      created_at: o.created,
      created_at_text: o.created,
      order_state: o.state ?? 'COMPLETED',
      order_state_updated_at: updated,
      order_state_updated_at_text: updated,
      input_currency: o.inputCurrency ?? 'EUR',
      input_amount: o.inputAmount ?? '100',
      output_currency: 'ETH',
      output_amount: o.outputAmount ?? '0.031234567890123456',
      amount_usd: o.amountUsd === undefined ? '108' : o.amountUsd,
      processing_fee: '2.5',
      processing_fee_usd: o.processingFeeUsd ?? '2.7',
      partner_fee: '1',
      partner_fee_usd: '1.08',
      network_fee: '0.5',
      network_fee_usd: '0.54',
      target_wallet_address: o.wallet ?? '0xOURS',
      transaction_hash: o.tx === undefined ? `0x${o.id}` : o.tx,
      raw: '{}',
    })
    .execute();
}

/** A reference-data snapshot row (its lines are inserted by the caller); the default account unless one is named. */
export async function insertReferenceSnapshot(
  db: Db,
  kind: string,
  source: 'partner' | 'exchange',
  at: string,
  account?: string,
): Promise<string> {
  const row = await db
    .insertInto('reference_snapshot')
    .values({
      ...(account ? { account } : {}),
      source,
      kind,
      fetched_at: at,
      content_hash: `${account ? `${account}-` : ''}${kind}-${at}`,
      body: '{}',
    })
    .returning('id')
    .executeTakeFirstOrThrow();
  return row.id;
}

export async function insertBalanceSnapshot(db: Db, at: string, lines: Record<string, string>): Promise<string> {
  const { id } = await db
    .insertInto('balance_snapshot')
    .values({ exchange_account: 'primary', fetched_at: at, raw: '{}' })
    .returning('id')
    .executeTakeFirstOrThrow();
  for (const [currency, balance] of Object.entries(lines))
    await db
      .insertInto('balance')
      .values({
        snapshot_id: id,
        currency,
        balance,
        available: balance,
        balance_local: balance,
        available_local: balance,
        rate: '1',
      })
      .execute();
  return id;
}

export async function insertFill(
  db: Db,
  f: { execId: string; exOrdId: string; side?: string; price: string; qty: string; fee: string; at: string },
): Promise<void> {
  await db
    .insertInto('exchange_fill')
    .values({
      exec_id: f.execId,
      ex_ord_id: f.exOrdId,
      side: f.side ?? 'BUY',
      symbol: 'ETH-USD',
      price: f.price,
      qty: f.qty,
      fee: f.fee,
      timestamp: f.at,
      raw: '{}',
    })
    .execute();
}

/**
 * A small, hand-made world for 2026-11-10 with one planted break per line of the expectation
 * below, and consistent data everywhere else. Nothing in it was judged yet, so the first reconcile
 * judges every record, of whichever day (docs/rules.md "What a run judges"): o-old and o-pend of
 * 2026-11-01 too.
 */
export async function seedWorld(db: Db): Promise<void> {
  const cur = await insertReferenceSnapshot(db, 'currencies', 'partner', '2026-11-01T00:00:00Z');
  await db
    .insertInto('partner_currency')
    .values([
      { snapshot_id: cur, code: 'EUR', type: 'FIAT', precision: 2, min_buy_amount: '20', max_buy_amount: '5000' },
      { snapshot_id: cur, code: 'ETH', type: 'CRYPTO', precision: 18 },
    ])
    .execute();
  const sym = await insertReferenceSnapshot(db, 'symbols', 'exchange', '2026-11-01T00:00:00Z');
  await db
    .insertInto('exchange_symbol')
    .values({
      snapshot_id: sym,
      symbol: 'ETH-USD',
      base_currency: 'ETH',
      base_currency_scale: 8,
      counter_currency: 'USD',
      counter_currency_scale: 2,
      price_increment: '0.01',
      lot_size: '0.0001',
      min_order_size: '0.001',
      max_order_size: '1000',
    })
    .execute();
  const fees = await insertReferenceSnapshot(db, 'fees', 'exchange', '2026-11-01T00:00:00Z');
  await db
    .insertInto('exchange_fee_rate')
    .values({ snapshot_id: fees, maker_rate: '0.0008', taker_rate: '0.001' })
    .execute();
  const wl = await insertReferenceSnapshot(db, 'whitelist', 'exchange', '2026-11-01T00:00:00Z');
  await db
    .insertInto('exchange_whitelist_entry')
    .values({ snapshot_id: wl, whitelist_id: 'wl-1', currency: 'ETH' })
    .execute();

  await insertOrder(db, { id: 'o-ok', created: '2026-11-10T10:00:00Z', tx: '0xhash1' });
  await insertOrder(db, { id: 'o-feeusd', created: '2026-11-10T11:00:00Z', processingFeeUsd: '2.8', wallet: '0xelse' }); // P_FEE_USD
  await insertOrder(db, { id: 'o-missing', created: '2026-11-10T12:00:00Z', wallet: '0xWALLET:5' }); // X_DEPOSIT_MISSING
  // P_FEE_USD of another day: outside the period, judged because nothing stored was judged yet
  await insertOrder(db, { id: 'o-old', created: '2026-11-01T10:00:00Z', processingFeeUsd: '2.8', wallet: '0xelse' });
  await insertOrder(db, { id: 'o-pend', created: '2026-11-01T10:00:00Z', state: 'PENDING', tx: null }); // P_STALE

  await db
    .insertInto('exchange_deposit')
    .values({
      deposit_id: 'dep-1',
      amount: '0.031234567890123456',
      currency: 'ETH',
      address: '0xOURS:memo',
      tx_hash: '0xhash1',
      state: 'COMPLETED',
      timestamp: '2026-11-10T10:10:00Z',
      raw: '{}',
    })
    .execute();
  await db
    .insertInto('exchange_withdrawal')
    .values({
      withdrawal_id: 'wd-1',
      amount: '0.1',
      fee: '0.001',
      currency: 'ETH',
      beneficiary: 'wl-9',
      state: 'COMPLETED',
      timestamp: '2026-11-10T15:00:00Z',
      raw: '{}',
    })
    .execute(); // E_WITHDRAWAL_BENEFICIARY

  const order = (id: string, side: string, cum: string, avg: string) =>
    db
      .insertInto('exchange_order')
      .values({
        ex_ord_id: id,
        ord_status: 'FILLED',
        side,
        symbol: 'ETH-USD',
        cum_qty: cum,
        leaves_qty: '0',
        avg_px: avg,
        timestamp: '2026-11-10T09:00:00Z',
        raw: '{}',
      })
      .execute();
  await order('100', 'BUY', '1', '2000'); // E_FILL_QTY: fills sum to 0.75
  await order('101', 'SELL', '0.1', '2100');
  await insertFill(db, {
    execId: '1',
    exOrdId: '100',
    price: '2000',
    qty: '0.5',
    fee: '1',
    at: '2026-11-10T09:00:01Z',
  });
  await insertFill(db, {
    execId: '2',
    exOrdId: '100',
    price: '2000',
    qty: '0.25',
    fee: '0.5',
    at: '2026-11-10T09:00:02Z',
  });
  await insertFill(db, {
    execId: '3',
    exOrdId: '101',
    side: 'SELL',
    price: '2100',
    qty: '0.1',
    fee: '0.21',
    at: '2026-11-10T09:30:00Z',
  });
  await insertFill(db, {
    execId: '900',
    exOrdId: '999',
    price: '2000',
    qty: '0.01',
    fee: '0.02',
    at: '2026-11-10T10:00:00Z',
  }); // E_FILL_ORPHAN

  // ETH: 1 + 0.5 + 0.25 - 0.1 + 0.01 + 0.031234567890123456 - 0.101 = 1.590234567890123456 (consistent)
  // USD: 10000 - 1000 - 1 - 500 - 0.5 + 210 - 0.21 - 20 - 0.02 = 8688.27; 8688.28 closes it: E_BALANCE_ROLL USD 0.01
  await insertBalanceSnapshot(db, '2026-11-09T00:00:00Z', { ETH: '1', USD: '10000' });
  await insertBalanceSnapshot(db, '2026-11-11T00:00:00Z', { ETH: '1.590234567890123456', USD: '8688.28' });

  await db
    .insertInto('quarantine')
    .values({
      source: 'exchange',
      endpoint: '/fills',
      entity: 'fill',
      record_key: 'q-1',
      position: 0,
      raw_text: '{"execId":"q-1"}',
      raw_hash: 'h1',
      reason: 'qty: expected a number',
    })
    .execute();
  await db
    .insertInto('sync_coverage')
    .values({ source: 'partner', stream: 'orders', day: '2026-11-10', pages: 3, rows: 120, settled: false })
    .execute();
  // The exchange was synced up to the closing snapshot: every exchange stream's cursor is past the period.
  const syncedTo = String(Date.parse('2026-11-11T00:00:00Z'));
  for (const names of Object.values(EXCHANGE_STREAM_CURSORS))
    for (const name of names)
      await db.insertInto('sync_cursor').values({ source: 'exchange', name, value: syncedTo }).execute();
}

export const PLANTED = [
  'E_BALANCE_ROLL USD',
  'E_FILL_ORPHAN 900',
  'E_FILL_QTY 100',
  'E_WITHDRAWAL_BENEFICIARY wd-1',
  'P_FEE_USD o-feeusd',
  'P_FEE_USD o-old',
  'P_STALE o-pend',
  'S_COVERAGE partner:orders:2026-11-10',
  'S_QUARANTINE q-1',
  'X_DEPOSIT_MISSING o-missing',
];
