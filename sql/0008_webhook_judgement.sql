-- P_WEBHOOK_GAP judges every settled partner order once, in the first reconcile after its last
-- state change is past the sender's 3-day retry window, whatever day the order was created. This
-- table remembers which state change of each order was judged, and by which run: a later run
-- judges an order again only when its state changed since (or while its break is still open).
create table webhook_judgement (
  account text not null default 'default',
  order_id text not null,
  order_state_updated_at_text text not null,  -- the state change judged (exact text)
  run_id text not null,                       -- the run that judged it first
  judged_at timestamptz not null default now(),
  primary key (account, order_id)
);
-- The orders that become judgeable: settled, by time of their last state change.
create index partner_order_state_updated on partner_order (account, order_state_updated_at) where order_state in ('COMPLETED', 'FAILED');
