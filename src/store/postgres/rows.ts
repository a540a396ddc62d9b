import type { AccountRecord, ApiKeyRecord, CallRecord, TranscriptEntry } from '../../domain/records.js';
import type { VariableValue } from '../../domain/templates.js';
import { accountFromRow, apiKeyFromRow, type ColumnCodec, callFromRow } from '../recordsFromRows.js';
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

/** `pg`'s column forms: booleans, parsed jsonb, timestamptz as Date. */
export const postgresColumns: ColumnCodec = {
  bool: (value) => value === true,
  json: <T>(value: unknown) => (value ?? null) as T,
  time: (value) => iso(value as Date | string),
  timeOrNull: (value) => isoOrNull((value ?? null) as Date | string | null),
};

export const toAccount = (row: AccountRow): AccountRecord => accountFromRow(row, postgresColumns);
export const toApiKey = (row: ApiKeyRow): ApiKeyRecord => apiKeyFromRow(row, postgresColumns);
export const toCall = (row: CallRow): CallRecord => callFromRow(row, postgresColumns);
