/** `ramp-recon run` on a multi-account config: the batch, its JSON summary, its lines and its exit code. */
import { plural } from '../../util/words.js';
import type { Config } from '../../config/load.js';
import type { Logger } from '../../log/logger.js';
import type { Period } from '../../domain/index.js';
import { EXIT } from '../../errors.js';
import { runBatch, type BatchResult } from '../../pipeline/batch.js';
import { periodLabel } from '../../report/summary.js';
import { withRunStore } from '../run-store.js';

export const BATCH_EXIT_HELP = `With several accounts (\`accounts\` in the config) \`run\` runs them as one batch: exit 1 when any account
failed, 3 with --fail-on-breaks when all succeeded and one has unexplained open breaks.`;

interface BatchFlags {
  json?: boolean;
  failOnBreaks?: boolean;
  email: boolean;
  wait?: boolean;
}

/** Runs the batch of the selected accounts and prints its summary; the exit code covers every account. */
export async function runBatchCommand(
  opts: BatchFlags,
  ctx: { logger: Logger; period: Period; accounts: readonly Config[] },
): Promise<number> {
  const first = ctx.accounts[0]!;
  const result = await withRunStore(first, ctx.logger, { wait: opts.wait }, (store, signal) =>
    runBatch({ store, logger: ctx.logger }, ctx.accounts, {
      period: ctx.period,
      trigger: 'cli',
      email: opts.email,
      wait: opts.wait,
      signal,
    }),
  );
  if (opts.json) process.stdout.write(`${JSON.stringify(batchJson(result), null, 2)}\n`);
  else process.stdout.write(`${describeBatch(result)}\n`);
  for (const r of result.runs)
    if (!r.result || r.result.status === 'failed')
      process.stderr.write(
        `ramp-recon: account ${r.account} failed: ${r.result ? `run ${r.result.runId} failed in stage ${r.result.failedStage}: ${r.result.error}` : r.error}\n`,
      );
  return batchExitCode(result, opts.failOnBreaks === true);
}

/** 1 when an account failed or never ran; with --fail-on-breaks, 3 when one has unexplained open breaks; else 0. */
export function batchExitCode(result: Pick<BatchResult, 'runs'>, failOnBreaks: boolean): number {
  if (result.runs.some((r) => r.result?.status !== 'succeeded')) return EXIT.failed;
  const unexplained = result.runs.some((r) => {
    const s = r.result!.summary;
    return s.breaks.length - (s.breakCounts.explained ?? 0) > 0;
  });
  return failOnBreaks && unexplained ? EXIT.breaks : EXIT.ok;
}

/** The `run --json` document of a batch: the batch, its verdict and group report, and each account's run summary. */
export function batchJson(result: BatchResult): Record<string, unknown> {
  return {
    batchId: result.batchId,
    status: result.status,
    period: result.period,
    verdict: result.report?.digest.verdict ?? null,
    report: result.report?.path ?? null,
    ...(result.reportError ? { reportError: result.reportError } : {}),
    delivery: result.delivery
      ? { status: result.delivery.status, ...(result.delivery.error ? { error: result.delivery.error } : {}) }
      : null,
    accounts: result.runs.map((r) => ({
      account: r.account,
      status: r.result?.status ?? 'failed',
      runId: r.result?.runId ?? null,
      failedStage: r.result?.failedStage ?? null,
      error: r.result?.error ?? r.error ?? null,
      summary: r.result?.summary ?? null,
    })),
  };
}

export function describeBatch(result: BatchResult): string {
  const lines = [
    `batch ${result.batchId} ${result.status}: ${result.report?.digest.verdict ?? 'no group report'}`,
    `  period      ${periodLabel(result.period.from, result.period.to)}`,
  ];
  for (const r of result.runs) {
    const s = r.result;
    lines.push(
      `  ${r.account.padEnd(12)}${
        !s
          ? `failed before its run: ${r.error}`
          : s.status === 'failed'
            ? `run ${s.runId} failed in stage ${s.failedStage}: ${s.error}`
            : `run ${s.runId} succeeded, ${plural(s.openBreaks, 'open break')}${s.reportPath ? `, ${s.reportPath}` : ''}`
      }`,
    );
  }
  if (result.report) lines.push(`  group       ${result.report.path}`);
  if (result.reportError) lines.push(`  group report not written: ${result.reportError}`);
  if (result.delivery)
    lines.push(
      `  e-mail      ${result.delivery.status}${result.delivery.error ? `: ${result.delivery.error}` : ''}${result.delivery.withoutWorkbook ? ` (without the workbook: ${result.delivery.withoutWorkbook})` : ''}`,
    );
  return lines.join('\n');
}
