/** Who sent a webhook: the connection's peer, or, when that peer is one of our proxies, the address our proxies saw
 * (X-Forwarded-For), never an address a client wrote itself.
 */
import type { IncomingMessage } from 'node:http';
import { canonicalIp, type IpSet } from '../util/ip-address.js';

/** IPv4-mapped IPv6 (::ffff:1.2.3.4) is the IPv4 address; other text is only trimmed and lower-cased. */
export function normalizeIp(ip: string): string {
  return canonicalIp(ip)?.address ?? ip.trim().toLowerCase();
}

/**
 * One X-Forwarded-For entry as an address: proxies may append a port ("1.2.3.4:5678", "[2001:db8::1]:443") or quote
 * it; null when it is no address at all.
 */
function forwardedEntry(entry: string): string | null {
  let t = entry.trim().replace(/^"(.*)"$/, '$1');
  const bracketed = /^\[([^\]]+)\](?::\d+)?$/.exec(t);
  if (bracketed) t = bracketed[1]!;
  else if (/^[\d.]+:\d+$/.test(t)) t = t.slice(0, t.indexOf(':'));
  return canonicalIp(t)?.address ?? null;
}

/**
 * The sender's address. The socket peer, unless the peer is a trusted proxy: then X-Forwarded-For is read from the
 * right (each proxy appends the address it saw), skipping our own proxies, and the first address that is not one of
 * them is the sender; entries left of it were written by that sender and are not believed. An entry that is no
 * address where the sender's should be gives null (refused). A header of trusted proxies only gives the left-most.
 * A client connecting directly gets its own address, whatever header it writes.
 */
export function clientAddress(req: IncomingMessage, trusted: IpSet): string | null {
  const peerText = req.socket.remoteAddress;
  if (!peerText) return null;
  const peer = normalizeIp(peerText);
  if (!trusted.has(peer)) return peer;
  const header = req.headers['x-forwarded-for'];
  const value = Array.isArray(header) ? header.join(',') : (header ?? '');
  const entries = value
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
  let sender = peer;
  for (let i = entries.length - 1; i >= 0; i--) {
    const address = forwardedEntry(entries[i]!);
    if (address === null) return null;
    sender = address;
    if (!trusted.has(address)) return address;
  }
  return sender;
}
