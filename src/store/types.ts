import type { CallAnalysis } from '../domain/callAnalysis.js';
import type { CallStatus } from '../domain/callStatus.js';
import type { AppError } from '../domain/errors.js';
import type { RateDecision, RatePolicy } from '../domain/rateLimit.js';
import type {
  AccountRecord,
  AgentRecord,
  ApiKeyRecord,
  ApiKeyWithAccount,
  CallFinish,
  CallRecord,
  CallsPerDay,
  DoNotCallEntry,
  DoNotCallSource,
  EventAttemptRecord,
  EventRecord,
  NewAgent,
  NewApiKey,
  NewQueuedCall,
  NewUser,
  PhoneNumberRecord,
  ProviderCredentialRecord,
  SandboxInviteRecord,
  SessionRecord,
  SipDialogRecord,
  TranscriptEntry,
  TrunkRecord,
  UserRecord,
  WebhookEndpointRecord,
} from '../domain/records.js';
import type { OptionalEventType, WebhookEventType } from '../domain/statusEvents.js';
import type { Price } from '../domain/usage.js';
import type { JobQueue } from '../queue/types.js';
import type { AgentTestRepository } from './agentTestRepository.js';
import type { CallerIdHealthRepository } from './callerIdHealthRepository.js';
import type {
  CampaignContactEditRepository,
  CampaignRepository,
  CampaignResultRepository,
  CampaignRulesRepository,
} from './campaignRepository.js';
import type { DialRateRepository, PrivacyRepository } from './dataRulesRepository.js';
import type { HoldAudioRepository } from './holdAudioRepository.js';
import type { InboundCallRepository } from './inboundCallRepository.js';
import type { WebCallRepository } from './webCallRepository.js';

export interface CallListQuery {
  status?: CallStatus;
  limit: number;
  /** Calls strictly older than this call id (ids sort by creation time). */
  before?: string;
}

export interface AccountRepository {
  create(input: {
    name: string;
    ratePolicy?: RatePolicy | null;
    maxLiveCalls?: number;
  }): Promise<AccountRecord>;
  get(id: string): Promise<AccountRecord | null>;
  list(): Promise<AccountRecord[]>;
  /** The account verbs act on when none is named; made on first use. */
  getOrCreateDefault(): Promise<AccountRecord>;
}

export interface ApiKeyRepository {
  create(input: NewApiKey): Promise<ApiKeyRecord>;
  findByHash(keyHash: string): Promise<ApiKeyWithAccount | null>;
  list(accountId: string): Promise<ApiKeyRecord[]>;
  /** Null when no such key in that account; revoking twice keeps the first time. */
  revoke(accountId: string, keyId: string, atIso: string): Promise<ApiKeyRecord | null>;
  touchLastUsed(keyId: string, atIso: string): Promise<void>;
}

export interface AgentRepository {
  create(input: NewAgent): Promise<AgentRecord>;
  get(accountId: string, agentId: string): Promise<AgentRecord | null>;
  list(accountId: string): Promise<AgentRecord[]>;
  setActive(accountId: string, agentId: string, active: boolean): Promise<AgentRecord | null>;
}

export interface PhoneNumberRepository {
  add(input: { accountId: string; number: string; route: string }): Promise<PhoneNumberRecord>;
  get(accountId: string, number: string): Promise<PhoneNumberRecord | null>;
  list(accountId: string): Promise<PhoneNumberRecord[]>;
  remove(accountId: string, number: string): Promise<boolean>;
}

/** Builds the call.completed event body from the call as it is once terminal. */
export type CompletedEventBuilder = (call: CallRecord) => { id: string; createdAt: string; body: string };

