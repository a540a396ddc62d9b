import { createServer, type Server, type Socket, connect as tcpConnect } from 'node:net';

/**
 * A TCP proxy in front of the test PostgreSQL that can cut one connection at an exact point of
 * the protocol, which `pg_terminate_backend` cannot aim at:
 * - `before`: the first statement whose SQL matches never reaches the server; the connection is
 *   cut instead (the statement certainly did not run);
 * - `afterAnswer`: the statement runs and the server answers, but the answer is dropped and the
 *   connection cut (the client cannot know that it ran, e.g. a COMMIT that committed).
 * Each armed cut fires once. Everything else is forwarded byte for byte.
 */
export class ConnectionCuttingProxy {
  private armed: { pattern: RegExp; when: 'before' | 'afterAnswer' } | null = null;
  private readonly sockets = new Set<Socket>();
  cuts = 0;

  private constructor(
    private readonly server: Server,
    readonly url: string,
  ) {}

  static async start(targetUrl: string): Promise<ConnectionCuttingProxy> {
    const target = new URL(targetUrl);
    let proxy: ConnectionCuttingProxy | undefined;
    const server = createServer((client) => proxy?.relay(client, target.hostname, Number(target.port)));
    await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
    const url = new URL(targetUrl);
    url.port = String((server.address() as { port: number }).port);
    proxy = new ConnectionCuttingProxy(server, url.toString());
    return proxy;
  }

  /** Cuts the connection that next sends a statement matching `pattern`, at `when`. */
  cutOnce(pattern: RegExp, when: 'before' | 'afterAnswer'): void {
    this.armed = { pattern, when };
  }

  async close(): Promise<void> {
    for (const socket of this.sockets) socket.destroy();
    await new Promise<void>((done) => this.server.close(() => done()));
  }

  private relay(client: Socket, host: string, port: number): void {
    const upstream = tcpConnect(port, host);
    this.sockets.add(client).add(upstream);
    const cut = () => {
      client.destroy();
      upstream.destroy();
    };
    client.on('close', () => this.sockets.delete(client) && upstream.destroy());
    upstream.on('close', () => this.sockets.delete(upstream) && client.destroy());
    client.on('error', cut);
    upstream.on('error', cut);
    let dropAnswer = false;
    upstream.on('data', (chunk: Buffer) => {
      if (!dropAnswer) {
        client.write(chunk);
        return;
      }
      // The server has answered (and so done the work): the client never hears it.
      setTimeout(cut, 20);
    });
    let pending = Buffer.alloc(0);
    let startup = true;
    client.on('data', (chunk: Buffer) => {
      pending = Buffer.concat([pending, chunk]);
      for (;;) {
        // The startup message has no type byte; every later one is a type byte and a length.
        const headerBytes = startup ? 4 : 5;
        if (pending.length < headerBytes) return;
        const length = pending.readInt32BE(startup ? 0 : 1) + (startup ? 0 : 1);
        if (pending.length < length) return;
        const message = pending.subarray(0, length);
        pending = pending.subarray(length);
        const type = startup ? '' : String.fromCharCode(message[0] as number);
        startup = false;
        const armed = this.armed;
        // A simple query ('Q') or a prepared statement's parse ('P') carries the SQL text.
        if (armed && (type === 'Q' || type === 'P') && armed.pattern.test(message.subarray(5).toString())) {
          this.armed = null;
          this.cuts++;
          if (armed.when === 'before') {
            cut();
            return;
          }
          dropAnswer = true;
        }
        upstream.write(message);
      }
    });
  }
}
