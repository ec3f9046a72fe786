/** `ramp-recon worker`: takes account jobs from the shared database's queue and runs them, until SIGTERM. */
import { COMMAND_INFO } from './info.js';
import type { Command } from 'commander';
import { z } from 'zod';
import { ConfigError, EXIT } from '../../errors.js';
import { firstStopSignal } from '../../schedule/signals.js';
import { openBoss, requireServer } from '../../fleet/queues.js';
import { workJobs } from '../../fleet/work.js';
import { action, createContext, openMigratedStore } from '../context.js';

const concurrencySchema = z.coerce.number().int().min(1).max(32);

export function register(program: Command): void {
  program
    .command('worker')
    .description(COMMAND_INFO['worker'].description)
    .option('--concurrency <n>', 'account jobs this process runs at once (default: workers.concurrency, 1)')
    .addHelpText(
      'after',
      `
Any number of workers on any machines share the database (DATABASE_URL): each account job runs once, on one of them.
The first SIGTERM or SIGINT finishes the jobs in hand, takes no new one, and exits 0; a second exits at once (1).
Exit codes: 0 stopped cleanly, 1 could not start, 2 bad usage (the embedded database has no workers).`,
    )
    .action(
      action(async (opts: { concurrency?: string }, command: Command) => {
        const { group, config, logger } = createContext(command);
        requireServer(group.settings, 'worker');
        let concurrency = group.settings.workers.concurrency;
        if (opts.concurrency !== undefined) {
          const parsed = concurrencySchema.safeParse(opts.concurrency);
          if (!parsed.success)
            throw new ConfigError([
              `--concurrency: must be a whole number from 1 to 32 (got ${JSON.stringify(opts.concurrency)})`,
            ]);
          concurrency = parsed.data;
        }
        const store = await openMigratedStore(config, logger);
        const boss = await openBoss(group.settings, logger, 'worker');
        const { stopped, uninstall } = firstStopSignal({
          logger,
          graceful: 'finishing the jobs in hand and taking no new one',
        });
        try {
          await workJobs({ store, boss, group, logger }, { concurrency });
          logger.info({ concurrency }, 'worker: taking account jobs');
          await stopped;
          // graceful: the jobs in hand finish (their runs commit as they go); none is taken after this
          await boss.stop({ graceful: true, close: true, timeout: 24 * 3600_000 });
          logger.info('worker stopped');
          return EXIT.ok;
        } finally {
          uninstall();
          await store.close();
        }
      }),
    );
}
