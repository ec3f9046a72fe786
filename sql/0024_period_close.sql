-- Period close (docs/closing.md): a sign-off of an account's period, the evidence it was made from, and the
-- append-only audit log.

-- One sign-off. `digest`: SHA-256 over the period's stored records in canonical form, the ruleset version and the
-- config hash (src/store/close-records.ts). The signed workbook is written before this row and renamed into place
-- after it commits; its SHA-256 is stored here. A reopened close stays, with who reopened it and why.
create table period_close (
  id text primary key,
  account text not null,
  period_from date not null,
  period_to date not null,
  closed_by text not null,
  closed_at timestamptz not null,
  note text,
  run_id text not null references run (id),
  digest text not null,
  record_count bigint not null,
  ruleset_version text not null,
  config_hash text not null,
  workbook_path text not null,
  workbook_sha256 text not null,
  state text not null default 'signed' check (state in ('signed', 'reopened')),
  reopened_by text,
  reopened_at timestamptz,
  reopen_reason text
);
create index period_close_account on period_close (account, period_from);

-- The breaks open on the period at sign-off, with where people stood on them.
create table close_break (
  close_id text not null references period_close (id),
  code text not null,
  key text not null,
  severity text not null,
  first_seen_at timestamptz,
  explained boolean not null,
  owner text,
  last_note text,
  primary key (close_id, code, key)
);

-- The period's records as signed, in canonical form: what `verify` diffs field by field.
create table close_record (
  close_id text not null references period_close (id),
  stream text not null,
  record_id text not null,
  doc text not null,
  primary key (close_id, stream, record_id)
);

-- Prior-period adjustments: each change to a record of a signed period a run saw after the sign-off.
create table close_change (
  close_id text not null references period_close (id),
  stream text not null,
  record_id text not null,
  field text not null,
  before text,
  after text,
  usd_impact numeric,
  run_id text not null,
  seen_at timestamptz not null,
  primary key (close_id, stream, record_id, field)
);

-- Append-only, chained by hash: hash = SHA-256(prev_hash + canonical row) (src/store/audit-log.ts).
create table audit_log (
  seq bigint primary key,
  at timestamptz not null,
  actor text not null,
  action text not null,
  subject text not null,
  payload text not null,
  prev_hash text not null,
  hash text not null
);
