/** `ramp-recon reconcile`: checks the stored data of a period as a recorded run, without syncing. */
import { periodLabel } from '../../report/summary.js';
import { lateSentence } from '../../report/late-data.js';
import type { Command } from 'commander';
import { executeRun } from '../../pipeline/execute.js';
import { countOpenBreaks } from '../../store/counts.js';
import { mergeStageDetail } from '../../store/runs.js';
import { loadStages } from '../../pipeline/load-stages.js';
import { EXIT_CODES_HELP, exitCodeOf, periodAction, periodCommand, WAIT_HELP, withRunStore } from './run.js';

interface ReconcileOptions {
  from?: string;
  to?: string;
  json?: boolean;
  failOnBreaks?: boolean;
  wait?: boolean;
}

export function register(program: Command): void {
  periodCommand(program, 'reconcile')
    .option('--json', 'print the JSON summary on stdout (logs stay on stderr)')
    .option('--fail-on-breaks', 'exit 3 when open breaks remain')
    .option('--wait', WAIT_HELP)
    .addHelpText('after', EXIT_CODES_HELP)
    .action(
      periodAction(async (opts: ReconcileOptions, { config, logger, period }) => {
        const { reconcilePeriod, jsonSummary } = await loadStages();
        return withRunStore(config, logger, { wait: opts.wait }, async (store, signal) => {
          const outcome = await executeRun(
            { store, config, logger },
            { command: 'reconcile', trigger: 'cli', period, wait: opts.wait, signal },
            async (ctx, stage) => {
              await stage('reconcile', () => reconcilePeriod(ctx, period));
              await mergeStageDetail(store.db, ctx.runId as string, 'reconcile', {
                openBreaks: await countOpenBreaks(store.db, config.account),
              });
            },
          );
          const summary = await jsonSummary(store.db, config.account, outcome.runId);
          if (opts.json) process.stdout.write(`${JSON.stringify(summary, null, 2)}\n`);
          else
            process.stdout.write(
              outcome.status === 'succeeded'
                ? `reconcile ${outcome.runId} succeeded: period ${periodLabel(period.from, period.to)}, ${summary.breaks.length} open break(s)${summary.lateData.total ? `; ${lateSentence(summary.lateData)}` : ''}\n  \`ramp-recon report ${outcome.runId}\` writes its workbook\n`
                : `reconcile ${outcome.runId} failed: ${outcome.error}\n`,
            );
          return exitCodeOf(
            { status: outcome.status, openBreaks: summary.breaks.length, explained: summary.breakCounts.explained },
            opts.failOnBreaks === true,
          );
        });
      }),
    );
}
