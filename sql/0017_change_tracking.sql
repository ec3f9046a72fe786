-- Change tracking (docs/rules.md "What a run judges"): every reconcile judges its period and every
-- record whose stored data changed since the account was last judged, whatever its day. A change is
-- recorded by the database itself, in the transaction of the write that makes it, so no write path
-- (sync pages, record-by-record fallbacks, refreshes by id, the webhook receiver) can forget one and
-- a crash between the write and the next reconcile loses none.
--
-- change_xid: the transaction that inserted the row or last changed what the rules read of it. A
-- reconcile remembers the snapshot it started from (reconcile_watermark); the next one judges every
-- row whose change_xid that snapshot did not see: every change committed since, including one whose
-- transaction began before that reconcile and committed while it ran. Rows stored before this
-- migration have none: the first reconcile after it judges every stored record once.
-- Re-seen rows (last_seen_at, raw bytes only) keep their change_xid: re-reading is not a change.
alter table partner_order add column change_xid xid8;
alter table partner_order alter column change_xid set default pg_current_xact_id();
alter table exchange_order add column change_xid xid8;
alter table exchange_order alter column change_xid set default pg_current_xact_id();
alter table exchange_fill add column change_xid xid8;
alter table exchange_fill alter column change_xid set default pg_current_xact_id();
alter table exchange_deposit add column change_xid xid8;
alter table exchange_deposit alter column change_xid set default pg_current_xact_id();
alter table exchange_withdrawal add column change_xid xid8;
alter table exchange_withdrawal alter column change_xid set default pg_current_xact_id();
alter table webhook_event add column change_xid xid8;
alter table webhook_event alter column change_xid set default pg_current_xact_id();

create index partner_order_change on partner_order (account, change_xid);
create index exchange_order_change on exchange_order (account, change_xid);
create index exchange_fill_change on exchange_fill (account, change_xid);
create index exchange_deposit_change on exchange_deposit (account, change_xid);
create index exchange_withdrawal_change on exchange_withdrawal (account, change_xid);
create index webhook_event_change on webhook_event (account, change_xid);

-- What a change leaves behind on other records and a row cannot say about itself: the hash a
-- deposit or partner order no longer carries (the orders that claimed it are judged again), the
-- order a fill no longer belongs to, an order the exchange answered 404 for (its fills' E_FILL_ORPHAN).
-- kind: tx_hash | exchange_order. Pruned by the reconcile that judged them.
create table recon_change (
  account text not null default 'default',
  kind text not null,
  key text not null,
  change_xid xid8 not null default pg_current_xact_id(),
  primary key (account, kind, key)
);

-- Per account: the snapshot the last successful reconcile started from (what it could see is judged).
-- Written in that reconcile's own transaction, with its breaks.
create table reconcile_watermark (
  account text primary key,
  judged_snapshot pg_snapshot not null,
  run_id text not null references run (id),
  judged_at timestamptz not null
);

-- The breaks of earlier days a reconcile opened, reopened or resolved because their records changed
-- (late data): [{code, key, day, event, severity, message}], for the report, the e-mail and --json.
alter table run add column late_breaks jsonb;

create function recon_mark_changed() returns trigger language plpgsql as $$
begin
  new.change_xid := pg_current_xact_id();
  return new;
end $$;

create function recon_note(p_account text, p_kind text, p_key text) returns void language sql as $$
  insert into recon_change (account, kind, key) values (p_account, p_kind, p_key)
  on conflict (account, kind, key) do update set change_xid = excluded.change_xid
$$;

-- The WHEN clauses list what the rules read of each record: they are evaluated without calling a
-- function, so an upsert that only re-sees a row costs nothing more.
create trigger partner_order_changed before update on partner_order for each row
  when ((old.order_type, old.created_at, old.order_state, old.order_state_updated_at_text, old.input_currency, old.input_amount,
         old.output_currency, old.output_amount, old.amount_usd, old.processing_fee, old.processing_fee_usd, old.partner_fee,
         old.partner_fee_usd, old.network_fee, old.network_fee_usd, old.target_wallet_address, old.transaction_hash, old.not_found_at)
    is distinct from
        (new.order_type, new.created_at, new.order_state, new.order_state_updated_at_text, new.input_currency, new.input_amount,
         new.output_currency, new.output_amount, new.amount_usd, new.processing_fee, new.processing_fee_usd, new.partner_fee,
         new.partner_fee_usd, new.network_fee, new.network_fee_usd, new.target_wallet_address, new.transaction_hash, new.not_found_at))
  execute function recon_mark_changed();

create trigger exchange_order_changed before update on exchange_order for each row
  when ((old.ord_type, old.ord_status, old.side, old.price, old.symbol, old.leaves_qty, old.cum_qty, old.avg_px, old.timestamp)
    is distinct from (new.ord_type, new.ord_status, new.side, new.price, new.symbol, new.leaves_qty, new.cum_qty, new.avg_px, new.timestamp))
  execute function recon_mark_changed();

create trigger exchange_fill_changed before update on exchange_fill for each row
  when ((old.ex_ord_id, old.side, old.symbol, old.price, old.qty, old.fee, old.timestamp)
    is distinct from (new.ex_ord_id, new.side, new.symbol, new.price, new.qty, new.fee, new.timestamp))
  execute function recon_mark_changed();

create trigger exchange_deposit_changed before update on exchange_deposit for each row
  when ((old.amount, old.currency, old.address, old.tx_hash, old.state, old.timestamp)
    is distinct from (new.amount, new.currency, new.address, new.tx_hash, new.state, new.timestamp))
  execute function recon_mark_changed();

create trigger exchange_withdrawal_changed before update on exchange_withdrawal for each row
  when ((old.amount, old.fee, old.currency, old.beneficiary, old.state, old.timestamp)
    is distinct from (new.amount, new.fee, new.currency, new.beneficiary, new.state, new.timestamp))
  execute function recon_mark_changed();

-- One note function for every AFTER trigger below: the kind of key (TG_ARGV[0]) and the column that
-- holds it (TG_ARGV[1]), read from the old row (an update, a delete: what the row no longer says) or
-- the new one (an insert). The WHEN clauses keep it to the rare rows that need a note.
create function recon_note_key() returns trigger language plpgsql as $$
declare
  r jsonb := case when tg_op = 'INSERT' then to_jsonb(new) else to_jsonb(old) end;
begin
  perform recon_note(r ->> 'account', tg_argv[0], r ->> tg_argv[1]);
  return null;
end $$;

create trigger exchange_deposit_hash_left after update on exchange_deposit for each row
  when (old.tx_hash is not null and old.tx_hash is distinct from new.tx_hash)
  execute function recon_note_key('tx_hash', 'tx_hash');
create trigger partner_order_hash_left after update on partner_order for each row
  when (old.transaction_hash is not null and old.transaction_hash is distinct from new.transaction_hash)
  execute function recon_note_key('tx_hash', 'transaction_hash');
create trigger exchange_fill_order_left after update on exchange_fill for each row
  when (old.ex_ord_id is distinct from new.ex_ord_id)
  execute function recon_note_key('exchange_order', 'ex_ord_id');
-- An order the exchange answered 404 for, or found again: its fills' E_FILL_ORPHAN.
create trigger exchange_order_not_found_changed after insert or delete on exchange_order_not_found for each row
  execute function recon_note_key('exchange_order', 'ex_ord_id');
