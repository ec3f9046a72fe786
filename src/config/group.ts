/** What a loaded config is: a group (the settings its accounts share) and its accounts, each a unit that knows its own
 * name, settings, variables and rate group. A config without `accounts` is a group of one account on the same path.
 */
import type { FileConfig } from './schema.js';
import { ConfigError } from '../errors.js';
import { closest } from '../util/suggest.js';
import { envPrefix, sourceVariables, type SourceVariables } from './variables.js';
import { secretValues } from './secrets.js';

/**
 * One account's effective config: what every stage reads. A multi-account config loads as the first account's view;
 * `loadGroup` gives the group and every account's.
 */
export type Config = Readonly<
  Omit<FileConfig, 'partner' | 'exchange' | 'accounts'> & {
    configFile: string | null;
    /** The config has an `accounts` list (even of one): `run` runs a batch and writes a group report. */
    multiAccount: boolean;
    /** Every account of the config, in config order (one for a single-account config). */
    accountNames: readonly string[];
    /** Accounts with the same rate group share one request budget per API (default: the account's own name). */
    rateGroup: string;
    /** This account's own recipients, besides the group e-mail (multi-account configs; empty otherwise). */
    accountEmailTo: readonly string[];
    partner: FileConfig['partner'] & { apiUrl?: string; publicKey?: string; privateKey?: string; lookbackDays: number };
    exchange: FileConfig['exchange'] & { apiUrl?: string; token?: string };
    database: { url?: string; dataDir: string };
    reportsDir: string;
    smtpUrl?: string;
    logLevel: string;
  }
>;

/** The settings every account of a group shares: where reports go, the database, e-mail, schedule, webhooks, workers. */
export type GroupSettings = Readonly<
  Pick<
    Config,
    | 'configFile'
    | 'multiAccount'
    | 'accountNames'
    | 'email'
    | 'schedule'
    | 'webhooks'
    | 'workers'
    | 'http'
    | 'reports'
    | 'allowInsecureHttp'
    | 'database'
    | 'reportsDir'
    | 'smtpUrl'
    | 'logLevel'
  >
>;

/** One account of the group: what every stage of its run reads. */
export interface Account {
  readonly name: string;
  /** Its settings (the group's shared ones included): what a run of this account reads. */
  readonly config: Config;
  /** The prefix of its environment variables: "BETA_" in a multi-account config, "" for a group of one. */
  readonly envPrefix: string;
  /** The variables it reads its sources from, as every hint names them (BETA_EXCHANGE_API_URL). */
  readonly variables: SourceVariables;
  /** Accounts of one rate group share one request budget per API (default: the account's own name). */
  readonly rateGroup: string;
  /** Who its own e-mail goes to: its own recipients in a multi-account config; email.to for a group of one. */
  readonly emailTo: readonly string[];
}

export interface Group {
  readonly settings: GroupSettings;
  /** In config order; one for a config without `accounts`. */
  readonly accounts: readonly Account[];
  /** Every secret of every account and of the shared URLs: one process logs for all of them. */
  readonly secrets: readonly string[];
}

/** An account's unit from its settings. */
export function accountOf(config: Config): Account {
  return Object.freeze({
    name: config.account,
    config,
    envPrefix: config.multiAccount ? envPrefix(config.account) : '',
    variables: sourceVariables(config),
    rateGroup: config.rateGroup,
    emailTo: config.multiAccount ? config.accountEmailTo : config.email.to,
  });
}

/** The group's shared settings, read from any of its accounts (they are the same in each). */
export function groupSettingsOf(config: Config): GroupSettings {
  const { configFile, multiAccount, accountNames, email, schedule, webhooks, workers, http, reports } = config;
  const { allowInsecureHttp } = config;
  const { database, reportsDir, smtpUrl, logLevel } = config;
  return Object.freeze({
    configFile,
    multiAccount,
    accountNames,
    email,
    schedule,
    webhooks,
    workers,
    http,
    reports,
    allowInsecureHttp,
    database,
    reportsDir,
    smtpUrl,
    logLevel,
  });
}

/**
 * The accounts `--account NAME` (repeatable) names, in config order; none named: every account. An unknown name is a
 * usage error listing the known ones.
 */
export function selectAccounts(group: Group, names: readonly string[] | undefined): readonly Account[] {
  const all = group.accounts;
  if (!names || names.length === 0) return all;
  const known = all.map((a) => a.name);
  const unknown = names.filter((n) => !known.includes(n));
  if (unknown.length)
    throw new ConfigError(
      unknown.map((n) => {
        const near = closest(n, known);
        return `--account: no account ${JSON.stringify(n)} in the config${near ? ` (did you mean ${near}?)` : ''}; accounts: ${known.join(', ')}`;
      }),
    );
  return all.filter((a) => names.includes(a.name));
}

/**
 * The one account a command works on: the only one selected. With several accounts in the config and no `--account`,
 * a usage error naming them (the command would not know whose data to show).
 */
export function oneAccount(group: Group, names: readonly string[] | undefined): Account {
  const selected = selectAccounts(group, names);
  if (selected.length === 1) return selected[0]!;
  throw new ConfigError([
    `--account: this command works on one account; the config has ${selected.length} (${selected.map((a) => a.name).join(', ')}): give --account NAME`,
  ]);
}

/** The account of a name (a job's, a webhook path's), or undefined when the group has none of that name. */
export function accountNamed(group: Group, name: string): Account | undefined {
  return group.accounts.find((a) => a.name === name);
}

/** A group of these accounts' settings, as loaded (the tests build one from a config they changed). */
export function groupOf(...configs: readonly Config[]): Group {
  if (configs.length === 0) throw new Error('a group needs at least one account');
  return Object.freeze({
    settings: groupSettingsOf(configs[0]!),
    accounts: configs.map(accountOf),
    secrets: secretValues(configs),
  });
}
