/** `ramp-recon schedule`: runs the nightly pipeline on the configured cron until stopped. */
import { COMMAND_INFO } from './info.js';
import type { Command } from 'commander';
import { runSchedule } from '../../schedule/nightly.js';
import { action, createContext, openMigratedStore } from '../context.js';
import { EXIT } from '../../errors.js';

export function register(program: Command): void {
  program
    .command('schedule')
    .description(COMMAND_INFO['schedule'].description)
    .addHelpText(
      'after',
      `
Runs never overlap: a firing that comes while a run is still busy is skipped and logged.
The database is opened for each firing and closed after it, so a manual \`run\` works between firings.
The first SIGTERM or SIGINT stops new firings, lets the current run finish, and exits 0; a second exits at once (1).
With several accounts (\`accounts\`) on Postgres (DATABASE_URL), the nightly cron is registered in the job queue: one
firing per night for the whole fleet however many schedulers run; each plans the batch and works its account jobs
unless --no-work is given (docs/workers.md).
Exit codes: 0 stopped cleanly, 1 could not start (database unreachable), 2 bad configuration.`,
    )
    .option(
      '--no-work',
      'several accounts on Postgres: only plan the nightly batches; `ramp-recon worker` processes run the account jobs',
    )
    .action(
      action(async (opts: { work: boolean }, command: Command) => {
        const { group, config, logger } = createContext(command);
        await runSchedule({ group, logger, openStore: () => openMigratedStore(config, logger) }, { work: opts.work });
        return EXIT.ok;
      }),
    );
}
