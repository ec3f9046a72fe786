-- What the run's e-mail shows, fixed when its workbook is written (src/report/model.ts ReportDigest):
-- the period label, the banner and status line, and the five oldest or largest open breaks in words.
-- With break_counts (sql/0009) it lets `deliver <runId>` send, later, exactly what the attachment shows.
-- Null before a workbook was written (the e-mail then builds it again from the open breaks).
alter table run add column report_digest jsonb;
