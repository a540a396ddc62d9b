/**
 * The callwright API client, published as `@callwright/client` (packages/client) and as the
 * server package's `callwright/client`. It needs nothing but the `fetch` of Node 18+ (or any
 * fetch you pass in).
 *
 * ```ts
 * const client = new CallwrightClient({ apiKey: keyFromYourSecretStore, baseUrl: 'https://calls.example.com' });
 * const call = await client.calls.createOutbound({ agent_id, from_number, to_number });
 * for await (const page of client.calls.list({ status: 'completed' })) console.log(page.data.length);
 * ```
 */
import { AgentTestsResource, type Scenario } from './agentTests.js';
import { CampaignsResource } from './campaigns.js';
import {
  AgentsResource,
  CallingRulesResource,
  NumbersResource,
  PrivacyResource,
  WebhookResource,
} from './management.js';
import { type RetryInfo, Transport } from './transport.js';
import type {
  Call,
  CreatedCall,
  CreateOutboundCallRequest,
  DoNotCallAdded,
  DoNotCallEntry,
  ListCallsParams,
  ListEventsParams,
  Page,
  RequestOptions,
  WebhookEvent,
  WebhookEventSummary,
} from './types.js';

export type {
  AgentOverrides,
  AgentTestResult,
  AgentTestRun,
  AgentTestRunEntry,
  AgentTestRunRequest,
  RecordedAudio,
  ReplayDiff,
  ReplayTurnDiff,
  ReplayTurnSide,
  Scenario,
  ScenarioDataExpectation,
  ScenarioExpectations,
  ScenarioTurn,
  WaitForTestRunOptions,
} from './agentTests.js';
export { AgentTestsResource } from './agentTests.js';
export type {
  CallingWindow,
  Campaign,
  CampaignContact,
  CampaignContactView,
  CampaignRequest,
  CampaignStatusReason,
  CampaignUpdate,
  RetryPolicy as CampaignRetryPolicy,
  WaitingReason,
} from './campaigns.js';
export { CampaignsResource } from './campaigns.js';
export * from './errors.js';
export type {
  Agent,
  AgentFields,
  AuditEntry,
  DialRate,
  Erasure,
  PhoneNumber,
  QuietHours,
  WebhookEndpoint,
} from './management.js';
export {
  AgentsResource,
  CallingRulesResource,
  NumbersResource,
  PrivacyResource,
  WebhookResource,
} from './management.js';
export type { RetryInfo, RetryPolicy } from './transport.js';
export { parseRetryAfterMs } from './transport.js';
export type * from './types.js';

export interface CallwrightClientOptions {
  /** The API key (`cw_live_…`). It is sent only in the `X-API-Key` header, never in a URL. */
  apiKey: string;
  /** The service's address, e.g. `https://calls.example.com` (a trailing `/v1` is accepted). */
  baseUrl: string;
  /** Time limit of each attempt (default 30,000 ms). */
  timeoutMs?: number;
  /** Automatic retries after the first attempt (default 3; 0 turns retrying off). */
  maxRetries?: number;
  /** Backoff: retry n waits a random time in [0, min(maxDelayMs, baseDelayMs · 2^(n-1))] (defaults 500 and 8,000 ms). */
  baseDelayMs?: number;
  maxDelayMs?: number;
  /** A 429 whose Retry-After asks for longer than this is thrown instead of waited out (default 60,000 ms). */
  maxRetryAfterMs?: number;
  /** Called before each wait between attempts (for logs and metrics). */
  onRetry?: (info: RetryInfo) => void;
  /** A fetch implementation (default: the global fetch). */
  fetch?: typeof fetch;
}

function pathId(id: string): string {
  return encodeURIComponent(id);
}

async function* pages<T>(load: (cursor: string | undefined) => Promise<Page<T>>, cursor: string | undefined) {
  for (;;) {
    const page = await load(cursor);
    yield page;
    if (!page.has_more || page.next_cursor === null) return;
    cursor = page.next_cursor;
  }
}

export class CallsResource {
  constructor(private readonly transport: Transport) {}

