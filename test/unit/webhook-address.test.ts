import type { IncomingMessage } from 'node:http';
import { describe, expect, it } from 'vitest';
import { clientAddress, normalizeIp } from '../../src/webhooks/server.js';

function req(peer: string, xff?: string | string[]): IncomingMessage {
  return {
    socket: { remoteAddress: peer },
    headers: xff === undefined ? {} : { 'x-forwarded-for': xff },
  } as unknown as IncomingMessage;
}

describe('webhook sender address', () => {
  it('reads IPv4-mapped IPv6 peers as IPv4', () => {
    expect(normalizeIp('::ffff:34.76.54.194')).toBe('34.76.54.194');
    expect(normalizeIp('::1')).toBe('::1');
  });

  it('ignores X-Forwarded-For unless a proxy is trusted', () => {
    expect(clientAddress(req('10.0.0.2', '34.76.54.194'), false)).toBe('10.0.0.2');
  });

  it('behind a trusted proxy takes the entry the proxy appended (right-most)', () => {
    expect(clientAddress(req('10.0.0.2', '34.76.54.194'), true)).toBe('34.76.54.194');
    expect(clientAddress(req('10.0.0.2', '34.76.54.194, 203.0.113.9'), true)).toBe('203.0.113.9');
    expect(clientAddress(req('10.0.0.2', ['1.1.1.1', '35.187.43.203']), true)).toBe('35.187.43.203');
    expect(clientAddress(req('::ffff:10.0.0.2'), true)).toBe('10.0.0.2');
  });
});
