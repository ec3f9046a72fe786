/** What a secret looks like in the config's URLs, and masking it: the password of a URL's user-info and the values of
 * query parameters that carry credentials (`?password=`, `sslpassword=`, `token=`...), which libpq and nodemailer read.
 */

/** What a masked secret reads as, everywhere. */
export const MASK = '********';

/** Query parameters whose values are credentials (compared without case). */
export const SECRET_QUERY_PARAMS = [
  'password',
  'sslpassword',
  'pass',
  'passwd',
  'secret',
  'token',
  'key',
  'apikey',
  'api_key',
  'access_token',
] as const;

function isSecretParam(name: string): boolean {
  return (SECRET_QUERY_PARAMS as readonly string[]).includes(name.toLowerCase());
}

/** The URL with its user-info password and every credential query parameter's value masked; unparsable: all masked. */
export function maskUrl(url: string | undefined): string | undefined {
  if (!url) return url;
  try {
    const parsed = new URL(url);
    if (parsed.password) parsed.password = MASK;
    for (const name of [...parsed.searchParams.keys()]) if (isSecretParam(name)) parsed.searchParams.set(name, MASK);
    // URLSearchParams writes the mask percent-encoded; it reads better as it is.
    return parsed.toString().split(encodeURIComponent(MASK)).join(MASK);
  } catch {
    return MASK;
  }
}

/** The secret values a URL holds (its password, its credential parameters' values), as written and decoded. */
export function urlSecrets(url: string | undefined): string[] {
  if (!url) return [];
  const values: string[] = [];
  try {
    const parsed = new URL(url);
    if (parsed.password) values.push(parsed.password, safeDecode(parsed.password));
    for (const [name, value] of parsed.searchParams) if (isSecretParam(name) && value) values.push(value);
    // The raw text of each parameter too: what a message quoting the URL would show.
    for (const part of parsed.search.slice(1).split('&')) {
      const [name = '', raw = ''] = part.split('=');
      if (raw && isSecretParam(safeDecode(name))) values.push(raw);
    }
  } catch {
    /* validated already */
  }
  return [...new Set(values.filter((v) => v.length > 0))];
}

function safeDecode(text: string): string {
  try {
    return decodeURIComponent(text);
  } catch {
    return text;
  }
}

/** The parts of an account's config (`Config`) that hold secrets. */
export interface SecretHolder {
  readonly partner: { readonly apiUrl?: string; readonly publicKey?: string; readonly privateKey?: string };
  readonly exchange: { readonly apiUrl?: string; readonly token?: string };
  readonly database: { readonly url?: string };
  readonly smtpUrl?: string;
}

/** Every secret value of these accounts and of the shared URLs, for redaction of free text (errors, logs, mail). */
export function secretValues(accounts: SecretHolder | readonly SecretHolder[]): string[] {
  const list = Array.isArray(accounts) ? (accounts as readonly SecretHolder[]) : [accounts as SecretHolder];
  const values = list.flatMap((c) => [
    c.partner.publicKey,
    c.partner.privateKey,
    c.exchange.token,
    ...urlSecrets(c.partner.apiUrl),
    ...urlSecrets(c.exchange.apiUrl),
  ]);
  const shared = list[0];
  values.push(...urlSecrets(shared?.smtpUrl), ...urlSecrets(shared?.database.url));
  return [...new Set(values.filter((v): v is string => typeof v === 'string' && v.length > 0))];
}

/**
 * The secrets a run's outputs (errors, e-mails) are scrubbed of: its group's (`Group.secrets`, every account's keys)
 * when given, else the account's own, which are all of a group of one.
 */
export function runSecrets(holder: {
  readonly secrets?: readonly string[];
  readonly config: SecretHolder;
}): readonly string[] {
  return holder.secrets ?? secretValues(holder.config);
}

/**
 * URL passwords (`scheme://user:PASSWORD@`) and credential parameters (`password=VALUE`) in free text; a value ends at
 * white space or `&`, and punctuation that ends a sentence (`;,.)`) is left after it.
 */
const URL_PASSWORD = /(\b[a-z][a-z0-9+.-]*:\/\/[^\s:/@]*:)([^\s@/]+)(@)/gi;
const SECRET_PARAM = new RegExp(`((?:^|[?&;\\s])(?:${SECRET_QUERY_PARAMS.join('|')})=)([^&\\s'"]*[^&\\s'";,.)])`, 'gi');

/**
 * Free text with every known secret value masked (values of 4 characters or more: a shorter one would mask ordinary
 * words), and any URL password or credential parameter it quotes, known or not.
 */
export function scrubSecrets(text: string, secrets: readonly string[]): string {
  const byValue = [...secrets]
    .filter((s) => s.length >= 4)
    // The longest first: a secret that contains another is masked whole.
    .sort((a, b) => b.length - a.length)
    .reduce((t, s) => t.split(s).join(MASK), text);
  return byValue.replace(URL_PASSWORD, `$1${MASK}$3`).replace(SECRET_PARAM, `$1${MASK}`);
}

/**
 * An error as a run or batch row keeps it (shown by `runs`, `--json`, the logs and the e-mails): its secrets masked
 * (scrubSecrets), and bounded.
 */
export function storedError(text: string, secrets: readonly string[]): string {
  const masked = scrubSecrets(text, secrets);
  return masked.length > MAX_ERROR_CHARS
    ? `${masked.slice(0, MAX_ERROR_CHARS)}... (${masked.length - MAX_ERROR_CHARS} more characters)`
    : masked;
}

const MAX_ERROR_CHARS = 2_000;
