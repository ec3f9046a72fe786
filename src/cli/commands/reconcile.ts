/** `ramp-recon reconcile`: checks the stored data of a period as a recorded run, without syncing. */
import { periodLabel } from '../../report/summary.js';
import { lateSentence } from '../../report/late-data.js';
import type { Command } from 'commander';
import { plural } from '../../util/words.js';
import type { Config } from '../../config/load.js';
import type { Logger } from '../../log/logger.js';
import type { Period } from '../../domain/index.js';
import type { JsonSummary } from '../../pipeline/load-stages.js';
import { accountOption, periodCommand } from '../context.js';
import { executeRun } from '../../pipeline/execute.js';
import { countOpenBreaks } from '../../store/recon/counts.js';
import { mergeStageDetail } from '../../store/runs/runs.js';
import { loadStages } from '../../pipeline/load-stages.js';
import { EXIT_CODES_HELP, exitCodeOf, periodAction, WAIT_HELP, withRunStore } from './run.js';

interface ReconcileOptions {
  from?: string;
  to?: string;
  json?: boolean;
  failOnBreaks?: boolean;
  wait?: boolean;
}

export function register(program: Command): void {
  const reconcile = periodCommand(program, 'reconcile')
    .option('--json', 'print the JSON summary on stdout (logs stay on stderr; several accounts: a JSON array)')
    .option('--fail-on-breaks', 'exit 3 when open breaks remain')
    .option('--wait', WAIT_HELP);
  accountOption(reconcile, 'reconcile this account of the config only')
    .addHelpText('after', EXIT_CODES_HELP)
    .action(
      periodAction(async (opts: ReconcileOptions, { group, logger, period, accounts }) => {
        // Several accounts: one after another, each its own run; the exit code is the worst of them.
        const results = [];
        for (const { config, name } of accounts)
          results.push(
            await reconcileAccount(
              opts,
              config,
              accounts.length > 1 ? logger.child({ account: name }) : logger,
              period,
              group.secrets,
            ),
          );
        if (opts.json) {
          const summaries = results.map((r) => r.summary);
          process.stdout.write(
            `${JSON.stringify(accounts[0]!.config.multiAccount ? summaries : summaries[0], null, 2)}\n`,
          );
        }
        return Math.max(...results.map((r) => r.code));
      }),
    );
}

/** One account's reconcile, as one recorded run: its summary and exit code. */
async function reconcileAccount(
  opts: ReconcileOptions,
  config: Config,
  logger: Logger,
  period: Period,
  secrets: readonly string[],
): Promise<{ summary: JsonSummary; code: number }> {
  const { reconcilePeriod, jsonSummary } = await loadStages();
  return withRunStore(config, logger, { wait: opts.wait }, async (store, signal) => {
    const outcome = await executeRun(
      { store, config, logger, secrets },
      { command: 'reconcile', trigger: 'cli', period, wait: opts.wait, signal },
      async (ctx, stage) => {
        await stage('reconcile', () => reconcilePeriod(ctx, period));
        await mergeStageDetail(store.db, ctx.runId as string, 'reconcile', {
          openBreaks: await countOpenBreaks(store.db, config.account),
        });
      },
    );
    const summary = await jsonSummary(store.db, config.account, outcome.runId);
    if (!opts.json)
      process.stdout.write(
        outcome.status === 'succeeded'
          ? `reconcile ${outcome.runId}${config.multiAccount ? ` of account ${config.account}` : ''} succeeded: period ${periodLabel(period.from, period.to)}, ${plural(summary.breaks.length, 'open break')}${summary.lateData.total ? `; ${lateSentence(summary.lateData)}` : ''}\n  \`ramp-recon report ${outcome.runId}\` writes its workbook\n`
          : `reconcile ${outcome.runId} failed: ${outcome.error}\n`,
      );
    return {
      summary,
      code: exitCodeOf(
        { status: outcome.status, openBreaks: summary.breaks.length, explained: summary.breakCounts.explained },
        opts.failOnBreaks === true,
      ),
    };
  });
}
