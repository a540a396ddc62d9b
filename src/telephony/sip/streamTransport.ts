import { createHash } from 'node:crypto';
import { isIP, type Server, type Socket, connect as tcpConnect, createServer as tcpServer } from 'node:net';
import { checkServerIdentity, connect as tlsConnect } from 'node:tls';
import type { Logger } from '../../logger.js';
import { type FramedItem, StreamFramer } from './streamFraming.js';
import { type NetworkTarget, socketHost } from './transport.js';

export interface StreamTransportOptions {
  readonly logger: Logger;
  /** A TCP or TLS connection not up after this long fails its sends. Default 5 s. */
  readonly connectTimeoutMs?: number;
  /** A double-CRLF ping is sent on each connection this often (RFC 5626 §3.5.1). Default 30 s. */
  readonly keepAliveMs?: number;
  /** A connection we opened that carried no SIP message this long is closed. Default 2 h. */
  readonly idleTimeoutMs?: number;
  /** Larger messages close the connection. Default 65,535. */
  readonly maxMessageBytes?: number;
  /** Connections accepted on the listener held at once; more are closed on arrival. Default 256. */
  readonly maxInboundConnections?: number;
  /** Accepted connections held at once from one address (an IPv6 /64); default 16. */
  readonly maxInboundConnectionsPerAddress?: number;
  /** An accepted connection that has sent no complete SIP message this long is closed. Default 10 s. */
  readonly firstRequestTimeoutMs?: number;
  /** An accepted connection that carried no SIP message this long is closed. Default 10 min. */
  readonly inboundIdleTimeoutMs?: number;
}

export type StreamMessageHandler = (data: Buffer, source: NetworkTarget) => void;

export const streamTransportDefaults = {
  connectTimeoutMs: 5_000,
  keepAliveMs: 30_000,
  idleTimeoutMs: 2 * 60 * 60_000,
  maxMessageBytes: 65_535,
  maxInboundConnections: 256,
  maxInboundConnectionsPerAddress: 16,
  firstRequestTimeoutMs: 10_000,
  inboundIdleTimeoutMs: 10 * 60_000,
};
const defaults = streamTransportDefaults;

/** How long refusals of connections over a cap are counted before one warning says how many. */
const refusalReportMs = 60_000;

/**
 * Who an accepted connection counts against for the per-address cap: the IPv4 address (an
 * IPv4-mapped IPv6 one as IPv4), or the /64 of an IPv6 address — one host may hold a whole /64.
 */
export function connectionSourceKey(address: string): string {
  const lower = address.toLowerCase();
  if (lower.startsWith('::ffff:') && isIP(lower.slice(7)) === 4) return lower.slice(7);
  if (isIP(lower) !== 6) return lower;
  const [head = '', tail] = lower.split('::');
  const headGroups = head === '' ? [] : head.split(':');
  const tailGroups = tail === undefined || tail === '' ? [] : tail.split(':');
  const missing = Array.from({ length: 8 - headGroups.length - tailGroups.length }, () => '0');
  const groups = tail === undefined ? headGroups : [...headGroups, ...missing, ...tailGroups];
  return `${groups
    .slice(0, 4)
    .map((group) => group.replace(/^0+(?=.)/, ''))
    .join(':')}::/64`;
}

/**
 * The pool key of a connection: transport and peer address, and for TLS everything the peer's
 * certificate was checked against — a connection one trunk's CA vouched for is never lent to a
 * trunk that does not trust that CA (or that checks a different name).
 */
function connectionKey(target: NetworkTarget): string {
  const base = `${target.transport}|${socketHost(target.host)}|${target.port}`;
  if (target.transport !== 'tls') return base;
  const tls = target.tls;
  const ca = tls?.caPem ? caDigest(tls.caPem) : '';
  return `${base}|${tls?.serverName ?? ''}|${ca}|${tls?.verify === false ? 'any' : 'verified'}`;
}

/** CA digests by PEM: a TLS message's pool key must not hash the trunk's CA on every send. */
const caDigests = new Map<string, string>();

function caDigest(pem: string): string {
  let digest = caDigests.get(pem);
  if (digest === undefined) {
    if (caDigests.size >= 256) caDigests.clear();
    digest = createHash('sha256').update(pem).digest('base64url');
    caDigests.set(pem, digest);
  }
  return digest;
}

/**
 * One TCP or TLS connection: framing in, queued writes out, keep-alives, idle close. A connection
 * we accepted (`inbound`) must bring a complete SIP message within the first-request timeout and
 * then one at least every inbound idle timeout; keep-alive pings do not count.
 */
class StreamConnection {
  readonly ready: Promise<void>;
  private readonly framer: StreamFramer;
  private readonly keepAlive: NodeJS.Timeout;
  private deadline: NodeJS.Timeout;
  private heardFrom: boolean;
  private closed = false;

