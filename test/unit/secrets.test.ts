/** Secrets in URLs and free text, the logger's scrubbing of every field, and TLS for remote APIs and SMTP. */
import { Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { maskUrl, scrubSecrets, urlSecrets } from '../../src/config/secrets.js';
import { isLoopbackHost, plainHttpProblem, smtpTlsOptions } from '../../src/config/tls.js';
import { createLogger } from '../../src/log/logger.js';

describe('secrets in URLs', () => {
  it('masks the user-info password and every credential query parameter, keeping the rest', () => {
    expect(
      maskUrl('postgres://u:p%40ss-1@db:5432/x?sslmode=require&password=qp-2&SSLPASSWORD=k-3&token=t-4&key=k-5'),
    ).toBe(
      'postgres://u:********@db:5432/x?sslmode=require&password=********&SSLPASSWORD=********&token=********&key=********',
    );
    expect(maskUrl('smtp://h:25?pass=s-6&secret=s-7')).toBe('smtp://h:25?pass=********&secret=********');
    expect(maskUrl('not a url')).toBe('********');
  });

  it('lists a URL’s secrets as written and decoded', () => {
    expect(urlSecrets('postgres://u:p%40ss-1@db/x?password=q%26p-2&sslmode=disable').sort()).toEqual(
      ['p%40ss-1', 'p@ss-1', 'q%26p-2', 'q&p-2'].sort(),
    );
    expect(urlSecrets('https://api.example.test/v3')).toEqual([]);
  });

  it('scrubs known values (the longest first) and any URL password or credential parameter in free text', () => {
    expect(scrubSecrets('key abcd-1234 and abcd-12345', ['abcd-1234', 'abcd-12345'])).toBe('key ******** and ********');
    expect(scrubSecrets('failed: smtp://a:unknown-pw@h:25 with password=zz9, then', [])).toBe(
      'failed: smtp://a:********@h:25 with password=********, then',
    );
    // short values would mask ordinary words: not taken
    expect(scrubSecrets('a abc', ['abc'])).toBe('a abc');
  });
});

describe('log lines', () => {
  function capture(secrets: string[]) {
    const lines: string[] = [];
    const destination = new Writable({
      write(chunk, _enc, cb) {
        lines.push(String(chunk));
        cb();
      },
    });
    return { log: createLogger({ secrets, destination }), lines };
  }

  it('scrub every string field at any depth: error, nested objects, arrays, errors, the message and bindings', () => {
    const { log, lines } = capture(['sk-secret-1234', 'db-pass-5678']);
    const err = Object.assign(new Error('auth failed for sk-secret-1234'), { query: 'select db-pass-5678' });
    log.child({ target: 'postgres://u:db-pass-5678@h/x' }).error(
      {
        err,
        error: 'could not use sk-secret-1234',
        detail: { request: { headers: [{ value: 'sk-secret-1234' }] }, cause: new Error('db-pass-5678 refused') },
      },
      'run failed: db-pass-5678',
    );
    const text = lines.join('');
    expect(text).not.toMatch(/sk-secret-1234|db-pass-5678/);
    const line = JSON.parse(lines[0]!) as Record<string, unknown>;
    expect(line).toMatchObject({
      msg: 'run failed: ********',
      target: 'postgres://u:********@h/x',
      error: 'could not use ********',
      detail: { request: { headers: [{ value: '********' }] }, cause: { type: 'Error', message: '******** refused' } },
      err: { message: 'auth failed for ********', query: 'select ********' },
    });
  });

  it('leaves out what is deeper than the bound instead of logging it unscrubbed', () => {
    const { log, lines } = capture(['sk-secret-1234']);
    let deep: Record<string, unknown> = { value: 'sk-secret-1234' };
    for (let i = 0; i < 20; i++) deep = { deeper: deep };
    log.info({ deep }, 'deep');
    expect(lines.join('')).not.toContain('sk-secret-1234');
    expect(lines.join('')).toContain('[left out: too deep or too many values to scrub]');
  });
});

describe('TLS for remote hosts', () => {
  it('takes 127.0.0.0/8, ::1 and localhost as loopback, nothing else', () => {
    for (const host of ['127.0.0.1', '127.8.9.10', '[::1]', '::1', 'localhost', 'LOCALHOST', 'api.localhost'])
      expect(isLoopbackHost(host)).toBe(true);
    for (const host of ['10.0.0.1', '128.0.0.1', 'example.test', 'localhost.example.test', '[::2]'])
      expect(isLoopbackHost(host)).toBe(false);
  });

  it('refuses plain http to a remote host, naming the variable; https and loopback pass', () => {
    expect(plainHttpProblem('BETA_EXCHANGE_API_URL', 'http://ex.example.test:8080/v3/exchange')).toBe(
      'environment variable BETA_EXCHANGE_API_URL: plain http:// to ex.example.test would send the API keys in clear ' +
        'text; use https://ex.example.test:8080/v3/exchange (or, for a test setup only, the config key ' +
        'allowInsecureHttp: true)',
    );
    expect(plainHttpProblem('PARTNER_API_URL', 'https://p.example.test')).toBeUndefined();
    expect(plainHttpProblem('PARTNER_API_URL', 'http://127.0.0.1:4010')).toBeUndefined();
    expect(plainHttpProblem('PARTNER_API_URL', undefined)).toBeUndefined();
  });

  it('requires STARTTLS for smtp:// to a remote host, not for smtps://, loopback or allowInsecureHttp', () => {
    expect(smtpTlsOptions('smtp://u:p@mail.example.test:587', false)).toEqual({ requireTLS: true, ignoreTLS: false });
    // a URL parameter cannot turn it off: these options are spread after the URL's own
    expect(smtpTlsOptions('smtp://mail.example.test:25?ignoreTLS=true', false)).toEqual({
      requireTLS: true,
      ignoreTLS: false,
    });
    expect(smtpTlsOptions('smtps://mail.example.test:465', false)).toEqual({});
    expect(smtpTlsOptions('smtp://127.0.0.1:2525', false)).toEqual({});
    expect(smtpTlsOptions('smtp://mail.example.test:25', true)).toEqual({});
  });
});
