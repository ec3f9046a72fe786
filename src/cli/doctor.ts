/** `doctor`: proves the set-up before the first night, one line per part (config, folders, database, APIs, SMTP,
 * webhook port).
 */
import { mkdirSync, rmSync, writeFileSync, accessSync, constants } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import nodemailer from 'nodemailer';
import SMTPConnection from 'nodemailer/lib/smtp-connection/index.js';
import { parseConnectionUrl } from 'nodemailer/lib/shared/index.js';
import { scrubSecrets, urlSecrets, type Config, type Group } from '../config/load.js';
import { smtpTlsOptions } from '../config/tls.js';
import { apiVariablesText, sourceVariables } from '../config/variables.js';
import { plural } from '../util/words.js';
import { silentLogger } from '../log/logger.js';
import { openStore, type Store } from '../store/db/database.js';
import { asDatabaseUnavailable, databaseTarget } from '../store/db/database-errors.js';
import { migrationStatus } from '../store/db/migrate.js';
import { queueSchema, queueStatus } from '../store/runs/job-queue.js';
import { advisoryUnlock, tryAdvisoryLock } from '../store/runs/run-lock.js';
import { partnerClientFromConfig } from '../sources/partner/index.js';
import { exchangeClientFromConfig } from '../sources/exchange/index.js';
import { accountWebhookUrls } from '../webhooks/routes.js';

export type CheckStatus = 'ok' | 'warn' | 'fail' | 'skip';

/** One line of the doctor's answer: the part, ok or the problem, and for a problem what to do. */
export interface CheckResult {
  part: string;
  status: CheckStatus;
  text: string;
  fix?: string;
  ms: number;
}

export interface DoctorOptions {
  /** Each check's own limit (default 5 s). */
  timeoutMs?: number;
}

/** A part that did not answer in time: named by the check that waited for it. */
class CheckTimeout extends Error {}

async function withTimeout<T>(ms: number, fn: () => Promise<T>): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  try {
    return await Promise.race([
      fn(),
      new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new CheckTimeout(`no answer within ${ms} ms`)), ms);
      }),
    ]);
  } finally {
    clearTimeout(timer);
  }
}

const message = (err: unknown) => (err instanceof Error ? err.message : String(err));

/** A folder we must write to: created if missing, a file written and removed. */
function folderCheck(part: string, dir: string, variable: string): Omit<CheckResult, 'ms'> {
  try {
    mkdirSync(dir, { recursive: true });
    const probe = join(dir, `.ramp-recon-doctor-${process.pid}`);
    writeFileSync(probe, 'ok');
    rmSync(probe, { force: true });
    return { part, status: 'ok', text: `${dir} is writable` };
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code ?? '';
    const why =
      code === 'EACCES' || code === 'EPERM'
        ? 'permission denied'
        : code === 'EROFS'
          ? 'read-only file system'
          : code === 'ENOTDIR'
            ? 'a part of the path is a file'
            : message(err);
    return {
      part,
      status: 'fail',
      text: `${dir} cannot be written: ${why}`,
      fix: `set ${variable} to a folder this user can write, or fix its permissions`,
    };
  }
}

