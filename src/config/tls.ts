/** Keys never travel in clear text: an API URL must be https:// and SMTP must use TLS, except to this machine itself
 * (the sandbox, the tests, the demo), or when the config's `allowInsecureHttp` says so.
 */

/** 127.0.0.0/8, ::1 and localhost: traffic that never leaves the machine. */
export function isLoopbackHost(hostname: string): boolean {
  const host = hostname.toLowerCase().replace(/^\[|\]$/g, '');
  if (host === 'localhost' || host.endsWith('.localhost') || host === '::1') return true;
  return /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(host);
}

/** The variable's problem when its URL is plain http:// to another machine; undefined when it is fine. */
export function plainHttpProblem(variable: string, url: string | undefined): string | undefined {
  if (!url) return undefined;
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return undefined; // said by the schema
  }
  if (parsed.protocol !== 'http:' || isLoopbackHost(parsed.hostname)) return undefined;
  return (
    `environment variable ${variable}: plain http:// to ${parsed.hostname} would send the API keys in clear text; ` +
    `use https://${parsed.host}${parsed.pathname === '/' ? '' : parsed.pathname} (or, for a test setup only, the ` +
    'config key allowInsecureHttp: true)'
  );
}

/**
 * What nodemailer is given besides the SMTP URL's own options (spread after them, so a URL parameter cannot turn it
 * off): smtp:// to another machine requires STARTTLS (`requireTLS`: the message is never sent in clear text when the
 * relay offers no TLS); smtps:// is TLS from the start; this machine, or `allowInsecureHttp`, needs nothing.
 */
export function smtpTlsOptions(smtpUrl: string, allowInsecure: boolean): { requireTLS?: true; ignoreTLS?: false } {
  const parsed = new URL(smtpUrl);
  if (allowInsecure || parsed.protocol !== 'smtp:' || isLoopbackHost(parsed.hostname)) return {};
  return { requireTLS: true, ignoreTLS: false };
}
