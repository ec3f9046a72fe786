/** The HTTP server that receives partner webhooks and hands each body to the partner source. */
import { readFileSync } from 'node:fs';
import http, { type IncomingMessage, type ServerResponse } from 'node:http';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import type { Config } from '../config/load.js';
import { WEBHOOK_SENDER_IPS } from '../config/schema.js';
import type { Store } from '../store/db/database.js';
import type { Logger } from '../log/logger.js';
import { AppError } from '../errors.js';
import { handleEventBody, WebhookBatcher, type EventOutcome } from '../sources/partner/index.js';
import { ipSet } from '../util/ip-address.js';
import { accountOfPath, accountPath } from './routes.js';
import { clientAddress, normalizeIp } from './client-address.js';

export { clientAddress, normalizeIp };

export interface WebhookServerDeps {
  store: Store;
  config: Config;
  logger: Logger;
}

export interface WebhookServerOptions {
  /** Overrides config.webhooks.port (0 picks a free port, as tests do). */
  port?: number;
  host?: string;
  /** The receiver's clock (default: the wall clock); an event dated too far ahead of it is quarantined. */
  now?: () => Date;
}

export interface WebhookStats {
  /** POST requests from allowed addresses, to an account's path, whose body was read. */
  received: number;
  /** Events stored for the first time. */
  stored: number;
  /** Events whose eventId was already stored with the same body (acknowledged, not stored again). */
  duplicates: number;
  /** Events repeating a stored eventId with another body: kept as conflicts for the report, acknowledged. */
  conflicts: number;
  /** Valid events the database refused: quarantined with its reason, acknowledged (202). */
  quarantined: number;
  /** Stored events that moved their order's state (the others were older than the stored state). */
  applied: number;
  /** Requests from an address that is not an allowed sender (403). */
  rejected: number;
  /** Bodies that are not UTF-8, not JSON, miss required fields or cannot be stored (400, quarantined). */
  invalid: number;
  /** Of the invalid bodies, those nested deeper than the limit (400, quarantined as text, never parsed). */
  tooDeep: number;
  /**
   * Valid events dated more than webhooks.maxClockSkewSeconds ahead of the receiver's clock: quarantined, never
   * applied (202).
   */
  future: number;
  /** Stored events carrying fields beyond the contract's event schema. */
  drift: number;
  /** Bodies over the size limit (413). */
  tooLarge: number;
  /** Requests that failed because the database was unavailable (503, the sender retries). */
  errors: number;
  /**
   * POSTs from allowed addresses to a path that is no account's (multi-account configs: only `/webhooks/<account>`
   * is): answered 404, body not read, nothing stored.
   */
  unknownPath: number;
}

export interface WebhookServer {
  url: string;
  port: number;
  /** Each account's URL on this server (`<url>/webhooks/<account>`), in config order. */
  accounts: ReadonlyArray<{ account: string; url: string }>;
  stats(): WebhookStats;
  /** Stops accepting, lets in-flight requests finish (their events are committed), then returns. */
  close(): Promise<void>;
}

const DEFAULTS = {
  port: 8080,
  host: '0.0.0.0',
  allowedIps: WEBHOOK_SENDER_IPS,
  trustedProxies: [] as string[],
  bodyLimitBytes: 64 * 1024,
  maxClockSkewSeconds: 600,
};
// The sender gives up after 5 s; a request still unread after this is a stuck client.
const REQUEST_TIMEOUT_MS = 10_000;
// On shutdown, in-flight requests get this long before their connections are cut.
const SHUTDOWN_GRACE_MS = 10_000;

export class WebhookServerError extends AppError {
  constructor(message: string, cause?: unknown) {
    super('WEBHOOK_SERVER', message, 1, { cause });
  }
}

/** The webhook settings after their defaults. */
function settingsOf(config: Config) {
  return { ...DEFAULTS, ...(config.webhooks ?? {}) };
}
type Settings = ReturnType<typeof settingsOf>;

/** What every request of one receiver reads and counts. */
interface Receiver {
  settings: Settings;
  store: Store;
  allowed: ReturnType<typeof ipSet>;
  trustedProxies: ReturnType<typeof ipSet>;
  clock: () => Date;
  logger: Logger;
  multiAccount: boolean;
  /** The accounts whose events this receiver files, in config order. */
  accounts: readonly string[];
  stats: WebhookStats;
  databaseTarget: string;
  /** One batcher per account: each transaction writes one account's events. */
  batchers: Map<string, WebhookBatcher>;
  /** Requests being handled: close() waits for them. */
  inFlight: Set<Promise<void>>;
  closing: boolean;
}