  /**
   * Queues an outbound call (`POST /v1/calls/outbound`) and resolves with its `call_id`.
   *
   * This operation has **no de-duplication**: every request that reaches the server may create a
   * call. The client therefore retries it only when the server certainly did nothing — a 429
   * (answered after authentication and the rate limit, before anything else is looked at) and a
   * refused connection. After a timeout, a reset connection or a 5xx it throws (`NetworkError`,
   * `TimeoutError`, `ServerError`) and does not retry: the call may exist. Check with
   * `calls.list()` before placing it again.
   */
  createOutbound(request: CreateOutboundCallRequest, options?: RequestOptions): Promise<CreatedCall> {
    return this.transport.request(
      { method: 'POST', path: '/v1/calls/outbound', body: request, retry: 'unsafe' },
      options,
    );
  }

  /** The call record (`GET /v1/calls/{call_id}`). */
  get(callId: string, options?: RequestOptions): Promise<Call> {
    return this.transport.request(
      { method: 'GET', path: `/v1/calls/${pathId(callId)}`, retry: 'idempotent' },
      options,
    );
  }

  /** One page of calls, newest first (`GET /v1/calls`). */
  listPage(params: ListCallsParams = {}, options?: RequestOptions): Promise<Page<Call>> {
    const query = { limit: params.limit, status: params.status, cursor: params.cursor };
    return this.transport.request({ method: 'GET', path: '/v1/calls', query, retry: 'idempotent' }, options);
  }

  /** Every page of calls, newest first: `for await (const page of client.calls.list()) …`. */
  list(params: ListCallsParams = {}, options?: RequestOptions): AsyncGenerator<Page<Call>, void, undefined> {
    return pages((cursor) => this.listPage({ ...params, cursor }, options), params.cursor);
  }

  /**
   * Cancels a queued call or hangs up a live one (`POST /v1/calls/{call_id}/cancel`); resolves with
   * the ended call. A call that has already ended throws `ConflictError`. Retried only on 429.
   */
  cancel(callId: string, options?: RequestOptions): Promise<Call> {
    return this.transport.request(
      { method: 'POST', path: `/v1/calls/${pathId(callId)}/cancel`, retry: 'unsafe' },
      options,
    );
  }

  /**
   * Runs an ended call's analysis again with its agent's current settings
   * (`POST /v1/calls/{call_id}/analysis`); resolves with the call, its new `analysis` and
   * `extracted_data`. A call not ended (or never answered) throws `ConflictError`. Retried only on
   * 429 (each run asks the language model again).
   */
  reanalyze(callId: string, options?: RequestOptions): Promise<Call> {
    return this.transport.request(
      { method: 'POST', path: `/v1/calls/${pathId(callId)}/analysis`, retry: 'unsafe' },
      options,
    );
  }

  /** The recording WAV (`GET /v1/calls/{call_id}/recording`); `NotFoundError` when there is none. */
  recording(callId: string, options?: RequestOptions): Promise<Uint8Array> {
    const path = `/v1/calls/${pathId(callId)}/recording`;
    return this.transport.request({ method: 'GET', path, retry: 'idempotent', binary: true }, options);
  }

  /**
   * A scenario that replays a completed call's callee from its recording
   * (`GET /v1/calls/{call_id}/scenario`): save it as a file to keep the conversation as a test, or
   * run it with `agentTests.run(agentId, { replay_of: callId })`. `ValidationError` when the call
   * cannot be replayed (not completed, answered by a machine, no recording).
   */
  scenario(callId: string, options?: RequestOptions): Promise<Scenario> {
    const path = `/v1/calls/${pathId(callId)}/scenario`;
    return this.transport.request({ method: 'GET', path, retry: 'idempotent' }, options);
  }
}

export class EventsResource {
  constructor(private readonly transport: Transport) {}

  /** One page of the account's webhook events, newest first (`GET /v1/events`). */
  listPage(params: ListEventsParams = {}, options?: RequestOptions): Promise<Page<WebhookEventSummary>> {
    const query = { limit: params.limit, cursor: params.cursor };
    return this.transport.request({ method: 'GET', path: '/v1/events', query, retry: 'idempotent' }, options);
  }

  /** Every page of webhook events: `for await (const page of client.events.list()) …`. */
  list(
    params: ListEventsParams = {},
    options?: RequestOptions,
  ): AsyncGenerator<Page<WebhookEventSummary>, void, undefined> {
    return pages((cursor) => this.listPage({ ...params, cursor }, options), params.cursor);
  }

