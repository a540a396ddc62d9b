/**
 * SIP over a byte stream (RFC 3261 §18.3): a message is its header section up to the empty line,
 * then exactly Content-Length bytes of body — which a stream message must declare. Between
 * messages a peer may send the keep-alives of RFC 5626 §3.5.1: a double CRLF "ping", answered
 * with a single CRLF "pong".
 */

export type FramedItem = { readonly kind: 'message'; readonly data: Buffer } | { readonly kind: 'ping' };

/** The stream broke the framing rules; the connection must be closed. */
export class StreamFramingError extends Error {}

const headerEnd = Buffer.from('\r\n\r\n');
const contentLengthLine = /^(?:content-length|l)[ \t]*:[ \t]*(\d{1,9})[ \t]*$/im;

export class StreamFramer {
  private buffered: Buffer = Buffer.alloc(0);

  constructor(private readonly maxMessageBytes: number) {}

  /** The bytes held for a message not yet complete. */
  get pendingBytes(): number {
    return this.buffered.length;
  }

  /** Adds bytes read from the stream; returns the messages and pings they complete. */
  push(chunk: Buffer): FramedItem[] {
    this.buffered = this.buffered.length === 0 ? chunk : Buffer.concat([this.buffered, chunk]);
    const items: FramedItem[] = [];
    for (;;) {
      const item = this.next();
      if (item === null) return items;
      items.push(item);
    }
  }

  private next(): FramedItem | null {
    const ping = this.takeKeepAlive();
    if (ping !== undefined) return ping;
    if (this.buffered.length === 0) return null;
    const end = this.buffered.indexOf(headerEnd);
    if (end < 0) {
      if (this.buffered.length > this.maxMessageBytes)
        throw new StreamFramingError(`SIP header section over ${this.maxMessageBytes} bytes`);
      return null;
    }
    const head = this.buffered.subarray(0, end).toString('latin1');
    const declared = contentLengthLine.exec(head);
    if (declared === null)
      throw new StreamFramingError('a SIP message over a stream must carry Content-Length');
    const total = end + headerEnd.length + Number(declared[1]);
    if (total > this.maxMessageBytes)
      throw new StreamFramingError(`SIP message of ${total} bytes exceeds ${this.maxMessageBytes}`);
    if (this.buffered.length < total) return null;
    const data = Buffer.from(this.buffered.subarray(0, total));
    this.buffered = this.buffered.subarray(total);
    return { kind: 'message', data };
  }

  /**
   * Consumes CRLFs before a message: a double CRLF is a ping, a lone one a pong (ignored). Returns
   * undefined when no keep-alive is at the front, null while a CRLF may still grow into a ping.
   */
  private takeKeepAlive(): FramedItem | null | undefined {
    let crlfs = 0;
    while (this.buffered[crlfs * 2] === 0x0d && this.buffered[crlfs * 2 + 1] === 0x0a) crlfs++;
    if (crlfs === 0) {
      // A lone CR at the end may be the start of a keep-alive: wait for its LF.
      return this.buffered.length === 1 && this.buffered[0] === 0x0d ? null : undefined;
    }
    if (crlfs >= 2) {
      this.buffered = this.buffered.subarray(4);
      return { kind: 'ping' };
    }
    if (this.buffered.length === 2 || (this.buffered.length === 3 && this.buffered[2] === 0x0d)) return null;
    this.buffered = this.buffered.subarray(2);
    return this.next();
  }
}