  constructor(
    private readonly socket: Socket,
    /** The peer as messages from it are reported: sending to it reaches this connection. */
    readonly peer: NetworkTarget,
    connected: boolean,
    private readonly owner: StreamTransport,
    private readonly settings: typeof defaults,
    /** Who it counts against when accepted on our listener; null for a connection we opened. */
    readonly inboundSource: string | null = null,
  ) {
    this.framer = new StreamFramer(settings.maxMessageBytes);
    this.heardFrom = inboundSource === null;
    this.deadline = setTimeout(
      () => this.close(),
      inboundSource === null ? settings.idleTimeoutMs : settings.firstRequestTimeoutMs,
    );
    this.deadline.unref();
    this.ready = connected
      ? Promise.resolve()
      : new Promise((resolve, reject) => {
          const timer = setTimeout(
            () => socket.destroy(new Error(`SIP ${peer.transport} connect timed out`)),
            settings.connectTimeoutMs,
          );
          const event = peer.transport === 'tls' ? 'secureConnect' : 'connect';
          socket.once(event, () => {
            clearTimeout(timer);
            resolve();
          });
          socket.once('close', () => {
            clearTimeout(timer);
            reject(new Error(`SIP ${peer.transport} connection to ${peer.host}:${peer.port} failed`));
          });
        });
    this.ready.catch(() => {});
    socket.setNoDelay(true);
    socket.on('data', (chunk: Buffer) => this.receive(chunk));
    socket.on('error', (error) => owner.reportError(this, error));
    socket.on('close', () => this.close());
    this.keepAlive = setInterval(() => this.tick(), settings.keepAliveMs);
    this.keepAlive.unref();
  }

  async write(data: Buffer): Promise<void> {
    await this.ready;
    if (this.closed) throw new Error('SIP connection closed');
    // Our own message keeps a connection up only once the peer has spoken on it.
    if (this.heardFrom) this.deadline.refresh();
    await new Promise<void>((resolve, reject) =>
      this.socket.write(data, (error) => (error ? reject(error) : resolve())),
    );
  }

  close(): void {
    if (this.closed) return;
    this.closed = true;
    clearInterval(this.keepAlive);
    clearTimeout(this.deadline);
    this.socket.destroy();
    this.owner.forget(this);
  }

  private receive(chunk: Buffer): void {
    let items: FramedItem[];
    try {
      items = this.framer.push(chunk);
    } catch (error) {
      this.owner.reportError(this, error as Error);
      this.close();
      return;
    }
    for (const item of items) {
      if (item.kind === 'ping') {
        if (!this.socket.destroyed) this.socket.write('\r\n');
        continue;
      }
      this.messageArrived();
      this.owner.deliver(item.data, this.peer);
      if (this.closed) return;
    }
  }

  private messageArrived(): void {
    if (this.heardFrom) {
      this.deadline.refresh();
      return;
    }
    this.heardFrom = true;
    clearTimeout(this.deadline);
    this.deadline = setTimeout(() => this.close(), this.settings.inboundIdleTimeoutMs);
    this.deadline.unref();
  }

  private tick(): void {
    if (!this.socket.destroyed && !this.socket.connecting) this.socket.write('\r\n\r\n');
  }
}

/**
 * SIP over TCP and TLS: connections are opened on demand, reused for every later message to the
 * same peer (and for what the peer sends back on them), and optionally accepted on a TCP port.
 * TLS checks the peer's certificate against the name the target gives, unless the target says not
 * to; TLS 1.2 is the oldest version spoken.
 */
export class StreamTransport {
  private readonly settings: typeof defaults;
  private readonly connections = new Map<string, StreamConnection>();
  private readonly keys = new WeakMap<StreamConnection, string>();
  /** Accepted connections open now, in all and by source (connectionSourceKey). */
  private inboundCount = 0;
  private readonly inboundBySource = new Map<string, number>();
  private refusedSinceReport = 0;
  private lastRefusalReportMs = 0;
  private server: Server | null = null;
  private handler: StreamMessageHandler | null = null;
  private closed = false;

  constructor(private readonly options: StreamTransportOptions) {
    this.settings = {
      connectTimeoutMs: options.connectTimeoutMs ?? defaults.connectTimeoutMs,
      keepAliveMs: options.keepAliveMs ?? defaults.keepAliveMs,
      idleTimeoutMs: options.idleTimeoutMs ?? defaults.idleTimeoutMs,
      maxMessageBytes: options.maxMessageBytes ?? defaults.maxMessageBytes,
      maxInboundConnections: options.maxInboundConnections ?? defaults.maxInboundConnections,
      maxInboundConnectionsPerAddress:
        options.maxInboundConnectionsPerAddress ?? defaults.maxInboundConnectionsPerAddress,
      firstRequestTimeoutMs: options.firstRequestTimeoutMs ?? defaults.firstRequestTimeoutMs,
      inboundIdleTimeoutMs: options.inboundIdleTimeoutMs ?? defaults.inboundIdleTimeoutMs,
    };
  }

