import type { FastifyReply, FastifyRequest } from 'fastify';
import type { CallControl } from '../calls/callControl.js';
import { AppError } from '../domain/errors.js';
import type { AccountRecord, SessionRecord, UserRecord } from '../domain/records.js';
import { decodeUtf8OrNull } from '../domain/utf8.js';
import type { WebIceServer } from '../domain/webCalls.js';
import type { RateLimiter } from '../limits/rateLimiter.js';
import type { Logger } from '../logger.js';
import type { RecordingStorage } from '../recordings/recordingStorage.js';
import type { SecretBox } from '../secrets/secretBox.js';
import type { Store } from '../store/types.js';
import type { Html } from './html.js';

/** What the dashboard needs from the process that serves it. */
export interface DashboardOptions {
  store: Store;
  logger: Logger;
  limiter: RateLimiter;
  /** Seals trunk passwords and webhook secrets; null: neither can be set (or shown) from the dashboard. */
  secretBox: SecretBox | null;
  /** Secure cookies (https); off only for plain http on localhost. */
  cookieSecure: boolean;
  /** The call workers, to wake them for a test call. */
  callControl?: CallControl | null | undefined;
  /** Where recordings live (files outside it are never served). */
  dataDir: string | null;
  /** The recordings' storage (erasing a number deletes them). */
  recordings?: { storage: RecordingStorage } | null | undefined;
  /** Allow private webhook URLs (CALLWRIGHT_WEBHOOK_ALLOW_PRIVATE). */
  webhookAllowPrivate: boolean;
  /** Allow trunks at private addresses (CALLWRIGHT_TRUNK_ALLOW_PRIVATE); refused when absent. */
  trunkAllowPrivate?: boolean;
  /** Allow vendor base URLs at private addresses (CALLWRIGHT_PROVIDER_ALLOW_PRIVATE). */
  providerAllowPrivate?: boolean;
  /** Whether a voice vendor has a service-wide key (test scenarios' persona and callee voice). */
  vendorConfigured?: (provider: string) => boolean;
  /** STUN/TURN servers a Talk call's browser uses (CALLWRIGHT_WEB_ICE_SERVERS). */
  webCallIceServers?: WebIceServer[];
}

/** The process's key for the secrets the dashboard seals and opens; a clear 503 without one. */
export function secretBoxOf(options: DashboardOptions): SecretBox {
  if (!options.secretBox) throw new AppError('unavailable', 'No secret key is loaded in this process.');
  return options.secretBox;
}

/** The signed-in person on a dashboard request. */
export interface Viewer {
  user: UserRecord;
  account: AccountRecord;
  session: SessionRecord;
}

const viewers = new WeakMap<FastifyRequest, Viewer>();

export function setViewer(request: FastifyRequest, viewer: Viewer): void {
  viewers.set(request, viewer);
}

export function viewerOf(request: FastifyRequest): Viewer {
  const viewer = viewers.get(request);
  if (!viewer) throw new AppError('unauthorized', 'sign in first');
  return viewer;
}

/** Fields of an application/x-www-form-urlencoded body (the app hands bodies over as bytes). */
/** A request's form, decoded once (the CSRF check and the page both read it; a form may be 40 MB). */
const decodedForms = new WeakMap<FastifyRequest, URLSearchParams>();

export function formOf(request: FastifyRequest): URLSearchParams {
  const decoded = decodedForms.get(request);
  if (decoded) return decoded;
  const form = decodeForm(request);
  decodedForms.set(request, form);
  return form;
}

function decodeForm(request: FastifyRequest): URLSearchParams {
  const type = String(request.headers['content-type'] ?? '')
    .split(';', 1)[0]
    ?.trim()
    .toLowerCase();
  if (request.body === undefined || request.body === null) return new URLSearchParams();
  if (type !== 'application/x-www-form-urlencoded') {
    throw new AppError('validation_error', 'forms are sent as application/x-www-form-urlencoded');
  }
  const body = request.body;
  const text = Buffer.isBuffer(body) ? decodeUtf8OrNull(body) : String(body);
  if (text === null) throw new AppError('validation_error', 'form fields must be UTF-8');
  return parseFormText(text);
}

/**
 * URLSearchParams would turn bytes that are not UTF-8 (raw or percent-encoded) into U+FFFD and
 * store that; here they are a 400, like in a JSON body.
 */
function parseFormText(text: string): URLSearchParams {
  const form = new URLSearchParams();
  for (const pair of text.split('&')) {
    if (pair === '') continue;
    const equals = pair.indexOf('=');
    const [name, value] = equals < 0 ? [pair, ''] : [pair.slice(0, equals), pair.slice(equals + 1)];
    try {
      form.append(decodeFormComponent(name), decodeFormComponent(value));
    } catch {
      throw new AppError('validation_error', 'form fields must be UTF-8');
    }
  }
  return form;
}

function decodeFormComponent(encoded: string): string {
  // A % not followed by two hex digits stays as it is, as URLSearchParams has it.
  return decodeURIComponent(encoded.replace(/\+/g, ' ').replace(/%(?![0-9A-Fa-f]{2})/g, '%25'));
}

export function field(form: URLSearchParams, name: string): string {
  return form.get(name) ?? '';
}

export function sendPage(reply: FastifyReply, page: Html, status = 200): FastifyReply {
  return reply.code(status).type('text/html; charset=utf-8').send(page.text);
}

/** See-other redirect after a successful form, to a path of ours only. */
export function redirectTo(reply: FastifyReply, path: string): FastifyReply {
  if (!path.startsWith('/') || path.startsWith('//')) throw new AppError('validation_error', 'bad redirect');
  return reply.code(303).header('Location', path).send();
}
