/** What every command shares: global options, config and logger, the migrated store, and the action wrapper. */
import type { Command } from 'commander';
import { loadGroup, oneAccount, selectAccounts, type Account, type Config, type Group } from '../config/load.js';
import { createLogger, defaultLogFormat, type LogFormat, type Logger } from '../log/logger.js';
import { openStore, type Store } from '../store/db/database.js';
import { migrate } from '../store/db/migrate.js';
import { asDatabaseUnavailable, databaseTarget } from '../store/db/database-errors.js';
import { ConfigError, EXIT, isAppError } from '../errors.js';
import { debugRequested } from '../config/process.js';
import { COMMAND_INFO } from './commands/info.js';

/** Options every command accepts (declared on the root program). */
export interface GlobalOptions {
  config?: string;
  quiet?: boolean;
  verbose?: boolean;
  logFormat?: string;
}

/** The log level and format of the global flags: --quiet / --verbose override LOG_LEVEL. */
export function logSettings(globals: GlobalOptions, configLevel: string): { level: string; format: LogFormat } {
  if (globals.quiet && globals.verbose) throw new ConfigError(['--quiet and --verbose: give one or the other']);
  if (globals.logFormat !== undefined && globals.logFormat !== 'json' && globals.logFormat !== 'pretty')
    throw new ConfigError([`--log-format: expected json or pretty (got ${JSON.stringify(globals.logFormat)})`]);
  const level = globals.quiet ? 'warn' : globals.verbose ? 'debug' : configLevel;
  return { level, format: (globals.logFormat as LogFormat | undefined) ?? defaultLogFormat() };
}

export interface CommandContext {
  /** The config: the group's shared settings and every account. */
  group: Group;
  /** The settings of the one account selected (with `one`, or when only one is), else of the group's first account. */
  config: Config;
  logger: Logger;
  /** The accounts `--account` selects, in config order (every account without it). */
  accounts: readonly Account[];
}

/**
 * Loads config and the root logger once per CLI invocation, and the accounts `--account` names. `one`: the command
 * works on one account's data; several accounts without `--account` are a usage error naming them.
 */
export function createContext(command: Command, options: { one?: boolean } = {}): CommandContext {
  const globals = command.optsWithGlobals<GlobalOptions & { account?: string[] }>();
  const group = loadGroup({ configPath: globals.config });
  const { level, format } = logSettings(globals, group.settings.logLevel);
  const logger = createLogger({ level, format, secrets: group.secrets });
  const accounts = options.one ? [oneAccount(group, globals.account)] : selectAccounts(group, globals.account);
  const config = (accounts.length === 1 ? accounts[0]! : group.accounts[0]!).config;
  // Several accounts in one process: every log line names its account.
  return {
    group,
    config,
    logger: config.multiAccount && accounts.length === 1 ? logger.child({ account: config.account }) : logger,
    accounts,
  };
}

/** `--account NAME`, repeatable: the accounts of a multi-account config a command works on. */
export function accountOption(
  command: Command,
  what = 'work on this account of the config only',
  one = false,
): Command {
  return command.option(
    '--account <name>',
    one ? what : `${what} (repeatable; default: every account)`,
    (value: string, previous: string[] = []) => [...previous, value],
  );
}

/** What --from and --to say in --help where both may be left out (run, reconcile, enqueue). */
const PERIOD_HELP = {
  from: 'first day of the period, YYYY-MM-DD UTC, inclusive (default: yesterday)',
  to: 'day after the last day, YYYY-MM-DD UTC, exclusive (default: the day after --from)',
};

/** A command over a period (run, reconcile, enqueue, close): its name, description and --from / --to options. */
export function periodCommand(
  program: Command,
  name: 'run' | 'reconcile' | 'enqueue' | 'close',
  help: { from: string; to: string } = PERIOD_HELP,
): Command {
  return program
    .command(name)
    .description(COMMAND_INFO[name].description)
    .option('--from <date>', help.from)
    .option('--to <date>', help.to);
}

/** Opens the store the config points at and brings its schema up to date. */
export async function openMigratedStore(config: Config, logger: Logger): Promise<Store> {
  const target = databaseTarget(config.database.url, config.database.dataDir);
  let store: Store;
  try {
    store = await openStore({ url: config.database.url, dataDir: config.database.dataDir });
  } catch (err) {
    throw asDatabaseUnavailable(err, target) ?? err;
  }
  try {
    const result = await migrate(store);
    if (result.applied.length) logger.info({ applied: result.applied }, 'database migrated');
  } catch (err) {
    await store.close().catch(() => {});
    throw asDatabaseUnavailable(err, target) ?? err;
  }
  return store;
}

/**
 * Wraps a command action: config and usage errors exit 2 with one line per problem, other
 * failures exit 1 with the message (secrets are never part of our messages), success sets
 * the exit code the action returns.
 */
export function action<A extends unknown[]>(fn: (...args: A) => Promise<number | void>) {
  return async (...args: A): Promise<void> => {
    try {
      const code = await fn(...args);
      process.exitCode = code ?? EXIT.ok;
    } catch (err) {
      const exitCode = isAppError(err) ? err.exitCode : EXIT.failed;
      const message = err instanceof Error ? err.message : String(err);
      // One problem: one line. Several (a config with many bad keys): a heading and one line each.
      const head = `ramp-recon: ${exitCode === EXIT.usage ? 'error' : 'failed'}:`;
      process.stderr.write(message.includes('\n') ? `${head}\n${indent(message)}\n` : `${head} ${message}\n`);
      if (!isAppError(err) && debugRequested() && err instanceof Error) process.stderr.write(`${err.stack}\n`);
      process.exitCode = exitCode;
    }
  };
}

function indent(text: string): string {
  return text
    .split('\n')
    .map((l) => `  ${l}`)
    .join('\n');
}
