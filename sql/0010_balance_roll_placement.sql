-- The roll-forward places each deposit and withdrawal where its state change was first observed,
-- or by its timestamp (docs/rules.md E_BALANCE_ROLL): the parts of a pair's deposits and
-- withdrawals placed by an observed state change, so the Balances sheet can say which flows were
-- placed how. Null on rows written before this migration.
alter table balance_roll add column deposits_by_state numeric;
alter table balance_roll add column withdrawals_by_state numeric;
