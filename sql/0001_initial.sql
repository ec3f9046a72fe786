-- ramp-recon initial schema. Every amount is numeric (exact), every time timestamptz,
-- every synced row carries the account it belongs to, and natural ids are unique keys.
-- Raw payloads are kept as jsonb next to the normalized columns.

-- ---------------------------------------------------------------- partner
create table partner_order (
  account text not null default 'default',
  order_id text not null,
  external_reference text,
  sub_partner_id text,
  order_type text not null,
  created_at timestamptz not null,
  created_at_text text not null,
  order_state text not null,
  order_state_updated_at timestamptz not null,
  -- full wire text: webhook timestamps carry nanoseconds, which timestamptz cannot hold
  order_state_updated_at_text text not null,
  payment_method text,
  input_currency text not null,
  input_amount numeric not null,
  output_currency text not null,
  output_amount numeric,
  amount_usd numeric,
  processing_fee numeric,
  processing_fee_usd numeric,
  partner_fee numeric,
  partner_fee_usd numeric,
  network_fee numeric,
  network_fee_usd numeric,
  user_id text,
  target_wallet_address text,
  transaction_hash text,
  raw jsonb not null,
  first_seen_at timestamptz not null default now(),
  last_seen_at timestamptz not null default now(),
  -- set when GET /orders/{id} answered 404 on a refresh
  not_found_at timestamptz,
  primary key (account, order_id)
);
create index partner_order_created on partner_order (account, created_at);
create index partner_order_open on partner_order (account, order_state) where order_state in ('PENDING', 'WITHDRAWING');
create index partner_order_tx on partner_order (account, transaction_hash) where transaction_hash is not null;

create table partner_order_state (
  account text not null default 'default',
  order_id text not null,
  order_state text not null,
  order_state_updated_at timestamptz not null,
  order_state_updated_at_text text not null,
  observed_at timestamptz not null default now(),
  source text not null,
  primary key (account, order_id, order_state, order_state_updated_at_text)
);

-- Dated snapshots of reference data (partner currencies/regions/payment methods, exchange
-- fees/symbols/whitelist/tickers). A new row only when the content changed, so re-runs are idempotent
-- and the table reads as "what was in force from when".
create table reference_snapshot (
  id bigserial primary key,
  account text not null default 'default',
  source text not null,              -- partner | exchange
  kind text not null,                -- currencies | regions | payment_methods | fees | symbols | whitelist | tickers
  fetched_at timestamptz not null,
  content_hash text not null,
  body jsonb not null
);
create index reference_snapshot_latest on reference_snapshot (account, source, kind, fetched_at desc);

create table partner_currency (
  snapshot_id bigint not null references reference_snapshot (id),
  code text not null,
  type text not null,
  name text,
  precision integer not null,
  min_buy_amount numeric,
  max_buy_amount numeric,
  network text,
  primary key (snapshot_id, code)
);

create table partner_quote (
  id bigserial primary key,
  account text not null default 'default',
  run_id text,
  fetched_at timestamptz not null,
  quote_currency_code text not null,
  base_currency_code text not null,
  payment_method text,
  quote_currency_amount numeric not null,
  base_currency_amount numeric,
  price numeric,
  processing_fee_amount numeric,
  partner_fee_amount numeric,
  network_fee_amount numeric,
  total_amount numeric,
  raw jsonb not null,
  unique (account, run_id, quote_currency_code, base_currency_code, quote_currency_amount)
);

create table webhook_event (
  account text not null default 'default',
  event_id text not null,
  order_id text not null,
  order_state text not null,
  order_state_updated_at timestamptz not null,
  order_state_updated_at_text text not null,
  created_at_text text,
  received_at timestamptz not null default now(),
  remote_addr text,
  duplicate_count integer not null default 0,
  -- fields beyond the contract's event schema (additionalProperties false): counted as drift
  extra_fields text[] not null default '{}',
  raw jsonb not null,
  primary key (account, event_id)
);
create index webhook_event_order on webhook_event (account, order_id);

