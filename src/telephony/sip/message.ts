import {
  type CSeq,
  type NameAddr,
  parseCSeq,
  parseNameAddr,
  parseVia,
  splitOutsideQuotes,
  type Via,
} from './grammar.js';

/** One header line as it goes on the wire; several lines may share a name. */
export interface SipHeader {
  readonly name: string;
  readonly value: string;
}

export interface SipMessageBase {
  readonly headers: readonly SipHeader[];
  /** The body as text (SDP is text); Content-Length is computed from its UTF-8 bytes. */
  readonly body: string;
}

export interface SipRequest extends SipMessageBase {
  readonly kind: 'request';
  readonly method: string;
  readonly requestUri: string;
}

export interface SipResponse extends SipMessageBase {
  readonly kind: 'response';
  readonly status: number;
  readonly reason: string;
}

export type SipMessage = SipRequest | SipResponse;

/** The headers every message must carry, parsed once when the message is received. */
export interface MessageEssentials {
  readonly callId: string;
  readonly cseq: CSeq;
  readonly from: NameAddr;
  readonly to: NameAddr;
  /** Every Via, topmost first; never empty. */
  readonly vias: readonly [Via, ...Via[]];
}

export type ParsedSipRequest = SipRequest & MessageEssentials;
export type ParsedSipResponse = SipResponse & MessageEssentials;
export type ParsedSipMessage = ParsedSipRequest | ParsedSipResponse;

export type ParseResult =
  | { readonly ok: true; readonly message: ParsedSipMessage }
  | { readonly ok: false; readonly reason: string };

const compactHeaderNames: Readonly<Record<string, string>> = {
  a: 'Accept-Contact',
  b: 'Referred-By',
  c: 'Content-Type',
  d: 'Request-Disposition',
  e: 'Content-Encoding',
  f: 'From',
  i: 'Call-ID',
  j: 'Reject-Contact',
  k: 'Supported',
  l: 'Content-Length',
  m: 'Contact',
  n: 'Identity-Info',
  o: 'Event',
  r: 'Refer-To',
  s: 'Subject',
  t: 'To',
  u: 'Allow-Events',
  v: 'Via',
  x: 'Session-Expires',
  y: 'Identity',
};

const canonicalHeaderNames: ReadonlyMap<string, string> = new Map(
  [
    ...Object.values(compactHeaderNames),
    'Accept',
    'Allow',
    'Authorization',
    'CSeq',
    'Expires',
    'Max-Forwards',
    'Proxy-Authenticate',
    'Proxy-Authorization',
    'Proxy-Require',
    'Reason',
    'Record-Route',
    'Require',
    'Route',
    'Server',
    'Unsupported',
    'User-Agent',
    'WWW-Authenticate',
  ].map((name) => [name.toLowerCase(), name]),
);

/** Headers whose comma-separated values are separate entries (RFC 3261 §7.3.1). */
const listHeaders: ReadonlySet<string> = new Set([
  'via',
  'route',
  'record-route',
  'contact',
  'allow',
  'supported',
  'require',
  'proxy-require',
  'unsupported',
  'accept',
  'allow-events',
]);

