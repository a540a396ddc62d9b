import type { CallAnalysis } from './callAnalysis.js';
import type { AnsweredBy, CallStatus, EndReason } from './callStatus.js';
import type { RatePolicy } from './rateLimit.js';
import type { WebhookEventType } from './statusEvents.js';
import type { VariableValue } from './templates.js';
import type { TrunkSettings } from './trunkSettings.js';

/**
 * The record types: what the service stores and passes around, as the rest of the code sees
 * them (camelCase, timestamps as ISO 8601 UTC strings). Ports (the Store, the queue) and
 * adapters build on these; the domain and the voice pipeline need nothing else from them.
 */

export interface AccountRecord {
  id: string;
  name: string;
  isDefault: boolean;
  /** Null: the service-wide default policy applies. */
  ratePolicy: RatePolicy | null;
  maxLiveCalls: number;
  createdAt: string;
}

export interface ApiKeyRecord {
  id: string;
  accountId: string;
  name: string;
  prefix: string;
  last4: string;
  createdAt: string;
  lastUsedAt: string | null;
  revokedAt: string | null;
}

export interface NewApiKey {
  accountId: string;
  name: string;
  keyHash: string;
  prefix: string;
  last4: string;
}

/** What authentication needs in one lookup: the key and its account. */
export interface ApiKeyWithAccount {
  key: ApiKeyRecord;
  keyHash: string;
  account: AccountRecord;
}

/** What a call's value of a variable must be: `any` takes a string, number or boolean. */
export const agentVariableTypes = ['any', 'string', 'number', 'boolean'] as const;
export type AgentVariableType = (typeof agentVariableTypes)[number];

export interface AgentVariable {
  name: string;
  /** Used when a call gives no value; null renders as empty text. */
  default: string | null;
  description: string;
  /** A call must give a value unless there is a default. Agents stored before this field: false. */
  required: boolean;
  /** Agents stored before this field: `any`. */
  type: AgentVariableType;
}

export const extractionFieldTypes = ['string', 'number', 'boolean', 'date'] as const;

export type ExtractionFieldType = (typeof extractionFieldTypes)[number];

export interface ExtractionField {
  name: string;
  type: ExtractionFieldType;
  description: string;
}

export type AgentBrain = 'script' | 'llm';

export interface AgentRecord {
  id: string;
  accountId: string;
  name: string;
  active: boolean;
  prompt: string;
  firstMessage: string;
  variables: AgentVariable[];
  extraction: ExtractionField[];
  brain: AgentBrain;
  /** The dialog graph of a `script` brain; null for `llm`. */
  script: unknown;
  /** Voice, STT, LLM provider settings; free-form until the voice pipeline defines them. */
  settings: Record<string, unknown>;
  maxDurationS: number;
  silenceTimeoutS: number;
  createdAt: string;
  updatedAt: string;
}

export type NewAgent = Omit<AgentRecord, 'id' | 'createdAt' | 'updatedAt'>;

export interface PhoneNumberRecord {
  accountId: string;
  number: string;
  /** `sandbox`, or the id of a SIP trunk. */
  route: string;
  /** The agent that answers calls to the number (issue 40); null: `inboundFallback` applies. */
  inboundAgentId: string | null;
  /** What a call to the number gets without an inbound agent. */
  inboundFallback: InboundFallback;
  /** Live calls on the number, inbound and outbound together; null: only the account's cap. */
  maxLiveCalls: number | null;
  createdAt: string;
}

export type InboundFallback = 'refuse' | 'voicemail';

/** Where a do-not-call entry came from. */
export const doNotCallSources = ['api', 'dashboard', 'cli', 'callee_request'] as const;
export type DoNotCallSource = (typeof doNotCallSources)[number];

/** A number the account never dials again (its suppression list). */
export interface DoNotCallEntry {
  accountId: string;
  number: string;
  reason: string | null;
  source: DoNotCallSource;
  createdAt: string;
}

export const transcriptEvents = [
  'dtmf',
  'tool_call',
  'tool_result',
  'transfer',
  'end_call',
  'do_not_call',
] as const;
export type TranscriptEvent = (typeof transcriptEvents)[number];