-- ---------------------------------------------------------------- exchange
create table exchange_order (
  account text not null default 'default',
  ex_ord_id bigint not null,
  cl_ord_id text,
  ord_type text,
  ord_status text not null,
  side text,
  price numeric,
  text text,
  symbol text,
  last_shares numeric,
  last_px numeric,
  leaves_qty numeric,
  cum_qty numeric,
  avg_px numeric,
  timestamp timestamptz,
  raw jsonb not null,
  first_seen_at timestamptz not null default now(),
  last_seen_at timestamptz not null default now(),
  primary key (account, ex_ord_id)
);
create index exchange_order_time on exchange_order (account, timestamp);

-- An order id referenced by a fill that GET /orders/{id} answered 404 for (E_FILL_ORPHAN input).
create table exchange_order_not_found (
  account text not null default 'default',
  ex_ord_id bigint not null,
  checked_at timestamptz not null default now(),
  primary key (account, ex_ord_id)
);

create table exchange_order_state (
  account text not null default 'default',
  ex_ord_id bigint not null,
  ord_status text not null,
  cum_qty numeric not null default 0,
  observed_at timestamptz not null default now(),
  primary key (account, ex_ord_id, ord_status, cum_qty)
);

create table exchange_fill (
  account text not null default 'default',
  exec_id bigint not null,
  ex_ord_id bigint not null,
  trade_id bigint,
  side text not null,
  symbol text not null,
  price numeric not null,
  qty numeric not null,
  fee numeric not null,
  timestamp timestamptz not null,
  raw jsonb not null,
  primary key (account, exec_id)
);
create index exchange_fill_time on exchange_fill (account, timestamp);
create index exchange_fill_order on exchange_fill (account, ex_ord_id);

create table exchange_deposit (
  account text not null default 'default',
  deposit_id text not null,
  amount numeric not null,
  currency text not null,
  address text not null,
  tx_hash text,
  state text not null,
  timestamp timestamptz,
  raw jsonb not null,
  first_seen_at timestamptz not null default now(),
  last_seen_at timestamptz not null default now(),
  primary key (account, deposit_id)
);
create index exchange_deposit_tx on exchange_deposit (account, tx_hash) where tx_hash is not null;
create index exchange_deposit_time on exchange_deposit (account, timestamp);

create table exchange_deposit_state (
  account text not null default 'default',
  deposit_id text not null,
  state text not null,
  observed_at timestamptz not null default now(),
  primary key (account, deposit_id, state)
);

create table exchange_withdrawal (
  account text not null default 'default',
  withdrawal_id text not null,
  amount numeric not null,
  fee numeric,
  currency text not null,
  beneficiary text not null,
  state text,
  timestamp timestamptz,
  raw jsonb not null,
  first_seen_at timestamptz not null default now(),
  last_seen_at timestamptz not null default now(),
  primary key (account, withdrawal_id)
);
create index exchange_withdrawal_time on exchange_withdrawal (account, timestamp);

create table exchange_withdrawal_state (
  account text not null default 'default',
  withdrawal_id text not null,
  state text not null,
  observed_at timestamptz not null default now(),
  primary key (account, withdrawal_id, state)
);

-- Balance snapshots are the anchors of the roll-forward: one per fetch, always inserted.
create table balance_snapshot (
  id bigserial primary key,
  account text not null default 'default',
  exchange_account text not null,
  fetched_at timestamptz not null,
  run_id text,
  raw jsonb not null
);
create index balance_snapshot_time on balance_snapshot (account, exchange_account, fetched_at);

create table balance (
  snapshot_id bigint not null references balance_snapshot (id),
  currency text not null,
  balance numeric not null,
  available numeric not null,
  balance_local numeric not null,
  available_local numeric not null,
  rate numeric not null,
  primary key (snapshot_id, currency)
);

create table exchange_fee_rate (
  snapshot_id bigint primary key references reference_snapshot (id),
  maker_rate numeric not null,
  taker_rate numeric not null,
  volume_in_usd numeric
);

