import { isIPv6 } from 'node:net';

/**
 * What a per-address limit counts by: an IPv4 address whole (also when written IPv4-mapped,
 * `::ffff:a.b.c.d`), an IPv6 address by its /64. One subscriber usually holds a whole /64;
 * counting by the full address would give each of its 2^64 addresses a fresh failure limit.
 */
export function addressLimitKey(ip: string): string {
  const address = (ip.split('%', 1)[0] ?? '').toLowerCase();
  const mapped = /^::ffff:(\d{1,3}(?:\.\d{1,3}){3})$/.exec(address);
  if (mapped) return mapped[1] as string;
  if (!isIPv6(address)) return ip;
  const [head = '', tail] = address.split('::');
  const split = (part: string) => (part === '' ? [] : part.split(':'));
  const headGroups = split(head);
  const tailGroups = split(tail ?? '');
  // A dotted IPv4 tail stands for two groups.
  const tailLength = tailGroups.length + (tailGroups.at(-1)?.includes('.') ? 1 : 0);
  const groups =
    tail === undefined
      ? headGroups
      : [...headGroups, ...Array<string>(8 - headGroups.length - tailLength).fill('0'), ...tailGroups];
  return `${groups
    .slice(0, 4)
    .map((group) => Number.parseInt(group, 16).toString(16))
    .join(':')}::/64`;
}
