/** The typed database schema (Kysely XTable interfaces) and the row types read and written through it. */
import type { ColumnType, Generated, InsertType, Selectable } from 'kysely';
import type { Decimal } from '../../decimal/decimal.js';

/**
 * Column conventions (the same on pg and PGlite, see type-parsers.ts):
 * - numeric reads as Decimal, and is written as a plain decimal string (decimalText()),
 *   so a JS number can never reach an amount column;
 * - int8 ids read and write as exact strings;
 * - jsonb reads as lossless-json values and is written as JSON text (stringifyJsonLossless()).
 */
export type Num = ColumnType<Decimal, string, string>;
export type NumNull = ColumnType<Decimal | null, string | null | undefined, string | null>;
export type Int8 = ColumnType<string, string, string>;
export type Int8Null = ColumnType<string | null, string | null | undefined, string | null>;
export type Json = ColumnType<unknown, string, string>;
export type JsonNull = ColumnType<unknown, string | null | undefined, string | null>;
export type Time = ColumnType<Date, Date | string, Date | string>;
export type TimeNull = ColumnType<Date | null, Date | string | null | undefined, Date | string | null>;
export type TimeDefault = ColumnType<Date, Date | string | undefined, Date | string>;
type Default<T> = ColumnType<T, T | undefined, T>;
type Account = Default<string>;

export interface PartnerOrderTable {
  account: Account;
  order_id: string;
  external_reference: string | null;
  sub_partner_id: string | null;
  order_type: string;
  created_at: Time;
  created_at_text: string;
  order_state: string;
  order_state_updated_at: Time;
  order_state_updated_at_text: string;
  /** 0003_partner.sql: fixed-width UTC text of order_state_updated_at_text, compares to the nanosecond. */
  order_state_updated_key: ColumnType<string | null, string | null | undefined, string | null>;
  payment_method: string | null;
  input_currency: string;
  input_amount: Num;
  output_currency: string;
  output_amount: NumNull;
  amount_usd: NumNull;
  processing_fee: NumNull;
  processing_fee_usd: NumNull;
  partner_fee: NumNull;
  partner_fee_usd: NumNull;
  network_fee: NumNull;
  network_fee_usd: NumNull;
  user_id: string | null;
  target_wallet_address: string | null;
  transaction_hash: string | null;
  raw: Json;
  first_seen_at: TimeDefault;
  last_seen_at: TimeDefault;
  not_found_at: TimeNull;
}

export interface PartnerOrderStateTable {
  account: Account;
  order_id: string;
  order_state: string;
  order_state_updated_at: Time;
  order_state_updated_at_text: string;
  observed_at: TimeDefault;
  source: string;
}

export interface ReferenceSnapshotTable {
  id: Generated<string>;
  account: Account;
  source: string;
  kind: string;
  fetched_at: Time;
  content_hash: string;
  body: Json;
}

export interface PartnerCurrencyTable {
  snapshot_id: Int8;
  code: string;
  type: string;
  name: string | null;
  precision: number;
  min_buy_amount: NumNull;
  max_buy_amount: NumNull;
  network: string | null;
}

export interface PartnerQuoteTable {
  id: Generated<string>;
  account: Account;
  run_id: string | null;
  fetched_at: Time;
  quote_currency_code: string;
  base_currency_code: string;
  payment_method: string | null;
  quote_currency_amount: Num;
  base_currency_amount: NumNull;
  price: NumNull;
  processing_fee_amount: NumNull;
  partner_fee_amount: NumNull;
  network_fee_amount: NumNull;
  total_amount: NumNull;
  raw: Json;
}

export interface WebhookEventTable {
  account: Account;
  event_id: string;
  order_id: string;
  order_state: string;
  order_state_updated_at: Time;
  order_state_updated_at_text: string;
  created_at_text: string | null;
  received_at: TimeDefault;
  remote_addr: string | null;
  duplicate_count: Default<number>;
  extra_fields: Default<string[]>;
  raw: Json;
  /** 0003_partner.sql */
  order_state_updated_key: ColumnType<string | null, string | null | undefined, string | null>;
  applied: Default<boolean>;
}

export interface ExchangeOrderTable {
  account: Account;
  ex_ord_id: Int8;
  cl_ord_id: string | null;
  ord_type: string | null;
  ord_status: string;
  side: string | null;
  price: NumNull;
  text: string | null;
  symbol: string | null;
  last_shares: NumNull;
  last_px: NumNull;
  leaves_qty: NumNull;
  cum_qty: NumNull;
  avg_px: NumNull;
  timestamp: TimeNull;
  raw: Json;
  first_seen_at: TimeDefault;
  last_seen_at: TimeDefault;
}

