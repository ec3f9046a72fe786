-- A batch: one night (or one `run`) of a multi-account config, every account's run and one group report.
-- Each account's outcome is a row of batch_account (its run, status, error, worker and attempts), so
-- accounts run in one process or by workers on several machines each update only their own row.
create table batch (
  id text primary key,
  trigger text not null,
  period_from date not null,
  period_to date not null,
  started_at timestamptz not null default now(),
  finished_at timestamptz,
  status text not null,              -- running | succeeded | failed (an account failed or never ran)
  report_path text,
  report_digest jsonb,               -- what the group e-mail shows (GroupDigest)
  delivered boolean not null default false,
  delivered_at timestamptz,
  delivery_error text
);
create index batch_started on batch (started_at desc);

create table batch_account (
  batch_id text not null references batch (id),
  account text not null,
  position int not null,             -- the account's place in the config
  status text not null,              -- pending | running | succeeded | failed
  run_id text references run (id),
  failed_stage text,
  error text,
  started_at timestamptz,
  finished_at timestamptz,
  worker text,                       -- who ran it: host and process id
  attempts int not null default 0,
  primary key (batch_id, account)
);

alter table run add column batch_id text references batch (id);
create index run_batch on run (batch_id) where batch_id is not null;
