/** Which account a webhook belongs to, by the path it was POSTed to, and the URL each account registers with the
 * partner. The partner's event names no organisation: each organisation registers its own URL, so the path is the only
 * thing that tells one account's events from another's.
 */
import { hostname } from 'node:os';
import type { Config } from '../config/load.js';

/** The path of an account's webhooks: `/webhooks/<account>` (names are letters, digits, `.`, `_`, `-`: no escaping). */
export function accountPath(account: string): string {
  return `/webhooks/${account}`;
}

/**
 * The account a POST to `path` (without its query) is stored under, or null when no account owns the path. A
 * multi-account config routes only `/webhooks/<account>` (a trailing slash and percent-escapes tolerated); a
 * single-account config takes any path for its one account, as it always has.
 */
export function accountOfPath(path: string, accounts: readonly string[], multiAccount: boolean): string | null {
  if (!multiAccount) return accounts[0] ?? null;
  const m = /^\/webhooks\/([^/]+)\/?$/.exec(path);
  if (!m) return null;
  let name: string;
  try {
    name = decodeURIComponent(m[1]!);
  } catch {
    return null;
  }
  return accounts.includes(name) ? name : null;
}

/** The webhook settings a URL is made of (config.webhooks after its defaults). */
type UrlSettings = Pick<NonNullable<Config['webhooks']>, 'host' | 'port' | 'tlsCertFile' | 'tlsKeyFile'>;

/**
 * The receiver's base URL as the partner would reach it: https when both TLS files are configured, http otherwise;
 * the configured host, or this machine's name for a wildcard address (0.0.0.0, ::), which is no address to send to.
 */
export function webhookBaseUrl(settings: UrlSettings): string {
  const scheme = settings.tlsCertFile && settings.tlsKeyFile ? 'https' : 'http';
  const wildcard = settings.host === '0.0.0.0' || settings.host === '::';
  const host = wildcard ? hostname() : settings.host.includes(':') ? `[${settings.host}]` : settings.host;
  return `${scheme}://${host}:${settings.port}`;
}

/** Each account's webhook URL, in config order: the base URL and the account's path. */
export function accountWebhookUrls(
  settings: UrlSettings,
  accounts: readonly string[],
): Array<{ account: string; url: string }> {
  const base = webhookBaseUrl(settings);
  return accounts.map((account) => ({ account, url: `${base}${accountPath(account)}` }));
}
