/**
 * The small pieces of RFC 3261 grammar that header values are made of: SIP URIs, name-addr,
 * generic parameters, comma-separated lists, Via and CSeq. Every parser here returns null on
 * input it cannot make sense of; none of them throws.
 */

/** Parameters keep their order; a parameter without `=value` has the value null. */
export type SipParams = ReadonlyArray<readonly [name: string, value: string | null]>;

export interface SipUri {
  readonly scheme: 'sip' | 'sips';
  readonly user: string | null;
  readonly password: string | null;
  /** IPv6 references keep their brackets: `[::1]`. */
  readonly host: string;
  readonly port: number | null;
  readonly params: SipParams;
  /** The `?headers` part, kept verbatim without the question mark. */
  readonly headers: string | null;
}

export interface NameAddr {
  readonly displayName: string | null;
  readonly uri: SipUri;
  /** Header parameters after the address (`tag`, `expires`, ...), not the URI's own. */
  readonly params: SipParams;
}

export interface Via {
  /** `UDP`, `TCP`, `TLS`... upper-cased. */
  readonly transport: string;
  readonly host: string;
  readonly port: number | null;
  readonly params: SipParams;
}

export interface CSeq {
  readonly seq: number;
  readonly method: string;
}

const tokenPattern = /^[A-Za-z0-9\-.!%*_+`'~]+$/;
const hostPattern = /^(\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9\-.]+)$/;
/** RFC 3261 limits CSeq numbers to 2**31 - 1. */
export const maxCSeq = 2 ** 31 - 1;

export function isToken(value: string): boolean {
  return tokenPattern.test(value);
}

export function paramValue(params: SipParams, name: string): string | null | undefined {
  const lower = name.toLowerCase();
  for (const [key, value] of params) if (key.toLowerCase() === lower) return value;
  return undefined;
}

export function hasParam(params: SipParams, name: string): boolean {
  return paramValue(params, name) !== undefined;
}

/**
 * Splits `text` on `separator` where it is outside double quotes and angle brackets. A quoted
 * string may contain backslash escapes.
 */
export function splitOutsideQuotes(text: string, separator: string): string[] {
  const parts: string[] = [];
  let current = '';
  let inQuotes = false;
  let angleDepth = 0;
  for (let index = 0; index < text.length; index++) {
    const char = text[index] as string;
    if (inQuotes) {
      current += char;
      if (char === '\\' && index + 1 < text.length) {
        current += text[index + 1];
        index++;
      } else if (char === '"') inQuotes = false;
      continue;
    }
    if (char === '"') inQuotes = true;
    else if (char === '<') angleDepth++;
    else if (char === '>' && angleDepth > 0) angleDepth--;
    if (char === separator && angleDepth === 0) {
      parts.push(current);
      current = '';
    } else current += char;
  }
  parts.push(current);
  return parts;
}

export function unquote(value: string): string {
  const trimmed = value.trim();
  if (trimmed.length >= 2 && trimmed.startsWith('"') && trimmed.endsWith('"')) {
    return trimmed.slice(1, -1).replace(/\\(.)/g, '$1');
  }
  return trimmed;
}

export function quote(value: string): string {
  return `"${value.replace(/(["\\])/g, '\\$1')}"`;
}

/** Parses `;a=1;b;c="x y"` (the text after the first semicolon, or with it). */
export function parseParams(text: string): SipParams | null {
  const params: Array<readonly [string, string | null]> = [];
  for (const raw of splitOutsideQuotes(text, ';')) {
    const part = raw.trim();
    if (part === '') continue;
    const equals = part.indexOf('=');
    const name = (equals < 0 ? part : part.slice(0, equals)).trim();
    if (!isToken(name)) return null;
    if (equals < 0) {
      params.push([name, null]);
      continue;
    }
    const value = part.slice(equals + 1).trim();
    if (value === '') return null;
    params.push([name, value.startsWith('"') ? unquote(value) : value]);
  }
  return params;
}

export function formatParams(params: SipParams): string {
  let text = '';
  for (const [name, value] of params) {
    if (value === null) text += `;${name}`;
    else text += `;${name}=${isToken(value) || /^[\w.:[\]-]+$/.test(value) ? value : quote(value)}`;
  }
  return text;
}

function parsePort(text: string): number | null | undefined {
  if (!/^[0-9]{1,5}$/.test(text)) return undefined;
  const port = Number(text);
  return port >= 1 && port <= 65_535 ? port : undefined;
}

/** Splits `host[:port]`, with IPv6 references in brackets. Returns null when malformed. */
export function parseHostPort(text: string): { host: string; port: number | null } | null {
  let host: string;
  let portText: string | null = null;
  if (text.startsWith('[')) {
    const close = text.indexOf(']');
    if (close < 0) return null;
    host = text.slice(0, close + 1);
    const rest = text.slice(close + 1);
    if (rest !== '') {
      if (!rest.startsWith(':')) return null;
      portText = rest.slice(1);
    }
  } else {
    const colon = text.indexOf(':');
    host = colon < 0 ? text : text.slice(0, colon);
    if (colon >= 0) portText = text.slice(colon + 1);
  }
  if (!hostPattern.test(host)) return null;
  if (portText === null) return { host, port: null };
  const port = parsePort(portText);
  return port === undefined ? null : { host, port };
}

