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

/** How many ports the system may pick before one is free for both UDP and TCP. */
const ephemeralPortPicks = 5;

/** UDP, TCP and TLS behind one face: a message goes out over the transport its target names. */
export class SipTransports implements MessageTransport {
  private constructor(
    readonly udp: UdpTransport,
    readonly streams: StreamTransport,
    /** The TCP port accepting connections, or null when none does. */
    readonly tcpPort: number | null,
  ) {}

  static async open(options: SipTransportsOptions): Promise<SipTransports> {
    const listenTcp = options.listenTcp !== false;
    // With port 0 the system picks the UDP port, and the same number may already be taken for TCP
    // (by any connection's ephemeral port): a few more picks find a number free for both.
    const picks = options.port === 0 && listenTcp ? ephemeralPortPicks : 1;
    for (let pick = 1; ; pick++) {
      const udp = await UdpTransport.bind(options);
      const streams = new StreamTransport({ logger: options.logger, ...options.stream });
      if (!listenTcp) return new SipTransports(udp, streams, null);
      try {
        return new SipTransports(udp, streams, await streams.listen(options.bindAddress, udp.boundPort));
      } catch (error) {
        if (pick < picks && (error as NodeJS.ErrnoException).code === 'EADDRINUSE') {
          await Promise.all([udp.close(), streams.close()]);
          continue;
        }
        // Placing calls over TCP or TLS needs no listener: say so and go on without one.
        options.logger.warn(
          { port: udp.boundPort, err: error instanceof Error ? error.message : String(error) },
          'SIP TCP port unavailable; TCP requests reach us only on connections we open',
        );
        return new SipTransports(udp, streams, null);
      }
    }
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
