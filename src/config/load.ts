/** Loads the config from the environment and the JSON file, validated, frozen, with its secrets listed. */
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { createHash } from 'node:crypto';
import type { z } from 'zod';
import {
  ACCOUNT_SECTIONS,
  envSchema,
  fileConfigSchema,
  SECRET_ENV,
  type EnvConfig,
  type FileConfig,
} from './schema.js';
import { ConfigError } from '../errors.js';
import { jsonSyntaxProblem } from './json-syntax.js';
import { closest } from '../util/suggest.js';
import { accountOf, groupSettingsOf, type Config, type Group } from './group.js';
import { envPrefix, SOURCE_ENV, sourceVariables, variablesWithPrefix } from './variables.js';
import { MASK, maskUrl, secretValues, urlSecrets } from './secrets.js';
import { plainHttpProblem } from './tls.js';

export { envPrefix, sourceVariables } from './variables.js';
export { maskUrl, runSecrets, scrubSecrets, secretValues, storedError, urlSecrets } from './secrets.js';

export {
  accountNamed,
  groupOf,
  oneAccount,
  selectAccounts,
  type Account,
  type Group,
  type GroupSettings,
} from './group.js';

export type { Config } from './group.js';

export interface LoadOptions {
  env?: NodeJS.ProcessEnv;
  /** --config flag; overrides RAMP_RECON_CONFIG. */
  configPath?: string;
  cwd?: string;
}

/** A single account's settings: the first account of the group (commands and tests of one account). */
export function loadConfig(options: LoadOptions = {}): Config {
  return loadGroup(options).accounts[0]!.config;
}

/**
 * Parses the environment and the optional JSON config file once, into the group and its accounts, frozen. Every
 * problem is collected and reported together, each naming the key and the value (never the value of a secret).
 */