async function databaseCheck(config: Config, timeoutMs: number): Promise<Omit<CheckResult, 'ms'>> {
  const part = 'database';
  const target = databaseTarget(config.database.url, config.database.dataDir);
  let store: Store | undefined;
  try {
    return await withTimeout(timeoutMs, async () => {
      store = await openStore({ url: config.database.url, dataDir: config.database.dataDir, poolSize: 1 });
      const s = store;
      const migrations = await migrationStatus(s);
      if (migrations.changed.length)
        return {
          part,
          status: 'fail' as const,
          text: `${target}: migration${migrations.changed.length === 1 ? '' : 's'} ${migrations.changed.join(', ')} changed after being applied`,
          fix: 'restore the sql/ files of the installed version (a new change goes in a new migration)',
        };
      const applied = `${plural(migrations.applied.length, 'migration')} applied`;
      const schema = migrations.pending.length
        ? `${applied}, ${migrations.pending.length} pending (the next command applies them)`
        : applied;
      // The run lock: free, or held by a run in progress (not a fault of the set-up).
      let lock = 'run lock free';
      if (s.kind === 'postgres') {
        const key = `ramp-recon:run:${config.account}`;
        const free = await s.withSession(async (session) => {
          const got = await tryAdvisoryLock(session, key);
          if (got) await advisoryUnlock(session, key);
          return got;
        });
        if (!free)
          return {
            part,
            status: 'warn' as const,
            text: `${target}: connected, ${schema}; the run lock is held (a run is in progress)`,
            fix: '`ramp-recon runs` shows it; wait for it to finish',
          };
      } else {
        lock = 'embedded database free (no other process holds it)';
      }
      return { part, status: 'ok' as const, text: `${target}: connected, ${schema}, ${lock}` };
    });
  } catch (err) {
    if (err instanceof CheckTimeout)
      return {
        part,
        status: 'fail',
        text: `${target}: ${err.message}`,
        fix: 'check DATABASE_URL, the server and the network',
      };
    const unavailable = asDatabaseUnavailable(err, target);
    if (unavailable)
      return {
        part,
        status: 'fail',
        text: unavailable.message.replace(/^database: cannot use /, '').replace(/; check .*$/, ''),
        fix: 'check DATABASE_URL and that the server is running',
      };
    return {
      part,
      status: 'fail',
      text: `${target}: ${message(err)}`,
      fix: config.database.url ? 'check DATABASE_URL' : 'check RAMP_RECON_DATA_DIR (is another ramp-recon using it?)',
    };
  } finally {
    await (store as Store | undefined)?.close().catch(() => {});
  }
}

/** The config with no retries and the check's timeouts: the doctor asks once and says what it got. */
function probeConfig(config: Config, timeoutMs: number): Config {
  return {
    ...config,
    http: { ...config.http, maxRetries: 0, connectTimeoutMs: timeoutMs, bodyTimeoutMs: timeoutMs },
  } as Config;
}

/** One API's check: fails without its URL; otherwise asks once through a client of its own and says what it got. */
async function apiCheck<C extends { close(): Promise<void> }>(check: {
  part: string;
  url: string | undefined;
  unset: string;
  /** The settings a user sets when unset, or checks when refused. */
  settings: string;
  timeoutMs: number;
  open: () => C;
  probe: (client: C) => Promise<string>;
}): Promise<Omit<CheckResult, 'ms'>> {
  const { part, settings } = check;
  if (!check.url) return { part, status: 'fail', text: check.unset, fix: `set ${settings}` };
  const client = check.open();
  try {
    const text = await withTimeout(check.timeoutMs, () => check.probe(client));
    return { part, status: 'ok', text: `${check.url}: ${text}` };
  } catch (err) {
    // An HTTP error knows what to check (the refused key's variable, or the URL's); a check that timed out, the settings.
    const hint = (err as { hint?: unknown }).hint;
    return {
      part,
      status: 'fail',
      text: message(err).replace(/; check .*$/, ''),
      fix: typeof hint === 'string' ? hint : `check ${settings}`,
    };
  } finally {
    await client.close();
  }
}

/** What an API's check says of it: its name, its URL, the variable that sets the URL, and the settings to check. */
function apiSettings(config: Config, source: 'partner' | 'exchange', syncs: string) {
  const variables = sourceVariables(config);
  return {
    part: `${source} API`,
    url: config[source].apiUrl,
    unset: `${variables[source].url} is not set (\`run\` syncs ${syncs})`,
    settings: apiVariablesText(variables, source),
  };
}