export interface TranscriptEntry {
  role: 'agent' | 'callee';
  text: string;
  start_ms: number;
  end_ms: number;
  /**
   * Not speech but a timed event of this side: `dtmf` (text: the keys pressed), `tool_call` (text:
   * the tool's name and its JSON arguments), `tool_result` (text: the JSON answer or the error).
   */
  event?: TranscriptEvent;
}

/** How the callee is reached: a phone number over SIP, or a browser over WebRTC (`POST /v1/web-calls`). */
export type CallChannel = 'phone' | 'web';
/** Who placed the call: we did (outbound), or someone called one of our numbers (inbound, issue 40). */
export type CallDirection = 'outbound' | 'inbound';

export interface CallRecord {
  id: string;
  accountId: string;
  agentId: string;
  channel: CallChannel;
  direction: CallDirection;
  /** An inbound call from the callee of a recent outbound call from that number: that call's id. */
  callbackOf: string | null;
  apiKeyId: string | null;
  fromNumber: string;
  toNumber: string;
  /** The per-call overrides exactly as sent; null when not sent. */
  firstMessage: string | null;
  context: string | null;
  variables: Record<string, VariableValue> | null;
  status: CallStatus;
  endReason: EndReason | null;
  answeredBy: AnsweredBy | null;
  createdAt: string;
  dialingAt: string | null;
  ringingAt: string | null;
  inProgressAt: string | null;
  endedAt: string | null;
  transcript: TranscriptEntry[];
  recordingPath: string | null;
  extractedData: Record<string, unknown>;
  /** The post-call analysis of an answered call (src/domain/callAnalysis.ts); null otherwise. */
  analysis: CallAnalysis | null;
  metrics: Record<string, unknown> | null;
  sipCallId: string | null;
  workerId: string | null;
  leaseExpiresAt: string | null;
}

export interface NewQueuedCall {
  id: string;
  accountId: string;
  agentId: string;
  /** The key that authorised the request; re-checked inside the insert transaction. */
  apiKeyId: string;
  fromNumber: string;
  toNumber: string;
  firstMessage: string | null;
  context: string | null;
  variables: Record<string, VariableValue> | null;
  createdAt: string;
}

export interface CallFinish {
  status: Extract<CallStatus, 'completed' | 'busy' | 'no_answer' | 'failed' | 'canceled'>;
  endReason: EndReason | null;
  answeredBy?: AnsweredBy | null;
  transcript?: TranscriptEntry[];
  recordingPath?: string | null;
  extractedData?: Record<string, unknown>;
  analysis?: CallAnalysis | null;
  metrics?: Record<string, unknown> | null;
  /**
   * The call's variables as its tools' answers left them (`response_variables`): the request's,
   * with what the tools set; absent: the request's stay.
   */
  variables?: Record<string, VariableValue> | null;
  atIso: string;
}

/**
 * What another process needs to end an answered call's SIP dialog after the worker that held it
 * died (a BYE, RFC 3261 §12.2.1.1): stored when the call is answered.
 */
export interface SipDialogRecord {
  /** The SIP Call-ID. */
  callId: string;
  localTag: string;
  remoteTag: string;
  /** The From value we sent, with our tag. */
  localAddress: string;
  /** The To value the far end answered with, with its tag. */
  remoteAddress: string;
  /** The far end's Contact URI. */
  remoteTarget: string;
  /** Record-Route values, in the order our requests carry them as Route. */
  routeSet: string[];
  /** The CSeq number of our last request in the dialog. */
  localSeq: number;
  /** Where the call's requests went: the trunk's address as vetted when it was dialled, and how. */
  destination: { host: string; port: number; transport?: 'udp' | 'tcp' | 'tls' };
  /** The trunk the call left through (its credentials answer a challenge to the BYE). */
  trunkId: string;
}

export interface TrunkRecord {
  id: string;
  accountId: string;
  name: string;
  uri: string;
  username: string | null;
  /** Encrypted at rest; only the telephony layer decrypts it. */
  passwordCiphertext: string | null;
  fromDomain: string | null;
  /** TLS and later per-trunk settings; see TrunkSettings. */
  settings: TrunkSettings;
  /** The latest registration state a worker saw (JSON), or null. */
  registration: string | null;
  createdAt: string;
}

