import type { Campaign } from './campaigns.js';
/** Request and response objects of the callwright API (see `GET /v1/openapi.json`). */

export type CallStatus =
  | 'queued'
  | 'dialing'
  | 'ringing'
  | 'in_progress'
  | 'completed'
  | 'busy'
  | 'no_answer'
  | 'failed'
  | 'canceled';

export type TerminalCallStatus = 'completed' | 'busy' | 'no_answer' | 'failed' | 'canceled';

export type EndReason =
  | 'agent_hangup'
  | 'callee_hangup'
  | 'max_duration'
  | 'silence_timeout'
  | 'voicemail'
  | 'rejected'
  | 'unreachable'
  | 'carrier_error'
  | 'internal_error'
  | 'provider_error'
  | 'interrupted'
  | 'transferred'
  | 'ivr_loop'
  | 'do_not_call';

export type VariableValue = string | number | boolean;

export interface CreateOutboundCallRequest {
  /** The agent that conducts the call (must exist and be active). */
  agent_id: string;
  /** Caller ID, E.164, one of the account's numbers. */
  from_number: string;
  /** Number to call, E.164. */
  to_number: string;
  /** Replaces the agent's opening line for this call (at most 2,000 characters). */
  first_message?: string;
  /** Extra text for the agent's system prompt for this call (at most 10,000 characters). */
  context?: string;
  /** Values of variables the agent declares (at most 50). */
  variables?: Record<string, VariableValue>;
}

export interface CreatedCall {
  call_id: string;
  status: 'queued';
  agent_id: string;
  to_number: string;
  from_number: string;
  created_at: string;
}

export interface TranscriptEntry {
  role: 'agent' | 'callee';
  text: string;
  start_ms: number;
  end_ms: number;
  /** A timed event rather than speech: keys pressed, a tool called, its answer. */
  event?: 'dtmf' | 'tool_call' | 'tool_result' | 'transfer' | 'end_call' | 'do_not_call';
}

/** Extension: what callwright worked out of an answered call once it was over. */
export interface CallAnalysis {
  status: 'completed' | 'failed' | 'skipped';
  /** Why it failed or was skipped (the callee never spoke); null when completed. */
  reason: string | null;
  summary: string | null;
  success: { passed: boolean; explanation: string } | null;
}

export interface Call {
  call_id: string;
  status: CallStatus;
  agent_id: string;
  to_number: string;
  from_number: string;
  created_at: string;
  first_message?: string | null;
  context?: string | null;
  variables?: Record<string, VariableValue> | null;
  end_reason?: EndReason | null;
  answered_by?: 'human' | 'machine' | 'unknown' | null;
  dialed_at?: string | null;
  answered_at?: string | null;
  ended_at?: string | null;
  duration_seconds?: number | null;
  timeline: Array<{ status: CallStatus; at: string }>;
  transcript: TranscriptEntry[];
  recording_url?: string | null;
  extracted_data: Record<string, unknown>;
  /** Extension: the post-call analysis of an answered call; null otherwise. */
  analysis?: CallAnalysis | null;
  metrics?: Record<string, unknown> | null;
}

export interface Page<T> {
  data: T[];
  has_more: boolean;
  next_cursor: string | null;
}

export interface ListCallsParams {
  /** Page size, 1–100 (default 20). */
  limit?: number;
  status?: CallStatus;
  /** Start after this cursor (a `next_cursor` of an earlier page). */
  cursor?: string;
}

export interface ListEventsParams {
  limit?: number;
  cursor?: string;
}

export type EventDeliveryStatus = 'pending' | 'parked' | 'delivered' | 'failed';

/** `call.completed` is always sent; the others once the endpoint asked for them (`client.webhook.setEvents`). */
export type WebhookEventType =
  | 'call.completed'
  | 'call.ringing'
  | 'call.answered'
  | 'call.transferred'
  | 'campaign.completed'
  | 'campaign.paused'
  | 'campaign.canceled'
  | 'number.rested';

export interface WebhookEventSummary {
  event_id: string;
  type: WebhookEventType;
  /** Null for a campaign's event. */
  call_id: string | null;
  /** The campaign of a `campaign.completed` event; null otherwise. */
  campaign_id: string | null;
  status: EventDeliveryStatus;
  attempts: number;
  next_attempt_at: string | null;
  delivered_at: string | null;
  created_at: string;
}

