import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { formatNameAddr, formatSipUri, paramValue, parseNameAddr, parseSipUri, parseVia } from './grammar.js';
import {
  headerValue,
  headerValues,
  parseSipMessage,
  type SipRequest,
  serializeSipMessage,
} from './message.js';

const sdp =
  'v=0\r\no=- 1 1 IN IP4 127.0.0.1\r\ns=-\r\nc=IN IP4 127.0.0.1\r\nt=0 0\r\nm=audio 4000 RTP/AVP 0\r\n';

const invite = [
  'INVITE sip:+15550100001@127.0.0.1:5070 SIP/2.0',
  'Via: SIP/2.0/UDP 127.0.0.1:5060;rport;branch=z9hG4bK776asdhds',
  'Via: SIP/2.0/UDP 10.0.0.1:5060;branch=z9hG4bKother, SIP/2.0/UDP [2001:db8::1]:5062;branch=z9hG4bK3',
  'Max-Forwards: 70',
  'To: <sip:+15550100001@127.0.0.1>',
  'From: "Alice, the caller" <sip:+15550100002@127.0.0.1>;tag=1928301774',
  'Call-ID: a84b4c76e66710@pc33.example.com',
  'CSeq: 314159 INVITE',
  'Contact: <sip:alice@127.0.0.1:5060;transport=udp>',
  'Record-Route: <sip:p1.example.com;lr>, <sip:p2.example.com;lr>',
  'Content-Type: application/sdp',
  `Content-Length: ${Buffer.byteLength(sdp)}`,
  '',
  sdp,
].join('\r\n');