function partnerCheck(config: Config, timeoutMs: number): Promise<Omit<CheckResult, 'ms'>> {
  return apiCheck({
    ...apiSettings(config, 'partner', 'partner orders'),
    timeoutMs: timeoutMs * 2 + 1000,
    open: () => partnerClientFromConfig(probeConfig(config, timeoutMs), silentLogger()),
    // One public-key call and one private call (both keys): a 404 for an order id that cannot exist proves the keys.
    probe: async (client) => {
      const currencies = await client.currencies();
      const order = await client.getOrder('ramp-recon-doctor-probe');
      return (
        `public key accepted (GET /currencies ${currencies.status}), ` +
        `private key accepted (GET /orders/{id} ${order?.response.status ?? 404})`
      );
    },
  });
}

function exchangeCheck(config: Config, timeoutMs: number): Promise<Omit<CheckResult, 'ms'>> {
  return apiCheck({
    ...apiSettings(config, 'exchange', 'the exchange'),
    timeoutMs: timeoutMs + 1000,
    open: () => exchangeClientFromConfig(probeConfig(config, timeoutMs), silentLogger()),
    probe: async (client) => `token accepted (GET /accounts ${(await client.accounts()).status})`,
  });
}

/** The fleet's job queue on Postgres: its schema, and the workers heard from lately. */
async function queueCheck(config: Config, timeoutMs: number): Promise<Omit<CheckResult, 'ms'>> {
  const part = 'job queue';
  if (!config.database.url)
    return {
      part,
      status: 'skip',
      text: 'the embedded database has no workers: `run` and `schedule` run every account in their own process',
    };
  const schema = queueSchema(config.database.url);
  let store: Store | undefined;
  try {
    return await withTimeout(timeoutMs, async () => {
      store = await openStore({ url: config.database.url, dataDir: config.database.dataDir, poolSize: 1 });
      const status = await queueStatus(store.db, schema);
      if (!status.exists)
        return {
          part,
          status: 'ok' as const,
          text: `schema ${schema} not created yet (the first \`worker\`, \`enqueue\` or fleet \`schedule\` creates it); no workers`,
        };
      const workers = status.live.map((w) => `${w.name ?? 'unnamed'} on ${w.host} (pid ${w.pid})`);
      return {
        part,
        status: 'ok' as const,
        text: `schema ${schema} (pg-boss ${status.version ?? '?'}): ${workers.length ? `${workers.length} live: ${workers.join(', ')}` : 'no live worker'}`,
      };
    });
  } catch (err) {
    return {
      part,
      status: 'fail',
      text: `schema ${schema}: ${message(err)}`,
      fix: 'check DATABASE_URL and its permissions',
    };
  } finally {
    await (store as Store | undefined)?.close().catch(() => {});
  }
}

async function smtpCheck(config: Config, timeoutMs: number): Promise<Omit<CheckResult, 'ms'>> {
  const part = 'SMTP';
  if (!config.smtpUrl)
    return { part, status: 'skip', text: 'SMTP_URL is not set: workbooks are written, not e-mailed' };
  const url = new URL(config.smtpUrl);
  const where = `${url.protocol}//${url.hostname}${url.port ? `:${url.port}` : ''}`;
  const transport = nodemailer.createTransport({
    ...parseConnectionUrl(config.smtpUrl),
    ...smtpTlsOptions(config.smtpUrl, config.allowInsecureHttp),
    connectionTimeout: timeoutMs,
    greetingTimeout: timeoutMs,
    socketTimeout: timeoutMs,
  });
  try {
    await withTimeout(timeoutMs + 1000, () => transport.verify());
    const size = await withTimeout(timeoutMs + 1000, () =>
      relaySize(config.smtpUrl!, timeoutMs, config.allowInsecureHttp),
    );
    const limit = config.email.maxMessageBytes;
    const sizeText =
      size === null
        ? `the relay states no size limit (SIZE); email.maxMessageBytes ${limit}`
        : `the relay accepts messages up to ${size} bytes (SIZE); email.maxMessageBytes ${limit}`;
    const connected =
      `${where}: connected${url.username ? ' and authenticated' : ''} (no mail sent); ` +
      `mail goes from ${config.email.from ?? '?'} to ${config.email.to.join(', ')}; ${sizeText}`;
    if (size !== null && size < limit)
      return {
        part,
        status: 'warn',
        text: connected,
        fix:
          `set email.maxMessageBytes to at most ${size}: a larger message is refused by the relay and then sent ` +
          'again without the workbook',
      };
    return { part, status: 'ok', text: connected };
  } catch (err) {
    const text = scrubSecrets(message(err), urlSecrets(config.smtpUrl));
    return { part, status: 'fail', text: `${where}: ${text}`, fix: 'check SMTP_URL (host, port, user and password)' };
  } finally {
    transport.close();
  }
}