export interface DeliveryAttempt {
  attempted_at: string;
  url: string;
  status_code: number | null;
  latency_ms: number;
  response_excerpt: string;
  error: string | null;
}

export interface WebhookEvent extends WebhookEventSummary {
  /** The body exactly as it is sent. */
  payload: WebhookPayload;
  attempt_log: DeliveryAttempt[];
}

/** The body of the `call.completed` webhook (verify it with `callwright/webhooks` first). */
export interface CallCompletedEvent {
  type: 'call.completed';
  id: string;
  created_at: string;
  data: {
    call_id: string;
    agent_id: string;
    from_number: string;
    to_number: string;
    status: TerminalCallStatus;
    end_reason: EndReason | null;
    answered_by: 'human' | 'machine' | 'unknown' | null;
    created_at: string;
    dialed_at: string | null;
    answered_at: string | null;
    ended_at: string | null;
    duration_seconds: number | null;
    transcript: TranscriptEntry[];
    recording_url: string | null;
    extracted_data: Record<string, unknown>;
    /** Extension: the post-call analysis; null for a call that was not answered. */
    analysis?: CallAnalysis | null;
    variables: Record<string, VariableValue>;
    metrics: { response_latency_ms?: { p50: number | null; p95: number | null } };
    /** Extension: what the call cost (US dollars), in total and by stage; null without a voice. */
    cost?: {
      currency: 'USD';
      total_usd: number;
      by_stage: Partial<Record<'stt' | 'llm' | 'tts' | 'realtime' | 'telephony', number>>;
    } | null;
  };
}

/** What every call status event says of its call. */
export interface CallStatusEventData {
  call_id: string;
  agent_id: string;
  from_number: string;
  to_number: string;
  variables: Record<string, VariableValue>;
}

/** `call.ringing` (opt-in): the callee's phone rings. */
export interface CallRingingEvent {
  type: 'call.ringing';
  id: string;
  created_at: string;
  data: CallStatusEventData & { ringing_at: string };
}

/** `call.answered` (opt-in): answered, with the first decision on who answered. */
export interface CallAnsweredEvent {
  type: 'call.answered';
  id: string;
  created_at: string;
  data: CallStatusEventData & { answered_at: string; answered_by: 'human' | 'machine' | 'unknown' };
}

/** `call.transferred` (opt-in): a transfer reached its target. */
export interface CallTransferredEvent {
  type: 'call.transferred';
  id: string;
  created_at: string;
  data: CallStatusEventData & { transferred_at: string; target: string; via: 'refer' | 'bridge' | 'warm' };
}

/** `campaign.completed` (opt-in): every contact is done; `data` is the campaign as `client.campaigns.get` returns it. */
export interface CampaignCompletedEvent {
  type: 'campaign.completed';
  id: string;
  created_at: string;
  data: Campaign;
}

/** `campaign.paused` (opt-in, at each pause) and `campaign.canceled` (opt-in): the campaign as `client.campaigns.get` returns it. */
export interface CampaignChangedEvent {
  type: 'campaign.paused' | 'campaign.canceled';
  id: string;
  created_at: string;
  data: Campaign;
}

/** `number.rested` (opt-in, once per rest): a campaign left a caller ID out of its rotation for a low answer rate. */
export interface NumberRestedEvent {
  type: 'number.rested';
  id: string;
  created_at: string;
  data: {
    campaign_id: string;
    /** Masked, as in every webhook. */
    number: string;
    answer_rate: number;
    pool_answer_rate: number;
    attempts: number;
    rested_until: string;
    reason: 'low_answer_rate';
  };
}

/** Any body callwright sends to the endpoint; switch on `type`. */
export type WebhookPayload =
  | CallCompletedEvent
  | CallRingingEvent
  | CallAnsweredEvent
  | CallTransferredEvent
  | CampaignCompletedEvent
  | CampaignChangedEvent
  | NumberRestedEvent;

/** Options of one request. */
export interface RequestOptions {
  /** Aborts the request (and any wait between retries). */
  signal?: AbortSignal;
  /** Time limit of each attempt, overriding the client's `timeoutMs`. */
  timeoutMs?: number;
}

/** An entry of the do-not-call list. */
export interface DoNotCallEntry {
  number: string;
  reason: string | null;
  source: 'api' | 'dashboard' | 'cli' | 'callee_request';
  created_at: string;
}

export interface DoNotCallAdded {
  added: number;
  already_listed: number;
}