export function parseSipUri(text: string): SipUri | null {
  const trimmed = text.trim();
  const colon = trimmed.indexOf(':');
  if (colon < 0) return null;
  const scheme = trimmed.slice(0, colon).toLowerCase();
  if (scheme !== 'sip' && scheme !== 'sips') return null;
  let rest = trimmed.slice(colon + 1);
  let headers: string | null = null;
  const question = rest.indexOf('?');
  if (question >= 0) {
    headers = rest.slice(question + 1);
    rest = rest.slice(0, question);
  }
  let user: string | null = null;
  let password: string | null = null;
  const at = rest.lastIndexOf('@');
  if (at >= 0) {
    const userInfo = rest.slice(0, at);
    rest = rest.slice(at + 1);
    const passwordColon = userInfo.indexOf(':');
    user = passwordColon < 0 ? userInfo : userInfo.slice(0, passwordColon);
    password = passwordColon < 0 ? null : userInfo.slice(passwordColon + 1);
    if (user === '' || /[\s<>"]/.test(userInfo)) return null;
  }
  const semicolon = rest.indexOf(';');
  const hostPortText = semicolon < 0 ? rest : rest.slice(0, semicolon);
  const hostPort = parseHostPort(hostPortText);
  if (hostPort === null) return null;
  const params = semicolon < 0 ? [] : parseParams(rest.slice(semicolon + 1));
  if (params === null) return null;
  return { scheme, user, password, host: hostPort.host, port: hostPort.port, params, headers };
}

export function formatSipUri(uri: SipUri): string {
  let text = `${uri.scheme}:`;
  if (uri.user !== null) text += uri.password === null ? `${uri.user}@` : `${uri.user}:${uri.password}@`;
  text += uri.host;
  if (uri.port !== null) text += `:${uri.port}`;
  text += formatParams(uri.params);
  if (uri.headers !== null) text += `?${uri.headers}`;
  return text;
}

/**
 * Parses `"Name" <sip:u@h>;tag=1`, `Name <sip:u@h>` or the bare `sip:u@h;tag=1` (in the bare
 * form every parameter belongs to the header, RFC 3261 §20.10).
 */
export function parseNameAddr(text: string): NameAddr | null {
  const trimmed = text.trim();
  const open = findUnquoted(trimmed, '<');
  if (open < 0) {
    const semicolon = trimmed.indexOf(';');
    const uri = parseSipUri(semicolon < 0 ? trimmed : trimmed.slice(0, semicolon));
    if (uri === null || uri.headers !== null) return null;
    const params = semicolon < 0 ? [] : parseParams(trimmed.slice(semicolon + 1));
    return params === null ? null : { displayName: null, uri, params };
  }
  const close = trimmed.indexOf('>', open);
  if (close < 0) return null;
  const displayText = trimmed.slice(0, open).trim();
  let displayName: string | null = null;
  if (displayText !== '') {
    if (displayText.startsWith('"')) {
      if (!displayText.endsWith('"') || displayText.length < 2) return null;
      displayName = unquote(displayText);
    } else displayName = displayText;
  }
  const uri = parseSipUri(trimmed.slice(open + 1, close));
  if (uri === null) return null;
  const after = trimmed.slice(close + 1).trim();
  if (after !== '' && !after.startsWith(';')) return null;
  const params = parseParams(after);
  return params === null ? null : { displayName, uri, params };
}

export function formatNameAddr(address: NameAddr): string {
  const display = address.displayName === null ? '' : `${quote(address.displayName)} `;
  return `${display}<${formatSipUri(address.uri)}>${formatParams(address.params)}`;
}

function findUnquoted(text: string, wanted: string): number {
  let inQuotes = false;
  for (let index = 0; index < text.length; index++) {
    const char = text[index];
    if (inQuotes) {
      if (char === '\\') index++;
      else if (char === '"') inQuotes = false;
    } else if (char === '"') inQuotes = true;
    else if (char === wanted) return index;
  }
  return -1;
}

/** `SIP/2.0/UDP host:port;branch=...` */
export function parseVia(text: string): Via | null {
  const match = /^\s*SIP\s*\/\s*2\.0\s*\/\s*([A-Za-z0-9-]+)\s+([^;\s]+)\s*(;.*)?$/is.exec(text);
  if (match === null) return null;
  const hostPort = parseHostPort(match[2] ?? '');
  if (hostPort === null) return null;
  const params = parseParams(match[3] ?? '');
  if (params === null) return null;
  return { transport: (match[1] ?? '').toUpperCase(), host: hostPort.host, port: hostPort.port, params };
}

export function formatVia(via: Via): string {
  const port = via.port === null ? '' : `:${via.port}`;
  return `SIP/2.0/${via.transport} ${via.host}${port}${formatParams(via.params)}`;
}

export function parseCSeq(text: string): CSeq | null {
  const match = /^\s*([0-9]{1,10})\s+([^\s]+)\s*$/.exec(text);
  if (match === null) return null;
  const seq = Number(match[1]);
  const method = match[2] ?? '';
  if (seq > maxCSeq || !isToken(method)) return null;
  return { seq, method };
}