export interface ExchangeOrderNotFoundTable {
  account: Account;
  ex_ord_id: Int8;
  checked_at: TimeDefault;
}

export interface ExchangeOrderStateTable {
  account: Account;
  ex_ord_id: Int8;
  ord_status: string;
  cum_qty: ColumnType<Decimal, string | undefined, string>;
  observed_at: TimeDefault;
}

export interface ExchangeFillTable {
  account: Account;
  exec_id: Int8;
  ex_ord_id: Int8;
  trade_id: Int8Null;
  side: string;
  symbol: string;
  price: Num;
  qty: Num;
  fee: Num;
  timestamp: Time;
  raw: Json;
}

export interface ExchangeDepositTable {
  account: Account;
  deposit_id: string;
  amount: Num;
  currency: string;
  address: string;
  tx_hash: string | null;
  state: string;
  timestamp: TimeNull;
  raw: Json;
  first_seen_at: TimeDefault;
  last_seen_at: TimeDefault;
}

export interface ExchangeDepositStateTable {
  account: Account;
  deposit_id: string;
  state: string;
  observed_at: TimeDefault;
}

export interface ExchangeWithdrawalTable {
  account: Account;
  withdrawal_id: string;
  amount: Num;
  fee: NumNull;
  currency: string;
  beneficiary: string;
  state: string | null;
  timestamp: TimeNull;
  raw: Json;
  first_seen_at: TimeDefault;
  last_seen_at: TimeDefault;
}

export interface ExchangeWithdrawalStateTable {
  account: Account;
  withdrawal_id: string;
  state: string;
  observed_at: TimeDefault;
}

export interface BalanceSnapshotTable {
  id: Generated<string>;
  account: Account;
  exchange_account: string;
  fetched_at: Time;
  /** When the /accounts request was sent: the exchange took the balances between this and fetched_at. */
  requested_at: TimeNull;
  run_id: string | null;
  raw: Json;
}

export interface BalanceTable {
  snapshot_id: Int8;
  currency: string;
  balance: Num;
  available: Num;
  balance_local: Num;
  available_local: Num;
  rate: Num;
}

export interface ExchangeFeeRateTable {
  snapshot_id: Int8;
  maker_rate: Num;
  taker_rate: Num;
  volume_in_usd: NumNull;
}

export interface ExchangeSymbolTable {
  snapshot_id: Int8;
  symbol: string;
  base_currency: string | null;
  base_currency_scale: number | null;
  counter_currency: string | null;
  counter_currency_scale: number | null;
  price_increment: NumNull;
  lot_size: NumNull;
  min_order_size: NumNull;
  max_order_size: NumNull;
  status: string | null;
}

export interface ExchangeWhitelistEntryTable {
  snapshot_id: Int8;
  whitelist_id: string;
  name: string | null;
  currency: string | null;
}

export interface ExchangeTickerTable {
  snapshot_id: Int8;
  symbol: string;
  price_24h: NumNull;
  volume_24h: NumNull;
  last_trade_price: NumNull;
}

export interface SyncCursorTable {
  account: Account;
  source: string;
  name: string;
  value: string;
  updated_at: TimeDefault;
}

export interface SyncCoverageTable {
  account: Account;
  source: string;
  stream: string;
  day: ColumnType<string, string, string>;
  pages: Default<number>;
  rows: Default<number>;
  quarantined: Default<number>;
  settled: Default<boolean>;
  detail: JsonNull;
  run_id: string | null;
  updated_at: TimeDefault;
}

/**
 * 0008_webhook_judgement.sql: which state change of each settled partner order P_WEBHOOK_GAP judged, and in which run.
 */
export interface WebhookJudgementTable {
  account: Account;
  order_id: string;
  order_state_updated_at_text: string;
  run_id: string;
  judged_at: TimeDefault;
}

export interface QuarantineTable {
  id: Generated<string>;
  account: Account;
  source: string;
  endpoint: string;
  entity: string | null;
  record_key: string | null;
  position: number | null;
  raw_text: string;
  raw_hash: string;
  reason: string;
  first_seen_at: TimeDefault;
  last_seen_at: TimeDefault;
  seen_count: Default<number>;
  run_id: string | null;
  resolved_at: TimeNull;
}

