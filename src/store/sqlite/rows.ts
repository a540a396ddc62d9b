import type { AnsweredBy, CallStatus, EndReason } from '../../domain/callStatus.js';
import type {
  AccountRecord,
  AgentBrain,
  AgentRecord,
  ApiKeyRecord,
  CallRecord,
  PhoneNumberRecord,
} from '../types.js';

/** Row shapes as SQLite returns them, and their mapping to records. */

export interface AccountRow {
  id: string;
  name: string;
  is_default: number;
  rate_limit_requests: number | null;
  rate_limit_window_s: number | null;
  max_live_calls: number;
  created_at: string;
}

export interface ApiKeyRow {
  id: string;
  account_id: string;
  name: string;
  key_hash: string;
  prefix: string;
  last4: string;
  created_at: string;
  last_used_at: string | null;
  revoked_at: string | null;
}

export interface AgentRow {
  id: string;
  account_id: string;
  name: string;
  active: number;
  prompt: string;
  first_message: string;
  variables: string;
  extraction: string;
  brain: string;
  script: string | null;
  settings: string;
  max_duration_s: number;
  silence_timeout_s: number;
  created_at: string;
  updated_at: string;
}

export interface PhoneNumberRow {
  account_id: string;
  number: string;
  route: string;
  created_at: string;
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
  variables: string | null;
  status: string;
  end_reason: string | null;
  answered_by: string | null;
  created_at: string;
  dialing_at: string | null;
  ringing_at: string | null;
  in_progress_at: string | null;
  ended_at: string | null;
  transcript: string;
  recording_path: string | null;
  extracted_data: string;
  metrics: string | null;
  sip_call_id: string | null;
  worker_id: string | null;
  lease_expires_at: string | null;
}

export function toAccount(row: AccountRow): AccountRecord {
  return {
    id: row.id,
    name: row.name,
    isDefault: row.is_default === 1,
    ratePolicy:
      row.rate_limit_requests !== null && row.rate_limit_window_s !== null
        ? { requests: row.rate_limit_requests, windowS: row.rate_limit_window_s }
        : null,
    maxLiveCalls: row.max_live_calls,
    createdAt: row.created_at,
  };
}

export function toApiKey(row: ApiKeyRow): ApiKeyRecord {
  return {
    id: row.id,
    accountId: row.account_id,
    name: row.name,
    prefix: row.prefix,
    last4: row.last4,
    createdAt: row.created_at,
    lastUsedAt: row.last_used_at,
    revokedAt: row.revoked_at,
  };
}

export function toAgent(row: AgentRow): AgentRecord {
  return {
    id: row.id,
    accountId: row.account_id,
    name: row.name,
    active: row.active === 1,
    prompt: row.prompt,
    firstMessage: row.first_message,
    variables: JSON.parse(row.variables),
    extraction: JSON.parse(row.extraction),
    brain: row.brain as AgentBrain,
    script: row.script === null ? null : JSON.parse(row.script),
    settings: JSON.parse(row.settings),
    maxDurationS: row.max_duration_s,
    silenceTimeoutS: row.silence_timeout_s,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  };
}

export function toPhoneNumber(row: PhoneNumberRow): PhoneNumberRecord {
  return { accountId: row.account_id, number: row.number, route: row.route, createdAt: row.created_at };
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
    variables: row.variables === null ? null : JSON.parse(row.variables),
    status: row.status as CallStatus,
    endReason: row.end_reason as EndReason | null,
    answeredBy: row.answered_by as AnsweredBy | null,
    createdAt: row.created_at,
    dialingAt: row.dialing_at,
    ringingAt: row.ringing_at,
    inProgressAt: row.in_progress_at,
    endedAt: row.ended_at,
    transcript: JSON.parse(row.transcript),
    recordingPath: row.recording_path,
    extractedData: JSON.parse(row.extracted_data),
    metrics: row.metrics === null ? null : JSON.parse(row.metrics),
    sipCallId: row.sip_call_id,
    workerId: row.worker_id,
    leaseExpiresAt: row.lease_expires_at,
  };
}
