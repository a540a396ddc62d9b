import type { AnsweredBy, CallStatus, EndReason } from '../../domain/callStatus.js';
import type { VariableValue } from '../../domain/templates.js';
import type {
  AccountRecord,
  AgentBrain,
  AgentRecord,
  AgentVariable,
  ApiKeyRecord,
  CallRecord,
  ExtractionField,
  PhoneNumberRecord,
  TranscriptEntry,
} from '../types.js';
import { iso, isoOrNull } from './database.js';

/** Row shapes as `pg` returns them (timestamptz as Date, jsonb parsed), and their records. */

type Timestamp = Date | string;

export interface AccountRow {
  id: string;
  name: string;
  is_default: boolean;
  rate_limit_requests: number | null;
  rate_limit_window_s: number | null;
  max_live_calls: number;
  created_at: Timestamp;
}

export interface ApiKeyRow {
  id: string;
  account_id: string;
  name: string;
  key_hash: string;
  prefix: string;
  last4: string;
  created_at: Timestamp;
  last_used_at: Timestamp | null;
  revoked_at: Timestamp | null;
}

export interface AgentRow {
  id: string;
  account_id: string;
  name: string;
  active: boolean;
  prompt: string;
  first_message: string;
  variables: AgentVariable[];
  extraction: ExtractionField[];
  brain: string;
  script: unknown;
  settings: Record<string, unknown>;
  max_duration_s: number;
  silence_timeout_s: number;
  created_at: Timestamp;
  updated_at: Timestamp;
}

export interface PhoneNumberRow {
  account_id: string;
  number: string;
  route: string;
  created_at: Timestamp;
}

export interface CallRow {
  id: string;
  account_id: string;
  agent_id: string;
  api_key_id: string | null;
  from_number: string;
  to_number: string;
  first_message: string | null;
  context: string | null;
  variables: Record<string, VariableValue> | null;
  status: string;
  end_reason: string | null;
  answered_by: string | null;
  created_at: Timestamp;
  dialing_at: Timestamp | null;
  ringing_at: Timestamp | null;
  in_progress_at: Timestamp | null;
  ended_at: Timestamp | null;
  transcript: TranscriptEntry[];
  recording_path: string | null;
  extracted_data: Record<string, unknown>;
  metrics: Record<string, unknown> | null;
  sip_call_id: string | null;
  worker_id: string | null;
  lease_expires_at: Timestamp | null;
}

export function toAccount(row: AccountRow): AccountRecord {
  return {
    id: row.id,
    name: row.name,
    isDefault: row.is_default,
    ratePolicy:
      row.rate_limit_requests !== null && row.rate_limit_window_s !== null
        ? { requests: row.rate_limit_requests, windowS: row.rate_limit_window_s }
        : null,
    maxLiveCalls: row.max_live_calls,
    createdAt: iso(row.created_at),
  };
}

export function toApiKey(row: ApiKeyRow): ApiKeyRecord {
  return {
    id: row.id,
    accountId: row.account_id,
    name: row.name,
    prefix: row.prefix,
    last4: row.last4,
    createdAt: iso(row.created_at),
    lastUsedAt: isoOrNull(row.last_used_at),
    revokedAt: isoOrNull(row.revoked_at),
  };
}

export function toAgent(row: AgentRow): AgentRecord {
  return {
    id: row.id,
    accountId: row.account_id,
    name: row.name,
    active: row.active,
    prompt: row.prompt,
    firstMessage: row.first_message,
    variables: row.variables,
    extraction: row.extraction,
    brain: row.brain as AgentBrain,
    script: row.script ?? null,
    settings: row.settings,
    maxDurationS: row.max_duration_s,
    silenceTimeoutS: row.silence_timeout_s,
    createdAt: iso(row.created_at),
    updatedAt: iso(row.updated_at),
  };
}

export function toPhoneNumber(row: PhoneNumberRow): PhoneNumberRecord {
  return { accountId: row.account_id, number: row.number, route: row.route, createdAt: iso(row.created_at) };
}

export function toCall(row: CallRow): CallRecord {
  return {
    id: row.id,
    accountId: row.account_id,
    agentId: row.agent_id,
    apiKeyId: row.api_key_id,
    fromNumber: row.from_number,
    toNumber: row.to_number,
    firstMessage: row.first_message,
    context: row.context,
    variables: row.variables,
    status: row.status as CallStatus,
    endReason: row.end_reason as EndReason | null,
    answeredBy: row.answered_by as AnsweredBy | null,
    createdAt: iso(row.created_at),
    dialingAt: isoOrNull(row.dialing_at),
    ringingAt: isoOrNull(row.ringing_at),
    inProgressAt: isoOrNull(row.in_progress_at),
    endedAt: isoOrNull(row.ended_at),
    transcript: row.transcript,
    recordingPath: row.recording_path,
    extractedData: row.extracted_data,
    metrics: row.metrics,
    sipCallId: row.sip_call_id,
    workerId: row.worker_id,
    leaseExpiresAt: isoOrNull(row.lease_expires_at),
  };
}

/** A JSON parameter for a jsonb column; null stays SQL NULL. */
export function jsonParam(value: unknown): string | null {
  return value === null || value === undefined ? null : JSON.stringify(value);
}
