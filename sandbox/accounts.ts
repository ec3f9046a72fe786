/** Simulator: several accounts behind one server, each with its own world and its own keys. */
import { buildAccountSandbox, resolveOptions, stripUndefined, type AccountSandbox } from './build.js';
import { EXCHANGE_PREFIX } from './exchange-routes.js';
import { header, json, type Req } from './http.js';
import { DEFAULT_OPTIONS, type SandboxOptions } from './options.js';
import { closeServer, createSandboxServer, listen, type ServerHandlers } from './server.js';
import type { Sandbox } from './handle.js';

/** The options that identify an account: derived from its name unless the account gives them. */
type Credentials = 'partnerPublicKey' | 'partnerPrivateKey' | 'exchangeToken';

/** One account: its name, and the options it sets differently from the shared ones. */
export type SandboxAccount = { name: string } & Partial<SandboxOptions>;

export interface SandboxAccountsOptions extends Partial<Omit<SandboxOptions, Credentials>> {
  /** The accounts, in order: the first one answers requests that carry no account's key. */
  accounts: SandboxAccount[];
  port?: number;
  host?: string;
}

export interface SandboxAccounts {
  /** http://HOST:PORT, the same for every account. */
  url: string;
  /** The accounts' names, in the order given. */
  names: string[];
  /** Each account's Sandbox handle (same url, its own env, data, options and hooks). */
  accounts: Record<string, Sandbox>;
  /** Every account's variables under its prefix (envPrefix): ACME_EU_PARTNER_API_URL, ... */
  env: Record<string, string>;
  /** Stops every account's webhooks and live timer and closes the server (an account's close() does the same). */
  close(): Promise<void>;
}

/**
 * The prefix of an account's environment variables: its name in capitals, every character other
 * than A-Z and 0-9 replaced by `_`, then `_` ("acme-eu" -> "ACME_EU_").
 */
export function envPrefix(name: string): string {
  return `${name.toUpperCase().replace(/[^A-Z0-9]/g, '_')}_`;
}

/**
 * Where an account's webhooks go when the accounts share one receiver: its path under the receiver's base URL,
 * `<base>/webhooks/<name>`, the URL each organisation registers with the partner (ramp-recon's docs/apis.md "Partner
 * webhooks"). The event names no organisation: the path is what tells the receiver whose it is.
 */
export function accountWebhookUrl(base: string, name: string): string {
  return `${base.replace(/\/+$/, '')}/webhooks/${encodeURIComponent(name)}`;
}

/** What is wrong with a list of account names (none, an empty name, two names on one prefix); [] when fine. */
export function accountNameProblems(names: readonly string[]): string[] {
  if (names.length === 0) return ['no account names'];
  const problems: string[] = [];
  const byPrefix = new Map<string, string>();
  for (const name of names) {
    if (name.trim() === '') {
      problems.push('an account name is empty');
      continue;
    }
    // the rule of the app's config (accounts[].name), so a printed config is one the app accepts
    if (!/^[A-Za-z0-9][A-Za-z0-9._-]{0,62}$/.test(name))
      problems.push(
        `account name ${JSON.stringify(name)}: must be 1-63 letters, digits, ".", "_" or "-", starting with a letter or digit`,
      );
    const prefix = envPrefix(name);
    const other = byPrefix.get(prefix);
    if (other === undefined) byPrefix.set(prefix, name);
    else if (other === name) problems.push(`account name ${JSON.stringify(name)} is given twice`);
    else
      problems.push(
        `account names ${JSON.stringify(other)} and ${JSON.stringify(name)} map to the same variable prefix ${prefix}`,
      );
  }
  return problems;
}

/**
 * Serves several accounts on one port. Each account has its own world, built from the shared
 * options overridden by its own, with the seed `seed + i` (i = its index) unless it gives one, and
 * keys derived from its name unless it gives them: `pk_<name>_public`, `sk_<name>_private`,
 * `xt_<name>_token` (every character of the name other than a letter or digit replaced by `_`).
 *
 * An API request goes to the account whose key it carries (partner: X-Public-API-Key; exchange:
 * X-API-Token), with that account's faults, hooks and live catch-up; a request carrying no
 * account's key goes to the first account, which refuses it as a single sandbox refuses a wrong
 * key. A shared `webhookUrl` is the receiver's base URL: each account's events go to its own path under it
 * (accountWebhookUrl); an account's own `webhookUrl` is used as given. Control routes take `?account=<name>` (default: the first account); `GET
 * /_sandbox/accounts` lists the names.
 */
