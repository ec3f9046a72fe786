-- Batches worked by a fleet (pg-boss workers on several machines, issue 27).
-- reported_states: each account's status when the group report was last written ({"acme":"succeeded",...}), so a
--   repeated fan-in writes nothing new and a late account's end writes an amended report;
-- report_version: 1 for the first group report, 2 for its first amendment, ...;
-- deadline_at: when the report goes out anyway, naming the accounts still running or never started.
alter table batch
  add column reported_states jsonb,
  add column report_version int not null default 0,
  add column deadline_at timestamptz;

-- One scheduled batch per night, however many schedulers fire it.
create unique index batch_one_scheduled_night on batch (period_from, period_to) where trigger = 'schedule';