export interface RunTable {
  id: string;
  account: Account;
  command: string;
  trigger: Default<string>;
  period_from: ColumnType<string | null, string | null | undefined, string | null>;
  period_to: ColumnType<string | null, string | null | undefined, string | null>;
  started_at: TimeDefault;
  finished_at: TimeNull;
  status: string;
  failed_stage: string | null;
  error: string | null;
  stages: ColumnType<unknown, string | undefined, string>;
  counts: ColumnType<unknown, string | undefined, string>;
  rule_results: ColumnType<unknown, string | undefined, string>;
  ruleset_version: string | null;
  config_hash: string | null;
  cursors: ColumnType<unknown, string | undefined, string>;
  requests: ColumnType<unknown, string | undefined, string>;
  report_path: string | null;
  /** OpenBreakCounts of the workbook at report_path (sql/0009). */
  break_counts: ColumnType<unknown, string | null | undefined, string | null>;
  /** ReportDigest of that workbook: what its e-mail shows (sql/0012). */
  report_digest: ColumnType<unknown, string | null | undefined, string | null>;
  /** LateBreak[]: breaks of earlier days the reconcile opened or resolved on late data (sql/0017). */
  late_breaks: ColumnType<unknown, string | null | undefined, string | null>;
  /** The stage started and not yet recorded as finished (sql/0016); named by failInterruptedRuns. */
  current_stage: ColumnType<string | null, string | null | undefined, string | null>;
  delivered: Default<boolean>;
  delivered_at: TimeNull;
  delivery_error: string | null;
  /** The batch this run is an account's run of (sql/0019); null for a single-account run. */
  batch_id: ColumnType<string | null, string | null | undefined, string | null>;
}

/** A batch: one night of a multi-account config and its group report (sql/0019). */
export interface BatchTable {
  id: string;
  trigger: string;
  period_from: string;
  period_to: string;
  started_at: TimeDefault;
  finished_at: TimeNull;
  status: string;
  report_path: ColumnType<string | null, string | null | undefined, string | null>;
  report_digest: ColumnType<unknown, string | null | undefined, string | null>;
  delivered: Default<boolean>;
  delivered_at: TimeNull;
  delivery_error: ColumnType<string | null, string | null | undefined, string | null>;
  /** Each account's status when the group report was last written (sql/0020). */
  reported_states: ColumnType<unknown, string | null | undefined, string | null>;
  report_version: Default<number>;
  deadline_at: TimeNull;
}

/** One account of a batch: its run and outcome (sql/0019). */
export interface BatchAccountTable {
  batch_id: string;
  account: string;
  position: number;
  status: string;
  run_id: ColumnType<string | null, string | null | undefined, string | null>;
  failed_stage: ColumnType<string | null, string | null | undefined, string | null>;
  error: ColumnType<string | null, string | null | undefined, string | null>;
  started_at: TimeNull;
  finished_at: TimeNull;
  worker: ColumnType<string | null, string | null | undefined, string | null>;
  attempts: Default<number>;
}

export interface BreakTable {
  account: Account;
  code: string;
  key: string;
  /** The kind of record the key names (src/domain/record-kinds.ts). */
  entity: string;
  severity: string;
  currency: string | null;
  /** amount | price | hours | text: what the figures are. */
  unit: string;
  /** A break without a record of its own: its UTC day (YYYY-MM-DD). */
  day: string | null;
  expected: string | null;
  actual: string | null;
  difference: string | null;
  message: string | null;
  detail: JsonNull;
  status: string;
  first_seen_run: string;
  first_seen_at: Time;
  last_seen_run: string;
  last_seen_at: Time;
  resolved_run: string | null;
  resolved_at: TimeNull;
  reopened_count: Default<number>;
}

export interface BreakEventTable {
  id: Generated<string>;
  account: Account;
  code: string;
  key: string;
  run_id: string;
  event: string;
  expected: string | null;
  actual: string | null;
  difference: string | null;
  at: TimeDefault;
}

export interface BalanceRollTable {
  run_id: string;
  account: Account;
  currency: string;
  opening_snapshot_id: Int8;
  closing_snapshot_id: Int8;
  opening_at: Time;
  closing_at: Time;
  opening: Num;
  deposits: Num;
  withdrawals: Num;
  bought: Num;
  sold: Num;
  fees: Num;
  expected_closing: Num;
  actual_closing: Num;
  residual: Num;
  deposits_by_state: NumNull;
  withdrawals_by_state: NumNull;
  first_divergent_day: ColumnType<string | null, string | null | undefined, string | null>;
  days: ColumnType<unknown, string | undefined, string>;
}

