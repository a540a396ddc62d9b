import { createSocket } from 'node:dgram';
import { Resolver } from 'node:dns/promises';
import * as dnsPacket from 'dns-packet';
import type { HostnameLookup } from '../../src/net/hostGuard.js';

/** What the test DNS server holds: NAPTR, SRV and A records by name. */
export interface DnsZone {
  naptr?: Record<
    string,
    {
      order: number;
      preference: number;
      flags: string;
      services: string;
      regexp: string;
      replacement: string;
    }[]
  >;
  srv?: Record<string, { priority: number; weight: number; port: number; target: string }[]>;
  a?: Record<string, string[]>;
}

/**
 * A DNS server on 127.0.0.1 (UDP, a random port) answering NAPTR, SRV and A queries from `zone`, with
 * NOERROR and no answers for a known name of another type and NXDOMAIN for anything else; and a
 * Node resolver pointed at it, so the code under test does real DNS over the wire.
 */
export async function startDnsServer(zone: DnsZone) {
  const socket = createSocket('udp4');
  const queries: string[] = [];
  socket.on('message', (message, remote) => {
    let query: dnsPacket.Packet;
    try {
      query = dnsPacket.decode(message);
    } catch {
      return;
    }
    const question = query.questions?.[0];
    if (!question) return;
    queries.push(`${question.type} ${question.name}`);
    const naptr = zone.naptr?.[question.name];
    const srv = zone.srv?.[question.name];
    const a = zone.a?.[question.name];
    const answers: dnsPacket.Answer[] = [];
    if (question.type === 'SRV' && srv)
      for (const record of srv) answers.push({ type: 'SRV', name: question.name, ttl: 60, data: record });
    if (question.type === 'A' && a)
      for (const address of a) answers.push({ type: 'A', name: question.name, ttl: 60, data: address });
    if (question.type === 'NAPTR' && naptr)
      for (const record of naptr) answers.push({ type: 'NAPTR', name: question.name, ttl: 60, data: record });
    const known = naptr !== undefined || srv !== undefined || a !== undefined;
    const response = dnsPacket.encode({
      type: 'response',
      id: query.id ?? 0,
      // Authoritative, recursion desired and available; rcode 3 (NXDOMAIN) for names not held.
      flags:
        dnsPacket.AUTHORITATIVE_ANSWER |
        dnsPacket.RECURSION_DESIRED |
        dnsPacket.RECURSION_AVAILABLE |
        (known ? 0 : 3),
      questions: [question],
      answers,
    });
    socket.send(response, remote.port, remote.address);
  });
  await new Promise<void>((resolve) => socket.bind(0, '127.0.0.1', resolve));
  const resolver = new Resolver({ timeout: 1_000, tries: 1 });
  resolver.setServers([`127.0.0.1:${socket.address().port}`]);
  const lookup: HostnameLookup = async (name) =>
    (await resolver.resolve4(name)).map((address) => ({ address, family: 4 }));
  return {
    queries,
    /** NAPTR and SRV lookups through this server, as the call route takes them. */
    dns: {
      resolveNaptr: (name: string) => resolver.resolveNaptr(name),
      resolveSrv: (name: string) => resolver.resolveSrv(name),
    },
    lookup,
    close: () => new Promise<void>((resolve) => socket.close(() => resolve())),
  };
}
