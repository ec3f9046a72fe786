-- The stage a run is in: set when a stage starts, cleared when it is recorded as finished.
-- A process killed (or cut off from the database) mid-stage leaves it set, and the next run,
-- which marks the run left 'running' as failed (failInterruptedRuns), names it as failed_stage.
alter table run add column current_stage text;