/**
 * The order-event receiver (docs/apis.md "Partner webhooks"). Each POST: sender address check, body
 * size limit, JSON and schema validation, then one short transaction that stores the event by
 * eventId and applies it to its order; the 2xx goes out only after that commit, so an
 * acknowledged event is never lost, and well inside the sender's 5 s.
 */
export async function startWebhookServer(
  deps: WebhookServerDeps,
  options: WebhookServerOptions = {},
): Promise<WebhookServer> {
  const receiver = receiverOf(deps, options);
  const { settings, logger, accounts } = receiver;
  const port = options.port ?? settings.port;
  const host = options.host ?? settings.host;
  const tls = settings.tlsCertFile && settings.tlsKeyFile ? readTls(settings.tlsCertFile, settings.tlsKeyFile) : null;
  const onRequest = (req: IncomingMessage, res: ServerResponse) => track(receiver, req, res);
  const server = tls ? https.createServer({ cert: tls.cert, key: tls.key }, onRequest) : http.createServer(onRequest);
  server.requestTimeout = REQUEST_TIMEOUT_MS;
  server.headersTimeout = Math.min(REQUEST_TIMEOUT_MS, 5_000);
  await listen(server, host, port);
  server.on('error', (err) => logger.error({ err }, 'webhook server error'));
  const bound = (server.address() as AddressInfo).port;
  const urlHost = host === '0.0.0.0' || host === '::' ? '127.0.0.1' : host.includes(':') ? `[${host}]` : host;
  const url = `${tls ? 'https' : 'http'}://${urlHost}:${bound}`;
  announce(receiver, url, Boolean(tls));
  let closed: Promise<void> | null = null;
  return {
    url,
    port: bound,
    accounts: accounts.map((account) => ({ account, url: `${url}${accountPath(account)}` })),
    stats: () => ({ ...receiver.stats }),
    close: () => (closed ??= stop(receiver, server)),
  };
}

function receiverOf(deps: WebhookServerDeps, options: WebhookServerOptions): Receiver {
  const settings = settingsOf(deps.config);
  const clock = options.now ?? (() => new Date());
  const multiAccount = deps.config.multiAccount;
  const accounts = multiAccount ? deps.config.accountNames : [deps.config.account];
  const databaseTarget = deps.store.kind === 'embedded' ? 'the embedded database' : 'PostgreSQL (DATABASE_URL)';
  const batcherOf = (a: string) => new WebhookBatcher(deps.store.db, a, { databaseTarget, now: clock });
  return {
    settings,
    store: deps.store,
    allowed: ipSet(settings.allowedIps),
    trustedProxies: ipSet(settings.trustedProxies),
    clock,
    logger: deps.logger.child({ component: 'webhooks' }),
    multiAccount,
    accounts,
    stats: { ...NO_REQUESTS },
    databaseTarget,
    batchers: new Map(accounts.map((a) => [a, batcherOf(a)])),
    inFlight: new Set(),
    closing: false,
  };
}

const NO_REQUESTS: WebhookStats = {
  received: 0,
  stored: 0,
  duplicates: 0,
  conflicts: 0,
  quarantined: 0,
  applied: 0,
  rejected: 0,
  invalid: 0,
  tooDeep: 0,
  future: 0,
  drift: 0,
  tooLarge: 0,
  errors: 0,
  unknownPath: 0,
};

/** Handles a request, kept in flight until answered; a failure the handler did not answer is a 503. */
function track(receiver: Receiver, req: IncomingMessage, res: ServerResponse): void {
  const { logger, stats, inFlight } = receiver;
  const work = handle(receiver, req, res).catch((err) => {
    if (req.destroyed && !req.complete) {
      // The client went away mid-body: nobody to answer, and no database to blame (not counted as an error).
      logger.debug({ err }, 'webhook client went away before its body was read');
      return;
    }
    stats.errors++;
    logger.error({ err }, 'webhook request failed');
    if (!res.headersSent) reply(res, 503, { error: 'temporarily unavailable' });
  });
  inFlight.add(work);
  void work.finally(() => inFlight.delete(work));
}

