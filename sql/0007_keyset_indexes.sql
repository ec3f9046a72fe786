-- The report and the reconcile read big tables in keyset pages ordered by (time, id) and asking
-- for rows after (time, id) of the last page. An index on (account, time) alone serves only the
-- time range: every page scanned the period again from its start up to its cursor and filtered
-- the row comparison, so reading a million fills cost O(pages x rows). With the id in the index
-- the row comparison is an index condition and each page starts where the last one ended.
create index exchange_fill_time_key on exchange_fill (account, timestamp, exec_id);
drop index exchange_fill_time;
create index partner_order_created_key on partner_order (account, created_at, order_id);
drop index partner_order_created;
create index exchange_deposit_time_key on exchange_deposit (account, timestamp, deposit_id);
drop index exchange_deposit_time;
create index exchange_withdrawal_time_key on exchange_withdrawal (account, timestamp, withdrawal_id);
drop index exchange_withdrawal_time;