export function loadGroup(options: LoadOptions = {}): Group {
  const env = options.env ?? process.env;
  const cwd = options.cwd ?? process.cwd();
  const problems: string[] = [];

  const envConfig = parseEnv(env, '', problems);

  const configPath = options.configPath ?? envConfig.RAMP_RECON_CONFIG;
  let fileInput: unknown = {};
  let configFile: string | null = null;
  if (configPath) {
    configFile = resolve(cwd, configPath);
    try {
      const text = readFileSync(configFile, 'utf8');
      try {
        // Plain JSON.parse is safe here: every amount in the config is a decimal string (a number is rejected below).
        fileInput = JSON.parse(text);
      } catch {
        problems.push(`config file ${configFile}: ${jsonSyntaxProblem(text)}`);
        fileInput = undefined;
      }
    } catch (err) {
      const e = err as NodeJS.ErrnoException;
      problems.push(
        e.code === 'ENOENT'
          ? `config file ${configFile}: not found`
          : e.code === 'EISDIR'
            ? `config file ${configFile}: is a folder, not a JSON file`
            : `config file ${configFile}: cannot be read (${e.code ?? e.message})`,
      );
      fileInput = undefined;
    }
  }
  // A file that could not be read or parsed is reported once, not again as a schema problem.
  const fileResult = fileConfigSchema.safeParse(inheritSections(fileInput ?? {}));
  if (!fileResult.success && fileInput !== undefined)
    problems.push(...formatIssues(fileResult.error, fileInput, 'config key '));

  const file = fileResult.success ? fileResult.data : undefined;
  const entries = file?.accounts;
  // A single account reads the unprefixed variables; each account of `accounts` its own, prefixed by its name (also
  // when another key of the file is wrong: every problem is said at once).
  const names = entries?.map((e) => e.name) ?? rawAccountNames(fileInput);
  const sourceEnvs = names
    ? accountEnvs(names, env, problems, fileInput as { account?: unknown })
    : [{ prefix: '', env: envConfig }];
  for (const { prefix, env: e } of sourceEnvs) sourcePairs(prefix, e, problems);
  const insecureAllowed = file ? file.allowInsecureHttp : rawFlag(fileInput, 'allowInsecureHttp');
  if (!insecureAllowed)
    for (const { prefix, env: e } of sourceEnvs)
      for (const name of ['PARTNER_API_URL', 'EXCHANGE_API_URL'] as const) {
        const problem = plainHttpProblem(`${prefix}${name}`, e[name]);
        if (problem) problems.push(problem);
      }
  if (file?.webhooks && Boolean(file.webhooks.tlsCertFile) !== Boolean(file.webhooks.tlsKeyFile))
    problems.push('config key webhooks.tlsCertFile / webhooks.tlsKeyFile: give both or neither');
  if (envConfig.SMTP_URL && file && (file.email.to.length === 0 || !file.email.from))
    problems.push('config key email.from / email.to: required when SMTP_URL is set');

  const accountSettings: AccountSettings[] = file
    ? (entries ?? [{ name: file.account, ...file, rateGroup: undefined, email: { to: [] } }]).map((entry, i) => ({
        ...entry,
        lookbackDays: lookbackDays(entry.partner.lookbackDays, file.schedule.lookbackDays, problems),
        env: sourceEnvs[i]!.env,
      }))
    : [];
  if (problems.length > 0 || !file || fileInput === undefined) throw new ConfigError(problems);

  const { accounts: _accounts, ...shared } = file;
  const accountNames = accountSettings.map((a) => a.name);
  const views = accountSettings.map((a) =>
    deepFreeze({
      ...shared,
      account: a.name,
      configFile,
      multiAccount: entries !== undefined,
      accountNames,
      rateGroup: a.rateGroup ?? a.name,
      accountEmailTo: a.email.to,
      partner: {
        ...a.partner,
        lookbackDays: a.lookbackDays,
        apiUrl: a.env.PARTNER_API_URL?.replace(/\/+$/, ''),
        publicKey: a.env.PARTNER_PUBLIC_KEY,
        privateKey: a.env.PARTNER_PRIVATE_KEY,
      },
      exchange: {
        ...a.exchange,
        apiUrl: a.env.EXCHANGE_API_URL?.replace(/\/+$/, ''),
        token: a.env.EXCHANGE_API_TOKEN,
      },
      tolerances: a.tolerances,
      staleAfterHours: a.staleAfterHours,
      database: {
        url: envConfig.DATABASE_URL,
        dataDir: resolve(cwd, envConfig.RAMP_RECON_DATA_DIR ?? 'data'),
      },
      reportsDir: resolve(cwd, envConfig.REPORTS_DIR ?? 'reports'),
      smtpUrl: envConfig.SMTP_URL,
      logLevel: envConfig.LOG_LEVEL ?? 'info',
    } satisfies Config as Config),
  );
  const secrets = secretValues(views);
  return Object.freeze({ settings: groupSettingsOf(views[0]!), accounts: views.map(accountOf), secrets });
}

/** An account's settings before its view is built: its config sections, look-back and source variables. */
type AccountSettings = Pick<NonNullable<FileConfig['accounts']>[number], 'name' | 'rateGroup' | 'email'> &
  Pick<FileConfig, 'partner' | 'exchange' | 'tolerances' | 'staleAfterHours'> & {
    lookbackDays: number;
    env: EnvConfig;
  };

/** Each variable on its own, so one bad value does not hide the problems of the others. */
function parseEnv(env: NodeJS.ProcessEnv, prefix: string, problems: string[]): EnvConfig {
  const out: EnvConfig = {};
  const names = prefix ? SOURCE_ENV : (Object.keys(envSchema.shape) as Array<keyof EnvConfig>);
  for (const name of names) {
    const variable = `${prefix}${name}`;
    const parsed = (envSchema.shape[name] as z.ZodTypeAny).safeParse(env[variable]);
    if (parsed.success) (out as Record<string, unknown>)[name] = parsed.data;
    else
      problems.push(...formatIssues(parsed.error, { [variable]: env[variable] }, 'environment variable ', [variable]));
  }
  return out;
}

/** The source variables of every account of `accounts`, prefixed by its name; two names of one prefix are refused. */
function accountEnvs(
  names: readonly string[],
  env: NodeJS.ProcessEnv,
  problems: string[],
  raw: { account?: unknown } | undefined,
): Array<{ prefix: string; env: EnvConfig }> {
  if (raw && raw.account !== undefined)
    problems.push(
      `config key account: not used with accounts (got ${JSON.stringify(raw.account)}); each account is named by its accounts[].name`,
    );
  const byPrefix = new Map<string, string>();
  return names.map((name, i) => {
    const prefix = envPrefix(name);
    const other = byPrefix.get(prefix);
    if (other !== undefined)
      problems.push(
        `config key accounts.${i}.name: ${JSON.stringify(name)} ${other === name ? 'appears twice' : `reads the same environment variables (${prefix}...) as ${JSON.stringify(other)}`}; account names must be unique`,
      );
    byPrefix.set(prefix, name);
    return { prefix, env: parseEnv(env, prefix, problems) };
  });
}

