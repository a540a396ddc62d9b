import { postgresCampaignCountersSql } from '../campaignCounterSql.js';
import { postgresCallerIdHealthMigrations } from './callerIdHealthMigrations.js';
import { postgresCampaignResultsMigrations } from './campaignResultsMigrations.js';
import { postgresCampaignRulesMigrations } from './campaignRulesMigrations.js';
import { postgresCampaignSchedulingMigrations } from './campaignSchedulingMigrations.js';
import { postgresHoldAudioMigrations } from './holdAudioMigrations.js';
import { postgresInboundCallMigrations } from './inboundCallMigrations.js';
import { postgresWebCallMigrations } from './webCallMigrations.js';

/**
 * PostgreSQL schema, one entry per version, applied by `migrate` (database.ts) under an advisory
 * lock. Entries are append-only: a shipped migration is never edited; a change is a new entry.
 * Versions are this dialect's own (they need not match SQLite's). Ids compare byte-wise
 * (COLLATE "C"), as in SQLite, so cursors like `id < $1` page the same on every server locale.
 */
export const postgresMigrations: readonly { version: number; name: string; sql: string }[] = [
  {
    version: 1,
    name: 'core, telephony, events, dashboard',
    sql: `
      CREATE TABLE accounts (
        id text COLLATE "C" PRIMARY KEY,
        name text NOT NULL,
        is_default boolean NOT NULL DEFAULT false,
        rate_limit_requests integer,
        rate_limit_window_s integer,
        max_live_calls integer NOT NULL DEFAULT 10,
        created_at timestamptz NOT NULL
      );
      CREATE UNIQUE INDEX accounts_one_default ON accounts (is_default) WHERE is_default;

      CREATE TABLE api_keys (
        id text COLLATE "C" PRIMARY KEY,
        account_id text COLLATE "C" NOT NULL REFERENCES accounts (id),
        name text NOT NULL,
        key_hash text NOT NULL UNIQUE,
        prefix text NOT NULL,
        last4 text NOT NULL,
        created_at timestamptz NOT NULL,
        last_used_at timestamptz,
        revoked_at timestamptz
      );
      CREATE INDEX api_keys_by_account ON api_keys (account_id, created_at);

      CREATE TABLE agents (
        id text COLLATE "C" PRIMARY KEY,
        account_id text COLLATE "C" NOT NULL REFERENCES accounts (id),
        name text NOT NULL,
        active boolean NOT NULL DEFAULT true,
        prompt text NOT NULL,
        first_message text NOT NULL DEFAULT '',
        variables jsonb NOT NULL DEFAULT '[]',
        extraction jsonb NOT NULL DEFAULT '[]',
        brain text NOT NULL DEFAULT 'script',
        script jsonb,
        settings jsonb NOT NULL DEFAULT '{}',
        max_duration_s integer NOT NULL DEFAULT 600,
        silence_timeout_s integer NOT NULL DEFAULT 20,
        created_at timestamptz NOT NULL,
        updated_at timestamptz NOT NULL
      );
      CREATE INDEX agents_by_account ON agents (account_id, created_at);

      CREATE TABLE phone_numbers (
        account_id text COLLATE "C" NOT NULL REFERENCES accounts (id),
        number text COLLATE "C" NOT NULL,
        route text NOT NULL DEFAULT 'sandbox',
        created_at timestamptz NOT NULL,
        PRIMARY KEY (account_id, number)
      );

      CREATE TABLE calls (
        id text COLLATE "C" PRIMARY KEY,
        account_id text COLLATE "C" NOT NULL REFERENCES accounts (id),
        agent_id text COLLATE "C" NOT NULL REFERENCES agents (id),
        api_key_id text COLLATE "C" REFERENCES api_keys (id),
        from_number text NOT NULL,
        to_number text NOT NULL,
        first_message text,
        context text,
        variables jsonb,
        status text NOT NULL,
        end_reason text,
        answered_by text,
        created_at timestamptz NOT NULL,
        dialing_at timestamptz,
        ringing_at timestamptz,
        in_progress_at timestamptz,
        ended_at timestamptz,
        transcript jsonb NOT NULL DEFAULT '[]',
        recording_path text,
        extracted_data jsonb NOT NULL DEFAULT '{}',
        metrics jsonb,
        sip_call_id text,
        worker_id text,
        lease_expires_at timestamptz,
        -- Set by an API process to ask the worker holding the live call to hang it up.
        cancel_requested_at timestamptz,
        updated_at timestamptz NOT NULL
      );
      CREATE INDEX calls_by_account ON calls (account_id, id);
      CREATE INDEX calls_by_account_status ON calls (account_id, status, id);
      CREATE INDEX calls_by_account_created ON calls (account_id, created_at);
      CREATE INDEX calls_live ON calls (account_id, worker_id)
        WHERE status IN ('dialing', 'ringing', 'in_progress');

      CREATE TABLE trunks (
        id text COLLATE "C" PRIMARY KEY,
        account_id text COLLATE "C" NOT NULL REFERENCES accounts (id),
        name text NOT NULL,
        uri text NOT NULL,
        username text,
        password_ciphertext text,
        from_domain text,
        created_at timestamptz NOT NULL,
        UNIQUE (account_id, name)
      );

      -- Every INVITE a sandbox carrier received (each worker runs its own): proof that no call was dialled twice.
      CREATE TABLE sandbox_invites (
        id bigserial PRIMARY KEY,
        sip_call_id text NOT NULL,
        to_number text NOT NULL,
        received_at timestamptz NOT NULL
      );
      CREATE INDEX sandbox_invites_by_sip_call_id ON sandbox_invites (sip_call_id);

      CREATE TABLE webhook_endpoints (
        account_id text COLLATE "C" PRIMARY KEY REFERENCES accounts (id),
        url text NOT NULL,
        secret text NOT NULL,
        previous_secret text,
        previous_secret_expires_at timestamptz,
        enabled boolean NOT NULL DEFAULT true,
        disabled_reason text,
        created_at timestamptz NOT NULL,
        updated_at timestamptz NOT NULL
      );

      -- The outbox: one call.completed per call, written with the call's terminal status.
      -- body is text, not jsonb: it holds the exact bytes that are signed and sent.
      CREATE TABLE events (
        id text COLLATE "C" PRIMARY KEY,
        account_id text COLLATE "C" NOT NULL REFERENCES accounts (id),
        type text NOT NULL,
        call_id text COLLATE "C" NOT NULL UNIQUE REFERENCES calls (id),
        body text NOT NULL,
        created_at timestamptz NOT NULL,
        status text NOT NULL DEFAULT 'pending',
        attempts integer NOT NULL DEFAULT 0,
        next_attempt_at timestamptz,
        delivered_at timestamptz
      );
      CREATE INDEX events_by_account ON events (account_id, id);
      CREATE INDEX events_parked ON events (account_id) WHERE status = 'parked';

      CREATE TABLE event_attempts (
        id bigserial PRIMARY KEY,
        event_id text COLLATE "C" NOT NULL REFERENCES events (id),
        attempted_at timestamptz NOT NULL,
        url text NOT NULL,
        status_code integer,
        latency_ms integer NOT NULL,
        response_excerpt text,
        error text
      );
      CREATE INDEX event_attempts_by_event ON event_attempts (event_id, id);

      CREATE TABLE service_secrets (
        name text PRIMARY KEY,
        value text NOT NULL,
        created_at timestamptz NOT NULL
      );

      CREATE TABLE users (
        id text COLLATE "C" PRIMARY KEY,
        account_id text COLLATE "C" NOT NULL REFERENCES accounts (id),
        email text NOT NULL UNIQUE,
        password_hash text NOT NULL,
        created_at timestamptz NOT NULL,
        last_sign_in_at timestamptz
      );

      -- token_hash is the SHA-256 of the cookie's random token; the token itself is never stored.
      CREATE TABLE sessions (
        token_hash text PRIMARY KEY,
        user_id text COLLATE "C" NOT NULL REFERENCES users (id) ON DELETE CASCADE,
        csrf_token text NOT NULL,
        created_at timestamptz NOT NULL,
        expires_at timestamptz NOT NULL,
        last_seen_at timestamptz NOT NULL
      );
      CREATE INDEX sessions_by_expiry ON sessions (expires_at);
    `,
  },
  {
    version: 2,
    name: 'shared rate limit buckets',
    sql: `
      -- Token buckets shared by every API process; a full bucket needs no row.
      CREATE TABLE rate_buckets (
        bucket_key text PRIMARY KEY,
        tokens double precision NOT NULL,
        updated_at_ms bigint NOT NULL,
        -- Whether the last take was allowed (the update's result, read back by RETURNING).
        allowed boolean NOT NULL
      );
      CREATE INDEX rate_buckets_by_age ON rate_buckets (updated_at_ms);
    `,
  },
  {
    version: 3,
    name: 'rate limit buckets without WAL',
    sql: `
      -- A bucket is taken from on every request: writing it to the WAL (and fsyncing) doubled the
      -- cost of a call creation. After a crash the buckets start full, which is harmless.
      ALTER TABLE rate_buckets SET UNLOGGED;
    `,
  },
  {
    version: 4,
    name: 'recordings in the database',
    sql: `
      -- Workers and API processes may run on different machines: a recording is stored where
      -- every process can read it.
      CREATE TABLE recordings (
        call_id text PRIMARY KEY REFERENCES calls (id),
        wav bytea NOT NULL,
        created_at timestamptz NOT NULL
      );
    `,
  },
  {
    version: 5,
    name: 'SIP dialogs of answered calls',
    sql: `
      -- A SipDialogRecord: lets a restarted process send BYE for the calls of a dead one.
      ALTER TABLE calls ADD COLUMN sip_dialog jsonb;
    `,
  },
  {
    version: 6,
    name: 'rate buckets: the tokens before the last take',
    sql: `
      -- A call creation takes from its buckets for several requests in one statement
      -- (src/store/postgres/authorizedCallCreation.ts): which of them got a token follows from
      -- what the bucket held under its row lock, and RETURNING only sees the row after the take.
      ALTER TABLE rate_buckets ADD COLUMN tokens_before_take double precision;
    `,
  },
  {
    version: 7,
    name: 'provider credentials',
    sql: `
      -- An account's own voice-vendor keys, sealed with the service's key (last 4 kept to show).
      CREATE TABLE provider_credentials (
        id text PRIMARY KEY,
        account_id text NOT NULL REFERENCES accounts (id),
        name text NOT NULL,
        provider text NOT NULL,
        api_key_ciphertext text NOT NULL,
        api_key_last4 text NOT NULL,
        base_url text,
        created_at timestamptz NOT NULL,
        UNIQUE (account_id, name)
      );
    `,
  },
  {
    version: 8,
    name: 'account prices',
    sql: `
      -- An account's own prices per vendor, model and unit (JSON), over the service's defaults.
      CREATE TABLE account_prices (
        account_id text PRIMARY KEY REFERENCES accounts (id),
        prices text NOT NULL,
        updated_at timestamptz NOT NULL
      );
    `,
  },
  {
    version: 9,
    name: 'call analysis',
    sql: `
      -- The post-call analysis of an answered call: status, reason, summary, success (JSON).
      ALTER TABLE calls ADD COLUMN analysis jsonb;
    `,
  },
  {
    version: 10,
    name: 'do not call',
    sql: `
      -- An account's suppression list: numbers never dialled again.
      CREATE TABLE do_not_call (
        account_id text NOT NULL REFERENCES accounts (id),
        number text NOT NULL,
        reason text,
        source text NOT NULL,
        created_at timestamptz NOT NULL,
        PRIMARY KEY (account_id, number)
      );
    `,
  },
  {
    version: 11,
    name: 'campaigns and data rules',
    sql: `
      -- Batch calling: a campaign's settings, its contacts (each with its attempt state and when it
      -- is next due), and each attempt's call. Contacts are written before their campaign row, so
      -- a campaign becomes visible only with all its contacts.
      CREATE TABLE campaigns (
        id text PRIMARY KEY,
        account_id text NOT NULL REFERENCES accounts (id),
        api_key_id text REFERENCES api_keys (id),
        name text NOT NULL,
        agent_id text NOT NULL,
        caller_ids jsonb NOT NULL,
        caller_id_selection text NOT NULL,
        calling_window jsonb NOT NULL,
        time_zone text NOT NULL,
        max_concurrency integer NOT NULL,
        calls_per_minute integer NOT NULL,
        max_daily_attempts integer NOT NULL,
        retry_policy jsonb NOT NULL,
        starts_at timestamptz,
        ends_at timestamptz,
        status text NOT NULL,
        contact_count integer NOT NULL,
        created_at timestamptz NOT NULL,
        completed_at timestamptz
      );
      CREATE INDEX campaigns_by_account ON campaigns (account_id, id);
      -- The scheduler reads running campaigns, and paused or canceled ones still on a call.
      CREATE INDEX campaigns_by_status ON campaigns (status);
      CREATE TABLE campaign_contacts (
        id text PRIMARY KEY,
        campaign_id text NOT NULL,
        account_id text NOT NULL,
        position integer NOT NULL,
        to_number text NOT NULL,
        variables jsonb,
        first_message text,
        context text,
        time_zones text NOT NULL,
        state text NOT NULL,
        attempts integer NOT NULL DEFAULT 0,
        due_at timestamptz,
        claimed_at timestamptz,
        call_id text,
        last_outcome text,
        updated_at timestamptz NOT NULL,
        UNIQUE (campaign_id, position)
      );
      -- The scheduler reads only what is due, never the whole list.
      CREATE INDEX campaign_contacts_due ON campaign_contacts (campaign_id, due_at) WHERE due_at IS NOT NULL;
      CREATE INDEX campaign_contacts_calling ON campaign_contacts (campaign_id) WHERE state = 'calling';
      -- Pacing looks at the latest start.
      CREATE INDEX campaign_contacts_claimed ON campaign_contacts (campaign_id, claimed_at);
      CREATE INDEX campaign_contacts_state ON campaign_contacts (campaign_id, state);
      CREATE INDEX campaign_contacts_by_number ON campaign_contacts (account_id, to_number);
      -- The daily cap per callee number counts an account's calls to it.
      CREATE INDEX calls_by_account_number ON calls (account_id, to_number, created_at);
      CREATE TABLE campaign_attempts (
        call_id text PRIMARY KEY,
        campaign_id text NOT NULL,
        contact_id text NOT NULL,
        attempt integer NOT NULL,
        created_at timestamptz NOT NULL,
        -- One call per attempt, whatever the number of schedulers.
        UNIQUE (contact_id, attempt)
      );
      -- Data rules: how long transcripts and recordings are kept, and what was erased, by whom.
      CREATE TABLE retention_rules (
        account_id text PRIMARY KEY REFERENCES accounts (id),
        retention_days integer NOT NULL,
        updated_at timestamptz NOT NULL
      );
      ALTER TABLE calls ADD COLUMN transcript_erased_at timestamptz;
      -- Caps on how fast calls leave one caller ID or one trunk (calls per second).
      CREATE TABLE dial_rates (
        account_id text NOT NULL REFERENCES accounts (id),
        scope text NOT NULL,
        subject text NOT NULL,
        calls_per_second integer NOT NULL,
        updated_at timestamptz NOT NULL,
        PRIMARY KEY (account_id, scope, subject)
      );
      -- An account's quiet hours: when no call starts, in the callee's zone.
      CREATE TABLE quiet_hours (
        account_id text PRIMARY KEY REFERENCES accounts (id),
        start_time text NOT NULL,
        end_time text NOT NULL,
        time_zone text NOT NULL,
        updated_at timestamptz NOT NULL
      );
      CREATE TABLE audit_log (
        id text PRIMARY KEY,
        account_id text NOT NULL REFERENCES accounts (id),
        action text NOT NULL,
        actor text NOT NULL,
        subject text NOT NULL,
        detail jsonb NOT NULL,
        created_at timestamptz NOT NULL
      );
      CREATE INDEX audit_log_by_account ON audit_log (account_id, id);
    `,
  },
  {
    version: 12,
    name: 'status events',
    sql: `
      -- Events beyond call.completed: a call's event of each type once, a campaign's once.
      ALTER TABLE events ALTER COLUMN call_id DROP NOT NULL;
      ALTER TABLE events DROP CONSTRAINT events_call_id_key;
      ALTER TABLE events ADD COLUMN campaign_id text COLLATE "C";
      CREATE UNIQUE INDEX events_once_per_call ON events (call_id, type) WHERE call_id IS NOT NULL;
      CREATE UNIQUE INDEX events_once_per_campaign ON events (campaign_id, type)
        WHERE campaign_id IS NOT NULL;
      -- The event types an endpoint receives (a JSON array); call.completed always.
      ALTER TABLE webhook_endpoints ADD COLUMN event_types text NOT NULL DEFAULT '["call.completed"]';
    `,
  },
  {
    version: 13,
    name: 'trunk settings',
    sql: `
      -- A trunk's settings beyond its URI (TLS CA and verification, …) as one JSON document.
      ALTER TABLE trunks ADD COLUMN settings text NOT NULL DEFAULT '{}';
      -- The latest registration state a worker saw (JSON), for trunks that register.
      ALTER TABLE trunks ADD COLUMN registration text;
    `,
  },
  {
    version: 14,
    name: 'agent tests',
    sql: `
      -- A sandbox call placed by an agent test run (docs/testing.md): the scenario its callee
      -- plays and is checked against, and the agent settings this call alone runs with.
      CREATE TABLE agent_test_calls (
        call_id text COLLATE "C" PRIMARY KEY,
        run_id text COLLATE "C" NOT NULL,
        account_id text COLLATE "C" NOT NULL REFERENCES accounts (id),
        agent_id text COLLATE "C" NOT NULL,
        position integer NOT NULL,
        repeat_index integer NOT NULL,
        scenario jsonb NOT NULL,
        agent_overrides jsonb,
        replay_of text,
        created_at timestamptz NOT NULL
      );
      CREATE INDEX agent_test_calls_by_run ON agent_test_calls (account_id, run_id, position);
      CREATE INDEX agent_test_calls_by_agent ON agent_test_calls (account_id, agent_id, created_at);
    `,
  },
  {
    version: 15,
    name: 'campaign counters',
    // A campaign's progress as counters kept by triggers (src/store/campaignCounterSql.ts).
    sql: postgresCampaignCountersSql(),
  },
  ...postgresCampaignSchedulingMigrations,
  // In version order: 371 (results), 372 and 374 (rules), 375 (caller-ID health), 380 (hold audio).
  ...postgresCampaignResultsMigrations,
  ...postgresCampaignRulesMigrations,
  ...postgresCallerIdHealthMigrations,
  ...postgresHoldAudioMigrations,
  // 405 (web calls).
  ...postgresWebCallMigrations,
  // 450 (inbound calls).
  ...postgresInboundCallMigrations,
];
