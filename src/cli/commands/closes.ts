/** `ramp-recon closes [--json]`: the period closes, newest first, with their state (docs/closing.md). */
import { COMMAND_INFO } from './info.js';
import type { Command } from 'commander';
import { EXIT } from '../../errors.js';
import { accountOption, action, createContext, openMigratedStore } from '../context.js';
import { closesWithState } from '../../stages/close-reopen.js';

export function register(program: Command): void {
  const closes = program
    .command('closes')
    .description(COMMAND_INFO['closes'].description)
    .option('--json', 'print a JSON array on stdout');
  accountOption(closes, "list this account's closes only").action(
    action(async (opts: { json?: boolean }, command: Command) => {
      const { config, logger, accounts } = createContext(command);
      const store = await openMigratedStore(config, logger);
      try {
        const listed = await closesWithState(
          store,
          accounts.map((a) => a.name),
        );
        const rows = listed.map((c) => ({
          closeId: c.id,
          account: c.account,
          period: c.period,
          state: c.listed,
          by: c.by,
          at: c.at.toISOString(),
          note: c.note,
          digest: c.digest,
          workbook: c.workbook,
          workbookSha256: c.workbookSha256,
          reopenedBy: c.reopenedBy,
          reopenedAt: c.reopenedAt?.toISOString() ?? null,
          reopenReason: c.reopenReason,
        }));
        if (opts.json) process.stdout.write(`${JSON.stringify(rows, null, 2)}\n`);
        else if (!rows.length) process.stdout.write('no closes yet (`ramp-recon close --from D --to D --by NAME`)\n');
        else
          for (const r of rows)
            process.stdout.write(
              `${r.closeId}  ${r.account}  ${r.period.from} to ${r.period.to}  ${r.state}  signed by ${r.by} at ${r.at}${r.reopenedBy ? `; reopened by ${r.reopenedBy}: ${r.reopenReason ?? ''}` : ''}\n`,
            );
        return EXIT.ok;
      } finally {
        await store.close();
      }
    }),
  );
}
