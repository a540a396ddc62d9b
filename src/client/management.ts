import type { Transport } from './transport.js';
import type { RequestOptions, WebhookEventType } from './types.js';

/** An agent as the API shows it (`GET /v1/agents/{agent_id}`). */
export interface Agent {
  agent_id: string;
  name: string;
  active: boolean;
  prompt: string;
  first_message: string;
  variables: { name: string; default: string | null; description: string; required: boolean; type: string }[];
  extraction: { name: string; type: 'string' | 'number' | 'boolean' | 'date'; description: string }[];
  brain: 'script' | 'llm';
  script: Record<string, unknown> | null;
  settings: Record<string, unknown>;
  max_duration_s: number;
  silence_timeout_s: number;
  created_at: string;
  updated_at: string;
}

/** The fields of an agent to create or change; `variables` as declarations `NAME[:TYPE][!][=DEFAULT]`. */
export interface AgentFields {
  name?: string;
  prompt?: string;
  first_message?: string;
  variables?: string[];
  extraction?: { name: string; type: 'string' | 'number' | 'boolean' | 'date'; description?: string }[];
  brain?: 'script' | 'llm';
  script?: Record<string, unknown> | null;
  settings?: Record<string, unknown>;
  max_duration_s?: number;
  silence_timeout_s?: number;
}

export interface PhoneNumber {
  number: string;
  route: string;
  created_at: string;
}

export interface WebhookEndpoint {
  url: string;
  secret: string;
  enabled: boolean;
  disabled_reason: string | null;
  /** The event types it receives: `call.completed` always. */
  events: WebhookEventType[];
  previous_secret_expires_at: string | null;
  created_at: string;
  updated_at: string;
}

const id = (value: string) => encodeURIComponent(value);

/** `client.agents`: the account's agents. */
export class AgentsResource {
  constructor(private readonly transport: Transport) {}

  create(fields: AgentFields & { name: string; prompt: string }, options?: RequestOptions): Promise<Agent> {
    return this.transport.request(
      { method: 'POST', path: '/v1/agents', body: fields, retry: 'unsafe' },
      options,
    );
  }

  get(agentId: string, options?: RequestOptions): Promise<Agent> {
    return this.transport.request(
      { method: 'GET', path: `/v1/agents/${id(agentId)}`, retry: 'idempotent' },
      options,
    );
  }

  list(options?: RequestOptions): Promise<{ data: Agent[] }> {
    return this.transport.request({ method: 'GET', path: '/v1/agents', retry: 'idempotent' }, options);
  }

  /** Changes the fields given; the others stay. */
  update(agentId: string, fields: AgentFields, options?: RequestOptions): Promise<Agent> {
    const path = `/v1/agents/${id(agentId)}`;
    return this.transport.request({ method: 'PATCH', path, body: fields, retry: 'idempotent' }, options);
  }

  deactivate(agentId: string, options?: RequestOptions): Promise<Agent> {
    const path = `/v1/agents/${id(agentId)}/deactivate`;
    return this.transport.request({ method: 'POST', path, retry: 'idempotent' }, options);
  }

  activate(agentId: string, options?: RequestOptions): Promise<Agent> {
    const path = `/v1/agents/${id(agentId)}/activate`;
    return this.transport.request({ method: 'POST', path, retry: 'idempotent' }, options);
  }
}

/** `client.numbers`: the caller IDs the account may use. */
export class NumbersResource {
  constructor(private readonly transport: Transport) {}

  add(number: string, route?: string, options?: RequestOptions): Promise<PhoneNumber> {
    const body = { number, ...(route !== undefined ? { route } : {}) };
    return this.transport.request({ method: 'POST', path: '/v1/numbers', body, retry: 'unsafe' }, options);
  }

  list(options?: RequestOptions): Promise<{ data: PhoneNumber[] }> {
    return this.transport.request({ method: 'GET', path: '/v1/numbers', retry: 'idempotent' }, options);
  }

  remove(number: string, options?: RequestOptions): Promise<{ number: string; deleted: true }> {
    return this.transport.request(
      { method: 'DELETE', path: `/v1/numbers/${id(number)}`, retry: 'idempotent' },
      options,
    );
  }
}

/** `client.webhook`: the account's endpoint and its signing secret. */
export class WebhookResource {
  constructor(private readonly transport: Transport) {}

  get(options?: RequestOptions): Promise<WebhookEndpoint> {
    return this.transport.request({ method: 'GET', path: '/v1/webhook', retry: 'idempotent' }, options);
  }

