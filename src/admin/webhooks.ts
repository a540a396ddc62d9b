/**
 * Webhook administration shared by the command line, the API and (later) the dashboard: the
 * account's endpoint and secret, and the events with their delivery attempts.
 */

import { AppError } from '../domain/errors.js';
import { isIdOf } from '../domain/ids.js';
import type { EventAttemptRecord, EventRecord, WebhookEndpointRecord } from '../domain/records.js';
import { parseEventTypes } from '../domain/statusEvents.js';
import type { SecretBox } from '../secrets/secretBox.js';
import { openStoredSecret } from '../secrets/secretsAtRest.js';
import type { Store } from '../store/types.js';
import { generateWebhookSecret } from '../webhooks/signing.js';
import { checkWebhookUrl } from '../webhooks/urlGuard.js';
import { pageByIdDescending } from './pagination.js';

/** How long the secret before a rotation keeps signing. */
export const previousSecretLifetimeMs = 24 * 60 * 60 * 1000;
export const maxEventPageSize = 100;

function noEndpoint(): AppError {
  return new AppError(
    'not_found',
    'no webhook endpoint is configured; set one with `callwright webhook set URL`',
  );
}

/** The endpoint with its secrets opened, for whoever must show or use them. */
export type OpenedWebhookEndpoint = Omit<
  WebhookEndpointRecord,
  'secretCiphertext' | 'previousSecretCiphertext'
> & {
  secret: string;
  previousSecret: string | null;
};

/** Opens the endpoint's sealed secrets (the store keeps only ciphertext). */
export function openWebhookEndpoint(
  endpoint: WebhookEndpointRecord,
  secretBox: SecretBox,
): OpenedWebhookEndpoint {
  const { secretCiphertext, previousSecretCiphertext, ...rest } = endpoint;
  return {
    ...rest,
    secret: openStoredSecret(secretBox, secretCiphertext),
    previousSecret:
      previousSecretCiphertext === null ? null : openStoredSecret(secretBox, previousSecretCiphertext),
  };
}

/** Sets (or replaces) the account's endpoint with a new secret; refused URLs give a validation_error. */
export async function setWebhookEndpoint(
  store: Store,
  secretBox: SecretBox,
  accountId: string,
  url: string,
  options: { allowPrivate: boolean },
): Promise<OpenedWebhookEndpoint> {
  const checked = checkWebhookUrl(url, { allowPrivate: options.allowPrivate });
  const secret = generateWebhookSecret();
  const endpoint = await store.webhookEndpoints.set(
    accountId,
    checked.toString(),
    secretBox.seal(secret),
    new Date().toISOString(),
  );
  return { ...openWebhookEndpoint(endpoint, secretBox), secret };
}

export async function getWebhookEndpoint(
  store: Store,
  secretBox: SecretBox,
  accountId: string,
): Promise<OpenedWebhookEndpoint> {
  const endpoint = await store.webhookEndpoints.get(accountId);
  if (!endpoint) throw noEndpoint();
  return openWebhookEndpoint(endpoint, secretBox);
}

/** A new secret signs from now on; the old one signs too for 24 h (both signatures are sent). */
export async function rotateWebhookSecret(
  store: Store,
  secretBox: SecretBox,
  accountId: string,
): Promise<OpenedWebhookEndpoint> {
  const nowMs = Date.now();
  const secret = generateWebhookSecret();
  const rotated = await store.webhookEndpoints.rotateSecret(
    accountId,
    secretBox.seal(secret),
    new Date(nowMs + previousSecretLifetimeMs).toISOString(),
    new Date(nowMs).toISOString(),
  );
  if (!rotated) throw noEndpoint();
  return { ...openWebhookEndpoint(rotated, secretBox), secret };
}

/**
 * Which events the endpoint receives: `call.completed` always, plus those named (an unknown name
 * is a validation_error).
 */
