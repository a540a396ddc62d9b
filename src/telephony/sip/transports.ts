import type { Logger } from '../../logger.js';
import { StreamTransport, type StreamTransportOptions } from './streamTransport.js';
import type { MessageTransport } from './transactionLayer.js';
import { isReliable, type NetworkTarget, UdpTransport, type UdpTransportOptions } from './transport.js';

export interface SipTransportsOptions extends UdpTransportOptions {
  readonly logger: Logger;
  /** Accept TCP on the UDP port's number (RFC 3261 §18); default true. Outbound TCP and TLS work either way. */
  readonly listenTcp?: boolean;
  readonly stream?: Omit<StreamTransportOptions, 'logger'>;
}

/** UDP, TCP and TLS behind one face: a message goes out over the transport its target names. */
export class SipTransports implements MessageTransport {
  private constructor(
    readonly udp: UdpTransport,
    readonly streams: StreamTransport,
    /** The TCP port accepting connections, or null when none does. */
    readonly tcpPort: number | null,
  ) {}

  static async open(options: SipTransportsOptions): Promise<SipTransports> {
    const udp = await UdpTransport.bind(options);
    const streams = new StreamTransport({ logger: options.logger, ...options.stream });
    let tcpPort: number | null = null;
    if (options.listenTcp !== false) {
      try {
        tcpPort = await streams.listen(options.bindAddress, udp.boundPort);
      } catch (error) {
        // Placing calls over TCP or TLS needs no listener: say so and go on without one.
        options.logger.warn(
          { port: udp.boundPort, err: error instanceof Error ? error.message : String(error) },
          'SIP TCP port unavailable; TCP requests reach us only on connections we open',
        );
      }
    }
    return new SipTransports(udp, streams, tcpPort);
  }

  send(data: Buffer, target: NetworkTarget): Promise<void> {
    return isReliable(target) ? this.streams.send(data, target) : this.udp.send(data, target);
  }

  onMessage(handler: (data: Buffer, source: NetworkTarget) => void): void {
    this.udp.onDatagram(handler);
    this.streams.onMessage(handler);
  }

  async close(): Promise<void> {
    await Promise.all([this.udp.close(), this.streams.close()]);
  }
}