/** The names of a file's `accounts` that did not pass the schema: those that are plain names, for their variables. */
function rawAccountNames(input: unknown): string[] | undefined {
  const list = (input as { accounts?: unknown } | undefined)?.accounts;
  if (!Array.isArray(list)) return undefined;
  return list
    .map((e: unknown) => (e as { name?: unknown } | null)?.name)
    .filter((n): n is string => typeof n === 'string' && /^[A-Za-z0-9][A-Za-z0-9._-]{0,62}$/.test(n));
}

/** A boolean key of a file that did not pass the schema (so that its other problems are said as they would be). */
function rawFlag(input: unknown, key: string): boolean {
  return !!input && typeof input === 'object' && (input as Record<string, unknown>)[key] === true;
}

/** A source's URL without its credentials is a problem said once, naming the variables (with the account's prefix). */
function sourcePairs(prefix: string, env: EnvConfig, problems: string[]): void {
  const { partner, exchange } = variablesWithPrefix(prefix);
  if (env.PARTNER_API_URL && !env.PARTNER_PRIVATE_KEY)
    problems.push(
      `environment variable ${partner.privateKey}: required when ${partner.url} is set (orders need the private key)`,
    );
  if (env.PARTNER_API_URL && !env.PARTNER_PUBLIC_KEY)
    problems.push(
      `environment variable ${partner.publicKey}: required when ${partner.url} is set (reference data and quotes need ` +
        'the public key)',
    );
  if (env.EXCHANGE_API_URL && !env.EXCHANGE_API_TOKEN)
    problems.push(`environment variable ${exchange.token}: required when ${exchange.url} is set`);
}

/**
 * Each account entry's sections (partner, exchange, tolerances, staleAfterHours) take the top-level section's keys it
 * does not set: what the group shares is written once.
 */
function inheritSections(input: unknown): unknown {
  if (!input || typeof input !== 'object' || Array.isArray(input)) return input;
  const top = input as Record<string, unknown>;
  if (!Array.isArray(top.accounts)) return input;
  const isObject = (v: unknown): v is Record<string, unknown> => !!v && typeof v === 'object' && !Array.isArray(v);
  return {
    ...top,
    accounts: top.accounts.map((entry: unknown) => {
      if (!isObject(entry)) return entry;
      const merged: Record<string, unknown> = { ...entry };
      for (const key of ACCOUNT_SECTIONS)
        if (isObject(top[key]) && (entry[key] === undefined || isObject(entry[key])))
          merged[key] = { ...top[key], ...((entry[key] as Record<string, unknown> | undefined) ?? {}) };
      return merged;
    }),
  };
}

/** Days before a nightly period whose partner listings are read again when incomplete (the webhook retry window). */
export const DEFAULT_LOOKBACK_DAYS = 3;

/** partner.lookbackDays, or its older name schedule.lookbackDays; both with different values is a problem. */
function lookbackDays(current: number | undefined, older: number | undefined, problems: string[]): number {
  if (current !== undefined && older !== undefined && current !== older)
    problems.push(
      `config key schedule.lookbackDays: the older name of partner.lookbackDays, which says ${current} (got ${older}); keep only partner.lookbackDays`,
    );
  return current ?? older ?? DEFAULT_LOOKBACK_DAYS;
}

/** Which sources a command needs; a missing one is a usage error naming the variables. */
export function requireSources(config: Config, sources: Array<'partner' | 'exchange'>): void {
  const problems: string[] = [];
  const { partner, exchange } = sourceVariables(config);
  const of = config.multiAccount ? ` of account ${config.account}` : '';
  if (sources.includes('partner') && !config.partner.apiUrl)
    problems.push(
      `environment variable ${partner.url}: required (with ${partner.publicKey} and ${partner.privateKey}) to sync the ` +
        `Partner API${of}`,
    );
  if (sources.includes('exchange') && !config.exchange.apiUrl)
    problems.push(
      `environment variable ${exchange.url}: required (with ${exchange.token}) to sync the Exchange API${of}`,
    );
  if (problems.length) throw new ConfigError(problems);
}