/** The relay's SIZE (RFC 1870) from its EHLO answer: the largest message it says it takes, or null without one. */
async function relaySize(smtpUrl: string, timeoutMs: number, allowInsecure: boolean): Promise<number | null> {
  const connection = new SMTPConnection({
    ...parseConnectionUrl(smtpUrl),
    ...smtpTlsOptions(smtpUrl, allowInsecure),
    connectionTimeout: timeoutMs,
    greetingTimeout: timeoutMs,
    socketTimeout: timeoutMs,
  });
  try {
    await new Promise<void>((resolve, reject) => {
      connection.once('error', reject);
      connection.connect(() => resolve());
    });
    // nodemailer keeps the EHLO answer's SIZE here (and refuses a larger envelope with it); 0 when none was stated.
    const size = (connection as unknown as { _maxAllowedSize?: number })._maxAllowedSize;
    return size ? size : null;
  } finally {
    connection.close();
  }
}

async function webhookCheck(config: Config, timeoutMs: number): Promise<Omit<CheckResult, 'ms'>> {
  const part = 'webhook port';
  const w = config.webhooks;
  if (!w) return { part, status: 'skip', text: 'no webhooks section: serve-webhooks is not configured' };
  for (const file of [w.tlsCertFile, w.tlsKeyFile].filter((f): f is string => Boolean(f))) {
    try {
      accessSync(file, constants.R_OK);
    } catch {
      return {
        part,
        status: 'fail',
        text: `TLS file ${file} cannot be read`,
        fix: 'check webhooks.tlsCertFile / webhooks.tlsKeyFile',
      };
    }
  }
  const where = `${w.host}:${w.port}`;
  try {
    await withTimeout(
      timeoutMs,
      () =>
        new Promise<void>((resolve, reject) => {
          const server = createServer();
          server.once('error', reject);
          server.listen(w.port, w.host, () => server.close(() => resolve()));
        }),
    );
    return { part, status: 'ok', text: `${where} can be listened on${w.tlsCertFile ? ' (HTTPS)' : ''}` };
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'EADDRINUSE')
      return {
        part,
        status: 'warn',
        text: `${where} is in use`,
        fix: 'fine if serve-webhooks is running there; otherwise free the port or change webhooks.port',
      };
    return {
      part,
      status: 'fail',
      text: `${where} cannot be listened on: ${code === 'EACCES' ? 'permission denied (ports below 1024 need privileges)' : message(err)}`,
      fix: 'change webhooks.port or webhooks.host',
    };
  }
}

/**
 * The URL each account registers with the partner (the event names no organisation, so its URL is what tells them
 * apart): one line per account. A single-account config takes any path; its account's path is the one to register.
 */
function webhookUrlChecks(config: Config): Array<Omit<CheckResult, 'ms'>> {
  const w = config.webhooks;
  if (!w) return [];
  const names = config.multiAccount ? config.accountNames : [config.account];
  const notes = [
    ...(config.multiAccount ? [] : ['any path is accepted with one account']),
    ...(w.tlsCertFile && w.tlsKeyFile
      ? []
      : ['plain HTTP here: the partner delivers over HTTPS only, so register your TLS proxy with this path']),
    ...(w.host === '0.0.0.0' || w.host === '::' ? [`listening on every address (${w.host}): the host is a guess`] : []),
  ];
  return accountWebhookUrls(w, names).map(({ account, url }) => ({
    part: config.multiAccount ? `webhook URL [${account}]` : 'webhook URL',
    status: 'ok',
    text: `register ${url} with the partner${config.multiAccount ? ` for ${account}'s organisation` : ''}${notes.length ? ` (${notes.join('; ')})` : ''}`,
  }));
}