export interface CallRepository {
  /**
   * In one durable transaction: re-checks that the API key is not revoked, inserts the call in
   * `queued` and its dispatch job. Resolves to null (and writes nothing) when the key was revoked.
   */
  createQueued(input: NewQueuedCall): Promise<CallRecord | null>;
  get(accountId: string, callId: string): Promise<CallRecord | null>;
  /** The call whatever its account: for workers, never for the API. */
  getById(callId: string): Promise<CallRecord | null>;
  list(accountId: string, query: CallListQuery): Promise<CallRecord[]>;
  /**
   * The at-most-once gate: moves a `queued` call to `dialing` under this worker's lease, in one
   * transaction that also checks the account's live-call cap. `capped` leaves it queued.
   */
  claimForDialing(
    callId: string,
    lease: { workerId: string; untilIso: string; atIso: string },
  ): Promise<{ claimed: CallRecord } | { refused: 'not_queued' | 'capped' }>;
  /** Records a live transition (ringing, in_progress) if the call is still live and ours. */
  markLive(
    callId: string,
    workerId: string,
    status: 'ringing' | 'in_progress',
    atIso: string,
  ): Promise<boolean>;
  setSipCallId(callId: string, sipCallId: string): Promise<void>;
  /**
   * The transcript so far of a call in progress, for the dashboard and GET /v1/calls/{id} while it
   * runs (a worker and the API may be different processes). Ignored once the call has ended: the
   * final transcript is written by `finish`.
   */
  setLiveTranscript(callId: string, transcript: TranscriptEntry[]): Promise<void>;
  /** Stores the SIP dialog of an answered call, so a BYE can end it if this worker dies. */
  setSipDialog(callId: string, dialog: SipDialogRecord): Promise<void>;
  /** The stored SIP dialog of the call, or null when none was stored. */
  getSipDialog(callId: string): Promise<SipDialogRecord | null>;
  /** Extends the leases of every live call this worker holds; returns how many. */
  renewLeases(workerId: string, untilIso: string): Promise<number>;
  /** Live calls (dialing, ringing, in_progress) whose lease ended before `beforeIso`, or held by other workers. */
  listAbandoned(options: { beforeIso: string; notHeldBy?: string }): Promise<CallRecord[]>;
  /**
   * Makes the call terminal and writes its call.completed event (the outbox) in the same
   * transaction. Null when the call was already terminal: a call ends exactly once.
   */
  finish(callId: string, finish: CallFinish, buildEvent: CompletedEventBuilder): Promise<CallRecord | null>;
  /**
   * Replaces the analysis and extracted data of an ended call (a re-run of its analysis); the
   * updated record, or null when the account has no such call or it has not ended.
   */
  setAnalysis(
    accountId: string,
    callId: string,
    result: { extractedData: Record<string, unknown>; analysis: CallAnalysis },
  ): Promise<CallRecord | null>;
  countByStatus(accountId?: string): Promise<Record<string, number>>;
  /** Asks the worker holding a live call to hang it up (it may be another process). False: not live. */
  requestCancel(callId: string, atIso: string): Promise<boolean>;
  /** The ids of this worker's live calls that someone asked to cancel. */
  listCancelRequests(workerId: string): Promise<string[]>;
}

export interface TrunkRepository {
  create(input: Omit<TrunkRecord, 'id' | 'createdAt' | 'registration'>): Promise<TrunkRecord>;
  get(accountId: string, idOrName: string): Promise<TrunkRecord | null>;
  list(accountId: string): Promise<TrunkRecord[]>;
  remove(accountId: string, id: string): Promise<boolean>;
  /** Every account's trunks that register (settings.register), for the workers to keep registered. */
  listRegistering(): Promise<TrunkRecord[]>;
  /** The latest registration state a worker saw (JSON), shown by the CLI and the dashboard. */
  setRegistration(id: string, stateJson: string): Promise<void>;
}

export interface ProviderCredentialRepository {
  /** Conflict when the account already has a credential of that name. */
  create(input: Omit<ProviderCredentialRecord, 'id' | 'createdAt'>): Promise<ProviderCredentialRecord>;
  list(accountId: string): Promise<ProviderCredentialRecord[]>;
  get(accountId: string, idOrName: string): Promise<ProviderCredentialRecord | null>;
  remove(accountId: string, id: string): Promise<boolean>;
}

export interface AccountPriceRepository {
  /** The account's own prices, or an empty list when it has none. */
  get(accountId: string): Promise<Price[]>;
  /** Replaces the account's prices (already checked). */
  set(accountId: string, prices: Price[]): Promise<void>;
}

export interface DoNotCallRepository {
  /** Adds numbers (an entry already there keeps its first reason and source); returns how many were new. */
  add(
    accountId: string,
    entries: { number: string; reason: string | null; source: DoNotCallSource }[],
  ): Promise<number>;
  get(accountId: string, number: string): Promise<DoNotCallEntry | null>;
  /** Numbers in order, from after `afterNumber`. */
  list(accountId: string, options: { limit: number; afterNumber?: string }): Promise<DoNotCallEntry[]>;
  remove(accountId: string, number: string): Promise<boolean>;
}