/** Health checks, then a POST: its sender, its account by path, its body's size, then the event itself. */
async function handle(receiver: Receiver, req: IncomingMessage, res: ServerResponse): Promise<void> {
  if (receiver.closing) {
    // Shutting down: the sender retries later, the event is not lost.
    reply(res, 503, { error: 'shutting down' }, true);
    return;
  }
  const path = (req.url ?? '/').split('?')[0] ?? '/';
  if (req.method === 'GET' && (path === '/healthz' || path === '/health')) {
    reply(res, 200, { status: 'ok' });
    return;
  }
  if (req.method !== 'POST') {
    res.setHeader('Allow', 'POST');
    reply(res, 405, { error: 'method not allowed' });
    return;
  }
  const remote = allowedSender(receiver, req, res, path);
  if (remote === null) return;
  const account = accountOfRequest(receiver, req, res, { remote, path });
  if (account === null) return;
  await receiveEvent(receiver, req, res, { remote, path, account });
}

/** The sender's address when it is an allowed sender; else answered 403 and null. */
function allowedSender(receiver: Receiver, req: IncomingMessage, res: ServerResponse, path: string): string | null {
  const remote = clientAddress(req, receiver.trustedProxies);
  if (remote && receiver.allowed.has(remote)) return remote;
  receiver.stats.rejected++;
  receiver.logger.warn({ remote, path }, 'webhook from an address that is not an allowed sender: rejected');
  reply(res, 403, { error: 'sender address not allowed' }, true);
  return null;
}

/** The account whose URL this is; else answered 404 and null. */
function accountOfRequest(
  receiver: Receiver,
  req: IncomingMessage,
  res: ServerResponse,
  { remote, path }: { remote: string; path: string },
): string | null {
  const account = accountOfPath(path, receiver.accounts, receiver.multiAccount);
  if (account !== null) return account;
  // No organisation registered this URL: storing it under any account would put one company's order in another's
  // reconciliation. The body is neither read nor logged.
  receiver.stats.unknownPath++;
  const refused = "webhook POSTed to a path that is no account's: refused (404), nothing stored";
  receiver.logger.warn({ remote, path }, refused);
  req.resume();
  reply(res, 404, { error: "no account's webhook URL: each account's events go to /webhooks/<account>" }, true);
  return null;
}

/** Reads the body (413 over the limit), stores and applies the event, answers by its outcome. */
async function receiveEvent(
  receiver: Receiver,
  req: IncomingMessage,
  res: ServerResponse,
  { remote, path, account }: { remote: string; path: string; account: string },
): Promise<void> {
  const { settings, stats } = receiver;
  const log = receiver.multiAccount ? receiver.logger.child({ account }) : receiver.logger;
  const body = await readBody(req, settings.bodyLimitBytes);
  if (body === null) {
    stats.tooLarge++;
    log.warn({ remote, limit: settings.bodyLimitBytes }, 'webhook body over the size limit: rejected');
    reply(res, 413, { error: `body larger than ${settings.bodyLimitBytes} bytes` }, true);
    return;
  }
  stats.received++;
  const outcome: EventOutcome = await handleEventBody({
    db: receiver.store.db,
    account,
    now: receiver.clock(),
    maxClockSkewSeconds: settings.maxClockSkewSeconds,
    endpoint: path,
    remoteAddr: remote,
    body,
    databaseTarget: receiver.databaseTarget,
    write: (item) => receiver.batchers.get(account)!.submit(item),
  });
  answer(res, outcome, { stats, logger: log, remote });
}

function listen(server: http.Server, host: string, port: number): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    const onError = (err: Error) =>
      reject(new WebhookServerError(`cannot listen on ${host}:${port}: ${err.message}`, err));
    server.once('error', onError);
    server.listen(port, host, () => {
      server.off('error', onError);
      resolve();
    });
  });
}

/** Logs where the receiver listens (each account's URL), and warns when nothing in front of it speaks HTTPS. */
function announce({ settings, logger, multiAccount, accounts }: Receiver, url: string, tls: boolean): void {
  logger.info(
    {
      url,
      tls,
      allowedIps: settings.allowedIps,
      trustedProxies: settings.trustedProxies,
      ...(multiAccount ? { accounts: accounts.map((a) => `${url}${accountPath(a)}`) } : {}),
    },
    'webhook receiver listening',
  );
  if (!tls && settings.trustedProxies.length === 0)
    logger.warn(
      'the partner delivers webhooks over HTTPS only: set webhooks.tlsCertFile/tlsKeyFile, or run behind a ' +
        'TLS-terminating proxy listed in webhooks.trustedProxies',
    );
}

