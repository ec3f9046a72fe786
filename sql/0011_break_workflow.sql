-- The break workflow (README "Working breaks"): where a person stands on a break, every change as an
-- event with who, when and why, and the returned workbooks already imported. A break resolved by the
-- data keeps its workflow row and events: nothing here is ever deleted.

-- One row per break someone has worked on. explained: acknowledged with a reason while the break's
-- amounts still equal the acknowledged ones (ack_*); a change of amounts makes it unexplained again
-- (event 'reopened'). Amounts are text, as on the break table.
create table break_workflow (
  account text not null default 'default',
  code text not null,
  key text not null,
  status text not null default 'unexplained' check (status in ('unexplained', 'explained')),
  owner text,
  explanation text,
  ack_expected text,
  ack_actual text,
  ack_difference text,
  ack_currency text,
  updated_at timestamptz not null default now(),
  primary key (account, code, key),
  foreign key (account, code, key) references break (account, code, key)
);
create index break_workflow_explained on break_workflow (account) where status = 'explained';

-- Every workflow change: kind acknowledged | unacknowledged | noted | assigned | reopened; by: the person
-- (or ramp-recon for a reopen); source: cli, workbook:<run id>, or run:<run id> (reopened by a run);
-- the break's amounts when it was recorded.
create table break_workflow_event (
  id bigserial primary key,
  account text not null default 'default',
  code text not null,
  key text not null,
  kind text not null check (kind in ('acknowledged', 'unacknowledged', 'noted', 'assigned', 'reopened')),
  by text not null,
  at timestamptz not null default now(),
  text text,
  source text not null,
  expected text,
  actual text,
  difference text
);
create index break_workflow_event_key on break_workflow_event (account, code, key, id);

-- Returned workbooks imported (`breaks import`): one file (by its sha256) is applied once per account.
create table break_import (
  account text not null default 'default',
  run_id text not null,
  sha256 text not null,
  by text not null,
  at timestamptz not null default now(),
  applied integer not null,
  skipped integer not null,
  unique (account, sha256)
);
