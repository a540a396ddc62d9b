import type { AccountRecord, ApiKeyRecord, CallRecord } from '../../domain/records.js';
import { accountFromRow, apiKeyFromRow, type ColumnCodec, callFromRow } from '../recordsFromRows.js';

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

/** SQLite's column forms: integers for booleans, JSON and timestamps as text. */
export const sqliteColumns: ColumnCodec = {
  bool: (value) => value === 1,
  json: <T>(value: unknown) =>
    (value === null || value === undefined ? null : JSON.parse(value as string)) as T,
  time: (value) => value as string,
  timeOrNull: (value) => (value ?? null) as string | null,
};

export const toAccount = (row: AccountRow): AccountRecord => accountFromRow(row, sqliteColumns);
export const toApiKey = (row: ApiKeyRow): ApiKeyRecord => apiKeyFromRow(row, sqliteColumns);
export const toCall = (row: CallRow): CallRecord => callFromRow(row, sqliteColumns);
