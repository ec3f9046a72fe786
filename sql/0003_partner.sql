-- Partner orders and webhook events are ordered by orderStateUpdatedAt to the nanosecond.
-- timestamptz keeps microseconds and the wire text varies in fraction width and offset, so a
-- fixed-width UTC key 'YYYY-MM-DDTHH:MM:SS.fffffffffZ' is stored next to the text; it compares
-- correctly as text. Written by the sync and the webhook receiver (src/sources/partner/transform.ts).
alter table partner_order add column order_state_updated_key text;
alter table webhook_event add column order_state_updated_key text;
-- Whether the event moved the order's state (false: an older event arriving late, or a duplicate state).
alter table webhook_event add column applied boolean not null default false;
create index webhook_event_order_key on webhook_event (account, order_id, order_state_updated_key);
