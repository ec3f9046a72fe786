/** `ramp-recon enqueue`: plans a batch for the fleet (one job per account) and, with --wait, waits for its report. */
import type { Command } from 'commander';
import { EXIT } from '../../errors.js';
import { loadBatch, batchEnded, reportedAsTheyStand } from '../../store/runs/batches.js';
import { openBoss } from '../../fleet/queues.js';
import { planFleetBatch } from '../../fleet/plan.js';
import { batchListing } from './runs.js';
import { accountOption, action, createContext, openMigratedStore, periodCommand } from '../context.js';
import { parsePeriod } from '../../util/dates.js';
import { installSignalHandlers } from '../../schedule/signals.js';
import { batchSentence } from '../../report/batch-words.js';

interface EnqueueFlags {
  from?: string;
  to?: string;
  wait?: boolean;
  json?: boolean;
  failOnBreaks?: boolean;
}

export function register(program: Command): void {
  const enqueue = periodCommand(program, 'enqueue')
    .option('--wait', "wait for the batch's group report (written by the workers once every account has ended)")
    .option('--json', 'print the batch as JSON on stdout (with --wait: once its report is written)')
    .option('--fail-on-breaks', 'with --wait: exit 3 when every account succeeded and one has unexplained open breaks');
  accountOption(enqueue, 'plan this account of the config only')
    .addHelpText(
      'after',
      `
Exit codes: 0 planned (with --wait: every account succeeded), 1 with --wait an account failed, 2 bad usage (the embedded
database has no workers), 3 with --wait --fail-on-breaks unexplained open breaks remain.`,
    )
    .action(
      action(async (opts: EnqueueFlags, command: Command) => {
        const { group, config, logger, accounts } = createContext(command);
        const period = parsePeriod({ from: opts.from, to: opts.to }, new Date());
        const boss = await openBoss(group.settings, logger, 'enqueue');
        const store = await openMigratedStore(config, logger);
        try {
          const { batchId } = await planFleetBatch({ store, boss, group, logger }, accounts, {
            period,
            trigger: 'enqueue',
          });
          if (!opts.wait) {
            process.stdout.write(
              opts.json
                ? `${JSON.stringify(batchListing(await loadBatch(store.db, batchId)), null, 2)}\n`
                : `${batchId}\n`,
            );
            return EXIT.ok;
          }
          if (!opts.json) process.stdout.write(`${batchId}\n`);
          const abort = new AbortController();
          const uninstall = installSignalHandlers({
            logger,
            graceful: 'no longer waiting; the batch goes on on the workers',
            onGraceful: () => abort.abort(),
          });
          try {
            for (;;) {
              const batch = await loadBatch(store.db, batchId);
              if (batchEnded(batch) && reportedAsTheyStand(batch)) {
                if (opts.json) process.stdout.write(`${JSON.stringify(batchListing(batch), null, 2)}\n`);
                else
                  process.stdout.write(
                    `${batchSentence({
                      batchId,
                      accounts: batch.accounts.map((a) => ({
                        account: a.account,
                        completed: a.status === 'succeeded',
                      })),
                      verdict: (batch.reportDigest as { verdict?: string } | null)?.verdict ?? null,
                    })}\n` +
                      batch.accounts
                        .map(
                          (a) =>
                            `  ${a.account.padEnd(12)}${a.status} ${a.runId ?? ''}${a.error ? ` ${a.error}` : ''}\n`,
                        )
                        .join('') +
                      (batch.reportPath ? `  group       ${batch.reportPath}\n` : ''),
                  );
                if (batch.accounts.some((a) => a.status !== 'succeeded')) return EXIT.failed;
                const unexplained = (
                  batch.reportDigest as { accounts?: Array<{ unexplained: number | null }> } | null
                )?.accounts?.some((a) => (a.unexplained ?? 0) > 0);
                return opts.failOnBreaks && unexplained ? EXIT.breaks : EXIT.ok;
              }
              if (abort.signal.aborted) return EXIT.failed;
              await new Promise((r) => setTimeout(r, 250));
            }
          } finally {
            uninstall();
          }
        } finally {
          await boss.stop({ graceful: false, close: true });
          await store.close();
        }
      }),
    );
}