create table exchange_symbol (
  snapshot_id bigint not null references reference_snapshot (id),
  symbol text not null,
  base_currency text,
  base_currency_scale integer,
  counter_currency text,
  counter_currency_scale integer,
  -- derived: increment * 10^-scale, exact
  price_increment numeric,
  lot_size numeric,
  min_order_size numeric,
  max_order_size numeric,
  status text,
  primary key (snapshot_id, symbol)
);

create table exchange_whitelist_entry (
  snapshot_id bigint not null references reference_snapshot (id),
  whitelist_id text not null,
  name text,
  currency text,
  primary key (snapshot_id, whitelist_id)
);

create table exchange_ticker (
  snapshot_id bigint not null references reference_snapshot (id),
  symbol text not null,
  price_24h numeric,
  volume_24h numeric,
  last_trade_price numeric,
  primary key (snapshot_id, symbol)
);

-- ---------------------------------------------------------------- sync bookkeeping
create table sync_cursor (
  account text not null default 'default',
  source text not null,
  name text not null,
  value text not null,
  updated_at timestamptz not null default now(),
  primary key (account, source, name)
);

-- Per source and UTC day: what a scan saw, for the Coverage sheet and S_COVERAGE.
create table sync_coverage (
  account text not null default 'default',
  source text not null,
  stream text not null,             -- e.g. orders, fills, deposits
  day date not null,
  pages integer not null default 0,
  rows integer not null default 0,
  quarantined integer not null default 0,
  settled boolean not null default true,
  detail jsonb,
  run_id text,
  updated_at timestamptz not null default now(),
  primary key (account, source, stream, day)
);

-- Records that failed validation: kept with their raw body and the reason, never dropped.
create table quarantine (
  id bigserial primary key,
  account text not null default 'default',
  source text not null,
  endpoint text not null,
  entity text,                       -- fill, exchange_order, partner_order, webhook_event, ...
  record_key text,                   -- the record's natural id when it could be read
  position integer,                  -- index in its page when no id could be read
  raw_text text not null,
  raw_hash text not null,
  reason text not null,
  first_seen_at timestamptz not null default now(),
  last_seen_at timestamptz not null default now(),
  seen_count integer not null default 1,
  run_id text,
  resolved_at timestamptz,
  unique (account, source, endpoint, raw_hash)
);
create index quarantine_open on quarantine (account, entity, record_key) where resolved_at is null;

-- ---------------------------------------------------------------- runs and breaks
create table run (
  id text primary key,
  account text not null default 'default',
  command text not null,            -- run | sync | reconcile | report | deliver
  trigger text not null default 'cli',
  period_from date,
  period_to date,
  started_at timestamptz not null default now(),
  finished_at timestamptz,
  status text not null,              -- running | succeeded | failed
  failed_stage text,
  error text,
  stages jsonb not null default '{}',
  counts jsonb not null default '{}',
  rule_results jsonb not null default '[]',
  ruleset_version text,
  config_hash text,
  cursors jsonb not null default '{}',
  report_path text,
  delivered boolean not null default false,
  delivered_at timestamptz,
  delivery_error text
);
create index run_period on run (account, period_from, period_to, started_at desc);

create table break (
  account text not null default 'default',
  code text not null,
  key text not null,
  severity text not null,
  currency text,
  expected text,
  actual text,
  difference text,
  message text,
  detail jsonb,
  status text not null,              -- open | resolved
  first_seen_run text not null references run (id),
  first_seen_at timestamptz not null,
  last_seen_run text not null references run (id),
  last_seen_at timestamptz not null,
  resolved_run text references run (id),
  resolved_at timestamptz,
  reopened_count integer not null default 0,
  primary key (account, code, key)
);
create index break_open on break (account, status, severity);

create table break_event (
  id bigserial primary key,
  account text not null default 'default',
  code text not null,
  key text not null,
  run_id text not null references run (id),
  event text not null,               -- opened | seen | resolved | reopened
  expected text,
  actual text,
  difference text,
  at timestamptz not null default now()
);
create index break_event_key on break_event (account, code, key, at);
