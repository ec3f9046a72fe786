/** A run that failed before its report still reports: its workbook saying FAILED, and one e-mail (or a short one). */
import { recordDelivery, recordStage } from '../store/runs/runs.js';
import type { StageContext } from '../stages/context.js';
import type { Period } from '../domain/period.js';
import { errorText, failureText, skipStage, type RunFailed, type StageRunner } from './execute.js';
import { deliverStage, type DeliverStageOptions } from './deliver-stage.js';
import type { Stages } from './load-stages.js';

export interface FailureReportOptions extends DeliverStageOptions {
  period: Period;
  /** The run's stop signal (SIGTERM, the worker's lost claim): a run stopped on purpose sends no failure report. */
  signal?: AbortSignal;
  /** False for a worker's attempt that will be retried: only the account's last attempt mails its failure. */
  failureEmail?: boolean;
}

export interface FailureReportWritten {
  path: string;
  detailDir: string;
}

/**
 * Writes the failed run's workbook as its `report` stage, then e-mails it as its `deliver` stage (the same rules as a
 * run that succeeds: e-mail on, SMTP_URL set, the same recipients and size limit). When the workbook cannot be written
 * (the database gone, the disk full), a short e-mail says what failed and why there is no workbook. Nothing here
 * changes the run's status, failing stage or error; a failure here is logged and recorded on its own stage.
 */
export async function reportFailedRun(
  ctx: StageContext,
  stage: StageRunner,
  failure: RunFailed,
  stages: Pick<Stages, 'writeReport' | 'deliverRun' | 'deliverFailureNotice'>,
  given: FailureReportOptions,
): Promise<FailureReportWritten | null> {
  const options: FailureReportOptions =
    given.failureEmail === false && given.email
      ? { ...given, email: false, noEmailReason: 'an attempt a worker retries: only the last attempt mails a failure' }
      : given;
  const runId = ctx.runId as string;
  const log = ctx.logger.child({ failedStage: failure.stage });
  if (options.signal?.aborted) {
    const why = `the run was stopped (${errorText(options.signal.reason)}): no failure report`;
    await skipQuietly(ctx, 'report', why);
    await skipQuietly(ctx, 'deliver', why);
    return null;
  }
  let written: FailureReportWritten | null = null;
  let noWorkbook = 'the database refused to record the failed run (see the log)';
  if (failure.recorded)
    try {
      const report = await stage(
        'report',
        () => stages.writeReport(ctx, runId),
        (r) => ({ path: r.path, sheets: r.sheets, detail: r.detail.dir, failedRun: true }),
      );
      written = { path: report.path, detailDir: report.detail.dir };
      log.warn({ path: report.path }, 'failure report written');
    } catch (err) {
      noWorkbook = failureText(err, ctx);
      log.error({ error: noWorkbook }, 'the failure report could not be written');
    }

  if (written)
    await deliverStage(ctx, stage, {
      ...options,
      runId,
      reportPath: written.path,
      deliverRun: stages.deliverRun,
    }).catch((err: unknown) => log.error({ error: failureText(err, ctx) }, 'the failure report was not e-mailed'));
  else if (!options.email) await skipQuietly(ctx, 'deliver', options.noEmailReason ?? '--no-email');
  else if (!ctx.config.smtpUrl) await skipQuietly(ctx, 'deliver', 'SMTP_URL not set');
  else await sendNotice(ctx, { period: options.period, failure, noWorkbook }, stages);
  return written;
}

/** The short failure e-mail, then its outcome on the run row if the database takes it. */
async function sendNotice(
  ctx: StageContext,
  input: { period: Period; failure: RunFailed; noWorkbook: string },
  stages: Pick<Stages, 'deliverFailureNotice'>,
): Promise<void> {
  const runId = ctx.runId as string;
  const startedAt = new Date();
  const sent = await stages.deliverFailureNotice(ctx, {
    period: input.period,
    failure: { stage: input.failure.stage, error: input.failure.error },
    noWorkbook: input.noWorkbook,
  });
  const ok = sent.status === 'sent';
  const error = ok ? undefined : `failure notice not sent: ${sent.error ?? sent.status}`;
  try {
    await recordStage(ctx.store.db, runId, 'deliver', {
      startedAt,
      finishedAt: new Date(),
      status: ok ? 'succeeded' : 'failed',
      ...(error ? { error } : {}),
      detail: { status: sent.status, withoutWorkbook: `no workbook: ${input.noWorkbook}` },
    });
    await recordDelivery(ctx.store.db, runId, ok ? { delivered: true } : { delivered: false, error: error! });
  } catch (err) {
    ctx.logger.warn({ error: failureText(err, ctx) }, 'could not record the failure notice on the run');
  }
}

/** A stage recorded as skipped, if the database takes it (it may be what failed). */
async function skipQuietly(ctx: StageContext, name: string, reason: string): Promise<void> {
  await skipStage(ctx, name, reason).catch((err: unknown) =>
    ctx.logger.warn({ stage: name, error: failureText(err, ctx) }, 'could not record the skipped stage'),
  );
}
