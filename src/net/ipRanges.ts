/**
 * Classification of IP addresses into the ranges webhooks and SIP trunks must not reach by default
 * (IANA IPv4 and IPv6 special-purpose registries). Pure functions, no I/O.
 */
import { isIPv4, isIPv6 } from 'node:net';

export type RefusedRangeKind =
  | 'private'
  | 'loopback'
  | 'link-local'
  | 'unique-local'
  | 'shared (CGNAT)'
  | 'multicast'
  | 'unspecified'
  | 'broadcast'
  | 'documentation'
  | 'benchmarking'
  | 'reserved';

interface Ipv4Range {
  start: number;
  size: number;
  kind: RefusedRangeKind;
}

function ipv4Number(octets: readonly number[]): number {
  return octets.reduce((value, octet) => value * 256 + octet, 0);
}

function ipv4Range(cidr: string, kind: RefusedRangeKind): Ipv4Range {
  const [address = '', prefixLength = ''] = cidr.split('/');
  return { start: ipv4Number(address.split('.').map(Number)), size: 2 ** (32 - Number(prefixLength)), kind };
}

/** Most specific first, so 255.255.255.255 reads as broadcast, not reserved. */
const refusedIpv4Ranges: readonly Ipv4Range[] = [
  ipv4Range('255.255.255.255/32', 'broadcast'),
  ipv4Range('0.0.0.0/32', 'unspecified'),
  ipv4Range('0.0.0.0/8', 'reserved'),
  ipv4Range('10.0.0.0/8', 'private'),
  ipv4Range('100.64.0.0/10', 'shared (CGNAT)'),
  ipv4Range('127.0.0.0/8', 'loopback'),
  ipv4Range('169.254.0.0/16', 'link-local'),
  ipv4Range('172.16.0.0/12', 'private'),
  ipv4Range('192.0.0.0/24', 'reserved'),
  ipv4Range('192.0.2.0/24', 'documentation'),
  ipv4Range('192.88.99.0/24', 'reserved'),
  ipv4Range('192.168.0.0/16', 'private'),
  ipv4Range('198.18.0.0/15', 'benchmarking'),
  ipv4Range('198.51.100.0/24', 'documentation'),
  ipv4Range('203.0.113.0/24', 'documentation'),
  ipv4Range('224.0.0.0/4', 'multicast'),
  ipv4Range('240.0.0.0/4', 'reserved'),
];

function classifyIpv4Octets(octets: readonly number[]): RefusedRangeKind | null {
  const value = ipv4Number(octets);
  return (
    refusedIpv4Ranges.find((range) => value >= range.start && value < range.start + range.size)?.kind ?? null
  );
}

/** The eight 16-bit groups of an IPv6 address in Node's textual forms (zone id dropped). */
function ipv6Groups(address: string): number[] {
  let text = address.split('%')[0] ?? '';
  const embeddedIpv4 = /(\d+)\.(\d+)\.(\d+)\.(\d+)$/.exec(text);
  if (embeddedIpv4) {
    const [a, b, c, d] = embeddedIpv4.slice(1).map(Number) as [number, number, number, number];
    text = `${text.slice(0, embeddedIpv4.index)}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
  }
  const [head = '', tail] = text.split('::');
  const headGroups = head === '' ? [] : head.split(':');
  const tailGroups = tail === undefined || tail === '' ? [] : tail.split(':');
  const zeroGroups =
    tail === undefined ? [] : new Array<string>(8 - headGroups.length - tailGroups.length).fill('0');
  return [...headGroups, ...zeroGroups, ...tailGroups].map((group) => Number.parseInt(group, 16));
}

function groupsMatch(groups: readonly number[], prefix: readonly number[]): boolean {
  return prefix.every((value, index) => groups[index] === value);
}

function embeddedIpv4Octets(highGroup: number, lowGroup: number): number[] {
  return [highGroup >> 8, highGroup & 0xff, lowGroup >> 8, lowGroup & 0xff];
}

function classifyIpv6Groups(groups: readonly number[]): RefusedRangeKind | null {
  const [g0 = 0, g1 = 0, g2 = 0, , , g5 = 0, g6 = 0, g7 = 0] = groups;
  const firstFiveZero = groupsMatch(groups, [0, 0, 0, 0, 0]);
  if (firstFiveZero && g5 === 0 && g6 === 0) {
    if (g7 === 0) return 'unspecified';
    if (g7 === 1) return 'loopback';
  }
  // IPv4-mapped ::ffff:a.b.c.d, IPv4-translated ::ffff:0:a.b.c.d, IPv4-compatible ::a.b.c.d
  // (deprecated) and NAT64 64:ff9b::a.b.c.d reach an IPv4 address: judge them by it.
  const mapped = firstFiveZero && g5 === 0xffff;
  const translated = groupsMatch(groups, [0, 0, 0, 0, 0xffff, 0]);
  const compatible = firstFiveZero && g5 === 0;
  const nat64 = groupsMatch(groups, [0x64, 0xff9b, 0, 0, 0, 0]);
  if (mapped || translated || compatible || nat64) {
    // A public IPv4 address behind the deprecated compatible form is still not a real destination.
    return classifyIpv4Octets(embeddedIpv4Octets(g6, g7)) ?? (compatible ? 'reserved' : null);
  }
  // 6to4 2002:AABB:CCDD::/48 carries IPv4 AA.BB.CC.DD.
  if (g0 === 0x2002) return classifyIpv4Octets(embeddedIpv4Octets(g1, g2)) ?? 'reserved';
  if (g0 >= 0xff00) return 'multicast';
  if ((g0 & 0xffc0) === 0xfe80) return 'link-local';
  if ((g0 & 0xfe00) === 0xfc00) return 'unique-local';
  if (g0 === 0x2001 && g1 === 0x0db8) return 'documentation';
  if ((g0 & 0xfff0) === 0x3ff0) return 'documentation'; // 3fff::/20
  if (g0 === 0x2001 && g1 === 0x0002 && g2 === 0) return 'benchmarking'; // 2001:2::/48
  if (g0 === 0x2001 && g1 < 0x0200) return 'reserved'; // 2001::/23 IETF protocol assignments, Teredo
  // Global unicast is 2000::/3; everything else (100::/64 discard, fec0::/10 site-local, …) is not routable.
  if ((g0 & 0xe000) !== 0x2000) return 'reserved';
  return null;
}

/** An IPv6 literal as URLs write it (`[::1]`) without its brackets; anything else as it is. */
export function unbracketed(host: string): string {
  return host.startsWith('[') && host.endsWith(']') ? host.slice(1, -1) : host;
}

/**
 * The refused range an IP address (in Node's or the URL parser's canonical text form) falls in,
 * or null when it is a public unicast address. Throws a TypeError for text that is not an IP address.
 */
export function refusedRangeOf(address: string): RefusedRangeKind | null {
  const bare = unbracketed(address);
  if (isIPv4(bare)) return classifyIpv4Octets(bare.split('.').map(Number));
  if (isIPv6(bare)) return classifyIpv6Groups(ipv6Groups(bare));
  throw new TypeError(`not an IP address: ${address}`);
}

/** True for an IPv4 or IPv6 literal (IPv6 with or without brackets). */
export function isIpLiteral(host: string): boolean {
  const bare = unbracketed(host);
  return isIPv4(bare) || isIPv6(bare);
}
