import { hostname } from 'node:os';
import { describe, expect, it } from 'vitest';
import { accountOfPath, accountWebhookUrls, webhookBaseUrl } from '../../src/webhooks/routes.js';
import { accountWebhookUrl } from '../../sandbox/index.js';

const GROUP = ['acme', 'acme-eu', 'globex.2'];

describe('webhook routes: the account of a path', () => {
  it('a multi-account config routes /webhooks/<account> to that account and nothing else', () => {
    expect(accountOfPath('/webhooks/acme', GROUP, true)).toBe('acme');
    expect(accountOfPath('/webhooks/acme-eu', GROUP, true)).toBe('acme-eu');
    expect(accountOfPath('/webhooks/globex.2/', GROUP, true)).toBe('globex.2');
    // A percent-escaped unreserved character is the same path.
    expect(accountOfPath('/webhooks/acme%2Deu', GROUP, true)).toBe('acme-eu');
    for (const path of [
      '/',
      '/webhooks',
      '/webhooks/',
      '/webhooks/nosuch',
      '/webhooks/ACME',
      '/webhooks/acme/orders',
      '/acme',
      '/webhooks/acme%',
      '/webhooks//acme',
    ])
      expect(accountOfPath(path, GROUP, true), path).toBeNull();
  });

  it('a multi-account config of one account still wants its path', () => {
    expect(accountOfPath('/webhooks/solo', ['solo'], true)).toBe('solo');
    expect(accountOfPath('/', ['solo'], true)).toBeNull();
  });

  it('a single-account config takes any path for its one account, its own path included', () => {
    for (const path of ['/', '/webhooks', '/webhooks/orders', '/webhooks/default', '/anything/else'])
      expect(accountOfPath(path, ['default'], false), path).toBe('default');
  });
});

describe('webhook routes: the URL each account registers', () => {
  it('https when both TLS files are set, http otherwise; the configured host and port', () => {
    expect(webhookBaseUrl({ host: 'hooks.example.com', port: 8443, tlsCertFile: 'c.pem', tlsKeyFile: 'k.pem' })).toBe(
      'https://hooks.example.com:8443',
    );
    expect(webhookBaseUrl({ host: 'hooks.example.com', port: 8443, tlsCertFile: 'c.pem' })).toBe(
      'http://hooks.example.com:8443',
    );
    expect(webhookBaseUrl({ host: '10.0.0.7', port: 8080 })).toBe('http://10.0.0.7:8080');
    expect(webhookBaseUrl({ host: 'fd00::7', port: 8080 })).toBe('http://[fd00::7]:8080');
    // A wildcard address is no place to send to: this machine's name instead.
    expect(webhookBaseUrl({ host: '0.0.0.0', port: 8080 })).toBe(`http://${hostname()}:8080`);
  });

  it('one URL per account, in config order, the path the server routes', () => {
    const urls = accountWebhookUrls({ host: 'h', port: 9000 }, GROUP);
    expect(urls).toEqual([
      { account: 'acme', url: 'http://h:9000/webhooks/acme' },
      { account: 'acme-eu', url: 'http://h:9000/webhooks/acme-eu' },
      { account: 'globex.2', url: 'http://h:9000/webhooks/globex.2' },
    ]);
    for (const { account, url } of urls) expect(accountOfPath(new URL(url).pathname, GROUP, true)).toBe(account);
  });

  it("the sandbox delivers a group's events to the same paths", () => {
    for (const name of GROUP) {
      const url = accountWebhookUrl('http://127.0.0.1:5000/', name);
      expect(url).toBe(`http://127.0.0.1:5000/webhooks/${name}`);
      expect(accountOfPath(new URL(url).pathname, GROUP, true)).toBe(name);
    }
  });
});
