import { randomInt } from 'node:crypto';
import { promises as dnsPromises, type NaptrRecord, type SrvRecord } from 'node:dns';
import { isIP } from 'node:net';
import type { TrunkTransport } from '../domain/trunkSettings.js';

/** The DNS lookups of a trunk's domain (the system resolver by default; tests bring their own server). */
export interface TrunkDns {
  resolveNaptr(name: string): Promise<NaptrRecord[]>;
  resolveSrv(name: string): Promise<SrvRecord[]>;
}

/** The NAPTR service of each transport (RFC 3263 §4.1). */
const naptrServiceByTransport: Record<TrunkTransport, string> = {
  udp: 'SIP+D2U',
  tcp: 'SIP+D2T',
  tls: 'SIPS+D2T',
};

/** Servers of one trunk tried at most per call (the first answers nearly always). */
export const maxTrunkServers = 4;

export interface TrunkServer {
  /** The vetted address to send to. */
  address: string;
  port: number;
}

/** The SRV name of a SIP domain for a transport without NAPTR (RFC 3263 §4.1, RFC 5630 for sips). */
export function defaultSrvName(host: string, transport: TrunkTransport): string {
  if (transport === 'tls') return `_sips._tcp.${host}`;
  return transport === 'tcp' ? `_sip._tcp.${host}` : `_sip._udp.${host}`;
}

/**
 * The servers a trunk's calls go to, in the order to try them (RFC 3263 §4.2): a host written
 * with a port, or an IP literal, is that one server; a bare name is looked up as SRV for the
 * trunk's transport (at the SRV name the domain's NAPTR gives for that transport, if any) — by
 * priority, then weighted at random within a priority (RFC 2782) — and without SRV records (or a
 * resolver that fails) as the name's own address on the default port. The transport never comes
 * from DNS: it is the one the trunk was saved with, so DNS cannot turn a TLS trunk into a clear one. Every target is vetted by `vet` like the name itself;
 * targets that fail it are skipped, and if none is left the first refusal is thrown.
 */
export async function trunkServers(
  uri: { host: string; port: number | null; transport: TrunkTransport },
  options: { vet: (host: string) => Promise<string>; dns?: TrunkDns },
): Promise<TrunkServer[]> {
  const defaultPort = uri.transport === 'tls' ? 5061 : 5060;
  const bare = uri.host.replace(/^\[|\]$/g, '');
  if (uri.port !== null || isIP(bare) !== 0) {
    return [{ address: await options.vet(uri.host), port: uri.port ?? defaultPort }];
  }
  const dns = options.dns ?? dnsPromises;
  let records: SrvRecord[] = [];
  try {
    records = await dns.resolveSrv(await srvNameOf(bare, uri.transport, dns));
  } catch {
    records = []; // no SRV records (ENODATA, ENOTFOUND) or no answer: the name's own address
  }
  // A single target of "." says the service is deliberately not offered (RFC 2782).
  if (records.length === 1 && (records[0]!.name === '.' || records[0]!.name === '')) return [];
  const ordered = orderSrv(records.filter((r) => r.name !== '.' && r.name !== '' && r.port > 0));
  if (ordered.length === 0) return [{ address: await options.vet(uri.host), port: defaultPort }];
  const servers: TrunkServer[] = [];
  let firstRefusal: unknown = null;
  for (const record of ordered) {
    if (servers.length >= maxTrunkServers) break;
    try {
      servers.push({ address: await options.vet(record.name), port: record.port });
    } catch (error) {
      firstRefusal ??= error;
    }
  }
  if (servers.length === 0) throw firstRefusal;
  return servers;
}

/**
 * The SRV name to ask (RFC 3263 §4.1): the replacement of the domain's best NAPTR record for the
 * trunk's own transport (by order, then preference) when it has one, else `_sip._udp.` and the
 * like. A NAPTR record of another transport is never followed.
 */
async function srvNameOf(domain: string, transport: TrunkTransport, dns: TrunkDns): Promise<string> {
  let records: NaptrRecord[] = [];
  try {
    records = await dns.resolveNaptr(domain);
  } catch {
    records = [];
  }
  const wanted = naptrServiceByTransport[transport];
  const best = records
    .filter(
      (r) => r.flags.toLowerCase() === 's' && r.service.toUpperCase() === wanted && r.replacement !== '',
    )
    .sort((a, b) => a.order - b.order || a.preference - b.preference)[0];
  return best ? best.replacement : defaultSrvName(domain, transport);
}

/** RFC 2782 order: ascending priority; within one, drawn at random in proportion to weight. */
export function orderSrv(
  records: readonly SrvRecord[],
  draw: (below: number) => number = randomInt,
): SrvRecord[] {
  const byPriority = new Map<number, SrvRecord[]>();
  for (const record of records)
    byPriority.set(record.priority, [...(byPriority.get(record.priority) ?? []), record]);
  const ordered: SrvRecord[] = [];
  for (const priority of [...byPriority.keys()].sort((a, b) => a - b)) {
    // Zero weights first, as RFC 2782 asks, so they keep a small chance when others weigh more.
    const pool = [...byPriority.get(priority)!].sort((a, b) => a.weight - b.weight);
    while (pool.length > 0) {
      const total = pool.reduce((sum, r) => sum + r.weight, 0);
      let pick = 0;
      if (total > 0) {
        let point = draw(total + 1);
        pick = pool.findIndex((r) => {
          point -= r.weight;
          return point <= 0;
        });
        if (pick < 0) pick = pool.length - 1;
      }
      ordered.push(pool.splice(pick, 1)[0]!);
    }
  }
  return ordered;
}