export async function setWebhookEventTypes(
  store: Store,
  accountId: string,
  eventTypes: unknown,
): Promise<WebhookEndpointRecord> {
  const updated = await store.webhookEndpoints.setEventTypes(
    accountId,
    parseEventTypes(eventTypes),
    new Date().toISOString(),
  );
  if (!updated) throw noEndpoint();
  return updated;
}

/** Disabled: events wait (parked). Enabled again: the waiting events go out. */
export async function setWebhookEnabled(
  store: Store,
  accountId: string,
  enabled: boolean,
  reason: string | null = null,
): Promise<WebhookEndpointRecord> {
  const updated = await store.webhookEndpoints.setEnabled(
    accountId,
    enabled,
    enabled ? null : (reason ?? 'disabled by an administrator'),
    new Date().toISOString(),
  );
  if (!updated) throw noEndpoint();
  return updated;
}

/** The endpoint as shown to its account's administrator (the secret included: they need it to verify). */
export function describeWebhookEndpoint(endpoint: OpenedWebhookEndpoint, nowMs: number = Date.now()) {
  const previousActive =
    endpoint.previousSecret !== null &&
    endpoint.previousSecretExpiresAt !== null &&
    Date.parse(endpoint.previousSecretExpiresAt) > nowMs;
  return {
    url: endpoint.url,
    secret: endpoint.secret,
    enabled: endpoint.enabled,
    disabled_reason: endpoint.disabledReason,
    events: endpoint.eventTypes,
    previous_secret_expires_at: previousActive ? endpoint.previousSecretExpiresAt : null,
    created_at: endpoint.createdAt,
    updated_at: endpoint.updatedAt,
  };
}

export function describeEvent(event: EventRecord) {
  return {
    event_id: event.id,
    type: event.type,
    call_id: event.callId,
    campaign_id: event.campaignId,
    status: event.status,
    attempts: event.attempts,
    next_attempt_at: event.nextAttemptAt,
    delivered_at: event.deliveredAt,
    created_at: event.createdAt,
  };
}

export function describeAttempt(attempt: EventAttemptRecord) {
  return {
    attempted_at: attempt.attemptedAt,
    url: attempt.url,
    status_code: attempt.statusCode,
    latency_ms: attempt.latencyMs,
    response_excerpt: attempt.responseExcerpt,
    error: attempt.error,
  };
}

/** One page of the account's events, newest first. */
export async function listEvents(
  store: Store,
  accountId: string,
  options: { limit: number; cursor?: string | undefined },
) {
  if (!Number.isInteger(options.limit) || options.limit < 1 || options.limit > maxEventPageSize) {
    throw new AppError('validation_error', `limit must be a whole number from 1 to ${maxEventPageSize}`);
  }
  return pageByIdDescending(
    'event',
    options,
    (query) => store.events.list(accountId, query),
    (events) => events.map(describeEvent),
  );
}

async function eventOf(store: Store, accountId: string, eventId: string): Promise<EventRecord> {
  const event = isIdOf('event', eventId) ? await store.events.get(accountId, eventId) : null;
  if (!event) throw new AppError('not_found', `event ${eventId.slice(0, 64)} not found`);
  return event;
}

/** The event, its payload exactly as sent, and every delivery attempt. */
export async function showEvent(store: Store, accountId: string, eventId: string) {
  const event = await eventOf(store, accountId, eventId);
  const attempts = await store.events.attempts(event.id);
  return {
    ...describeEvent(event),
    payload: JSON.parse(event.body) as Record<string, unknown>,
    attempt_log: attempts.map(describeAttempt),
  };
}

/** Sends the event again now, whatever its status (same event id, same bytes). */
export async function resendEvent(store: Store, accountId: string, eventId: string) {
  const event = await eventOf(store, accountId, eventId);
  const requeued = await store.events.requeue(accountId, event.id, Date.now());
  if (!requeued) throw new AppError('not_found', `event ${eventId.slice(0, 64)} not found`);
  return describeEvent(requeued);
}