  /** One event with its payload and every delivery attempt (`GET /v1/events/{event_id}`). */
  get(eventId: string, options?: RequestOptions): Promise<WebhookEvent> {
    return this.transport.request(
      { method: 'GET', path: `/v1/events/${pathId(eventId)}`, retry: 'idempotent' },
      options,
    );
  }

  /**
   * Schedules one more delivery of an event, same id and body (`POST /v1/events/{event_id}/resend`).
   * Retried only on 429; `ConflictError` while an attempt is in flight.
   */
  resend(eventId: string, options?: RequestOptions): Promise<WebhookEventSummary> {
    const path = `/v1/events/${pathId(eventId)}/resend`;
    return this.transport.request({ method: 'POST', path, retry: 'unsafe' }, options);
  }
}

export class DoNotCallResource {
  constructor(private readonly transport: Transport) {}

  /** Puts numbers on the do-not-call list (`POST /v1/do-not-call`); safe to repeat. */
  add(numbers: string[], reason?: string, options?: RequestOptions): Promise<DoNotCallAdded> {
    return this.transport.request(
      {
        method: 'POST',
        path: '/v1/do-not-call',
        body: { numbers, ...(reason !== undefined ? { reason } : {}) },
        retry: 'idempotent',
      },
      options,
    );
  }

  /** One page of the list, in number order (`GET /v1/do-not-call`). */
  listPage(
    params: { limit?: number; cursor?: string } = {},
    options?: RequestOptions,
  ): Promise<Page<DoNotCallEntry>> {
    const query = { limit: params.limit, cursor: params.cursor };
    return this.transport.request(
      { method: 'GET', path: '/v1/do-not-call', query, retry: 'idempotent' },
      options,
    );
  }

  /** The entry of one number; `NotFoundError` when it is not listed. */
  get(number: string, options?: RequestOptions): Promise<DoNotCallEntry> {
    const path = `/v1/do-not-call/${encodeURIComponent(number)}`;
    return this.transport.request({ method: 'GET', path, retry: 'idempotent' }, options);
  }

  /** Takes a number off the list; `NotFoundError` when it was not on it. */
  remove(number: string, options?: RequestOptions): Promise<{ number: string; deleted: true }> {
    const path = `/v1/do-not-call/${encodeURIComponent(number)}`;
    return this.transport.request({ method: 'DELETE', path, retry: 'idempotent' }, options);
  }
}

export class CallwrightClient {
  readonly calls: CallsResource;
  readonly events: EventsResource;
  readonly doNotCall: DoNotCallResource;
  readonly agents: AgentsResource;
  readonly campaigns: CampaignsResource;
  readonly privacy: PrivacyResource;
  readonly callingRules: CallingRulesResource;
  readonly numbers: NumbersResource;
  readonly webhook: WebhookResource;
  readonly agentTests: AgentTestsResource;

  constructor(options: CallwrightClientOptions) {
    if (!options.apiKey) throw new TypeError('apiKey is required');
    if (!/^https?:\/\//.test(options.baseUrl)) throw new TypeError('baseUrl must be an http(s) URL');
    const fetchImplementation = options.fetch ?? globalThis.fetch;
    if (typeof fetchImplementation !== 'function')
      throw new TypeError('no fetch available: pass options.fetch');
    const transport = new Transport({
      apiKey: options.apiKey,
      baseUrl: options.baseUrl,
      timeoutMs: options.timeoutMs ?? 30_000,
      maxRetries: options.maxRetries ?? 3,
      baseDelayMs: options.baseDelayMs ?? 500,
      maxDelayMs: options.maxDelayMs ?? 8_000,
      maxRetryAfterMs: options.maxRetryAfterMs ?? 60_000,
      fetch: fetchImplementation,
      onRetry: options.onRetry,
      random: Math.random,
    });
    this.calls = new CallsResource(transport);
    this.events = new EventsResource(transport);
    this.doNotCall = new DoNotCallResource(transport);
    this.agents = new AgentsResource(transport);
    this.campaigns = new CampaignsResource(transport);
    this.privacy = new PrivacyResource(transport);
    this.callingRules = new CallingRulesResource(transport);
    this.numbers = new NumbersResource(transport);
    this.webhook = new WebhookResource(transport);
    this.agentTests = new AgentTestsResource(transport);
  }
}
