import { withDefaults } from '../domain/agentVariables.js';
import type { AnsweredBy, CallStatus, EndReason } from '../domain/callStatus.js';
import type {
  AccountRecord,
  AgentBrain,
  AgentRecord,
  AgentVariable,
  ApiKeyRecord,
  CallRecord,
  EventAttemptRecord,
  EventRecord,
  EventStatus,
  PhoneNumberRecord,
  ProviderCredentialRecord,
  SessionRecord,
  TrunkRecord,
  UserRecord,
  WebhookEndpointRecord,
} from '../domain/records.js';
import { eventTypesFromStored } from '../domain/statusEvents.js';
import { trunkSettingsFromJson } from '../domain/trunkSettings.js';

/**
 * How one dialect's driver hands columns over: SQLite gives integers for booleans, JSON as text
 * and timestamps as ISO text; `pg` gives booleans, parsed jsonb and Date objects. Each adapter
 * supplies its codec; the mapping from columns to records is written once, here.
 */
export interface ColumnCodec {
  bool(value: unknown): boolean;
  /** A JSON column's value (SQL NULL stays null). */
  json<T>(value: unknown): T;
  time(value: unknown): string;
  timeOrNull(value: unknown): string | null;
}

type Columns<Name extends string> = Readonly<Record<Name, unknown>>;

const text = (value: unknown) => value as string;
const textOrNull = (value: unknown) => value as string | null;
const count = (value: unknown) => Number(value);

export function accountFromRow(
  row: Columns<
    | 'id'
    | 'name'
    | 'is_default'
    | 'rate_limit_requests'
    | 'rate_limit_window_s'
    | 'max_live_calls'
    | 'created_at'
  >,
  codec: ColumnCodec,
): AccountRecord {
  return {
    id: text(row.id),
    name: text(row.name),
    isDefault: codec.bool(row.is_default),
    ratePolicy:
      row.rate_limit_requests !== null && row.rate_limit_window_s !== null
        ? { requests: count(row.rate_limit_requests), windowS: count(row.rate_limit_window_s) }
        : null,
    maxLiveCalls: count(row.max_live_calls),
    createdAt: codec.time(row.created_at),
  };
}

export function apiKeyFromRow(
  row: Columns<
    'id' | 'account_id' | 'name' | 'prefix' | 'last4' | 'created_at' | 'last_used_at' | 'revoked_at'
  >,
  codec: ColumnCodec,
): ApiKeyRecord {
  return {
    id: text(row.id),
    accountId: text(row.account_id),
    name: text(row.name),
    prefix: text(row.prefix),
    last4: text(row.last4),
    createdAt: codec.time(row.created_at),
    lastUsedAt: codec.timeOrNull(row.last_used_at),
    revokedAt: codec.timeOrNull(row.revoked_at),
  };
}

export function agentFromRow(
  row: Columns<
    | 'id'
    | 'account_id'
    | 'name'
    | 'active'
    | 'prompt'
    | 'first_message'
    | 'variables'
    | 'extraction'
    | 'brain'
    | 'script'
    | 'settings'
    | 'max_duration_s'
    | 'silence_timeout_s'
    | 'created_at'
    | 'updated_at'
  >,
  codec: ColumnCodec,
): AgentRecord {
  return {
    id: text(row.id),
    accountId: text(row.account_id),
    name: text(row.name),
    active: codec.bool(row.active),
    prompt: text(row.prompt),
    firstMessage: text(row.first_message),
    variables: (codec.json(row.variables) as AgentVariable[]).map(withDefaults),
    extraction: codec.json(row.extraction),
    brain: row.brain as AgentBrain,
    script: codec.json(row.script) ?? null,
    settings: codec.json(row.settings),
    maxDurationS: count(row.max_duration_s),
    silenceTimeoutS: count(row.silence_timeout_s),
    createdAt: codec.time(row.created_at),
    updatedAt: codec.time(row.updated_at),
  };
}