const headerNamePattern = /^[A-Za-z0-9\-.!%*_+`'~]+$/;
const maxHeaderCount = 256;

/** Expands compact forms and fixes the capitalisation of well-known names. */
export function canonicalHeaderName(name: string): string {
  const lower = name.toLowerCase();
  const expanded = name.length === 1 ? compactHeaderNames[lower] : undefined;
  if (expanded !== undefined) return expanded;
  return canonicalHeaderNames.get(lower) ?? name;
}

/** The first header line with this name (compact forms match too), or undefined. */
export function headerValue(message: SipMessageBase, name: string): string | undefined {
  const wanted = canonicalHeaderName(name).toLowerCase();
  for (const header of message.headers) {
    if (header.name.toLowerCase() === wanted) return header.value;
  }
  return undefined;
}

/** Every value of a header, list headers split on their commas, in order. */
export function headerValues(message: SipMessageBase, name: string): string[] {
  const wanted = canonicalHeaderName(name).toLowerCase();
  const split = listHeaders.has(wanted);
  const values: string[] = [];
  for (const header of message.headers) {
    if (header.name.toLowerCase() !== wanted) continue;
    if (!split) {
      values.push(header.value);
      continue;
    }
    for (const part of splitOutsideQuotes(header.value, ',')) {
      const trimmed = part.trim();
      if (trimmed !== '') values.push(trimmed);
    }
  }
  return values;
}

function findHeaderEnd(data: Buffer): { headerEnd: number; bodyStart: number } | null {
  const crlf = data.indexOf('\r\n\r\n');
  const lf = data.indexOf('\n\n');
  if (crlf >= 0 && (lf < 0 || crlf < lf)) return { headerEnd: crlf, bodyStart: crlf + 4 };
  if (lf >= 0) return { headerEnd: lf, bodyStart: lf + 2 };
  return null;
}

/** Unfolds continuation lines (starting with space or tab) into the header before them. */
function unfoldLines(headerText: string): string[] {
  const lines: string[] = [];
  for (const line of headerText.split(/\r?\n/)) {
    if ((line.startsWith(' ') || line.startsWith('\t')) && lines.length > 1) {
      lines[lines.length - 1] = `${lines[lines.length - 1]} ${line.trim()}`;
    } else lines.push(line);
  }
  return lines;
}

type StartLine =
  | { kind: 'request'; method: string; requestUri: string }
  | { kind: 'response'; status: number; reason: string };

function parseStartLine(line: string): StartLine | null {
  const response = /^SIP\/2\.0 ([1-6][0-9]{2}) ?(.*)$/.exec(line);
  if (response !== null) return { kind: 'response', status: Number(response[1]), reason: response[2] ?? '' };
  const request = /^([A-Za-z0-9\-.!%*_+`'~]+) (\S+) SIP\/2\.0$/.exec(line);
  if (request === null) return null;
  return { kind: 'request', method: request[1] ?? '', requestUri: request[2] ?? '' };
}

/** Parses the mandatory headers of a message; the reason names the first one that fails. */
export function readEssentials(message: SipMessageBase): MessageEssentials | string {
  const callId = headerValue(message, 'Call-ID')?.trim();
  if (callId === undefined || callId === '' || /\s/.test(callId)) return 'missing or malformed Call-ID';
  const cseqText = headerValue(message, 'CSeq');
  const cseq = cseqText === undefined ? null : parseCSeq(cseqText);
  if (cseq === null) return 'missing or malformed CSeq';
  const fromText = headerValue(message, 'From');
  const from = fromText === undefined ? null : parseNameAddr(fromText);
  if (from === null) return 'missing or malformed From';
  const toText = headerValue(message, 'To');
  const to = toText === undefined ? null : parseNameAddr(toText);
  if (to === null) return 'missing or malformed To';
  const vias: Via[] = [];
  for (const value of headerValues(message, 'Via')) {
    const via = parseVia(value);
    if (via === null) return 'malformed Via';
    vias.push(via);
  }
  const [topVia, ...otherVias] = vias;
  if (topVia === undefined) return 'missing Via';
  return { callId, cseq, from, to, vias: [topVia, ...otherVias] };
}

/** True for any control character other than tab, or a CR not followed by LF. */
function hasForbiddenControl(text: string): boolean {
  for (let index = 0; index < text.length; index++) {
    const code = text.charCodeAt(index);
    if (code === 9 || code === 10) continue;
    if (code === 13 && text.charCodeAt(index + 1) === 10) continue;
    if (code < 32 || code === 127) return true;
  }
  return false;
}

/**
 * Parses one datagram. Never throws: anything malformed, truncated or oversized comes back as
 * `{ ok: false, reason }`. On a datagram transport the body is exactly Content-Length bytes;
 * without Content-Length it is the rest of the datagram.
 */
