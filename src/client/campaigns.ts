import type { Transport } from './transport.js';
import type { RequestOptions } from './types.js';

export type CampaignStatus = 'running' | 'paused' | 'canceled' | 'completed';
/** Why a campaign is paused: asked for, or the API key its calls are placed under was revoked. */
export type CampaignStatusReason = 'requested' | 'api_key_revoked';
/** Why a contact waits (docs/campaigns.md, "Why a contact waits"). */
export type WaitingReason =
  | 'window'
  | 'daily_cap'
  | 'retry'
  | 'paused'
  | 'starts_at'
  | 'concurrency'
  | 'pace'
  | 'quiet_hours'
  | 'dial_rate'
  | 'account_live_calls'
  | 'dispatch'
  | 'hourly_cap'
  | 'holiday'
  | 'callback';
export type ContactState =
  | 'pending'
  | 'calling'
  | 'retry_wait'
  | 'done'
  | 'expired'
  | 'do_not_call'
  | 'canceled';
export type AttemptOutcome = 'answered' | 'voicemail' | 'busy' | 'no_answer' | 'failed';

export interface CallingWindow {
  /** Local time `HH:MM` in the callee's zone. */
  start: string;
  /** Local time `HH:MM`, exclusive; before `start` runs past midnight. */
  end: string;
  /** ISO weekdays, 1 = Monday; default every day. */
  weekdays?: number[];
}

export type RetryPolicy = Partial<
  Record<'busy' | 'no_answer' | 'voicemail' | 'failed', { after_minutes: number; max_attempts: number }>
>;

export interface CampaignContact {
  to_number: string;
  variables?: Record<string, string | number | boolean>;
  first_message?: string;
  context?: string;
  /** IANA zone; default: from the number, else the campaign's. */
  time_zone?: string;
  /** Higher is called first among the contacts due at once (-1000 to 1000; default 0). */
  priority?: number;
}

/** Days no attempt starts, as the callee's local date (docs/campaigns.md, "Rules"). */
export interface HolidayCalendar {
  /** Built-in fixed-date holidays, for contacts whose number is in that country. */
  countries?: ('US' | 'CA' | 'GB' | 'FR' | 'DE' | 'MX')[];
  /** `YYYY-MM-DD` (that day) or `MM-DD` (every year), for every contact. */
  dates?: string[];
}

export interface CampaignRequest {
  name?: string;
  agent_id: string;
  /** One caller ID, or a pool as `caller_ids`. */
  from_number?: string;
  caller_ids?: string[];
  caller_id_selection?: 'round_robin' | 'local_area_code';
  contacts: CampaignContact[];
  calling_window: CallingWindow;
  time_zone: string;
  max_concurrency?: number;
  calls_per_minute?: number;
  /** Calls to one number in any 24 h (the account's other calls count too); default 3. */
  max_daily_attempts?: number;
  /** The campaign's attempts in any rolling hour / 24 h, at most; null or absent: no cap. */
  max_calls_per_hour?: number | null;
  max_calls_per_day?: number | null;
  holidays?: HolidayCalendar | null;
  retry?: RetryPolicy;
  starts_at?: string;
  ends_at?: string;
}

/** A campaign as the API shows it (`GET /v1/campaigns/{campaign_id}`). */
export interface Campaign {
  campaign_id: string;
  name: string;
  status: CampaignStatus;
  /** Why a paused campaign is paused; null otherwise. */
  status_reason: CampaignStatusReason | null;
  agent_id: string;
  caller_ids: string[];
  caller_id_selection: 'round_robin' | 'local_area_code';
  calling_window: Required<CallingWindow>;
  time_zone: string;
  max_concurrency: number;
  calls_per_minute: number;
  max_daily_attempts: number;
  max_calls_per_hour: number | null;
  max_calls_per_day: number | null;
  holidays: Required<HolidayCalendar>;
  retry: RetryPolicy;
  starts_at: string | null;
  ends_at: string | null;
  contact_count: number;
  created_at: string;
  completed_at: string | null;
  progress: Record<ContactState, number> & { outcomes: Record<AttemptOutcome, number> };
}