  /** Accepts TCP connections on this address and port (RFC 3261 §18: beside the UDP port). */
  listen(bindAddress: string, port: number): Promise<number> {
    const server = tcpServer((socket) => this.accept(socket));
    this.server = server;
    return new Promise((resolve, reject) => {
      server.once('error', reject);
      server.listen(port, socketHost(bindAddress), () => {
        server.off('error', reject);
        server.on('error', (error) => this.options.logger.warn({ err: error.message }, 'SIP TCP listener'));
        const address = server.address();
        resolve(typeof address === 'object' && address !== null ? address.port : port);
      });
    });
  }

  onMessage(handler: StreamMessageHandler): void {
    this.handler = handler;
  }

  /** Open connections (for tests and metrics). */
  get connectionCount(): number {
    return this.connections.size;
  }

  /** Connections accepted on the listener and open now. */
  get inboundConnectionCount(): number {
    return this.inboundCount;
  }

  send(data: Buffer, target: NetworkTarget): Promise<void> {
    if (this.closed) return Promise.reject(new Error('SIP transport is closed'));
    if (data.length > this.settings.maxMessageBytes)
      return Promise.reject(
        new Error(`SIP message of ${data.length} bytes exceeds ${this.settings.maxMessageBytes}`),
      );
    const key = connectionKey(target);
    let connection = this.connections.get(key);
    if (connection === undefined) {
      connection = this.open(target);
      this.remember(key, connection);
    }
    return connection.write(data);
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.handler = null;
    for (const connection of [...this.connections.values()]) connection.close();
    const server = this.server;
    if (server) await new Promise<void>((resolve) => server.close(() => resolve()));
  }

  deliver(data: Buffer, source: NetworkTarget): void {
    this.handler?.(data, source);
  }

  reportError(connection: StreamConnection, error: Error): void {
    this.options.logger.debug(
      { transport: connection.peer.transport, err: error.message },
      'SIP connection error',
    );
  }

  forget(connection: StreamConnection): void {
    const key = this.keys.get(connection);
    if (key !== undefined && this.connections.get(key) === connection) this.connections.delete(key);
    const source = connection.inboundSource;
    if (source === null) return;
    this.inboundCount--;
    const left = (this.inboundBySource.get(source) ?? 1) - 1;
    if (left > 0) this.inboundBySource.set(source, left);
    else this.inboundBySource.delete(source);
  }

  private remember(key: string, connection: StreamConnection): void {
    this.connections.set(key, connection);
    this.keys.set(connection, key);
  }

  private open(target: NetworkTarget): StreamConnection {
    const host = socketHost(target.host);
    if (target.transport === 'tls') {
      const tls = target.tls;
      const serverName = tls?.serverName ?? host;
      const socket = tlsConnect({
        host,
        port: target.port,
        minVersion: 'TLSv1.2',
        rejectUnauthorized: tls?.verify !== false,
        ...(isIP(serverName) === 0 ? { servername: serverName } : {}),
        ...(tls?.caPem ? { ca: tls.caPem } : {}),
        // The address was resolved and vetted before; the certificate must name the configured host.
        checkServerIdentity: (_host, certificate) => checkServerIdentity(serverName, certificate),
      });
      return new StreamConnection(socket, target, false, this, this.settings);
    }
    const socket = tcpConnect({ host, port: target.port });
    return new StreamConnection(socket, { ...target, transport: 'tcp' }, false, this, this.settings);
  }

  private accept(socket: Socket): void {
    if (this.closed || socket.remoteAddress === undefined || socket.remotePort === undefined) {
      socket.destroy();
      return;
    }
    const source = connectionSourceKey(socket.remoteAddress);
    const fromSource = this.inboundBySource.get(source) ?? 0;
    if (
      this.inboundCount >= this.settings.maxInboundConnections ||
      fromSource >= this.settings.maxInboundConnectionsPerAddress
    ) {
      socket.on('error', () => {});
      socket.destroy();
      this.reportRefusal();
      return;
    }
    this.inboundCount++;
    this.inboundBySource.set(source, fromSource + 1);
    const peer: NetworkTarget = { host: socket.remoteAddress, port: socket.remotePort, transport: 'tcp' };
    const connection = new StreamConnection(socket, peer, true, this, this.settings, source);
    this.remember(connectionKey(peer), connection);
  }

  /** One warning a minute at most, saying how many connections the caps turned away. */
  private reportRefusal(): void {
    this.refusedSinceReport++;
    const nowMs = Date.now();
    if (nowMs - this.lastRefusalReportMs < refusalReportMs) return;
    this.options.logger.warn(
      {
        refused: this.refusedSinceReport,
        open: this.inboundCount,
        maxConnections: this.settings.maxInboundConnections,
        maxPerAddress: this.settings.maxInboundConnectionsPerAddress,
      },
      'SIP TCP connections over the cap closed',
    );
    this.refusedSinceReport = 0;
    this.lastRefusalReportMs = nowMs;
  }
}