/**
 * 0017_change_tracking.sql: what a change left behind on other records (a hash given up, an order a fill left, a 404).
 */
export interface ReconChangeTable {
  account: Account;
  kind: string;
  key: string;
  /** xid8, as text. */
  change_xid: ColumnType<string, never, never>;
}

/** 0017_change_tracking.sql: per account, the snapshot the last successful reconcile started from. */
export interface ReconcileWatermarkTable {
  account: string;
  /** pg_snapshot, as text (xmin:xmax:xip,...). */
  judged_snapshot: ColumnType<string, string, string>;
  run_id: string;
  judged_at: Time;
}

export interface DB {
  partner_order: PartnerOrderTable;
  partner_order_state: PartnerOrderStateTable;
  reference_snapshot: ReferenceSnapshotTable;
  partner_currency: PartnerCurrencyTable;
  partner_quote: PartnerQuoteTable;
  webhook_event: WebhookEventTable;
  exchange_order: ExchangeOrderTable;
  exchange_order_not_found: ExchangeOrderNotFoundTable;
  exchange_order_state: ExchangeOrderStateTable;
  exchange_fill: ExchangeFillTable;
  exchange_deposit: ExchangeDepositTable;
  exchange_deposit_state: ExchangeDepositStateTable;
  exchange_withdrawal: ExchangeWithdrawalTable;
  exchange_withdrawal_state: ExchangeWithdrawalStateTable;
  balance_snapshot: BalanceSnapshotTable;
  balance: BalanceTable;
  exchange_fee_rate: ExchangeFeeRateTable;
  exchange_symbol: ExchangeSymbolTable;
  exchange_whitelist_entry: ExchangeWhitelistEntryTable;
  exchange_ticker: ExchangeTickerTable;
  sync_cursor: SyncCursorTable;
  sync_coverage: SyncCoverageTable;
  webhook_judgement: WebhookJudgementTable;
  quarantine: QuarantineTable;
  run: RunTable;
  batch: BatchTable;
  batch_account: BatchAccountTable;
  break: BreakTable;
  break_event: BreakEventTable;
  balance_roll: BalanceRollTable;
  recon_change: ReconChangeTable;
  reconcile_watermark: ReconcileWatermarkTable;
}

export type PartnerOrderRow = Selectable<PartnerOrderTable>;
export type RunRow = Selectable<RunTable>;
export type BreakRow = Selectable<BreakTable>;

/**
 * A row as a source hands it to the store: the table's insert values with every column the
 * source fills present and in the text form the sources produce (times as ISO text, amounts as
 * decimal text, raw records as JSON text; never a Date or a JS number), without `StoreColumns`,
 * which the store sets itself (account, first/last seen times, snapshot id).
 */
type Written<T, StoreColumns extends keyof T> = {
  [K in Exclude<keyof T, StoreColumns>]: Exclude<InsertType<T[K]>, Date | undefined>;
};
type SeenColumns = 'account' | 'first_seen_at' | 'last_seen_at';

/** order_state_updated_key is always written (older rows may lack it). */
export type NewPartnerOrder = Written<PartnerOrderTable, SeenColumns | 'not_found_at'> & {
  order_state_updated_key: string;
};
export type NewPartnerCurrency = Written<PartnerCurrencyTable, 'snapshot_id'>;
export type NewPartnerQuote = Written<PartnerQuoteTable, 'id' | 'account' | 'run_id' | 'fetched_at'>;
/**
 * trade_id is always present on the wire; page_index: 1-based position of the record in its page (the store can take
 * its raw JSON from the page text).
 */
export type NewExchangeFill = Written<ExchangeFillTable, 'account'> & { trade_id: string; page_index: number };
export type NewExchangeOrder = Written<ExchangeOrderTable, SeenColumns>;
export type NewExchangeDeposit = Written<ExchangeDepositTable, SeenColumns>;
export type NewExchangeWithdrawal = Written<ExchangeWithdrawalTable, SeenColumns>;
export type NewBalance = Written<BalanceTable, 'snapshot_id'>;
export type NewExchangeFeeRate = Written<ExchangeFeeRateTable, 'snapshot_id'>;
export type NewExchangeSymbol = Written<ExchangeSymbolTable, 'snapshot_id'>;
export type NewExchangeWhitelistEntry = Written<ExchangeWhitelistEntryTable, 'snapshot_id'>;
export type NewExchangeTicker = Written<ExchangeTickerTable, 'snapshot_id'>;