export async function startSandboxAccounts(options: SandboxAccountsOptions): Promise<SandboxAccounts> {
  const { accounts: list, port = 0, host = '127.0.0.1', ...sharedGiven } = options;
  const names = list.map((a) => a.name);
  const problems = accountNameProblems(names);
  if (problems.length) throw new Error(`sandbox accounts: ${problems.join('; ')}`);
  const shared = stripUndefined(sharedGiven as Partial<SandboxOptions>);
  const seed = shared.seed ?? DEFAULT_OPTIONS.seed;
  const optionsOf = list.map(({ name, ...own }, i): SandboxOptions => {
    const id = name.replace(/[^A-Za-z0-9]/g, '_');
    try {
      return resolveOptions({
        ...shared,
        seed: seed + i,
        partnerPublicKey: `pk_${id}_public`,
        partnerPrivateKey: `sk_${id}_private`,
        exchangeToken: `xt_${id}_token`,
        ...(shared.webhookUrl ? { webhookUrl: accountWebhookUrl(shared.webhookUrl, name) } : {}),
        ...stripUndefined(own),
      });
    } catch (err) {
      throw new Error(`sandbox account ${JSON.stringify(name)}: ${(err as Error).message}`, { cause: err });
    }
  });
  // Requests are routed by key: two accounts on one key could not both be reached.
  const byPublicKey = new Map<string, AccountSandbox>();
  const byToken = new Map<string, AccountSandbox>();
  for (const [key, opts] of [
    ['partner public key', 'partnerPublicKey'],
    ['exchange token', 'exchangeToken'],
  ] as const) {
    const seen = new Map<string, string>();
    optionsOf.forEach((o, i) => {
      const other = seen.get(o[opts]);
      if (other !== undefined)
        throw new Error(
          `sandbox accounts: ${JSON.stringify(other)} and ${JSON.stringify(names[i])} have the same ${key} ${JSON.stringify(o[opts])}`,
        );
      seen.set(o[opts], names[i]!);
    });
  }

  const built = optionsOf.map((o) => buildAccountSandbox(o));
  const byName = new Map<string, AccountSandbox>();
  built.forEach((a, i) => {
    byName.set(names[i]!, a);
    byPublicKey.set(a.opts.partnerPublicKey, a);
    byToken.set(a.opts.exchangeToken, a);
  });
  const first = built[0]!;
  /** The account an API request addresses by its key; the first account (which refuses it) otherwise. */
  const accountOf = (req: Req): ServerHandlers => {
    const exchange = req.fullPath.startsWith(`${EXCHANGE_PREFIX}/`);
    const key = header(req, exchange ? 'x-api-token' : 'x-public-api-key');
    const account = key === undefined ? undefined : (exchange ? byToken : byPublicKey).get(key);
    return (account ?? first).handlers;
  };

  const server = createSandboxServer({
    partner: (req) => accountOf(req).partner(req),
    exchange: (req) => accountOf(req).exchange(req),
    control: (req) => {
      if (req.method === 'GET' && req.path === '/accounts') return json(200, names);
      const name = req.query.get('account');
      const account = name === null ? first : byName.get(name);
      if (!account)
        return json(404, { error: `no sandbox account ${JSON.stringify(name)} (accounts: ${names.join(', ')})` });
      return account.handlers.control(req);
    },
    beforeRequest: (req) => accountOf(req).beforeRequest(req),
    faults: (req) => accountOf(req).faults(req),
    faultState: (req) => accountOf(req).faultState(req),
    onRequest: (req) => accountOf(req).onRequest?.(req),
  });
  const url = await listen(server, port, host);
  let closing: Promise<void> | undefined;
  const close = (): Promise<void> =>
    (closing ??= (async () => {
      for (const a of built) await a.stop();
      await closeServer(server);
    })());
  const handles = built.map((a) => a.start(url, close));
  // fromEntries: a name such as "__proto__" stays an own key.
  const accounts: Record<string, Sandbox> = Object.fromEntries(handles.map((s, i) => [names[i]!, s]));
  const env: Record<string, string> = Object.fromEntries(
    handles.flatMap((s, i) => Object.entries(s.env).map(([k, v]) => [`${envPrefix(names[i]!)}${k}`, v])),
  );
  return { url, names, accounts, env, close };
}
