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
