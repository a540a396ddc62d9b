import type { ColumnType, Generated, Selectable } from 'kysely';
import type { AttemptOutcome, ContactState } from '../../domain/campaigns.js';
import type { figureColumns } from '../campaignFiguresSql.js';

/**
 * The tables the Kysely repositories read and write, typed once for both dialects. The columns
 * whose form differs between the drivers are typed by what goes in, and read back as `unknown`
 * for the shared codec (src/store/recordsFromRows.ts) to decode:
 *
 * - booleans: SQLite stores 0/1 and better-sqlite3 cannot bind `true`, so a boolean goes in only
 *   as a `StoredBool` from `QueryDialect.bool` (forgetting it does not compile);
 * - JSON: text in SQLite, jsonb in PostgreSQL; it goes in as a `JsonText` from `jsonText`
 *   (a JS object handed to `pg` would be sent as an array literal, so never raw values);
 * - timestamps: ISO 8601 UTC text in both; they come back as text (SQLite) or Date (`pg`).
 *
 * The tables themselves are made by each dialect's migrations (sqlite/migrations.ts,
 * postgres/migrations.ts); a column added there is added here.
 */

declare const storedBoolBrand: unique symbol;
declare const jsonTextBrand: unique symbol;

/** A boolean in the dialect's stored form: made only by `QueryDialect.bool`. */
export type StoredBool = { readonly [storedBoolBrand]: true };
/** JSON text for a JSON column: made only by `jsonText`. */
export type JsonText = string & { readonly [jsonTextBrand]: true };

type BoolColumn = ColumnType<unknown, StoredBool, StoredBool>;
type JsonColumn = ColumnType<unknown, JsonText, JsonText>;
type NullableJsonColumn = ColumnType<unknown, JsonText | null, JsonText | null>;
/** ISO 8601 text in; text or Date out (decode with the codec's `time`). */
type TimeColumn = ColumnType<unknown, string, string>;
type NullableTimeColumn = ColumnType<unknown, string | null | undefined, string | null>;

/** The value of a JSON column, encoded once for both dialects (SQL NULL stays null). */
export function jsonText(value: unknown): JsonText;
export function jsonText(value: null | undefined): null;
export function jsonText(value: unknown): JsonText | null {
  return value === null || value === undefined ? null : (JSON.stringify(value) as JsonText);
}

export interface AccountsTable {
  id: string;
  name: string;
  is_default: BoolColumn;
  rate_limit_requests: number | null;
  rate_limit_window_s: number | null;
  max_live_calls: number;
  created_at: TimeColumn;
}

export interface ApiKeysTable {
  id: string;
  account_id: string;
  name: string;
  key_hash: string;
  prefix: string;
  last4: string;
  created_at: TimeColumn;
  last_used_at: NullableTimeColumn;
  revoked_at: NullableTimeColumn;
}

export interface AgentsTable {
  id: string;
  account_id: string;
  name: string;
  active: BoolColumn;
  prompt: string;
  first_message: string;
  variables: JsonColumn;
  extraction: JsonColumn;
  brain: string;
  script: NullableJsonColumn;
  settings: JsonColumn;
  max_duration_s: number;
  silence_timeout_s: number;
  created_at: TimeColumn;
  updated_at: TimeColumn;
}

export interface AgentHoldAudioTable {
  agent_id: string;
  account_id: string;
  mulaw: ColumnType<Uint8Array, Uint8Array, Uint8Array>;
  duration_ms: number;
  updated_at: TimeColumn;
}

export interface PhoneNumbersTable {
  account_id: string;
  number: string;
  route: string;
  inbound_agent_id: ColumnType<string | null, string | null | undefined, string | null>;
  inbound_fallback: ColumnType<string, string | undefined, string>;
  max_live_calls: ColumnType<number | null, number | null | undefined, number | null>;
  created_at: TimeColumn;
}

export interface TrunksTable {
  id: string;
  account_id: string;
  name: string;
  uri: string;
  username: string | null;
  password_ciphertext: string | null;
  from_domain: string | null;
  /** TrunkSettings as JSON. */
  settings: string;
  /** The latest RegistrationState a worker saw, as JSON; null for a trunk that does not register. */
  registration: string | null;
  created_at: TimeColumn;
}

export interface ProviderCredentialsTable {
  id: string;
  account_id: string;
  name: string;
  provider: string;
  api_key_ciphertext: string;
  api_key_last4: string;
  base_url: string | null;
  created_at: TimeColumn;
}

