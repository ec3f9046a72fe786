-- The counts of the open breaks as the run's workbook shows them (src/domain/break.ts OpenBreakCounts:
-- total, of this period, carried over; per severity and per rule), written with report_path. The
-- e-mail describes its attachment: a delivery retried later (`deliver <runId>`), after other runs
-- changed the breaks, still sends the counts of the workbook it attaches. Null before a workbook.
alter table run add column break_counts jsonb;
