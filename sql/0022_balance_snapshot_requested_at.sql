-- When the /accounts request of a balance snapshot was sent (fetched_at: when its answer arrived). The exchange
-- took the balances at some instant between the two, which the client cannot know: a fill stamped inside that
-- window may or may not be in the snapshot. The roll-forward places those few fills on the side of the snapshot
-- that balances (src/rules/snapshot-edges.ts, docs/rules.md). Null for snapshots stored before: no window.
alter table balance_snapshot add column requested_at timestamptz;
