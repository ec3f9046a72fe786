/** `ramp-recon close --from D --to D --by NAME [--note TEXT] [--account A...] [--json]`: signs off a period for each
 * account (docs/closing.md).
 */
import type { Command } from 'commander';
import { ConfigError, EXIT, isAppError } from '../../errors.js';
import { dayString } from '../../util/dates.js';
import { accountOption, action, createContext, openMigratedStore, periodCommand } from '../context.js';
import { closePeriod, type CloseResult } from '../../pipeline/close.js';

interface CloseFlags {
  from?: string;
  to?: string;
  by?: string;
  note?: string;
  json?: boolean;
}

export function register(program: Command): void {
  const close = periodCommand(program, 'close', {
    from: 'first day of the period, YYYY-MM-DD UTC, inclusive',
    to: 'day after the last day, YYYY-MM-DD UTC, exclusive (the period must have ended)',
  })
    .option('--by <name>', 'who signs off (recorded with the close and on the signed workbook)')
    .option('--note <text>', 'a note recorded with the close and on the signed workbook')
    .option(
      '--json',
      'print {"closeId","account","period","digest","workbook","workbookSha256","by","at"} (an array for several accounts)',
    );
  accountOption(close, 'close this account').action(
    action(async (opts: CloseFlags, command: Command) => {
      const request = closeRequest(opts);
      const { config, logger, accounts } = createContext(command);
      const store = await openMigratedStore(config, logger);
      const results: CloseResult[] = [];
      let failure: unknown = null;
      try {
        // A refused account never stops the others: each is signed off or refused on its own.
        for (const account of accounts) {
          try {
            results.push(await closePeriod({ store, config: account.config, logger, request, now: new Date() }));
          } catch (err) {
            if (!isAppError(err)) throw err;
            process.stderr.write(`ramp-recon: ${err.exitCode === EXIT.usage ? 'error' : 'failed'}: ${err.message}\n`);
            failure ??= err;
          }
        }
      } finally {
        await store.close();
      }
      const many = accounts.length > 1;
      if (opts.json) process.stdout.write(`${JSON.stringify(many ? results : (results[0] ?? null), null, 2)}\n`);
      else
        for (const r of results)
          process.stdout.write(
            `signed ${r.account} ${r.period.from} to ${r.period.to} (--to exclusive) as close ${r.closeId}, digest ${r.digest}\n  ${r.workbook}\n`,
          );
      return failure === null ? EXIT.ok : isAppError(failure) ? failure.exitCode : EXIT.failed;
    }),
  );
}

/** The flags as a close request: every problem named with its flag and value (exit 2). */
function closeRequest(opts: CloseFlags): { period: { from: string; to: string }; by: string; note: string | null } {
  const problems: string[] = [];
  for (const flag of ['from', 'to'] as const) {
    const v = opts[flag];
    if (v === undefined) problems.push(`--${flag}: required (a date YYYY-MM-DD)`);
    else if (!dayString.safeParse(v).success)
      problems.push(`--${flag}: must be a date YYYY-MM-DD (got ${JSON.stringify(v)})`);
  }
  const by = opts.by?.trim() ?? '';
  if (!by)
    problems.push(`--by: required, the name the sign-off is recorded under (got ${JSON.stringify(opts.by ?? '')})`);
  if (!problems.length && opts.from! >= opts.to!)
    problems.push(`--from ${opts.from} must be before --to ${opts.to} (--to is exclusive)`);
  if (problems.length) throw new ConfigError(problems);
  const note = opts.note?.trim();
  return { period: { from: opts.from!, to: opts.to! }, by, note: note ? note : null };
}
