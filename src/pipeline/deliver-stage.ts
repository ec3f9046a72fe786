/** The deliver stage of a run as the orchestrator runs it: skipped with its reason, or the workbook e-mailed. */
import { AppError } from '../errors.js';
import type { StageContext } from '../stages/context.js';
import { skipStage, type StageRunner } from './execute.js';
import type { Stages } from './load-stages.js';

export interface DeliverStageOptions {
  /** Send the workbook by e-mail when SMTP is configured (`--no-email` turns it off). */
  email: boolean;
  /** Why `email` is off, as `runs` shows the skipped deliver stage (default: --no-email). */
  noEmailReason?: string;
}

/**
 * E-mails the run's workbook as the stage `deliver`, or records the stage skipped: e-mail off, or no SMTP_URL. A send
 * that fails fails the stage, saying where the workbook is and how to send it again.
 */
export async function deliverStage(
  ctx: StageContext,
  stage: StageRunner,
  input: DeliverStageOptions & { runId: string; reportPath: string; deliverRun: Stages['deliverRun'] },
): Promise<void> {
  const { runId } = input;
  if (!input.email) return skipStage(ctx, 'deliver', input.noEmailReason ?? '--no-email');
  if (!ctx.config.smtpUrl) return skipStage(ctx, 'deliver', 'SMTP_URL not set');
  await stage(
    'deliver',
    async () => {
      const sent = await input.deliverRun(ctx, runId);
      if (sent.status === 'failed')
        throw new AppError(
          'DELIVERY_FAILED',
          `e-mail not sent: ${sent.error ?? 'unknown error'}; the workbook is kept at ${input.reportPath}; retry with \`ramp-recon deliver ${runId}\``,
        );
      return sent;
    },
    (sent) => ({
      status: sent.status,
      ...(sent.withoutWorkbook ? { withoutWorkbook: sent.withoutWorkbook } : {}),
    }),
  );
}