describe('parseSipMessage', () => {
  it('parses a request with its essentials, list headers and body', () => {
    const result = parseSipMessage(invite);
    expect(result.ok).toBe(true);
    if (!result.ok || result.message.kind !== 'request') throw new Error('expected a request');
    const message = result.message;
    expect(message.method).toBe('INVITE');
    expect(message.requestUri).toBe('sip:+15550100001@127.0.0.1:5070');
    expect(message.callId).toBe('a84b4c76e66710@pc33.example.com');
    expect(message.cseq).toEqual({ seq: 314159, method: 'INVITE' });
    expect(message.from.displayName).toBe('Alice, the caller');
    expect(paramValue(message.from.params, 'tag')).toBe('1928301774');
    expect(message.to.uri.user).toBe('+15550100001');
    expect(message.vias).toHaveLength(3);
    expect(message.vias[2]).toMatchObject({ host: '[2001:db8::1]', port: 5062, transport: 'UDP' });
    expect(paramValue(message.vias[0].params, 'rport')).toBeNull();
    expect(headerValues(message, 'Record-Route')).toEqual([
      '<sip:p1.example.com;lr>',
      '<sip:p2.example.com;lr>',
    ]);
    expect(message.body).toBe(sdp);
  });

  it('expands compact forms, unfolds continuation lines and tolerates bare LF', () => {
    const text = [
      'SIP/2.0 180 Ringing',
      'v: SIP/2.0/UDP 127.0.0.1:5060;branch=z9hG4bKx',
      'f: <sip:a@h>;tag=1',
      't: <sip:b@h>',
      '  ;tag=2',
      'i: abc',
      'CSeq: 1 INVITE',
      'm: <sip:b@127.0.0.1:5070>',
      'l: 0',
      '',
      '',
    ].join('\n');
    const result = parseSipMessage(text);
    expect(result.ok).toBe(true);
    if (!result.ok || result.message.kind !== 'response') throw new Error('expected a response');
    expect(result.message.status).toBe(180);
    expect(result.message.reason).toBe('Ringing');
    expect(paramValue(result.message.to.params, 'tag')).toBe('2');
    expect(headerValue(result.message, 'Contact')).toBe('<sip:b@127.0.0.1:5070>');
    expect(headerValue(result.message, 'm')).toBe('<sip:b@127.0.0.1:5070>');
  });

  it('reads exactly Content-Length bytes and rejects a short body', () => {
    const withTrailing = `${invite}garbage after the body`;
    const result = parseSipMessage(withTrailing);
    expect(result.ok && result.message.body).toBe(sdp);
    const truncated = invite.slice(0, -10);
    expect(parseSipMessage(truncated)).toEqual({ ok: false, reason: 'body shorter than Content-Length' });
  });

  it('rejects messages without mandatory headers, with a bad start line or a CSeq mismatch', () => {
    expect(parseSipMessage(invite.replace(/Call-ID: .*\r\n/, '')).ok).toBe(false);
    expect(parseSipMessage(invite.replace(/Via: .*\r\n/g, '')).ok).toBe(false);
    expect(parseSipMessage(invite.replace('SIP/2.0\r\n', 'SIP/3.0\r\n')).ok).toBe(false);
    expect(parseSipMessage(invite.replace('CSeq: 314159 INVITE', 'CSeq: 314159 BYE')).ok).toBe(false);
    expect(parseSipMessage(invite.replace('CSeq: 314159', 'CSeq: 99999999999')).ok).toBe(false);
    expect(parseSipMessage('').ok).toBe(false);
  });

  it('round-trips through the serializer, which writes CRLF and a correct Content-Length', () => {
    const request: SipRequest = {
      kind: 'request',
      method: 'OPTIONS',
      requestUri: 'sip:carrier.example.com',
      headers: [
        { name: 'Via', value: 'SIP/2.0/UDP 127.0.0.1:5060;branch=z9hG4bKabc' },
        { name: 'From', value: '<sip:cw@127.0.0.1>;tag=9' },
        { name: 'To', value: '<sip:carrier.example.com>' },
        { name: 'Call-ID', value: 'x1' },
        { name: 'CSeq', value: '7 OPTIONS' },
        { name: 'Content-Length', value: '999' },
        { name: 'Subject', value: 'héllo' },
      ],
      body: 'naïve body',
    };
    const wire = serializeSipMessage(request).toString('utf8');
    expect(wire).toContain('\r\nContent-Length: 11\r\n\r\nnaïve body');
    expect(wire).not.toContain('999');
    expect(wire.split('\r\n')[0]).toBe('OPTIONS sip:carrier.example.com SIP/2.0');
    const parsed = parseSipMessage(wire);
    if (!parsed.ok) throw new Error(parsed.reason);
    expect(parsed.message.body).toBe('naïve body');
    expect(headerValue(parsed.message, 'Subject')).toBe('héllo');
    expect(serializeSipMessage(parsed.message).toString('utf8')).toBe(wire);
  });

  it('refuses to serialise a header value with a line break', () => {
    const request: SipRequest = {
      kind: 'request',
      method: 'OPTIONS',
      requestUri: 'sip:h',
      headers: [{ name: 'Subject', value: 'a\r\nInjected: yes' }],
      body: '',
    };
    expect(() => serializeSipMessage(request)).toThrow(TypeError);
  });
});