  /** Sets the endpoint; the answer carries its new signing secret. */
  set(url: string, options?: RequestOptions): Promise<WebhookEndpoint> {
    return this.transport.request(
      { method: 'PUT', path: '/v1/webhook', body: { url }, retry: 'unsafe' },
      options,
    );
  }

  /**
   * The events the endpoint receives besides `call.completed` (always sent): any of
   * `call.ringing`, `call.answered`, `call.transferred`, `campaign.completed`, `campaign.paused`,
   * `campaign.canceled`. Replaces the list.
   */
  setEvents(events: readonly WebhookEventType[], options?: RequestOptions): Promise<WebhookEndpoint> {
    return this.transport.request(
      { method: 'PUT', path: '/v1/webhook/events', body: { events }, retry: 'idempotent' },
      options,
    );
  }

  /** A new signing secret; the old one also signs for 24 h. */
  rotateSecret(options?: RequestOptions): Promise<WebhookEndpoint> {
    return this.transport.request(
      { method: 'POST', path: '/v1/webhook/rotate-secret', retry: 'unsafe' },
      options,
    );
  }
}

/** What an erasure removed (`POST /v1/erasures`). */
export interface Erasure {
  calls_erased: number;
  recordings_erased: number;
  campaign_contacts_erased: number;
  audit_id: string;
  erased_at: string;
}

export interface AuditEntry {
  audit_id: string;
  action: string;
  actor: string;
  /** The number, masked. */
  subject: string;
  detail: Record<string, unknown>;
  created_at: string;
}

/** `client.privacy`: retention of transcripts and recordings, erasure of a number, the audit log. */
export class PrivacyResource {
  constructor(private readonly transport: Transport) {}

  /** Erases the number's calls, recordings, events and campaign contacts (409 while it is on a call). */
  eraseNumber(number: string, options?: RequestOptions): Promise<Erasure> {
    return this.transport.request(
      { method: 'POST', path: '/v1/erasures', body: { number }, retry: 'idempotent' },
      options,
    );
  }

  auditLog(query: { limit?: number; cursor?: string } = {}, options?: RequestOptions) {
    const search = new URLSearchParams();
    if (query.limit !== undefined) search.set('limit', String(query.limit));
    if (query.cursor !== undefined) search.set('cursor', query.cursor);
    const suffix = search.size > 0 ? `?${search}` : '';
    return this.transport.request<{ data: AuditEntry[]; has_more: boolean; next_cursor: string | null }>(
      { method: 'GET', path: `/v1/audit-log${suffix}`, retry: 'idempotent' },
      options,
    );
  }

  retention(options?: RequestOptions): Promise<{ retention_days: number | null }> {
    return this.transport.request({ method: 'GET', path: '/v1/retention', retry: 'idempotent' }, options);
  }

  /** Days a call keeps its transcript and recording after it ends; null keeps them. */
  setRetention(days: number | null, options?: RequestOptions): Promise<{ retention_days: number | null }> {
    return this.transport.request(
      { method: 'PUT', path: '/v1/retention', body: { retention_days: days }, retry: 'idempotent' },
      options,
    );
  }
}

export interface DialRate {
  scope: 'caller_id' | 'trunk';
  /** The caller ID (E.164) or the trunk name. */
  subject: string;
  calls_per_second: number | null;
}

export interface QuietHours {
  start: string;
  end: string;
  time_zone: string;
}

/** `client.callingRules`: calls per second per caller ID or trunk, and the account's quiet hours. */
export class CallingRulesResource {
  constructor(private readonly transport: Transport) {}

  dialRates(options?: RequestOptions): Promise<{ data: DialRate[] }> {
    return this.transport.request({ method: 'GET', path: '/v1/dial-rates', retry: 'idempotent' }, options);
  }

  /** Sets a cap, or removes it with `calls_per_second: null`. */
  setDialRate(rate: DialRate, options?: RequestOptions): Promise<DialRate> {
    return this.transport.request(
      { method: 'PUT', path: '/v1/dial-rates', body: rate, retry: 'idempotent' },
      options,
    );
  }

  quietHours(options?: RequestOptions): Promise<{ quiet_hours: QuietHours | null }> {
    return this.transport.request({ method: 'GET', path: '/v1/quiet-hours', retry: 'idempotent' }, options);
  }

  /** No call of the account starts in them (local to the callee); null removes them. */
  setQuietHours(
    hours: QuietHours | null,
    options?: RequestOptions,
  ): Promise<{ quiet_hours: QuietHours | null }> {
    return this.transport.request(
      { method: 'PUT', path: '/v1/quiet-hours', body: { quiet_hours: hours }, retry: 'idempotent' },
      options,
    );
  }
}
