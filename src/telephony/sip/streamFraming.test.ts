import { describe, expect, it } from 'vitest';
import { StreamFramer, StreamFramingError } from './streamFraming.js';

const message = (body: string, lengthHeader = `Content-Length: ${Buffer.byteLength(body)}`) =>
  `OPTIONS sip:a@b SIP/2.0\r\nVia: SIP/2.0/TCP 127.0.0.1:5060;branch=z9hG4bKx\r\n${lengthHeader}\r\n\r\n${body}`;

function texts(items: ReturnType<StreamFramer['push']>): string[] {
  return items.map((item) => (item.kind === 'ping' ? 'PING' : item.data.toString('latin1')));
}

describe('SIP stream framing (RFC 3261 §18.3)', () => {
  it('cuts two messages sent in one chunk at their Content-Length', () => {
    const framer = new StreamFramer(65_535);
    const first = message('v=0\r\n');
    const second = message('');
    expect(texts(framer.push(Buffer.from(first + second)))).toEqual([first, second]);
    expect(framer.pendingBytes).toBe(0);
  });

  it('holds a message split anywhere until its body is complete, the compact form too', () => {
    const framer = new StreamFramer(65_535);
    const whole = message('hello world', 'l: 11');
    const out: string[] = [];
    for (const byte of Buffer.from(whole)) out.push(...texts(framer.push(Buffer.from([byte]))));
    expect(out).toEqual([whole]);
  });

  it('answers a double CRLF as a ping and skips a lone CRLF pong, even split', () => {
    const framer = new StreamFramer(65_535);
    expect(texts(framer.push(Buffer.from('\r\n\r')))).toEqual([]);
    expect(texts(framer.push(Buffer.from('\n')))).toEqual(['PING']);
    const next = message('');
    expect(texts(framer.push(Buffer.from(`\r\n${next}`)))).toEqual([next]);
  });

  it('refuses a stream message without Content-Length', () => {
    const framer = new StreamFramer(65_535);
    expect(() => framer.push(Buffer.from(message('', 'X-Other: 1')))).toThrow(StreamFramingError);
  });

  it('refuses a message larger than the limit, and a header section that never ends', () => {
    expect(() => new StreamFramer(200).push(Buffer.from(message('x'.repeat(300))))).toThrow(/exceeds 200/);
    const endless = new StreamFramer(100);
    expect(() => endless.push(Buffer.from(`OPTIONS sip:a@b SIP/2.0\r\nX: ${'y'.repeat(200)}`))).toThrow(
      /header section/,
    );
  });
});