export function phoneNumberFromRow(
  row: Columns<'account_id' | 'number' | 'route' | 'created_at'> & {
    readonly inbound_agent_id?: unknown;
    readonly inbound_fallback?: unknown;
    readonly max_live_calls?: unknown;
  },
  codec: ColumnCodec,
): PhoneNumberRecord {
  return {
    accountId: text(row.account_id),
    number: text(row.number),
    route: text(row.route),
    // Rows from before migration 450 have no inbound agent and refuse inbound calls.
    inboundAgentId: typeof row.inbound_agent_id === 'string' ? row.inbound_agent_id : null,
    inboundFallback: row.inbound_fallback === 'voicemail' ? 'voicemail' : 'refuse',
    maxLiveCalls:
      row.max_live_calls === null || row.max_live_calls === undefined ? null : Number(row.max_live_calls),
    createdAt: codec.time(row.created_at),
  };
}

export function callFromRow(
  row: Columns<
    | 'id'
    | 'account_id'
    | 'agent_id'
    | 'api_key_id'
    | 'from_number'
    | 'to_number'
    | 'first_message'
    | 'context'
    | 'variables'
    | 'status'
    | 'end_reason'
    | 'answered_by'
    | 'created_at'
    | 'dialing_at'
    | 'ringing_at'
    | 'in_progress_at'
    | 'ended_at'
    | 'transcript'
    | 'recording_path'
    | 'extracted_data'
    | 'analysis'
    | 'metrics'
    | 'sip_call_id'
    | 'worker_id'
    | 'lease_expires_at'
  > & { readonly channel?: unknown; readonly direction?: unknown; readonly callback_of?: unknown },
  codec: ColumnCodec,
): CallRecord {
  return {
    id: text(row.id),
    accountId: text(row.account_id),
    agentId: text(row.agent_id),
    // Rows from before migration 405, or read without the column, are phone calls.
    channel: row.channel === 'web' ? 'web' : 'phone',
    // Rows from before migration 450, or read without the column, are outbound calls.
    direction: row.direction === 'inbound' ? 'inbound' : 'outbound',
    callbackOf: typeof row.callback_of === 'string' ? row.callback_of : null,
    apiKeyId: textOrNull(row.api_key_id),
    fromNumber: text(row.from_number),
    toNumber: text(row.to_number),
    firstMessage: textOrNull(row.first_message),
    context: textOrNull(row.context),
    variables: codec.json(row.variables),
    status: row.status as CallStatus,
    endReason: row.end_reason as EndReason | null,
    answeredBy: row.answered_by as AnsweredBy | null,
    createdAt: codec.time(row.created_at),
    dialingAt: codec.timeOrNull(row.dialing_at),
    ringingAt: codec.timeOrNull(row.ringing_at),
    inProgressAt: codec.timeOrNull(row.in_progress_at),
    endedAt: codec.timeOrNull(row.ended_at),
    transcript: codec.json(row.transcript),
    recordingPath: textOrNull(row.recording_path),
    extractedData: codec.json(row.extracted_data),
    analysis: codec.json(row.analysis) ?? null,
    metrics: codec.json(row.metrics),
    sipCallId: textOrNull(row.sip_call_id),
    workerId: textOrNull(row.worker_id),
    leaseExpiresAt: codec.timeOrNull(row.lease_expires_at),
  };
}

export function credentialFromRow(
  row: Columns<
    | 'id'
    | 'account_id'
    | 'name'
    | 'provider'
    | 'api_key_ciphertext'
    | 'api_key_last4'
    | 'base_url'
    | 'created_at'
  >,
  codec: ColumnCodec,
): ProviderCredentialRecord {
  return {
    id: text(row.id),
    accountId: text(row.account_id),
    name: text(row.name),
    provider: text(row.provider),
    apiKeyCiphertext: text(row.api_key_ciphertext),
    apiKeyLast4: text(row.api_key_last4),
    baseUrl: textOrNull(row.base_url),
    createdAt: codec.time(row.created_at),
  };
}

