/** `ramp-recon sync`: pulls the APIs into the store as a recorded run, without reconciling. */
import { COMMAND_INFO } from './info.js';
import { Command, Option } from 'commander';
import { requireSources, type Config } from '../../config/load.js';
import type { Logger } from '../../log/logger.js';
import { ConfigError, EXIT } from '../../errors.js';
import { executeRun } from '../../pipeline/execute.js';
import { loadStages } from '../../pipeline/load-stages.js';
import type { SyncRequest } from '../../stages/sync.js';
import { dayStart, parsePeriod, dayString } from '../../util/dates.js';
import { accountOption, action, createContext } from '../context.js';
import { EXIT_CODES_HELP, WAIT_HELP, withRunStore } from './run.js';

interface SyncOptions {
  source: 'partner' | 'exchange' | 'all';
  from?: string;
  to?: string;
  externalReference: string[];
  referencesCsv?: string;
  backfillFrom?: string;
  backfillTo?: string;
  relist?: boolean;
  walletHistory?: boolean;
  wait?: boolean;
}

export function register(program: Command): void {
  const sync = program
    .command('sync')
    .description(COMMAND_INFO['sync'].description)
    .addOption(
      new Option('--source <source>', 'which API to sync').choices(['partner', 'exchange', 'all']).default('all'),
    )
    .option('--from <date>', 'partner orders: first day, YYYY-MM-DD UTC, inclusive (default: yesterday)')
    .option('--to <date>', 'partner orders: day after the last, YYYY-MM-DD UTC, exclusive')
    .option(
      '--external-reference <ref>',
      'partner: fetch only the orders with this externalReference (repeatable); no day listing',
      (value: string, previous: string[]) => [...previous, value],
      [] as string[],
    )
    .option('--references-csv <file>', 'partner: fetch the orders whose externalReference is listed in this CSV file')
    .option(
      '--relist',
      'partner: list every day of the period again, also the past days already read completely (by default a day ' +
        'read after it ended is not listed again)',
    )
    .option(
      '--wallet-history',
      "partner: read every wallet's whole order history again (by default once per wallet, on its first sync)",
    )
    .option(
      '--backfill-from <date>',
      'exchange: also re-read fills, trades, orders, deposits and withdrawals from this day (YYYY-MM-DD UTC, ' +
        'inclusive)',
    )
    .option('--backfill-to <date>', 'exchange: end of the backfill, YYYY-MM-DD UTC, exclusive (default: today)')
    .option('--wait', WAIT_HELP);
  accountOption(sync, 'sync this account of the config only')
    .addHelpText('after', EXIT_CODES_HELP.replace(/\n {2}3 .*$/, ''))
    .action(
      action(async (opts: SyncOptions, command: Command) => {
        const { group, logger, accounts } = createContext(command);
        // Several accounts: one after another, each its own run; the exit code is the worst of them.
        let code: number = EXIT.ok;
        for (const { config, name } of accounts)
          code = Math.max(
            code,
            await syncAccount(
              opts,
              config,
              accounts.length > 1 ? logger.child({ account: name }) : logger,
              group.secrets,
            ),
          );
        return code;
      }),
    );
}

/** One account's sync, as one recorded run. */
async function syncAccount(
  opts: SyncOptions,
  config: Config,
  logger: Logger,
  secrets: readonly string[],
): Promise<number> {
  const now = new Date();
  const period = parsePeriod({ from: opts.from, to: opts.to }, now);
  const backfill = parseBackfill(opts, now);
  const wantsPartner = opts.source !== 'exchange';
  const wantsExchange = opts.source !== 'partner';
  if (!wantsPartner && (opts.externalReference.length || opts.referencesCsv || opts.relist || opts.walletHistory))
    throw new ConfigError([
      '--external-reference / --references-csv / --relist / --wallet-history: only with --source partner or all',
    ]);
  if (!wantsExchange && backfill)
    throw new ConfigError(['--backfill-from / --backfill-to: only with --source exchange or all']);
  requireSources(config, [
    ...(wantsPartner ? (['partner'] as const) : []),
    ...(wantsExchange ? (['exchange'] as const) : []),
  ]);

  const references = [...opts.externalReference];
  if (opts.referencesCsv) {
    const { readReferencesCsv } = await import('../../sources/partner/references-csv.js');
    references.push(...(await readReferencesCsv(opts.referencesCsv)));
  }
  const byReference = opts.externalReference.length > 0 || opts.referencesCsv !== undefined;
  if (byReference && references.length === 0)
    throw new ConfigError([`--references-csv ${opts.referencesCsv}: no external references found in the file`]);
  if (byReference && (opts.relist || opts.walletHistory))
    throw new ConfigError([
      '--relist / --wallet-history: not with --external-reference / --references-csv (no day or wallet listing)',
    ]);

  const request: SyncRequest = {
    sources: [...(wantsExchange ? (['exchange'] as const) : []), ...(wantsPartner ? (['partner'] as const) : [])],
    period: wantsPartner && !byReference ? period : null,
    ...(backfill ? { backfill } : {}),
    ...(byReference
      ? { externalReferences: references }
      : { relist: opts.relist ?? false, walletHistory: opts.walletHistory ?? false }),
  };
  const { syncSources } = await loadStages();
  return withRunStore(config, logger, { wait: opts.wait }, async (store, signal) => {
    const outcome = await executeRun(
      { store, config, logger, secrets },
      { command: 'sync', trigger: 'cli', period: request.period, wait: opts.wait, signal },
      (ctx, stage) => syncSources(ctx, request, stage),
    );
    process.stdout.write(
      outcome.status === 'succeeded'
        ? `sync ${outcome.runId}${config.multiAccount ? ` of account ${config.account}` : ''} succeeded\n`
        : `sync ${outcome.runId} failed in stage ${outcome.failedStage}: ${outcome.error}\n  what was committed is kept; the next sync resumes from it\n`,
    );
    return outcome.status === 'succeeded' ? EXIT.ok : EXIT.failed;
  });
}

function parseBackfill(opts: SyncOptions, now: Date): { from: Date; to: Date } | undefined {
  if (opts.backfillFrom === undefined && opts.backfillTo === undefined) return undefined;
  const problems: string[] = [];
  for (const [flag, value] of [
    ['--backfill-from', opts.backfillFrom],
    ['--backfill-to', opts.backfillTo],
  ] as const) {
    if (value !== undefined && !dayString.safeParse(value).success)
      problems.push(`${flag}: must be a date YYYY-MM-DD (got ${JSON.stringify(value)})`);
  }
  if (opts.backfillFrom === undefined) problems.push('--backfill-from: required with --backfill-to');
  if (problems.length) throw new ConfigError(problems);
  const from = dayStart(opts.backfillFrom as string);
  const to = opts.backfillTo ? dayStart(opts.backfillTo) : now;
  if (from >= to)
    throw new ConfigError([
      `--backfill-from ${opts.backfillFrom} must be before --backfill-to ${opts.backfillTo ?? 'now'} (--backfill-to is exclusive)`,
    ]);
  return { from, to };
}