export interface SandboxInviteRepository {
  record(entry: SandboxInviteRecord): Promise<void>;
  list(): Promise<SandboxInviteRecord[]>;
}

export interface Store {
  readonly accounts: AccountRepository;
  readonly apiKeys: ApiKeyRepository;
  readonly agents: AgentRepository;
  readonly numbers: PhoneNumberRepository;
  readonly calls: CallRepository;
  readonly trunks: TrunkRepository;
  readonly credentials: ProviderCredentialRepository;
  readonly prices: AccountPriceRepository;
  readonly doNotCall: DoNotCallRepository;
  readonly campaigns: CampaignRepository;
  readonly campaignRules: CampaignRulesRepository;
  readonly callerIdHealth: CallerIdHealthRepository;
  readonly webCalls: WebCallRepository;
  /** Inbound calls (issue 40): numbers' inbound agents, callbacks, the inbound claim. */
  readonly inboundCalls: InboundCallRepository;
  readonly campaignContactEdits: CampaignContactEditRepository;
  readonly campaignResults: CampaignResultRepository;
  readonly privacy: PrivacyRepository;
  readonly dialRates: DialRateRepository;
  readonly agentTests: AgentTestRepository;
  /** Agents' uploaded hold audio (settings.transfer.hold_audio "file"). */
  readonly holdAudio: HoldAudioRepository;
  readonly sandboxInvites: SandboxInviteRepository;
  readonly webhookEndpoints: WebhookEndpointRepository;
  readonly events: EventRepository;
  /**
   * A named secret the service made for itself (e.g. the recording-link key), created on first
   * use. Stored as given: callers store it sealed (src/secrets/secretsAtRest.ts).
   */
  serviceSecret(name: string, create: () => string): Promise<string>;
  /**
   * In one transaction, rewrites every webhook secret (current and previous) and the named
   * service secrets for which `reseal` returns a new value (those an earlier version stored in
   * plain text). Resolves to how many values were rewritten.
   */
  sealStoredSecrets(
    reseal: (stored: string) => string | null,
    serviceSecretNames: readonly string[],
  ): Promise<number>;
  /** Resolves when the database answers. */
  ping(): Promise<void>;
  close(): Promise<void>;
}

/** A store and the job queue kept in the same database (SQLite's jobs table, or pg-boss). */
export interface StoreWithQueue extends Store {
  readonly queue: JobQueue;
}

export interface EventListQuery {
  limit: number;
  /** Events strictly older than this event id (ids sort by creation time). */
  before?: string;
}

/** What one attempt decided, written with the attempt in one transaction. */
export type AttemptOutcome =
  | { kind: 'delivered' }
  | { kind: 'retry'; runAtMs: number }
  | { kind: 'failed' }
  /** The endpoint answered 410: it is disabled with this reason and the event parked. */
  | { kind: 'gone'; reason: string };

export interface WebhookEndpointRepository {
  /**
   * Creates or replaces the account's endpoint (enabled, no previous secret); requeues parked events.
   * The secret arrives sealed (SecretBox): the store never sees it in plain text.
   */
  set(
    accountId: string,
    url: string,
    secretCiphertext: string,
    atIso: string,
  ): Promise<WebhookEndpointRecord>;
  get(accountId: string): Promise<WebhookEndpointRecord | null>;
  /** The current secret becomes the previous one until `previousExpiresAtIso`. Null: no endpoint. */
  rotateSecret(
    accountId: string,
    newSecretCiphertext: string,
    previousExpiresAtIso: string,
    atIso: string,
  ): Promise<WebhookEndpointRecord | null>;
  /** Enabling requeues the account's parked events in the same transaction. Null: no endpoint. */
  setEnabled(
    accountId: string,
    enabled: boolean,
    reason: string | null,
    atIso: string,
  ): Promise<WebhookEndpointRecord | null>;
  /** Which event types the endpoint receives (`call.completed` among them). Null: no endpoint. */
  setEventTypes(
    accountId: string,
    eventTypes: readonly WebhookEventType[],
    atIso: string,
  ): Promise<WebhookEndpointRecord | null>;
}

/** An event other than call.completed, about one call or one campaign. */
export interface NewStatusEvent {
  id: string;
  accountId: string;
  type: OptionalEventType;
  callId: string | null;
  campaignId: string | null;
  /** The exact JSON that is signed and sent. */
  body: string;
  createdAt: string;
}