/** An account's own key for a voice vendor (bring your own key). */
export interface ProviderCredentialRecord {
  id: string;
  accountId: string;
  name: string;
  provider: string;
  /** Sealed with the service's key; only the voice stack opens it, for a call. */
  apiKeyCiphertext: string;
  /** The key's last 4 characters: all that is ever shown of it. */
  apiKeyLast4: string;
  /** The vendor's own address when null. */
  baseUrl: string | null;
  createdAt: string;
}

export interface SandboxInviteRecord {
  sipCallId: string;
  toNumber: string;
  receivedAt: string;
}

/** The account's one webhook endpoint. */
export interface WebhookEndpointRecord {
  accountId: string;
  url: string;
  /** The signing secret sealed with the SecretBox (src/secrets/secretsAtRest.ts opens it). */
  secretCiphertext: string;
  /** The secret before the last rotation, sealed; it keeps signing until previousSecretExpiresAt. */
  previousSecretCiphertext: string | null;
  previousSecretExpiresAt: string | null;
  enabled: boolean;
  disabledReason: string | null;
  /** The event types it receives: `call.completed` always, the others when asked for. */
  eventTypes: WebhookEventType[];
  createdAt: string;
  updatedAt: string;
}

/** pending: a delivery job exists; parked: waits for an enabled endpoint; delivered/failed: done. */
export const eventStatuses = ['pending', 'parked', 'delivered', 'failed'] as const;

export type EventStatus = (typeof eventStatuses)[number];

export interface EventRecord {
  id: string;
  accountId: string;
  type: string;
  /** The call it is about; null for a campaign's event. */
  callId: string | null;
  /** The campaign it is about (`campaign.completed`); null for a call's event. */
  campaignId: string | null;
  /** The exact JSON bytes that are signed and sent on every attempt. */
  body: string;
  createdAt: string;
  status: EventStatus;
  attempts: number;
  nextAttemptAt: string | null;
  deliveredAt: string | null;
}

export interface EventAttemptRecord {
  eventId: string;
  attemptedAt: string;
  url: string;
  statusCode: number | null;
  latencyMs: number;
  responseExcerpt: string;
  error: string | null;
}

/* The account dashboard (issue 6): its users, their sessions and the queries its pages need. */

/** A person who signs in to the dashboard; belongs to one account. */
export interface UserRecord {
  id: string;
  accountId: string;
  /** Lower-cased. */
  email: string;
  /** `scrypt$N$r$p$salt$hash`, never the password. */
  passwordHash: string;
  createdAt: string;
  lastSignInAt: string | null;
}

export type NewUser = Pick<UserRecord, 'accountId' | 'email' | 'passwordHash'>;

/** A signed-in browser. Only the SHA-256 of the cookie's token is stored. */
export interface SessionRecord {
  tokenHash: string;
  userId: string;
  /**
   * The per-session token every form carries. Derived from the cookie's token when a request
   * loads the session; the store keeps only the marker `derived` (src/dashboard/security.ts).
   */
  csrfToken: string;
  createdAt: string;
  expiresAt: string;
  lastSeenAt: string;
}

export interface CallsPerDay {
  /** YYYY-MM-DD (UTC). */
  day: string;
  status: CallStatus;
  count: number;
}

/** A sandbox call placed by an agent test run (src/domain/scenarios.ts, docs/testing.md). */
export interface AgentTestCallRecord {
  callId: string;
  runId: string;
  accountId: string;
  agentId: string;
  /** The call's place in its run (scenario order, then repeat). */
  position: number;
  /** 1-based: which of the scenario's repeats this call is. */
  repeatIndex: number;
  /** The scenario as checked (JSON), which the sandbox plays and the call is judged against. */
  scenario: unknown;
  /** What this call alone runs with instead of the agent's own (`settings`, `prompt`); null: none. */
  agentOverrides: AgentOverrides | null;
  /** The call a replay run replays (its diff is against that call); null otherwise. */
  replayOf: string | null;
  createdAt: string;
}

/** Agent fields a test run may change for its own calls (merged over the stored agent). */
export interface AgentOverrides {
  prompt?: string;
  /** Merged into the agent's settings, object by object. */
  settings?: Record<string, unknown>;
  /** A script agent's dialog script, replacing the stored one (checked like an agent's). */
  script?: Record<string, unknown>;
}
