import { connect } from 'node:net';
import { assertConformsToOpenApi } from './openApiCheck.js';

export interface HttpResult {
  status: number;
  headers: Record<string, string>;
  body: unknown;
  text: string;
}

/**
 * fetch, returning the parsed JSON body beside the raw text. Every response is checked against the
 * service's OpenAPI document (see openApiCheck.ts).
 */
export async function request(
  url: string,
  init: { method?: string; headers?: Record<string, string>; body?: string | Buffer } = {},
): Promise<HttpResult> {
  const response = await fetch(url, {
    method: init.method ?? 'GET',
    headers: init.headers,
    body: init.body,
  });
  const text = await response.text();
  let body: unknown = null;
  try {
    body = JSON.parse(text);
  } catch {
    body = null;
  }
  const headers = Object.fromEntries(response.headers);
  await assertConformsToOpenApi(url, {
    method: init.method ?? 'GET',
    status: response.status,
    headers,
    text,
  });
  return { status: response.status, headers, body, text };
}

export function postCall(
  baseUrl: string,
  key: string | null,
  body: unknown,
  headers: Record<string, string> = {},
) {
  return request(`${baseUrl}/v1/calls/outbound`, {
    method: 'POST',
    headers: {
      'Content-Type': 'application/json',
      ...(key === null ? {} : { 'X-API-Key': key }),
      ...headers,
    },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });
}

/**
 * Sends bytes exactly as given on a raw TCP socket (client libraries may normalise header
 * names) and parses the status line, headers and body of the answer.
 */
export function rawHttp(baseUrl: string, requestText: string): Promise<HttpResult> {
  const { hostname, port } = new URL(baseUrl);
  return new Promise((resolve, reject) => {
    const socket = connect({ host: hostname, port: Number(port) });
    const chunks: Buffer[] = [];
    const timer = setTimeout(() => {
      socket.destroy();
      reject(new Error('raw request timed out'));
    }, 5_000);
    socket.on('data', (chunk) => chunks.push(chunk));
    socket.on('error', (error) => {
      clearTimeout(timer);
      reject(error);
    });
    socket.on('close', () => {
      clearTimeout(timer);
      const text = Buffer.concat(chunks).toString('utf8');
      const [head = '', body = ''] = text.split('\r\n\r\n', 2);
      const [statusLine = '', ...headerLines] = head.split('\r\n');
      const headers: Record<string, string> = {};
      for (const line of headerLines) {
        const colon = line.indexOf(':');
        if (colon > 0) headers[line.slice(0, colon).toLowerCase()] = line.slice(colon + 1).trim();
      }
      let parsed: unknown = null;
      try {
        parsed = JSON.parse(body);
      } catch {
        parsed = null;
      }
      const status = Number(statusLine.split(' ')[1]);
      const [method = 'GET', target = '/'] = requestText.split(' ', 2);
      assertConformsToOpenApi(new URL(target, baseUrl).href, { method, status, headers, text: body }).then(
        () => resolve({ status, headers, body: parsed, text: body }),
        reject,
      );
    });
    socket.write(requestText);
  });
}

/** A raw HTTP/1.1 POST of `body` with the header lines given verbatim, closing the connection. */
export function rawPost(
  baseUrl: string,
  path: string,
  headerLines: string[],
  body: string,
): Promise<HttpResult> {
  const { host } = new URL(baseUrl);
  const lines = [
    `POST ${path} HTTP/1.1`,
    `Host: ${host}`,
    ...headerLines,
    `Content-Length: ${Buffer.byteLength(body)}`,
    'Connection: close',
  ];
  return rawHttp(baseUrl, `${lines.join('\r\n')}\r\n\r\n${body}`);
}

/** Adds the account's own vendor keys through POST /v1/credentials, each named `<provider>-own`. */
export async function addOwnCredentials(
  baseUrl: string,
  apiKey: string,
  credentials: readonly (readonly [provider: string, key: string, vendorBaseUrl: string])[],
): Promise<void> {
  for (const [provider, key, vendorBaseUrl] of credentials) {
    const created = await request(`${baseUrl}/v1/credentials`, {
      method: 'POST',
      headers: { 'X-API-Key': apiKey, 'Content-Type': 'application/json' },
      body: JSON.stringify({ name: `${provider}-own`, provider, api_key: key, base_url: vendorBaseUrl }),
    });
    if (created.status !== 200)
      throw new Error(`adding the ${provider} key: ${created.status} ${created.text}`);
  }
}

/**
 * A caller of `/v1` with one API key: JSON in and out, each answer checked as `request` checks it.
 * The address and key are read at each call (tests set them in `beforeAll`).
 */
export function jsonApi(baseUrl: () => string, key: () => string) {
  return (path: string, init: { method?: string; body?: unknown } = {}) =>
    request(`${baseUrl()}/v1${path}`, {
      method: init.method ?? 'GET',
      headers: {
        'X-API-Key': key(),
        ...(init.body !== undefined ? { 'Content-Type': 'application/json' } : {}),
      },
      ...(init.body !== undefined ? { body: JSON.stringify(init.body) } : {}),
    });
}
