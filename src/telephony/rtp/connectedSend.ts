import type { Socket } from 'node:dgram';

/**
 * Sends a session's RTP, through a connect()ed socket once the far end is latched: the kernel then
 * drops everyone else's packets, and each send saves Node's per-packet address lookup (a tick and
 * a closure). A connect superseded (a re-INVITE to another address) before it completes is undone.
 */
export class ConnectedSend {
  private connected = false;
  private generation = 0;

  constructor(
    private readonly socket: Socket,
    private readonly isClosed: () => boolean,
  ) {}

  send(
    buffer: Buffer,
    length: number,
    port: number,
    address: string,
    done: (error: Error | null) => void,
  ): void {
    if (this.connected) {
      this.socket.send(buffer, 0, length, done);
      return;
    }
    try {
      this.socket.send(buffer, 0, length, port, address, done);
    } catch (error) {
      // A connect() completed but its callback has not run yet: the socket knows the target.
      if ((error as NodeJS.ErrnoException).code !== 'ERR_SOCKET_DGRAM_IS_CONNECTED') throw error;
      this.socket.send(buffer, 0, length, done);
    }
  }

  connect(address: string, port: number): void {
    const generation = ++this.generation;
    this.socket.connect(port, address, () => {
      if (generation === this.generation && !this.isClosed()) {
        this.connected = true;
        return;
      }
      try {
        this.socket.disconnect();
      } catch {
        // already closed
      }
    });
  }

  disconnect(): void {
    this.generation++;
    if (!this.connected) return;
    this.connected = false;
    this.socket.disconnect();
  }
}