/** Stops accepting, lets in-flight requests finish, cuts what is left after the grace period. */
async function stop(receiver: Receiver, server: http.Server): Promise<void> {
  receiver.closing = true;
  const stopped = new Promise<void>((resolve) => server.close(() => resolve()));
  server.closeIdleConnections();
  const grace = setTimeout(() => server.closeAllConnections(), SHUTDOWN_GRACE_MS);
  grace.unref();
  // Every acknowledged event was committed before its 2xx; waiting for in-flight requests
  // means none is cut between its commit and its answer.
  while (receiver.inFlight.size) await Promise.allSettled([...receiver.inFlight]);
  server.closeIdleConnections();
  await stopped;
  clearTimeout(grace);
  receiver.logger.info({ stats: receiver.stats }, 'webhook receiver stopped');
}

/** Counts, logs and answers one body's outcome: 2xx once stored (or kept), 400 for a malformed body. */
function answer(
  res: ServerResponse,
  outcome: EventOutcome,
  { stats, logger, remote }: { stats: WebhookStats; logger: Logger; remote: string },
): void {
  switch (outcome.kind) {
    case 'invalid':
      stats.invalid++;
      if (outcome.tooDeep) stats.tooDeep++;
      logger.warn({ remote, eventId: outcome.eventId, reason: outcome.reason }, 'invalid webhook body: quarantined');
      reply(res, 400, { error: outcome.reason });
      return;
    case 'quarantined':
      stats.quarantined++;
      logger.warn(
        { remote, eventId: outcome.eventId, reason: outcome.reason },
        'webhook event the database refused: quarantined',
      );
      reply(res, 202, { status: 'quarantined', reason: outcome.reason });
      return;
    case 'future':
      stats.future++;
      logger.warn(
        { remote, eventId: outcome.eventId, orderId: outcome.orderId, reason: outcome.reason },
        "webhook event dated ahead of the receiver's clock: quarantined, not applied",
      );
      reply(res, 202, { status: 'quarantined', reason: outcome.reason });
      return;
    case 'conflict':
      stats.conflicts++;
      logger.warn(
        { eventId: outcome.eventId },
        'webhook event repeats a stored eventId with another body: kept as a conflict',
      );
      reply(res, 200, { status: 'conflict', eventId: outcome.eventId });
      return;
    case 'duplicate':
      stats.duplicates++;
      logger.debug({ eventId: outcome.eventId }, 'duplicate webhook event acknowledged');
      reply(res, 200, { status: 'duplicate', eventId: outcome.eventId });
      return;
    case 'stored':
      stats.stored++;
      if (outcome.applied) stats.applied++;
      if (outcome.extraFields.length) {
        stats.drift++;
        logger.warn(
          { eventId: outcome.eventId, extraFields: outcome.extraFields },
          'webhook event with fields beyond the contract (schema drift): stored raw',
        );
      }
      logger.debug(
        { eventId: outcome.eventId, orderId: outcome.orderId, state: outcome.orderState, applied: outcome.applied },
        'webhook event stored',
      );
      reply(res, 200, { status: 'stored', eventId: outcome.eventId });
      return;
  }
}

function reply(res: ServerResponse, status: number, body: unknown, closeConnection = false): void {
  const text = JSON.stringify(body);
  res.writeHead(status, {
    'content-type': 'application/json',
    'content-length': Buffer.byteLength(text),
    ...(closeConnection ? { connection: 'close' } : {}),
  });
  res.end(text);
}

/**
 * Reads the body's bytes up to limit; null when it is larger (the rest is not read). Never decoded here: invalid UTF-8
 * must reach the quarantine as sent.
 */
async function readBody(req: IncomingMessage, limit: number): Promise<Buffer | null> {
  const declared = Number(req.headers['content-length']);
  if (Number.isFinite(declared) && declared > limit) {
    req.resume();
    return null;
  }
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    size += (chunk as Buffer).length;
    if (size > limit) {
      req.resume();
      return null;
    }
    chunks.push(chunk as Buffer);
  }
  return Buffer.concat(chunks);
}

function readTls(certFile: string, keyFile: string): { cert: Buffer; key: Buffer } {
  try {
    return { cert: readFileSync(certFile), key: readFileSync(keyFile) };
  } catch (err) {
    throw new WebhookServerError(
      `cannot read the webhook TLS files (webhooks.tlsCertFile / webhooks.tlsKeyFile): ${(err as Error).message}`,
      err,
    );
  }
}
