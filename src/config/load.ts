/** Loads the config from the environment and the JSON file, validated, frozen, with its secrets listed. */
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { createHash } from 'node:crypto';
import type { z } from 'zod';
import { envSchema, fileConfigSchema, SECRET_ENV, type EnvConfig, type FileConfig } from './schema.js';
import { ConfigError } from '../errors.js';
import { closest } from '../util/suggest.js';
import { jsonSyntaxProblem } from './json-syntax.js';

export type Config = Readonly<
  Omit<FileConfig, 'partner' | 'exchange'> & {
    configFile: string | null;
    partner: FileConfig['partner'] & { apiUrl?: string; publicKey?: string; privateKey?: string; lookbackDays: number };
    exchange: FileConfig['exchange'] & { apiUrl?: string; token?: string };
    database: { url?: string; dataDir: string };
    reportsDir: string;
    smtpUrl?: string;
    logLevel: string;
  }
>;

export interface LoadOptions {
  env?: NodeJS.ProcessEnv;
  /** --config flag; overrides RAMP_RECON_CONFIG. */
  configPath?: string;
  cwd?: string;
}

/**
 * Parses the environment and the optional JSON config file once, into a frozen object.
 * Every problem is collected and reported together, each naming the key and the value
 * (never the value of a secret).
 */
export function loadConfig(options: LoadOptions = {}): Config {
  const env = options.env ?? process.env;
  const cwd = options.cwd ?? process.cwd();
  const problems: string[] = [];

  // Each variable on its own, so one bad value does not hide the problems of the others.
  const rawEnv = pickEnv(env);
  const envConfig: EnvConfig = {};
  for (const [name, schema] of Object.entries(envSchema.shape)) {
    const parsed = (schema as z.ZodTypeAny).safeParse(rawEnv[name]);
    if (parsed.success) (envConfig as Record<string, unknown>)[name] = parsed.data;
    else problems.push(...formatIssues(parsed.error, { [name]: rawEnv[name] }, 'environment variable ', [name]));
  }

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
  const fileResult = fileConfigSchema.safeParse(fileInput ?? {});
  if (!fileResult.success && fileInput !== undefined)
    problems.push(...formatIssues(fileResult.error, fileInput, 'config key '));

  if (envConfig.PARTNER_API_URL && !envConfig.PARTNER_PRIVATE_KEY)
    problems.push(
      'environment variable PARTNER_PRIVATE_KEY: required when PARTNER_API_URL is set (orders need the private key)',
    );
  if (envConfig.PARTNER_API_URL && !envConfig.PARTNER_PUBLIC_KEY)
    problems.push(
      'environment variable PARTNER_PUBLIC_KEY: required when PARTNER_API_URL is set (reference data and quotes need ' +
        'the public key)',
    );
  if (envConfig.EXCHANGE_API_URL && !envConfig.EXCHANGE_API_TOKEN)
    problems.push('environment variable EXCHANGE_API_TOKEN: required when EXCHANGE_API_URL is set');
  const file = fileResult.success ? fileResult.data : undefined;
  if (file?.webhooks && Boolean(file.webhooks.tlsCertFile) !== Boolean(file.webhooks.tlsKeyFile))
    problems.push('config key webhooks.tlsCertFile / webhooks.tlsKeyFile: give both or neither');
  if (envConfig.SMTP_URL && file && (file.email.to.length === 0 || !file.email.from))
    problems.push('config key email.from / email.to: required when SMTP_URL is set');

  const lookback = file ? lookbackDays(file, problems) : DEFAULT_LOOKBACK_DAYS;
  if (problems.length > 0 || !file || fileInput === undefined) throw new ConfigError(problems);

  const config = {
    ...file,
    configFile,
    partner: {
      ...file.partner,
      lookbackDays: lookback,
      apiUrl: envConfig.PARTNER_API_URL?.replace(/\/+$/, ''),
      publicKey: envConfig.PARTNER_PUBLIC_KEY,
      privateKey: envConfig.PARTNER_PRIVATE_KEY,
    },
    exchange: {
      ...file.exchange,
      apiUrl: envConfig.EXCHANGE_API_URL?.replace(/\/+$/, ''),
      token: envConfig.EXCHANGE_API_TOKEN,
    },
    database: {
      url: envConfig.DATABASE_URL,
      dataDir: resolve(cwd, envConfig.RAMP_RECON_DATA_DIR ?? 'data'),
    },
    reportsDir: resolve(cwd, envConfig.REPORTS_DIR ?? 'reports'),
    smtpUrl: envConfig.SMTP_URL,
    logLevel: envConfig.LOG_LEVEL ?? 'info',
  };
  return deepFreeze(config);
}

/** Days before a nightly period whose partner listings are read again when incomplete (the webhook retry window). */
export const DEFAULT_LOOKBACK_DAYS = 3;

/** partner.lookbackDays, or its older name schedule.lookbackDays; both with different values is a problem. */
function lookbackDays(file: FileConfig, problems: string[]): number {
  const current = file.partner.lookbackDays;
  const older = file.schedule.lookbackDays;
  if (current !== undefined && older !== undefined && current !== older)
    problems.push(
      `config key schedule.lookbackDays: the older name of partner.lookbackDays, which says ${current} (got ${older}); keep only partner.lookbackDays`,
    );
  return current ?? older ?? DEFAULT_LOOKBACK_DAYS;
}

/** Which sources a command needs; a missing one is a usage error naming the variables. */
export function requireSources(config: Config, sources: Array<'partner' | 'exchange'>): void {
  const problems: string[] = [];
  if (sources.includes('partner') && !config.partner.apiUrl)
    problems.push(
      'environment variable PARTNER_API_URL: required (with PARTNER_PUBLIC_KEY and PARTNER_PRIVATE_KEY) to sync the ' +
        'Partner API',
    );
  if (sources.includes('exchange') && !config.exchange.apiUrl)
    problems.push('environment variable EXCHANGE_API_URL: required (with EXCHANGE_API_TOKEN) to sync the Exchange API');
  if (problems.length) throw new ConfigError(problems);
}

/** The effective config with every secret masked, for `config check` and the run record. */
export function maskedConfig(config: Config): Record<string, unknown> {
  return {
    ...config,
    partner: {
      ...config.partner,
      publicKey: mask(config.partner.publicKey),
      privateKey: mask(config.partner.privateKey),
    },
    exchange: { ...config.exchange, token: mask(config.exchange.token) },
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

/** Every secret value present, for redaction of free text (error messages, URLs). */
export function secretValues(config: Config): string[] {
  const values = [config.partner.publicKey, config.partner.privateKey, config.exchange.token];
  for (const url of [config.smtpUrl, config.database.url]) {
    if (!url) continue;
    try {
      const password = new URL(url).password;
      if (password) values.push(decodeURIComponent(password), password);
    } catch {
      /* validated already */
    }
  }
  return values.filter((v): v is string => typeof v === 'string' && v.length > 0);
}

function mask(value: string | undefined): string | undefined {
  return value === undefined ? undefined : '********';
}

export function maskUrl(url: string | undefined): string | undefined {
  if (!url) return url;
  try {
    const parsed = new URL(url);
    if (parsed.password) parsed.password = '********';
    return parsed.toString();
  } catch {
    return '********';
  }
}

function pickEnv(env: NodeJS.ProcessEnv): Record<string, string | undefined> {
  const out: Record<string, string | undefined> = {};
  for (const key of Object.keys(envSchema.shape)) out[key] = env[key];
  return out;
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
    const secret = (SECRET_ENV as readonly string[]).includes(path);
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