export interface EventRepository {
  /** The event whatever its account: for the delivery worker, never for the API. */
  getById(eventId: string): Promise<EventRecord | null>;
  get(accountId: string, eventId: string): Promise<EventRecord | null>;
  list(accountId: string, query: EventListQuery): Promise<EventRecord[]>;
  attempts(eventId: string): Promise<EventAttemptRecord[]>;
  /** In one transaction: stores the attempt, updates the event, and completes or reschedules the job. */
  recordAttempt(
    jobId: string,
    attempt: EventAttemptRecord,
    outcome: AttemptOutcome,
  ): Promise<EventRecord | null>;
  /**
   * Parks the event and completes its job, unless the account's endpoint is (now) enabled: that
   * check and the park are one transaction, so an enable cannot slip between them. False: not parked.
   */
  park(eventId: string, jobId: string): Promise<boolean>;
  /**
   * Sends the event again at `runAtMs` (a new job). Conflict while an attempt is in flight;
   * a waiting job is moved rather than duplicated. Null: no such event in the account.
   */
  requeue(accountId: string, eventId: string, runAtMs: number): Promise<EventRecord | null>;
  /**
   * Stores the event and its delivery job in one transaction, if the account's endpoint receives
   * its type and the call (campaign) has no event of that type yet. True: stored.
   */
  addStatusEvent(event: NewStatusEvent): Promise<boolean>;
}

export interface UserRepository {
  /** Conflict when the email is taken. */
  create(input: NewUser): Promise<UserRecord>;
  /** First-run sign-up: creates the user only while no user exists at all (one transaction). */
  createFirst(input: NewUser): Promise<UserRecord | null>;
  findByEmail(email: string): Promise<UserRecord | null>;
  count(): Promise<number>;
  /** The account's users, by email. */
  list(accountId: string): Promise<UserRecord[]>;
  /** Sets a new password hash and ends the user's sessions; null when no such user. */
  setPasswordHash(accountId: string, email: string, passwordHash: string): Promise<UserRecord | null>;
  /** Removes the user and their sessions; false when no such user. */
  remove(accountId: string, email: string): Promise<boolean>;
  recordSignIn(userId: string, atIso: string): Promise<void>;
}

export interface SessionRepository {
  create(input: Omit<SessionRecord, 'lastSeenAt'>): Promise<SessionRecord>;
  /** The live session and its user; null when unknown or expired. */
  find(tokenHash: string, nowIso: string): Promise<{ session: SessionRecord; user: UserRecord } | null>;
  touch(tokenHash: string, atIso: string): Promise<void>;
  delete(tokenHash: string): Promise<void>;
  deleteExpired(nowIso: string): Promise<number>;
}

export interface CallFilter {
  status?: CallStatus;
  /** Calls created at or after this instant. */
  fromIso?: string;
  /** Calls created strictly before this instant. */
  toIso?: string;
  limit: number;
}

export interface DashboardQueries {
  listCalls(accountId: string, filter: CallFilter): Promise<CallRecord[]>;
  callsPerDay(accountId: string, sinceIso: string): Promise<CallsPerDay[]>;
  /** Terminal calls since then that carry metrics, oldest first, for the latency chart. */
  callMetricsSince(
    accountId: string,
    sinceIso: string,
  ): Promise<{ id: string; agentId: string; endedAt: string; metrics: Record<string, unknown> }[]>;
  /** The id of the call's call.completed event, if it has been written. */
  eventIdForCall(accountId: string, callId: string): Promise<string | null>;
}

/** Agent edits from the dashboard. Declared apart so the dashboard's additions stay in one place. */
export interface AgentRepository {
  /** Replaces the editable fields; null when no such agent in that account. */
  update(
    accountId: string,
    agentId: string,
    fields: Omit<NewAgent, 'accountId' | 'active'>,
  ): Promise<AgentRecord | null>;
}

/**
 * One-time tokens that let the first user sign up from the dashboard (issue 12). Only a token's
 * SHA-256 is stored, with its expiry (rows `dashboard-setup-token:<hash>` of service_secrets).
 */
