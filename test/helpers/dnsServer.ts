import { createSocket } from 'node:dgram';
import { Resolver } from 'node:dns/promises';
import * as dnsPacket from 'dns-packet';
import type { HostnameLookup } from '../../src/net/hostGuard.js';

/** What the test DNS server holds: SRV and A records by name. */
export interface DnsZone {
  srv?: Record<string, { priority: number; weight: number; port: number; target: string }[]>;
  a?: Record<string, string[]>;
}

/**
 * A DNS server on 127.0.0.1 (UDP, a random port) answering SRV and A queries from `zone`, with
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
    const srv = zone.srv?.[question.name];
    const a = zone.a?.[question.name];
    const answers: dnsPacket.Answer[] = [];
    if (question.type === 'SRV' && srv)
      for (const record of srv) answers.push({ type: 'SRV', name: question.name, ttl: 60, data: record });
    if (question.type === 'A' && a)
      for (const address of a) answers.push({ type: 'A', name: question.name, ttl: 60, data: address });
    const known = srv !== undefined || a !== undefined;
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
    lookupSrv: (name: string) => resolver.resolveSrv(name),
    lookup,
    close: () => new Promise<void>((resolve) => socket.close(() => resolve())),
  };
}
