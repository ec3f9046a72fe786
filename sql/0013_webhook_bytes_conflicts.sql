-- Webhooks never refused for ever (issue 17, item 3).
-- The exact bytes of every delivered body: a stored event's raw jsonb normalizes spacing and key
-- order, and a quarantined body may be invalid UTF-8 or hold NUL, which no text column can keep.
alter table webhook_event add column raw_bytes bytea;
-- sha256 of the event's canonical JSON (keys sorted, numbers as sent): a repeated eventId is a
-- duplicate when it matches, a conflict when it does not.
alter table webhook_event add column body_hash text;
alter table quarantine add column raw_bytes bytea;

-- A repeated eventId whose body differs from the stored event's: kept for the report, never dropped.
create table webhook_event_conflict (
  id bigserial primary key,
  account text not null default 'default',
  event_id text not null,
  body_hash text not null,
  stored_body_hash text,
  raw_bytes bytea not null,
  raw_text text not null,
  remote_addr text,
  first_seen_at timestamptz not null default now(),
  last_seen_at timestamptz not null default now(),
  seen_count integer not null default 1,
  unique (account, event_id, body_hash)
);
