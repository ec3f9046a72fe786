import type { IncomingMessage } from 'node:http';
import { describe, expect, it } from 'vitest';
import { clientAddress, normalizeIp } from '../../src/webhooks/server.js';
import { ipSet, parseIpRange } from '../../src/util/ip-address.js';

function req(peer: string, xff?: string | string[]): IncomingMessage {
  return {
    socket: { remoteAddress: peer },
    headers: xff === undefined ? {} : { 'x-forwarded-for': xff },
  } as unknown as IncomingMessage;
}

const none = ipSet([]);
const proxy = ipSet(['10.0.0.2']);

describe('webhook sender address', () => {
  it('reads IPv4-mapped IPv6 peers as IPv4', () => {
    expect(normalizeIp('::ffff:34.76.54.194')).toBe('34.76.54.194');
    expect(normalizeIp('::FFFF:34.76.54.194')).toBe('34.76.54.194');
    expect(normalizeIp('::1')).toBe('::1');
  });

  it('ignores X-Forwarded-For when no proxy is trusted', () => {
    expect(clientAddress(req('10.0.0.2', '34.76.54.194'), none)).toBe('10.0.0.2');
  });

  it('ignores X-Forwarded-For from a peer that is not a trusted proxy: a direct client cannot claim a sender', () => {
    expect(clientAddress(req('203.0.113.7', '34.76.54.194'), proxy)).toBe('203.0.113.7');
    expect(clientAddress(req('::ffff:203.0.113.7', '34.76.54.194'), proxy)).toBe('203.0.113.7');
  });

  it('behind a trusted proxy takes the right-most entry, not a client-written one left of it', () => {
    expect(clientAddress(req('10.0.0.2', '34.76.54.194'), proxy)).toBe('34.76.54.194');
    expect(clientAddress(req('10.0.0.2', '34.76.54.194, 203.0.113.9'), proxy)).toBe('203.0.113.9');
    expect(clientAddress(req('10.0.0.2', ['1.1.1.1', '35.187.43.203']), proxy)).toBe('35.187.43.203');
    // The proxy reaching us over a dual-stack socket is still the trusted proxy.
    expect(clientAddress(req('::ffff:10.0.0.2', '34.76.54.194'), proxy)).toBe('34.76.54.194');
    // No header: the proxy itself is the peer.
    expect(clientAddress(req('::ffff:10.0.0.2'), proxy)).toBe('10.0.0.2');
  });

  it('walks a chain of trusted proxies (addresses and CIDR ranges) to the first address that is not one', () => {
    const chain = ipSet(['10.0.0.0/8', '192.168.1.1', 'fd00::/8']);
    expect(clientAddress(req('10.1.2.3', '34.76.54.194, 192.168.1.1, 10.9.9.9'), chain)).toBe('34.76.54.194');
    expect(clientAddress(req('10.1.2.3', '6.6.6.6, 34.76.54.194, 10.9.9.9'), chain)).toBe('34.76.54.194');
    expect(clientAddress(req('fd00::1', '34.76.54.194, fd12::7'), chain)).toBe('34.76.54.194');
    expect(clientAddress(req('10.1.2.3', '2001:db8::5, ::ffff:10.2.2.2'), chain)).toBe('2001:db8::5');
    // Every entry a proxy of ours: the left-most is as far as the chain tells.
    expect(clientAddress(req('10.1.2.3', '10.4.4.4, 10.5.5.5'), chain)).toBe('10.4.4.4');
  });

  it('reads ports and brackets proxies add, and refuses an entry that is no address where the sender should be', () => {
    expect(clientAddress(req('10.0.0.2', '34.76.54.194:4711'), proxy)).toBe('34.76.54.194');
    expect(clientAddress(req('10.0.0.2', '"[2001:db8::5]:443"'), proxy)).toBe('2001:db8::5');
    expect(clientAddress(req('10.0.0.2', '34.76.54.194, unknown'), proxy)).toBeNull();
    // Garbage left of the sender's entry is the sender's own writing: ignored.
    expect(clientAddress(req('10.0.0.2', 'unknown, 34.76.54.194'), proxy)).toBe('34.76.54.194');
  });
});

describe('IP addresses and ranges in the config', () => {
  it('matches IPv4, IPv6 and IPv4-mapped forms of one address, and CIDR ranges', () => {
    const set = ipSet(['34.76.54.194', '2001:db8::/32', '::ffff:10.0.0.0/104']);
    expect(set.has('34.76.54.194')).toBe(true);
    expect(set.has('::ffff:34.76.54.194')).toBe(true);
    expect(set.has('34.76.54.195')).toBe(false);
    expect(set.has('2001:DB8:0:0::17')).toBe(true);
    expect(set.has('2001:db9::1')).toBe(false);
    expect(set.has('10.200.0.1')).toBe(true);
    expect(set.has('11.0.0.1')).toBe(false);
    expect(set.has('not an address')).toBe(false);
  });

  it('says why an entry is no address or range', () => {
    expect(parseIpRange('10.0.0.0/33')).toBe('the prefix length after "/" must be 0 to 32 for an IPv4 range');
    expect(parseIpRange('proxy.internal')).toBe('must be an IP address or a CIDR range such as "10.0.0.0/8"');
    expect(parseIpRange('10.0.0.0/8/8')).toBe('must be an IP address or a CIDR range such as "10.0.0.0/8"');
    expect(parseIpRange('::ffff:10.0.0.0/64')).toBe(
      'an IPv4-mapped range needs a prefix of at least 96 (or write the IPv4 range)',
    );
    expect(parseIpRange('fd00::/8')).toEqual({ address: 'fd00::', family: 'ipv6', prefix: 8 });
  });
});