export interface CampaignContactView {
  contact_id: string;
  position: number;
  priority: number;
  to_number: string;
  state: ContactState;
  attempts: number;
  last_outcome: AttemptOutcome | null;
  next_attempt_at: string | null;
  /** Why it is not on a call yet; null once on a call or finished. */
  waiting_reason: WaitingReason | null;
  time_zones: string[];
  calls: {
    attempt: number;
    call_id: string;
    created_at: string;
    status: string | null;
    end_reason: string | null;
    answered_by: string | null;
  }[];
}

/** What `update` may change (each checked as at creation). */
export type CampaignUpdate = Partial<
  Pick<
    CampaignRequest,
    | 'name'
    | 'calling_window'
    | 'max_concurrency'
    | 'calls_per_minute'
    | 'max_daily_attempts'
    | 'max_calls_per_hour'
    | 'max_calls_per_day'
    | 'holidays'
    | 'retry'
    | 'from_number'
    | 'caller_ids'
    | 'caller_id_selection'
    | 'ends_at'
  >
>;

/** Figures of a campaign, overall or for one caller ID or local hour. */
export interface CampaignFigures {
  attempts: number;
  connected_minutes: number;
  cost_usd: number;
  answered: number;
  voicemail: number;
  succeeded: number;
  /** answered / attempts; null without attempts. */
  answer_rate: number | null;
  voicemail_rate: number | null;
  /** succeeded / answered. */
  success_rate: number | null;
}

/** `GET /v1/campaigns/{campaign_id}/figures`. */
export interface CampaignFiguresView {
  campaign_id: string;
  overall: CampaignFigures;
  by_caller_id: (CampaignFigures & { caller_id: string })[];
  by_local_hour: (CampaignFigures & { local_hour: number })[];
}

/** What removing contacts did. */
export interface CampaignContactsRemoval {
  removed: number;
  /** Of those removed, how many were on a call (not interrupted; never retried). */
  on_call: number;
  /** Ids or numbers that named no waiting or calling contact. */
  unmatched: number;
  removed_contact_ids: string[];
  on_call_contact_ids: string[];
  campaign: Campaign;
}

const id = (value: string) => encodeURIComponent(value);

/** `client.campaigns`: batch calling with windows, pacing and retries. */
export class CampaignsResource {
  constructor(private readonly transport: Transport) {}

  /** Creates a campaign; a bad contact fails it whole (`error.rows` names each one). */
  create(campaign: CampaignRequest, options?: RequestOptions): Promise<Campaign> {
    return this.transport.request(
      { method: 'POST', path: '/v1/campaigns', body: campaign, retry: 'unsafe' },
      options,
    );
  }

  /**
   * Creates a campaign from a CSV file's text (header `to_number[,first_message,context,time_zone,
   * VARIABLE…]`), checked as the command line checks it; a bad row fails it whole, named by `line`.
   */
  createFromCsv(
    settings: Omit<CampaignRequest, 'contacts'>,
    csv: string,
    options?: RequestOptions,
  ): Promise<Campaign> {
    return this.transport.request(
      {
        method: 'POST',
        path: '/v1/campaigns',
        query: { settings: JSON.stringify(settings) },
        text: { contentType: 'text/csv; charset=utf-8', body: csv },
        retry: 'unsafe',
      },
      options,
    );
  }

  get(campaignId: string, options?: RequestOptions): Promise<Campaign> {
    return this.transport.request(
      { method: 'GET', path: `/v1/campaigns/${id(campaignId)}`, retry: 'idempotent' },
      options,
    );
  }

  list(
    query: { limit?: number; cursor?: string } = {},
    options?: RequestOptions,
  ): Promise<{ data: Campaign[]; has_more: boolean; next_cursor: string | null }> {
    const search = new URLSearchParams();
    if (query.limit !== undefined) search.set('limit', String(query.limit));
    if (query.cursor !== undefined) search.set('cursor', query.cursor);
    const suffix = search.size > 0 ? `?${search}` : '';
    return this.transport.request(
      { method: 'GET', path: `/v1/campaigns${suffix}`, retry: 'idempotent' },
      options,
    );
  }

