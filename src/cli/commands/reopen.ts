/** `ramp-recon reopen <closeId> --by NAME --reason TEXT`: reopens a signed period (docs/closing.md "Reopen"). */
import { COMMAND_INFO } from './info.js';
import type { Command } from 'commander';
import { ConfigError, EXIT } from '../../errors.js';
import { action, createContext, openMigratedStore } from '../context.js';
import { reopenClose } from '../../stages/close-reopen.js';

export function register(program: Command): void {
  program
    .command('reopen')
    .description(COMMAND_INFO['reopen'].description)
    .argument('<closeId>', 'the close, as `ramp-recon closes` lists it')
    .option('--by <name>', 'who reopens it')
    .option('--reason <text>', 'why it is reopened (required: recorded with the close and in the audit log)')
    .option('--json', 'print the close after the reopen as JSON')
    .action(
      action(async (closeId: string, opts: { by?: string; reason?: string; json?: boolean }, command: Command) => {
        const problems: string[] = [];
        const by = opts.by?.trim() ?? '';
        const reason = opts.reason?.trim() ?? '';
        if (!by)
          problems.push(`--by: required, the name the reopen is recorded under (got ${JSON.stringify(opts.by ?? '')})`);
        if (!reason)
          problems.push(`--reason: required, why the period is reopened (got ${JSON.stringify(opts.reason ?? '')})`);
        if (problems.length) throw new ConfigError(problems);
        const { config, logger } = createContext(command);
        const store = await openMigratedStore(config, logger);
        try {
          const close = await reopenClose(store, closeId, by, reason, new Date());
          process.stdout.write(
            opts.json
              ? `${JSON.stringify({ closeId: close.id, account: close.account, period: close.period, state: close.state, reopenedBy: close.reopenedBy, reopenedAt: close.reopenedAt?.toISOString(), reason: close.reopenReason })}\n`
              : `reopened close ${close.id} (${close.account}, ${close.period.from} to ${close.period.to}) by ${by}: ${reason}\n`,
          );
          return EXIT.ok;
        } finally {
          await store.close();
        }
      }),
    );
}