export interface SetupTokenRepository {
  /** Stores a token's hash until `expiresAtIso`, and forgets the tokens expired by `nowIso`. */
  create(tokenHash: string, expiresAtIso: string, nowIso: string): Promise<void>;
  /** The hashes of the tokens not expired by `nowIso`. */
  listLive(nowIso: string): Promise<string[]>;
  /** Deletes the token if it is live; true for exactly one caller, however many race. */
  consume(tokenHash: string, nowIso: string): Promise<boolean>;
  /** Forgets every token: a user exists, sign-up is closed. */
  deleteAll(): Promise<void>;
}

export interface Store {
  readonly users: UserRepository;
  readonly sessions: SessionRepository;
  readonly dashboard: DashboardQueries;
  readonly setupTokens: SetupTokenRepository;
}

/**
 * One `POST /v1/calls/outbound` as a store sees it when it runs DESIGN §1 steps 1, 2 and 6–9 in
 * one round trip (issue 12). Steps 3–5 (Content-Type, shape, phone format) are pure and stay in the
 * API: `call` is null when the request failed them (it still counts against its account), and for
 * every other /v1 route, which needs only steps 1 and 2 (outcome `request_refused` then means
 * authorized and within the limits).
 */
export interface AuthorizedCallAttempt {
  /** SHA-256 of the presented key; null when the header was missing, repeated or malformed. */
  keyHash: string | null;
  /** The failure bucket of the client's address and its policy (a failed key counts there). */
  authFailureBucket: string;
  authFailurePolicy: RatePolicy;
  /** The rate policy of accounts that have none of their own. */
  defaultRatePolicy: RatePolicy;
  /** The call to write when every check passes. */
  call: Omit<NewQueuedCall, 'accountId' | 'apiKeyId'> | null;
}

/** The caller a valid key stands for, and the account bucket's decision for this request. */
export interface AuthorizedCaller {
  account: AccountRecord;
  apiKeyId: string;
  rate: RateDecision;
}

/** What came of an AuthorizedCallAttempt, in DESIGN §1's order of checks. */
export type AuthorizedCallOutcome =
  /** 429 before the key is looked at: too many failed keys from this address. */
  | { kind: 'held_off'; authFailures: RateDecision }
  /** 401: the failure is counted in the address's bucket (this decision). */
  | { kind: 'unauthorized'; authFailures: RateDecision }
  | { kind: 'rate_limited'; caller: AuthorizedCaller }
  /** Authorized and within the limits, with no call to write (`call` was null); its token was taken. */
  | { kind: 'request_refused'; caller: AuthorizedCaller }
  /** 404: no such agent in the account, or inactive. */
  | { kind: 'agent_not_found'; caller: AuthorizedCaller }
  /** 400: `from_number` is not one of the account's numbers. */
  | { kind: 'number_not_configured'; caller: AuthorizedCaller }
  /** 400: the call's variables do not fit the agent's declarations (domain/agentVariables.ts). */
  | { kind: 'variables_refused'; caller: AuthorizedCaller; problem: AppError }
  /** 200: the call and its dispatch job are durable. */
  | { kind: 'created'; caller: AuthorizedCaller; call: CallRecord };

/** The one-round-trip create, declared apart so it stays in one place. */
export interface CallRepository {
  /**
   * Authenticates (the key not revoked, re-checked under a row lock), applies the address's
   * failure limit and the account's rate limit, checks the agent, the number and the variables,
   * and writes the call with its dispatch job — one statement, one round trip, batched with
   * concurrent attempts. It takes from the store's own rate buckets (the ones PostgresRateLimiter
   * keeps), so the API uses it only with that limiter. Offered by PostgreSQL; the embedded SQLite
   * store is in-process, and the API runs the same steps one by one there.
   */
  createAuthorized?(attempt: AuthorizedCallAttempt): Promise<AuthorizedCallOutcome>;
}

export type { AgentTestRepository, AgentTestRunSummary } from './agentTestRepository.js';
export type {
  CampaignAttempt,
  CampaignContactEditRepository,
  CampaignProgress,
  CampaignRepository,
  CampaignResultRepository,
  CampaignRulesRepository,
  EndedCall,
  NewCampaignContact,
  RemovedContact,
  SettledAttempt,
} from './campaignRepository.js';
export type {
  AuditEntry,
  DialRate,
  DialRateRepository,
  DialRateScope,
  PrivacyRepository,
  QuietHoursRule,
} from './dataRulesRepository.js';
export { dialRateScopes } from './dataRulesRepository.js';
export type { HoldAudioRepository, StoredHoldAudio } from './holdAudioRepository.js';