/** An account's own price table (JSON list of prices), overriding the service's defaults. */
export interface AccountPricesTable {
  account_id: string;
  prices: string;
  updated_at: TimeColumn;
}

export interface DoNotCallTable {
  account_id: string;
  number: string;
  reason: string | null;
  source: string;
  created_at: TimeColumn;
}

export interface CampaignsTable {
  id: string;
  account_id: string;
  api_key_id: string;
  name: string;
  agent_id: string;
  caller_ids: JsonColumn;
  caller_id_selection: string;
  calling_window: JsonColumn;
  time_zone: string;
  max_concurrency: number;
  calls_per_minute: number;
  max_daily_attempts: number;
  retry_policy: JsonColumn;
  starts_at: NullableTimeColumn;
  ends_at: NullableTimeColumn;
  status: string;
  contact_count: number;
  created_at: TimeColumn;
  completed_at: NullableTimeColumn;
  /** Why it is paused (issue 37's migration). */
  status_reason: string | null;
  /** Caps and holidays (migration 372; null: none). */
  max_calls_per_hour: number | null;
  max_calls_per_day: number | null;
  holidays: NullableJsonColumn;
  /** Caller-ID health settings (migration 375; null: the defaults). */
  caller_id_health: NullableJsonColumn;
}

export interface CampaignContactsTable {
  id: string;
  campaign_id: string;
  account_id: string;
  position: number;
  to_number: string;
  variables: NullableJsonColumn;
  first_message: string | null;
  context: string | null;
  /** The zones the window is held in, joined with `&` (libphonenumber's own form). */
  time_zones: string;
  state: string;
  attempts: Generated<number>;
  due_at: NullableTimeColumn;
  claimed_at: NullableTimeColumn;
  call_id: string | null;
  last_outcome: string | null;
  updated_at: TimeColumn;
  /** Why it waits, when the scheduler or dispatcher decided it (issue 37's migration). */
  waiting_reason: string | null;
  /** Higher first among due contacts (migration 372). */
  priority: Generated<number>;
  /** The callback the callee asked for on the current call (migration 374). */
  callback_at: NullableTimeColumn;
  /** When a live edit removed it (never dialled again); migration 371. */
  removed_at: NullableTimeColumn;
}

/** One row per claim (attempt started), kept by a trigger on campaign_contacts (migration 372). */
export interface CampaignClaimsTable {
  call_id: string;
  campaign_id: string;
  claimed_at: TimeColumn;
}

/** Maintained by triggers only (src/store/campaignCounterSql.ts); bigint comes back as text from pg. */
export type CampaignCountersTable = { campaign_id: string } & Record<
  `state_${ContactState}` | `outcome_${AttemptOutcome}`,
  number | string
>;

export interface CampaignAttemptsTable {
  call_id: string;
  campaign_id: string;
  contact_id: string;
  attempt: number;
  created_at: TimeColumn;
  /** The hour of the callee's local day it was made in (migration 371; null before). */
  local_hour: number | null;
}

/** Maintained by a trigger only (src/store/campaignFiguresSql.ts); bigint comes back as text from pg. */
/** Each caller ID's rolling window of answered attempts in a campaign, and its rest (migration 375). */
export interface CampaignCallerIdsTable {
  campaign_id: string;
  caller_id: string;
  recent: string;
  rested_until: NullableTimeColumn;
}

export type CampaignFiguresTable = { campaign_id: string; caller_id: string; local_hour: number } & Record<
  (typeof figureColumns)[number],
  number | string
>;

export interface RetentionRulesTable {
  account_id: string;
  retention_days: number;
  updated_at: TimeColumn;
}

export interface DialRatesTable {
  account_id: string;
  scope: string;
  subject: string;
  calls_per_second: number;
  updated_at: TimeColumn;
}

export interface QuietHoursTable {
  account_id: string;
  start_time: string;
  end_time: string;
  time_zone: string;
  updated_at: TimeColumn;
}

export interface AuditLogTable {
  id: string;
  account_id: string;
  action: string;
  actor: string;
  subject: string;
  detail: JsonColumn;
  created_at: TimeColumn;
}

export interface AgentTestCallsTable {
  call_id: string;
  run_id: string;
  account_id: string;
  agent_id: string;
  position: number;
  repeat_index: number;
  scenario: JsonColumn;
  agent_overrides: NullableJsonColumn;
  replay_of: string | null;
  created_at: TimeColumn;
}

export interface SandboxInvitesTable {
  id: Generated<number>;
  sip_call_id: string;
  to_number: string;
  received_at: TimeColumn;
}

