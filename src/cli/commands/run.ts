/** `ramp-recon run`: the whole pipeline for a period, and the frame (signals, store, exit codes) every run-like command
 * shares.
 */
import { PARTIAL_MEANING, periodLabel } from '../../report/summary.js';
import { lateSentence } from '../../report/late-data.js';
import { Command } from 'commander';
import { requireSources } from '../../config/load.js';
import { EXIT } from '../../errors.js';
import type { PipelineResult } from '../../pipeline/run.js';
import { runBatch, type AccountOutcome } from '../../pipeline/batch.js';
import { parsePeriod } from '../../util/dates.js';
import { accountOption, action, createContext, periodCommand, type CommandContext } from '../context.js';
import { printBatch, BATCH_EXIT_HELP } from './run-batch.js';
import { withRunStore } from '../run-store.js';

export { openRunStore, withRunStore } from '../run-store.js';
import type { Period } from '../../domain/index.js';

interface RunOptions {
  from?: string;
  to?: string;
  json?: boolean;
  failOnBreaks?: boolean;
  email: boolean;
  wait?: boolean;
}

export const EXIT_CODES_HELP = `
Exit codes:
  0  success
  1  the run failed (the failing stage and error are recorded; \`ramp-recon runs\` shows them), or another run is in progress
  2  bad usage or configuration
  3  with --fail-on-breaks: the run succeeded but unexplained open breaks remain (explained ones were accepted by a person)`;

export const WAIT_HELP = 'wait for a run in progress to finish instead of exiting 1';

/** The action of a period command: `run` gets the options, the context and the period of --from / --to. */
export function periodAction<O extends { from?: string; to?: string }>(
  run: (opts: O, ctx: CommandContext & { period: Period }) => Promise<number | void>,
) {
  return action(async (opts: O, command: Command) => {
    const context = createContext(command);
    return run(opts, { ...context, period: parsePeriod({ from: opts.from, to: opts.to }, new Date()) });
  });
}

export function register(program: Command): void {
  const run = periodCommand(program, 'run')
    .option('--json', 'print the JSON summary of the run on stdout (logs stay on stderr)')
    .option(
      '--fail-on-breaks',
      'exit 3 when the run succeeds but unexplained open breaks remain (`breaks ack` explains one)',
    )
    .option('--no-email', 'do not send the workbook by e-mail, even when SMTP_URL is set')
    .option('--wait', WAIT_HELP);
  accountOption(run, 'run this account of the config only')
    .addHelpText('after', `${EXIT_CODES_HELP}\n${BATCH_EXIT_HELP}`)
    .action(
      periodAction(async (opts: RunOptions, { group, config, logger, period, accounts }) => {
        // Every config runs a batch: every account (or those named), then the batch's report. A config without
        // `accounts` is a batch of one, whose report is its account's own workbook and e-mail.
        const single = !group.settings.multiAccount;
        // A batch of one is refused before it starts when its sources are missing (exit 2), as `run` always was.
        if (single) requireSources(config, ['partner', 'exchange']);
        const batch = await withRunStore(config, logger, { wait: opts.wait }, (store, signal) =>
          runBatch({ store, group, logger }, accounts, {
            period,
            trigger: 'cli',
            email: opts.email,
            wait: opts.wait,
            signal,
          }),
        );
        return single ? printRun(batch.runs[0]!, opts) : printBatch(batch, opts);
      }),
    );
}

/** A batch of one as `run` prints it: the run's summary (or lines) and its exit code; a refused run's error. */
function printRun(outcome: AccountOutcome, opts: RunOptions): number {
  if (!outcome.result) throw outcome.refusal ?? new Error(outcome.error ?? 'the run could not start');
  const result: PipelineResult = outcome.result;
  {
    if (opts.json) {
      process.stdout.write(`${JSON.stringify(result.summary, null, 2)}\n`);
      // stdout carries only the JSON document; the reason of a failure goes to stderr, readable.
      if (result.status === 'failed')
        process.stderr.write(
          `ramp-recon: failed:\n  run ${result.runId} failed in stage ${result.failedStage}: ${result.error}\n`,
        );
    } else process.stdout.write(`${describeResult(result)}\n`);
    return exitCodeOf(
      { status: result.status, openBreaks: result.openBreaks, explained: result.summary.breakCounts.explained },
      opts.failOnBreaks === true,
    );
  }
}

/**
 * The exit code of a run-like command. With --fail-on-breaks, 3 only while an unexplained open
 * break remains: an explained one was accepted by a person (`breaks ack`). `explained` absent: none.
 */
export function exitCodeOf(
  result: { status: string; openBreaks: number; explained?: number },
  failOnBreaks: boolean,
): number {
  if (result.status !== 'succeeded') return EXIT.failed;
  if (failOnBreaks && result.openBreaks - (result.explained ?? 0) > 0) return EXIT.breaks;
  return EXIT.ok;
}

export function describeResult(result: PipelineResult): string {
  const s = result.summary;
  const lines = [
    `run ${result.runId} ${result.status}${result.failedStage ? ` in stage ${result.failedStage}: ${result.error ?? ''}` : ''}`,
    `  period      ${s.period.from && s.period.to ? periodLabel(s.period.from, s.period.to) : 'none'}` +
      (s.partial ? ` (${PARTIAL_MEANING})` : ''),
    `  open breaks ${result.openBreaks}${s.breakCounts ? ` (${s.breakCounts.inPeriod} of this period, ${s.breakCounts.carriedOver} carried over)` : ''}`,
    `  counts      ${Object.entries(s.counts)
      .map(([k, v]) => `${k} ${String(v)}`)
      .join(', ')}`,
  ];
  if (s.lateData.total) lines.push(`  late data   ${lateSentence(s.lateData)}`);
  if (result.reportPath) lines.push(`  workbook    ${result.reportPath}`);
  if (result.detailDir) lines.push(`  detail      ${result.detailDir} (every record of the period, gzip CSV)`);
  if (result.status === 'failed') lines.push('  what was committed is kept; the next run resumes from it');
  return lines.join('\n');
}