export function parseSipMessage(data: Buffer | string): ParseResult {
  const bytes = typeof data === 'string' ? Buffer.from(data, 'utf8') : data;
  const ends = findHeaderEnd(bytes);
  if (ends === null) return { ok: false, reason: 'no end of headers' };
  const headerText = bytes
    .subarray(0, ends.headerEnd)
    .toString('utf8')
    .replace(/^(\r?\n)+/, '');
  // Control characters (other than tab) would be copied into our responses: refuse them here.
  if (hasForbiddenControl(headerText)) {
    return { ok: false, reason: 'control character in headers' };
  }
  const [startText, ...lines] = unfoldLines(headerText);
  const startLine = parseStartLine(startText ?? '');
  if (startLine === null) return { ok: false, reason: 'malformed start line' };
  if (lines.length > maxHeaderCount) return { ok: false, reason: 'too many headers' };
  const headers: SipHeader[] = [];
  for (const line of lines) {
    const colon = line.indexOf(':');
    if (colon <= 0) return { ok: false, reason: 'malformed header line' };
    const name = line.slice(0, colon).trim();
    if (!headerNamePattern.test(name)) return { ok: false, reason: 'malformed header name' };
    headers.push({ name: canonicalHeaderName(name), value: line.slice(colon + 1).trim() });
  }
  const available = bytes.length - ends.bodyStart;
  const lengthValues = headers.filter((header) => header.name === 'Content-Length');
  let bodyLength = available;
  if (lengthValues.length > 1) return { ok: false, reason: 'several Content-Length headers' };
  const lengthText = lengthValues[0]?.value;
  if (lengthText !== undefined) {
    if (!/^[0-9]{1,9}$/.test(lengthText)) return { ok: false, reason: 'malformed Content-Length' };
    bodyLength = Number(lengthText);
    if (bodyLength > available) return { ok: false, reason: 'body shorter than Content-Length' };
  }
  const body = bytes.subarray(ends.bodyStart, ends.bodyStart + bodyLength).toString('utf8');
  const base = { headers, body };
  const essentials = readEssentials(base);
  if (typeof essentials === 'string') return { ok: false, reason: essentials };
  if (startLine.kind === 'request') {
    if (essentials.cseq.method !== startLine.method) {
      return { ok: false, reason: 'CSeq method differs from request method' };
    }
    return { ok: true, message: { ...startLine, ...base, ...essentials } };
  }
  return { ok: true, message: { ...startLine, ...base, ...essentials } };
}

function assertLineSafe(text: string, what: string): void {
  if (/[\r\n\0]/.test(text)) throw new TypeError(`SIP ${what} contains a line break or NUL`);
}

/**
 * Writes the wire form: start line, headers in order, a Content-Length computed from the body
 * (any Content-Length among the headers is dropped), an empty line, the body. Throws a
 * TypeError when a header would smuggle a line break (a programming error, not input).
 */
export function serializeSipMessage(message: SipMessage): Buffer {
  const startLine =
    message.kind === 'request'
      ? `${message.method} ${message.requestUri} SIP/2.0`
      : `SIP/2.0 ${message.status} ${message.reason}`;
  assertLineSafe(startLine, 'start line');
  const lines = [startLine];
  for (const header of message.headers) {
    if (header.name.toLowerCase() === 'content-length' || header.name.toLowerCase() === 'l') continue;
    if (!headerNamePattern.test(header.name)) throw new TypeError(`invalid SIP header name ${header.name}`);
    assertLineSafe(header.value, `header ${header.name}`);
    lines.push(`${header.name}: ${header.value}`);
  }
  const body = Buffer.from(message.body, 'utf8');
  lines.push(`Content-Length: ${body.length}`);
  return Buffer.concat([Buffer.from(`${lines.join('\r\n')}\r\n\r\n`, 'utf8'), body]);
}

/** Standard reason phrases for the statuses this stack sends. */
export const reasonPhrases: Readonly<Record<number, string>> = {
  100: 'Trying',
  180: 'Ringing',
  183: 'Session Progress',
  200: 'OK',
  400: 'Bad Request',
  401: 'Unauthorized',
  403: 'Forbidden',
  404: 'Not Found',
  405: 'Method Not Allowed',
  407: 'Proxy Authentication Required',
  408: 'Request Timeout',
  480: 'Temporarily Unavailable',
  481: 'Call/Transaction Does Not Exist',
  486: 'Busy Here',
  487: 'Request Terminated',
  488: 'Not Acceptable Here',
  491: 'Request Pending',
  500: 'Server Internal Error',
  501: 'Not Implemented',
  503: 'Service Unavailable',
  600: 'Busy Everywhere',
  603: 'Decline',
  604: 'Does Not Exist Anywhere',
};

export function reasonPhrase(status: number): string {
  return reasonPhrases[status] ?? (status < 300 ? 'OK' : 'Error');
}
