import { createSocket, type Socket } from 'node:dgram';

/** A UDP socket bound exclusively to `address`:`port` (udp6 for an IPv6 address); closed if that fails. */
export async function bindUdpSocket(address: string, port: number): Promise<Socket> {
  const socket = createSocket({ type: address.includes(':') ? 'udp6' : 'udp4' });
  try {
    await new Promise<void>((resolve, reject) => {
      socket.once('error', reject);
      socket.bind({ port, address, exclusive: true }, () => {
        socket.off('error', reject);
        resolve();
      });
    });
    return socket;
  } catch (error) {
    socket.close();
    throw error;
  }
}

/** Whether two socket addresses are the same host (an IPv4-mapped IPv6 address equals its IPv4). */
export function sameAddress(a: string, b: string): boolean {
  const strip = (value: string): string => (value.startsWith('::ffff:') ? value.slice(7) : value);
  return strip(a) === strip(b);
}