export interface UsersTable {
  id: string;
  account_id: string;
  email: string;
  password_hash: string;
  created_at: TimeColumn;
  last_sign_in_at: NullableTimeColumn;
}

export interface SessionsTable {
  token_hash: string;
  user_id: string;
  csrf_token: string;
  created_at: TimeColumn;
  expires_at: TimeColumn;
  last_seen_at: TimeColumn;
}

/**
 * Calls are written by the hand-written hot path (calls.ts); Kysely reads them here, and writes
 * only a web call's first row (webCalls.ts).
 */
export interface CallsTable {
  id: string;
  account_id: string;
  agent_id: string;
  /** 'phone' (the column's default) or 'web'. */
  channel: ColumnType<string, string | undefined, string>;
  /** 'outbound' (the column's default) or 'inbound' (issue 40). */
  direction: ColumnType<string, string | undefined, string>;
  callback_of: ColumnType<string | null, string | null | undefined, string | null>;
  api_key_id: string | null;
  from_number: string;
  to_number: string;
  first_message: string | null;
  context: string | null;
  variables: NullableJsonColumn;
  status: string;
  end_reason: string | null;
  answered_by: string | null;
  created_at: TimeColumn;
  dialing_at: NullableTimeColumn;
  ringing_at: NullableTimeColumn;
  in_progress_at: NullableTimeColumn;
  ended_at: NullableTimeColumn;
  transcript: JsonColumn;
  recording_path: string | null;
  extracted_data: JsonColumn;
  metrics: NullableJsonColumn;
  analysis: NullableJsonColumn;
  sip_call_id: string | null;
  worker_id: string | null;
  lease_expires_at: NullableTimeColumn;
  /** When the retention rule erased the transcript and recording (the call record stays). */
  transcript_erased_at: NullableTimeColumn;
  updated_at: TimeColumn;
}

/** A web call's one-use connection token (its SHA-256 only), expiry and metadata. */
export interface WebCallsTable {
  call_id: string;
  account_id: string;
  token_hash: string;
  metadata: NullableJsonColumn;
  created_at: TimeColumn;
  expires_at: TimeColumn;
  used_at: NullableTimeColumn;
}

/** The origins an account's web calls may connect from (migration 430): the whole list at once. */
export interface WebCallSettingsTable {
  account_id: string;
  origins: JsonColumn;
  updated_at: TimeColumn;
}

/** Events are written with their call and their attempts by hand-written transactions; read here. */
export interface EventsTable {
  id: string;
  account_id: string;
  type: string;
  call_id: string | null;
  campaign_id: string | null;
  body: string;
}

/** Only read here (which events an endpoint asked for); written by the hand-written stores. */
export interface WebhookEndpointsTable {
  account_id: string;
  event_types: string;
}

/** Only erased here (with their event); written by the delivery worker's transactions. */
export interface EventAttemptsTable {
  event_id: string;
}

export interface Database {
  accounts: AccountsTable;
  api_keys: ApiKeysTable;
  agents: AgentsTable;
  agent_hold_audio: AgentHoldAudioTable;
  phone_numbers: PhoneNumbersTable;
  trunks: TrunksTable;
  provider_credentials: ProviderCredentialsTable;
  account_prices: AccountPricesTable;
  do_not_call: DoNotCallTable;
  campaigns: CampaignsTable;
  campaign_contacts: CampaignContactsTable;
  campaign_attempts: CampaignAttemptsTable;
  campaign_counters: CampaignCountersTable;
  campaign_claims: CampaignClaimsTable;
  campaign_figures: CampaignFiguresTable;
  campaign_caller_ids: CampaignCallerIdsTable;
  audit_log: AuditLogTable;
  dial_rates: DialRatesTable;
  quiet_hours: QuietHoursTable;
  retention_rules: RetentionRulesTable;
  event_attempts: EventAttemptsTable;
  sandbox_invites: SandboxInvitesTable;
  agent_test_calls: AgentTestCallsTable;
  users: UsersTable;
  sessions: SessionsTable;
  calls: CallsTable;
  web_calls: WebCallsTable;
  web_call_settings: WebCallSettingsTable;
  events: EventsTable;
  webhook_endpoints: WebhookEndpointsTable;
}

/**
 * Rows as either driver hands them back (the dialect-dependent columns as `unknown`), for the
 * hand-written SQL too: decode them with the shared mappers and the dialect's codec.
 */
export type AccountRow = Selectable<AccountsTable>;
export type ApiKeyRow = Selectable<ApiKeysTable>;
export type CallRow = Selectable<CallsTable>;