/** The effective config with every secret masked, for `config check` and the run record. */
export function maskedConfig(config: Config): Record<string, unknown> {
  return {
    ...config,
    partner: {
      ...config.partner,
      apiUrl: maskApiUrl(config.partner.apiUrl),
      publicKey: mask(config.partner.publicKey),
      privateKey: mask(config.partner.privateKey),
    },
    exchange: { ...config.exchange, apiUrl: maskApiUrl(config.exchange.apiUrl), token: mask(config.exchange.token) },
    database: { ...config.database, url: maskUrl(config.database.url) },
    smtpUrl: maskUrl(config.smtpUrl),
  };
}

/** Stable hash of the effective (masked) config, stored with each run so a run can be explained later. */
export function configHash(config: Config): string {
  return createHash('sha256')
    .update(stableStringify(maskedConfig(config)))
    .digest('hex')
    .slice(0, 16);
}

/** An API URL as written, unless it holds a credential (then masked). */
function maskApiUrl(url: string | undefined): string | undefined {
  return urlSecrets(url).length ? maskUrl(url) : url;
}

function mask(value: string | undefined): string | undefined {
  return value === undefined ? undefined : MASK;
}

function formatIssues(error: z.ZodError, input: unknown, prefix: string, basePath: PropertyKey[] = []): string[] {
  return error.issues.map((rawIssue) => {
    const issue = { ...rawIssue, path: [...basePath, ...rawIssue.path] } as typeof rawIssue;
    const path = issue.path.map(String).join('.');
    if (issue.code === 'unrecognized_keys') {
      const where = path ? `${path}.` : '';
      const known = knownKeys(issue.path);
      return issue.keys
        .map((k) => {
          const near = closest(k, known);
          return `${prefix}${where}${k}: unknown key${near ? ` (did you mean ${where}${near}?)` : known.length ? ` (known keys${path ? ` of ${path}` : ''}: ${known.join(', ')})` : ''}`;
        })
        .join('\n');
    }
    const secret = (SECRET_ENV as readonly string[]).some((name) => path === name || path.endsWith(`_${name}`));
    const value = valueAt(input, issue.path);
    const shown = secret ? '' : value === undefined ? ' (missing)' : ` (got ${JSON.stringify(value)})`;
    return `${prefix}${path || '(root)'}: ${issue.message}${shown}`;
  });
}

/** The keys the config schema knows at a path (unwrapping defaults and optionals), for "did you mean". */
function knownKeys(path: PropertyKey[]): string[] {
  let schema: unknown = fileConfigSchema;
  const unwrap = (s: unknown): unknown => {
    let cur = s as { def?: { innerType?: unknown }; shape?: unknown } | undefined;
    while (cur?.def?.innerType) cur = cur.def.innerType as typeof cur;
    return cur;
  };
  for (const key of path) {
    const shape = (unwrap(schema) as { shape?: Record<string, unknown> } | undefined)?.shape;
    if (!shape || typeof key !== 'string' || !(key in shape)) return [];
    schema = shape[key];
  }
  const shape = (unwrap(schema) as { shape?: Record<string, unknown> } | undefined)?.shape;
  return shape ? Object.keys(shape) : [];
}

function valueAt(input: unknown, path: PropertyKey[]): unknown {
  let current: unknown = input;
  for (const key of path) {
    if (current === null || typeof current !== 'object') return undefined;
    current = (current as Record<PropertyKey, unknown>)[key];
  }
  return current;
}

function stableStringify(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(stableStringify).join(',')}]`;
  if (value && typeof value === 'object')
    return `{${Object.keys(value)
      .sort()
      .filter((k) => (value as Record<string, unknown>)[k] !== undefined)
      .map((k) => `${JSON.stringify(k)}:${stableStringify((value as Record<string, unknown>)[k])}`)
      .join(',')}}`;
  return JSON.stringify(value);
}

function deepFreeze<T>(value: T): T {
  if (value && typeof value === 'object' && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const v of Object.values(value)) deepFreeze(v);
  }
  return value;
}
