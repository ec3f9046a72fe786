-- Roll-forward figures of each reconcile run, per currency and balance-snapshot pair, for the
-- report's Balances sheet. A run replaces its own rows when reconcile is re-run in it.
create table balance_roll (
  run_id text not null references run (id),
  account text not null default 'default',
  currency text not null,
  opening_snapshot_id bigint not null references balance_snapshot (id),
  closing_snapshot_id bigint not null references balance_snapshot (id),
  opening_at timestamptz not null,
  closing_at timestamptz not null,
  opening numeric not null,
  deposits numeric not null,
  withdrawals numeric not null,
  -- what fills added to the currency (base of a BUY, counter of a SELL) and took from it
  bought numeric not null,
  sold numeric not null,
  fees numeric not null,
  expected_closing numeric not null,
  actual_closing numeric not null,
  residual numeric not null,
  -- set only when the residual is beyond tolerance (docs/rules.md E_BALANCE_ROLL)
  first_divergent_day date,
  -- [{day, net, derivedClosing}]: end-of-day balances derived backwards from the closing snapshot
  days jsonb not null default '[]',
  primary key (run_id, opening_snapshot_id, closing_snapshot_id, currency)
);
create index balance_roll_pair on balance_roll (account, closing_snapshot_id);