  /** The contacts in list order, each with its attempts' calls; page with `after: next_after`. */
  contacts(
    campaignId: string,
    query: { limit?: number; after?: number; state?: ContactState } = {},
    options?: RequestOptions,
  ): Promise<{ data: CampaignContactView[]; next_after: number | null }> {
    const search = new URLSearchParams();
    if (query.limit !== undefined) search.set('limit', String(query.limit));
    if (query.after !== undefined) search.set('after', String(query.after));
    if (query.state !== undefined) search.set('state', query.state);
    const suffix = search.size > 0 ? `?${search}` : '';
    const path = `/v1/campaigns/${id(campaignId)}/contacts${suffix}`;
    return this.transport.request({ method: 'GET', path, retry: 'idempotent' }, options);
  }

  /**
   * A live edit of a running or paused campaign: any of its window, pace, caps, retry rules, caller
   * IDs, end and name, effective at the next claim and audited. 409 once canceled or completed.
   */
  update(campaignId: string, changes: CampaignUpdate, options?: RequestOptions): Promise<Campaign> {
    return this.transport.request(
      { method: 'PATCH', path: `/v1/campaigns/${id(campaignId)}`, body: changes, retry: 'idempotent' },
      options,
    );
  }

  pause(campaignId: string, options?: RequestOptions): Promise<Campaign> {
    return this.change(campaignId, 'pause', options);
  }

  resume(campaignId: string, options?: RequestOptions): Promise<Campaign> {
    return this.change(campaignId, 'resume', options);
  }

  /** No new attempts; queued calls are canceled, live ones end as they would. */
  cancel(campaignId: string, options?: RequestOptions): Promise<Campaign> {
    return this.change(campaignId, 'cancel', options);
  }

  private change(campaignId: string, action: 'pause' | 'resume' | 'cancel', options?: RequestOptions) {
    const path = `/v1/campaigns/${id(campaignId)}/${action}`;
    return this.transport.request<Campaign>({ method: 'POST', path, retry: 'idempotent' }, options);
  }

  /** Adds contacts to a running or paused campaign, checked as at creation (`error.rows` names bad ones). */
  addContacts(
    campaignId: string,
    contacts: CampaignContact[],
    options?: RequestOptions,
  ): Promise<{ added: number; first_position: number; campaign: Campaign }> {
    return this.transport.request(
      {
        method: 'POST',
        path: `/v1/campaigns/${id(campaignId)}/contacts`,
        body: { contacts },
        retry: 'unsafe',
      },
      options,
    );
  }

  /** Adds contacts from a CSV file's text (as `createFromCsv` reads it); bad rows named by `line`. */
  addContactsFromCsv(
    campaignId: string,
    csv: string,
    options?: RequestOptions,
  ): Promise<{ added: number; first_position: number; campaign: Campaign }> {
    return this.transport.request(
      {
        method: 'POST',
        path: `/v1/campaigns/${id(campaignId)}/contacts`,
        text: { contentType: 'text/csv; charset=utf-8', body: csv },
        retry: 'unsafe',
      },
      options,
    );
  }

  /** Removes contacts by id or number: never dialled again; one on a call is not interrupted. */
  removeContacts(
    campaignId: string,
    which: { contact_ids?: string[]; to_numbers?: string[] },
    options?: RequestOptions,
  ): Promise<CampaignContactsRemoval> {
    return this.transport.request(
      {
        method: 'POST',
        path: `/v1/campaigns/${id(campaignId)}/contacts/remove`,
        body: which,
        retry: 'idempotent',
      },
      options,
    );
  }

  /**
   * The results, one row per contact, as a stream of bytes (CSV with a header line, or JSON Lines):
   * pipe it to a file; it is never held whole.
   */
  results(
    campaignId: string,
    query: { format?: 'csv' | 'jsonl' } = {},
    options?: RequestOptions,
  ): Promise<ReadableStream<Uint8Array>> {
    return this.transport.request(
      {
        method: 'GET',
        path: `/v1/campaigns/${id(campaignId)}/results?format=${query.format ?? 'csv'}`,
        retry: 'idempotent',
        stream: true,
      },
      options,
    );
  }

  /** Attempts, minutes, cost, answer, voicemail and success rates: overall, per caller ID, per local hour. */
  figures(campaignId: string, options?: RequestOptions): Promise<CampaignFiguresView> {
    return this.transport.request(
      { method: 'GET', path: `/v1/campaigns/${id(campaignId)}/figures`, retry: 'idempotent' },
      options,
    );
  }
}