export function trunkFromRow(
  row: Columns<
    | 'id'
    | 'account_id'
    | 'name'
    | 'uri'
    | 'username'
    | 'password_ciphertext'
    | 'from_domain'
    | 'settings'
    | 'registration'
    | 'created_at'
  >,
  codec: ColumnCodec,
): TrunkRecord {
  return {
    id: text(row.id),
    accountId: text(row.account_id),
    name: text(row.name),
    uri: text(row.uri),
    username: textOrNull(row.username),
    passwordCiphertext: textOrNull(row.password_ciphertext),
    fromDomain: textOrNull(row.from_domain),
    settings: trunkSettingsFromJson(text(row.settings)),
    registration: textOrNull(row.registration),
    createdAt: codec.time(row.created_at),
  };
}

export function webhookEndpointFromRow(
  row: Columns<
    | 'account_id'
    | 'url'
    | 'secret'
    | 'previous_secret'
    | 'previous_secret_expires_at'
    | 'enabled'
    | 'disabled_reason'
    | 'event_types'
    | 'created_at'
    | 'updated_at'
  >,
  codec: ColumnCodec,
): WebhookEndpointRecord {
  return {
    accountId: text(row.account_id),
    url: text(row.url),
    secretCiphertext: text(row.secret),
    previousSecretCiphertext: textOrNull(row.previous_secret),
    previousSecretExpiresAt: codec.timeOrNull(row.previous_secret_expires_at),
    enabled: codec.bool(row.enabled),
    disabledReason: textOrNull(row.disabled_reason),
    eventTypes: eventTypesFromStored(textOrNull(row.event_types)),
    createdAt: codec.time(row.created_at),
    updatedAt: codec.time(row.updated_at),
  };
}

export function eventFromRow(
  row: Columns<
    | 'id'
    | 'account_id'
    | 'type'
    | 'call_id'
    | 'campaign_id'
    | 'body'
    | 'created_at'
    | 'status'
    | 'attempts'
    | 'next_attempt_at'
    | 'delivered_at'
  >,
  codec: ColumnCodec,
): EventRecord {
  return {
    id: text(row.id),
    accountId: text(row.account_id),
    type: text(row.type),
    callId: textOrNull(row.call_id),
    campaignId: textOrNull(row.campaign_id),
    body: text(row.body),
    createdAt: codec.time(row.created_at),
    status: row.status as EventStatus,
    attempts: count(row.attempts),
    nextAttemptAt: codec.timeOrNull(row.next_attempt_at),
    deliveredAt: codec.timeOrNull(row.delivered_at),
  };
}

export function eventAttemptFromRow(
  row: Columns<
    'event_id' | 'attempted_at' | 'url' | 'status_code' | 'latency_ms' | 'response_excerpt' | 'error'
  >,
  codec: ColumnCodec,
): EventAttemptRecord {
  return {
    eventId: text(row.event_id),
    attemptedAt: codec.time(row.attempted_at),
    url: text(row.url),
    statusCode: row.status_code === null ? null : count(row.status_code),
    latencyMs: count(row.latency_ms),
    responseExcerpt: textOrNull(row.response_excerpt) ?? '',
    error: textOrNull(row.error),
  };
}

export function userFromRow(
  row: Columns<'id' | 'account_id' | 'email' | 'password_hash' | 'created_at' | 'last_sign_in_at'>,
  codec: ColumnCodec,
): UserRecord {
  return {
    id: text(row.id),
    accountId: text(row.account_id),
    email: text(row.email),
    passwordHash: text(row.password_hash),
    createdAt: codec.time(row.created_at),
    lastSignInAt: codec.timeOrNull(row.last_sign_in_at),
  };
}

export function sessionFromRow(
  row: Columns<'token_hash' | 'user_id' | 'csrf_token' | 'created_at' | 'expires_at' | 'last_seen_at'>,
  codec: ColumnCodec,
): SessionRecord {
  return {
    tokenHash: text(row.token_hash),
    userId: text(row.user_id),
    csrfToken: text(row.csrf_token),
    createdAt: codec.time(row.created_at),
    expiresAt: codec.time(row.expires_at),
    lastSeenAt: codec.time(row.last_seen_at),
  };
}
