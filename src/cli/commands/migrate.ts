/** `ramp-recon migrate`: creates or updates the database schema. */
import { COMMAND_INFO } from './info.js';
import type { Command } from 'commander';
import { plural } from '../../util/words.js';
import { action, createContext } from '../context.js';
import { openStore } from '../../store/db/database.js';
import { migrate } from '../../store/db/migrate.js';

export function register(program: Command): void {
  program
    .command('migrate')
    .description(COMMAND_INFO['migrate'].description)
    .action(
      action(async (_opts: unknown, command: Command) => {
        const { config, logger } = createContext(command);
        const store = await openStore({ url: config.database.url, dataDir: config.database.dataDir });
        try {
          const result = await migrate(store);
          const where = store.kind === 'embedded' ? `embedded database in ${config.database.dataDir}` : 'Postgres';
          logger.info({ applied: result.applied, alreadyApplied: result.alreadyApplied.length }, 'migrations done');
          process.stderr.write(
            result.applied.length
              ? `applied ${plural(result.applied.length, 'migration')} to the ${where}: ${result.applied.join(', ')}\n`
              : `the ${where} is up to date (${plural(result.alreadyApplied.length, 'migration')} already applied)\n`,
          );
        } finally {
          await store.close();
        }
      }),
    );
}
