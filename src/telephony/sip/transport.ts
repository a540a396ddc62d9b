import { createSocket, type Socket } from 'node:dgram';
import { isIPv6 } from 'node:net';
import { networkInterfaces } from 'node:os';

/** The SIP transports (RFC 3261 §18): datagrams, or a stream in clear or under TLS. */
export type SipTransportName = 'udp' | 'tcp' | 'tls';

/** How a TLS peer is checked: its certificate must name `serverName` and chain to a trusted CA. */
export interface TlsPeerOptions {
  /** The name the certificate must carry (the trunk's host as configured; also sent as SNI). */
  readonly serverName: string;
  /** Extra CA certificates (PEM) trusted for this peer besides the system's; for a private PBX. */
  readonly caPem?: string;
  /** False accepts any certificate (an explicit per-trunk choice); default true. */
  readonly verify?: boolean;
}

export interface NetworkTarget {
  readonly host: string;
  readonly port: number;
  /** Default `udp`. */
  readonly transport?: SipTransportName;
  /** For `tls`: how the peer's certificate is checked. */
  readonly tls?: TlsPeerOptions;
}

/** Whether messages to this target travel over a stream (no retransmissions, RFC 3261 §17). */
export function isReliable(target: NetworkTarget): boolean {
  return target.transport === 'tcp' || target.transport === 'tls';
}

export interface UdpTransportOptions {
  /** Address to bind, e.g. `127.0.0.1` or `0.0.0.0`. */
  readonly bindAddress: string;
  /** Port to bind; 0 lets the system choose. */
  readonly port: number;
  /** Address written into Via and Contact; defaults to the bound address (or a local one for 0.0.0.0). */
  readonly publicAddress?: string;
  /** Port written into Via and Contact; defaults to the bound port. */
  readonly publicPort?: number;
  /** Datagrams above this size are dropped on receipt and refused on send. Default 65,507. */
  readonly maxDatagramBytes?: number;
}

export type DatagramHandler = (data: Buffer, source: NetworkTarget) => void;

export const maxUdpPayloadBytes = 65_507;

/** Strips IPv6 brackets: dgram wants `::1`, SIP writes `[::1]`. */
export function socketHost(host: string): string {
  return host.startsWith('[') && host.endsWith(']') ? host.slice(1, -1) : host;
}

/** Adds IPv6 brackets for use in a URI or Via. */
export function uriHost(address: string): string {
  return isIPv6(address) ? `[${address}]` : address;
}

function firstExternalIPv4(): string {
  for (const addresses of Object.values(networkInterfaces())) {
    for (const address of addresses ?? []) {
      if (address.family === 'IPv4' && !address.internal) return address.address;
    }
  }
  return '127.0.0.1';
}

/** One UDP socket for SIP. */
export class UdpTransport {
  readonly advertisedHost: string;
  readonly advertisedPort: number;
  readonly boundPort: number;
  readonly maxDatagramBytes: number;
  private readonly socket: Socket;
  private handler: DatagramHandler | null = null;
  private closed = false;

  private constructor(socket: Socket, options: UdpTransportOptions) {
    this.socket = socket;
    this.boundPort = socket.address().port;
    const unspecified = options.bindAddress === '0.0.0.0' || options.bindAddress === '::';
    const advertised = options.publicAddress ?? (unspecified ? firstExternalIPv4() : options.bindAddress);
    this.advertisedHost = uriHost(socketHost(advertised));
    this.advertisedPort = options.publicPort ?? this.boundPort;
    this.maxDatagramBytes = Math.min(options.maxDatagramBytes ?? maxUdpPayloadBytes, maxUdpPayloadBytes);
    socket.on('message', (data, remote) => {
      if (data.length > this.maxDatagramBytes) return;
      this.handler?.(data, { host: remote.address, port: remote.port });
    });
  }

  static bind(options: UdpTransportOptions): Promise<UdpTransport> {
    const socket = createSocket({ type: isIPv6(options.bindAddress) ? 'udp6' : 'udp4' });
    return new Promise((resolve, reject) => {
      const onError = (error: Error) => {
        socket.close();
        reject(error);
      };
      socket.once('error', onError);
      socket.bind(options.port, options.bindAddress, () => {
        socket.off('error', onError);
        // Errors after bind (ICMP unreachable on some systems) must not crash the process.
        socket.on('error', () => {});
        resolve(new UdpTransport(socket, options));
      });
    });
  }

  onDatagram(handler: DatagramHandler): void {
    this.handler = handler;
  }

  /** Sends one datagram; rejects when it is too large, the socket is closed or the send fails. */
  send(data: Buffer, target: NetworkTarget): Promise<void> {
    if (this.closed) return Promise.reject(new Error('SIP transport is closed'));
    if (data.length > this.maxDatagramBytes) {
      return Promise.reject(
        new Error(`SIP datagram of ${data.length} bytes exceeds ${this.maxDatagramBytes}`),
      );
    }
    return new Promise((resolve, reject) => {
      this.socket.send(data, target.port, socketHost(target.host), (error) =>
        error ? reject(error) : resolve(),
      );
    });
  }

  close(): Promise<void> {
    if (this.closed) return Promise.resolve();
    this.closed = true;
    this.handler = null;
    return new Promise((resolve) => this.socket.close(() => resolve()));
  }
}