describe('URIs and addresses', () => {
  it('parses user, password, host, port, params and headers', () => {
    const uri = parseSipUri('sips:+1555;npdi@[::1]:5061;transport=tcp;lr?subject=x');
    expect(uri).toEqual({
      scheme: 'sips',
      user: '+1555;npdi',
      password: null,
      host: '[::1]',
      port: 5061,
      params: [
        ['transport', 'tcp'],
        ['lr', null],
      ],
      headers: 'subject=x',
    });
    expect(formatSipUri(uri!)).toBe('sips:+1555;npdi@[::1]:5061;transport=tcp;lr?subject=x');
    expect(parseSipUri('tel:+15550100001')).toBeNull();
    expect(parseSipUri('sip:host:99999')).toBeNull();
    expect(parseSipUri('sip:')).toBeNull();
  });

  it('gives the parameters of a bare addr-spec to the header, not the URI', () => {
    const address = parseNameAddr('sip:alice@example.com;tag=88');
    expect(address?.uri.params).toEqual([]);
    expect(address?.params).toEqual([['tag', '88']]);
    const named = parseNameAddr('Bob <sip:bob@example.com;transport=udp>;tag=1;expires=60');
    expect(named?.displayName).toBe('Bob');
    expect(named?.uri.params).toEqual([['transport', 'udp']]);
    expect(formatNameAddr(named!)).toBe('"Bob" <sip:bob@example.com;transport=udp>;tag=1;expires=60');
    expect(parseNameAddr('"unterminated <sip:a@b>')).toBeNull();
  });

  it('parses Via with spaces around slashes', () => {
    const via = parseVia('SIP / 2.0 / udp 10.1.1.1:5060 ;branch=z9hG4bK1;received=1.2.3.4');
    expect(via).toMatchObject({ transport: 'UDP', host: '10.1.1.1', port: 5060 });
    expect(via === null ? undefined : paramValue(via.params, 'received')).toBe('1.2.3.4');
  });
});

describe('parser fuzzing', () => {
  const tokens = [
    'INVITE',
    'SIP/2.0',
    ' ',
    ':',
    ';',
    ',',
    '"',
    '<',
    '>',
    '\r\n',
    '\n',
    '\r\n\r\n',
    'Via',
    'v',
    'CSeq',
    'Content-Length',
    'l: ',
    '99999999999',
    '-1',
    'sip:',
    '[',
    ']',
    '@',
    '=',
    'tag',
    'z9hG4bK',
    '\\',
    '\t',
    '\0',
    '\u00ff',
    '\ud83d\ude00',
  ];

  it('never throws on random bytes, token soup or mutated valid messages', () => {
    const base = Buffer.from(invite, 'utf8');
    const mutated = fc
      .array(
        fc.tuple(
          fc.nat(base.length - 1),
          fc.integer({ min: 0, max: 255 }),
          fc.constantFrom('set', 'cut', 'dup'),
        ),
        {
          minLength: 1,
          maxLength: 12,
        },
      )
      .map((edits) => {
        let bytes = Buffer.from(base);
        for (const [position, value, kind] of edits) {
          const at = position % Math.max(1, bytes.length);
          if (kind === 'set') bytes[at] = value;
          else if (kind === 'cut')
            bytes = Buffer.concat([bytes.subarray(0, at), bytes.subarray(at + 1 + (value % 40))]);
          else
            bytes = Buffer.concat([
              bytes.subarray(0, at),
              bytes.subarray(at, at + value),
              bytes.subarray(at),
            ]);
        }
        return bytes;
      });
    const soup = fc
      .array(fc.constantFrom(...tokens), { maxLength: 200 })
      .map((parts) => Buffer.from(parts.join('')));
    const random = fc.uint8Array({ maxLength: 2_000 }).map((bytes) => Buffer.from(bytes));
    const started = Date.now();
    fc.assert(
      fc.property(fc.oneof(mutated, soup, random), (data) => {
        const result = parseSipMessage(data);
        expect(typeof result.ok).toBe('boolean');
        if (result.ok) {
          // Whatever parses must serialise and parse again.
          const again = parseSipMessage(serializeSipMessage(result.message));
          expect(again.ok).toBe(true);
        }
      }),
      { numRuns: 6_000 },
    );
    expect(Date.now() - started).toBeLessThan(20_000);
  });

  it('keeps parse time bounded on a large hostile header', () => {
    const header = `${'"<'.repeat(20_000)}`;
    const text = `OPTIONS sip:h SIP/2.0\r\nVia: ${header}\r\nTo: ${header}\r\n\r\n`;
    const started = Date.now();
    expect(parseSipMessage(text).ok).toBe(false);
    expect(Date.now() - started).toBeLessThan(500);
  });
});
