/** IP addresses and CIDR ranges as configs write them, and a set of them matched by node:net's BlockList (no
 * hand-written prefix arithmetic).
 */
import { BlockList, isIP } from 'node:net';

export type IpFamily = 'ipv4' | 'ipv6';

/**
 * An address in the form it is compared in: trimmed, lower-case, an IPv4-mapped IPv6 address (::ffff:10.0.0.1) as
 * its IPv4 address (a dual-stack socket reports IPv4 peers that way); null when the text is no IP address.
 */
export function canonicalIp(text: string): { address: string; family: IpFamily } | null {
  let t = text.trim().toLowerCase();
  if (t.startsWith('::ffff:') && isIP(t.slice(7)) === 4) t = t.slice(7);
  const v = isIP(t);
  return v === 4 ? { address: t, family: 'ipv4' } : v === 6 ? { address: t, family: 'ipv6' } : null;
}

interface Range {
  address: string;
  family: IpFamily;
  prefix: number;
}

/** An address ("10.0.0.5", "2001:db8::1") or a CIDR range ("10.0.0.0/8", "2001:db8::/32"), or why it is neither. */
export function parseIpRange(text: string): Range | string {
  const [addr = '', prefixText, ...rest] = text.split('/');
  const ip = canonicalIp(addr);
  if (!ip || rest.length) return 'must be an IP address or a CIDR range such as "10.0.0.0/8"';
  const mapped = ip.family === 'ipv4' && addr.includes(':');
  const max = ip.family === 'ipv4' && !mapped ? 32 : 128;
  if (prefixText === undefined) return { ...ip, prefix: ip.family === 'ipv4' ? 32 : 128 };
  if (!/^\d{1,3}$/.test(prefixText) || Number(prefixText) > max)
    return `the prefix length after "/" must be 0 to ${max} for an ${max === 32 ? 'IPv4' : 'IPv6'} range`;
  const prefix = Number(prefixText);
  if (!mapped) return { ...ip, prefix };
  // ::ffff:10.0.0.0/104 is the IPv4 range 10.0.0.0/8 (the address was read as IPv4 above).
  if (prefix < 96) return 'an IPv4-mapped range needs a prefix of at least 96 (or write the IPv4 range)';
  return { ...ip, prefix: prefix - 96 };
}

/** A set of addresses and ranges; `has` answers for one address (false for text that is no address). */
export interface IpSet {
  has(address: string): boolean;
}

/** The set of `entries` (each valid for parseIpRange: the config schema checks them first). */
export function ipSet(entries: readonly string[]): IpSet {
  const list = new BlockList();
  for (const entry of entries) {
    const r = parseIpRange(entry);
    if (typeof r === 'string') throw new Error(`${JSON.stringify(entry)}: ${r}`);
    list.addSubnet(r.address, r.prefix, r.family);
  }
  return {
    has(address: string): boolean {
      const ip = canonicalIp(address);
      return ip !== null && list.check(ip.address, ip.family);
    },
  };
}