/** "3 days", or each account's ("3/1 days"). */
function lookBack(accounts: readonly Config[]): string {
  const days = accounts.map((c) => c.partner.lookbackDays);
  return `${days.join('/')} day${days.every((d) => d === 1) ? '' : 's'}`;
}

/** allowInsecureHttp lets keys and mail travel in clear text: said on every doctor run while it is set. */
function insecureWarning(): Omit<CheckResult, 'ms'> {
  return {
    part: 'TLS',
    status: 'warn',
    text: 'allowInsecureHttp is true: API keys over plain http:// and SMTP without TLS to remote hosts are accepted',
    fix: 'use https:// API URLs and smtps:// (or a relay with STARTTLS), then remove allowInsecureHttp from the config',
  };
}

/** Every check, in the order a run meets the parts; each timed, none stops the others. */
export async function runDoctor(group: Group, options: DoctorOptions = {}): Promise<CheckResult[]> {
  const timeoutMs = options.timeoutMs ?? 5_000;
  // Several accounts: each account's own parts (its APIs) checked and named; the shared ones once.
  const accounts = group.accounts.map((a) => a.config);
  const config = accounts[0]!;
  const named =
    (c: Config, check: (c: Config, ms: number) => Promise<Omit<CheckResult, 'ms'>>) =>
    async (): Promise<Omit<CheckResult, 'ms'>> => {
      const r = await check(c, timeoutMs);
      return config.multiAccount ? { ...r, part: `${r.part} [${c.account}]` } : r;
    };
  const checks: Array<() => Promise<Omit<CheckResult, 'ms'>> | Omit<CheckResult, 'ms'>> = [
    () => ({
      part: 'config',
      status: 'ok',
      text: `${config.configFile ?? 'no config file (defaults)'}; ${config.multiAccount ? `accounts ${config.accountNames.join(', ')}` : `account ${config.account}`}; schedule "${config.schedule.cron}" in ${config.schedule.timezone}, partner look-back ${lookBack(accounts)}`,
    }),
    ...(config.allowInsecureHttp ? [() => insecureWarning()] : []),
    () => folderCheck('reports folder', config.reportsDir, 'REPORTS_DIR'),
    ...(config.database.url ? [] : [() => folderCheck('data folder', config.database.dataDir, 'RAMP_RECON_DATA_DIR')]),
    () => databaseCheck(config, timeoutMs),
    ...accounts.flatMap((c) => [named(c, partnerCheck), named(c, exchangeCheck)]),
    () => queueCheck(config, timeoutMs),
    () => smtpCheck(config, timeoutMs),
    () => webhookCheck(config, timeoutMs),
    ...webhookUrlChecks(config).map((r) => () => r),
  ];
  const results: CheckResult[] = [];
  for (const check of checks) {
    const started = Date.now();
    let result: Omit<CheckResult, 'ms'>;
    try {
      result = await check();
    } catch (err) {
      result = { part: 'doctor', status: 'fail', text: message(err) };
    }
    // No check prints a secret on purpose; a server's or a library's message might quote one.
    const fix = result.fix === undefined ? {} : { fix: scrubSecrets(result.fix, group.secrets) };
    results.push({ ...result, text: scrubSecrets(result.text, group.secrets), ...fix, ms: Date.now() - started });
  }
  return results;
}

/** "ok    database       PostgreSQL at ...": one line per check, the fix after a problem. */
export function formatChecks(results: readonly CheckResult[]): string {
  const width = Math.max(...results.map((r) => r.part.length));
  return results
    .map((r) => `${r.status.padEnd(5)} ${r.part.padEnd(width)}  ${r.text}${r.fix ? `; fix: ${r.fix}` : ''}`)
    .join('\n');
}
