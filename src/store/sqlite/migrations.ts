import { sqliteCampaignCountersSql } from '../campaignCounterSql.js';
import { sqliteCallerIdHealthMigrations } from './callerIdHealthMigrations.js';
import { sqliteCampaignResultsMigrations } from './campaignResultsMigrations.js';
import { sqliteCampaignRulesMigrations } from './campaignRulesMigrations.js';
import { sqliteCampaignSchedulingMigrations } from './campaignSchedulingMigrations.js';
import { sqliteHoldAudioMigrations } from './holdAudioMigrations.js';
import { sqliteInboundCallMigrations } from './inboundCallMigrations.js';
import { sqliteWebCallMigrations } from './webCallMigrations.js';

/**
 * SQLite schema, one entry per version. Entries are append-only: a shipped migration is never
 * edited; a change is a new entry. Timestamps are ISO 8601 UTC text (they sort as time).
 */
export const sqliteMigrations: readonly { version: number; name: string; sql: string }[] = [
  {
    version: 1,
    name: 'core',
    sql: `
      CREATE TABLE accounts (
        id TEXT PRIMARY KEY,
        name TEXT NOT NULL,
        is_default INTEGER NOT NULL DEFAULT 0,
        rate_limit_requests INTEGER,
        rate_limit_window_s INTEGER,
        max_live_calls INTEGER NOT NULL DEFAULT 10,
        created_at TEXT NOT NULL
      );
      CREATE UNIQUE INDEX accounts_one_default ON accounts (is_default) WHERE is_default = 1;

      CREATE TABLE api_keys (
        id TEXT PRIMARY KEY,
        account_id TEXT NOT NULL REFERENCES accounts (id),
        name TEXT NOT NULL,
        key_hash TEXT NOT NULL UNIQUE,
        prefix TEXT NOT NULL,
        last4 TEXT NOT NULL,
        created_at TEXT NOT NULL,
        last_used_at TEXT,
        revoked_at TEXT
      );
      CREATE INDEX api_keys_by_account ON api_keys (account_id, created_at);

      CREATE TABLE agents (
        id TEXT PRIMARY KEY,
        account_id TEXT NOT NULL REFERENCES accounts (id),
        name TEXT NOT NULL,
        active INTEGER NOT NULL DEFAULT 1,
        prompt TEXT NOT NULL,
        first_message TEXT NOT NULL DEFAULT '',
        variables TEXT NOT NULL DEFAULT '[]',
        extraction TEXT NOT NULL DEFAULT '[]',
        brain TEXT NOT NULL DEFAULT 'script',
        script TEXT,
        settings TEXT NOT NULL DEFAULT '{}',
        max_duration_s INTEGER NOT NULL DEFAULT 600,
        silence_timeout_s INTEGER NOT NULL DEFAULT 20,
        created_at TEXT NOT NULL,
        updated_at TEXT NOT NULL
      );
      CREATE INDEX agents_by_account ON agents (account_id, created_at);

      CREATE TABLE phone_numbers (
        account_id TEXT NOT NULL REFERENCES accounts (id),
        number TEXT NOT NULL,
        route TEXT NOT NULL DEFAULT 'sandbox',
        created_at TEXT NOT NULL,
        PRIMARY KEY (account_id, number)
      );

      CREATE TABLE calls (
        id TEXT PRIMARY KEY,
        account_id TEXT NOT NULL REFERENCES accounts (id),
        agent_id TEXT NOT NULL REFERENCES agents (id),
        api_key_id TEXT REFERENCES api_keys (id),
        from_number TEXT NOT NULL,
        to_number TEXT NOT NULL,
        first_message TEXT,
        context TEXT,
        variables TEXT,
        status TEXT NOT NULL,
        end_reason TEXT,
        answered_by TEXT,
        created_at TEXT NOT NULL,
        dialing_at TEXT,
        ringing_at TEXT,
        in_progress_at TEXT,
        ended_at TEXT,
        transcript TEXT NOT NULL DEFAULT '[]',
        recording_path TEXT,
        extracted_data TEXT NOT NULL DEFAULT '{}',
        metrics TEXT,
        sip_call_id TEXT,
        worker_id TEXT,
        lease_expires_at TEXT,
        updated_at TEXT NOT NULL
      );
      CREATE INDEX calls_by_account ON calls (account_id, id);
      CREATE INDEX calls_by_account_status ON calls (account_id, status, id);
      CREATE INDEX calls_live ON calls (status) WHERE status IN ('dialing', 'ringing', 'in_progress');

      CREATE TABLE jobs (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        queue TEXT NOT NULL,
        payload TEXT NOT NULL,
        run_at_ms INTEGER NOT NULL,
        attempts INTEGER NOT NULL DEFAULT 0,
        locked_by TEXT,
        locked_until_ms INTEGER,
        created_at TEXT NOT NULL
      );
      CREATE INDEX jobs_ready ON jobs (queue, run_at_ms);
    `,
  },
  {
    version: 2,
    name: 'telephony and events',
    sql: `
      CREATE TABLE trunks (
        id TEXT PRIMARY KEY,
        account_id TEXT NOT NULL REFERENCES accounts (id),
        name TEXT NOT NULL,
        uri TEXT NOT NULL,
        username TEXT,
        password_ciphertext TEXT,
        from_domain TEXT,
        created_at TEXT NOT NULL,
        UNIQUE (account_id, name)
      );

      -- The sandbox carrier's record of every INVITE it received: proof that no call was dialled twice.
      CREATE TABLE sandbox_invites (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        sip_call_id TEXT NOT NULL,
        to_number TEXT NOT NULL,
        received_at TEXT NOT NULL
      );
      CREATE INDEX sandbox_invites_by_sip_call_id ON sandbox_invites (sip_call_id);

      CREATE TABLE webhook_endpoints (
        account_id TEXT PRIMARY KEY REFERENCES accounts (id),
        url TEXT NOT NULL,
        secret TEXT NOT NULL,
        previous_secret TEXT,
        previous_secret_expires_at TEXT,
        enabled INTEGER NOT NULL DEFAULT 1,
        disabled_reason TEXT,
        created_at TEXT NOT NULL,
        updated_at TEXT NOT NULL
      );

      -- The outbox: one call.completed per call, written with the call's terminal status.
      CREATE TABLE events (
        id TEXT PRIMARY KEY,
        account_id TEXT NOT NULL REFERENCES accounts (id),
        type TEXT NOT NULL,
        call_id TEXT NOT NULL UNIQUE REFERENCES calls (id),
        body TEXT NOT NULL,
        created_at TEXT NOT NULL,
        status TEXT NOT NULL DEFAULT 'pending',
        attempts INTEGER NOT NULL DEFAULT 0,
        next_attempt_at TEXT,
        delivered_at TEXT
      );
      CREATE INDEX events_by_account ON events (account_id, id);

      CREATE TABLE event_attempts (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        event_id TEXT NOT NULL REFERENCES events (id),
        attempted_at TEXT NOT NULL,
        url TEXT NOT NULL,
        status_code INTEGER,
        latency_ms INTEGER NOT NULL,
        response_excerpt TEXT,
        error TEXT
      );
      CREATE INDEX event_attempts_by_event ON event_attempts (event_id, id);

      CREATE TABLE service_secrets (
        name TEXT PRIMARY KEY,
        value TEXT NOT NULL,
        created_at TEXT NOT NULL
      );
    `,
  },
  {
    version: 4,
    name: 'dashboard users and sessions',
    sql: `
      CREATE TABLE users (
        id TEXT PRIMARY KEY,
        account_id TEXT NOT NULL REFERENCES accounts (id),
        email TEXT NOT NULL UNIQUE,
        password_hash TEXT NOT NULL,
        created_at TEXT NOT NULL,
        last_sign_in_at TEXT
      );

      -- token_hash is the SHA-256 of the cookie's random token; the token itself is never stored.
      CREATE TABLE sessions (
        token_hash TEXT PRIMARY KEY,
        user_id TEXT NOT NULL REFERENCES users (id) ON DELETE CASCADE,
        csrf_token TEXT NOT NULL,
        created_at TEXT NOT NULL,
        expires_at TEXT NOT NULL,
        last_seen_at TEXT NOT NULL
      );
      CREATE INDEX sessions_by_expiry ON sessions (expires_at);

      CREATE INDEX calls_by_account_created ON calls (account_id, created_at);
    `,
  },
  {
    version: 5,
    name: 'cancel requests for live calls',
    sql: `
      -- Set to ask the worker holding the live call to hang it up.
      ALTER TABLE calls ADD COLUMN cancel_requested_at TEXT;
    `,
  },
  {
    version: 6,
    name: 'SIP dialogs of answered calls',
    sql: `
      -- JSON (SipDialogRecord): lets a restarted process send BYE for the calls of a dead one.
      ALTER TABLE calls ADD COLUMN sip_dialog TEXT;
    `,
  },
  {
    version: 7,
    name: 'provider credentials',
    sql: `
      -- An account's own voice-vendor keys, sealed with the service's key (last 4 kept to show).
      CREATE TABLE provider_credentials (
        id TEXT PRIMARY KEY,
        account_id TEXT NOT NULL REFERENCES accounts (id),
        name TEXT NOT NULL,
        provider TEXT NOT NULL,
        api_key_ciphertext TEXT NOT NULL,
        api_key_last4 TEXT NOT NULL,
        base_url TEXT,
        created_at TEXT NOT NULL,
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
        account_id TEXT PRIMARY KEY REFERENCES accounts (id),
        prices TEXT NOT NULL,
        updated_at TEXT NOT NULL
      );
    `,
  },
  {
    version: 9,
    name: 'call analysis',
    sql: `
      -- The post-call analysis of an answered call: status, reason, summary, success (JSON).
      ALTER TABLE calls ADD COLUMN analysis TEXT;
    `,
  },
  {
    version: 10,
    name: 'do not call',
    sql: `
      -- An account's suppression list: numbers never dialled again.
      CREATE TABLE do_not_call (
        account_id TEXT NOT NULL REFERENCES accounts (id),
        number TEXT NOT NULL,
        reason TEXT,
        source TEXT NOT NULL,
        created_at TEXT NOT NULL,
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
        id TEXT PRIMARY KEY,
        account_id TEXT NOT NULL REFERENCES accounts (id),
        api_key_id TEXT REFERENCES api_keys (id),
        name TEXT NOT NULL,
        agent_id TEXT NOT NULL,
        caller_ids TEXT NOT NULL,
        caller_id_selection TEXT NOT NULL,
        calling_window TEXT NOT NULL,
        time_zone TEXT NOT NULL,
        max_concurrency integer NOT NULL,
        calls_per_minute integer NOT NULL,
        max_daily_attempts integer NOT NULL,
        retry_policy TEXT NOT NULL,
        starts_at TEXT,
        ends_at TEXT,
        status TEXT NOT NULL,
        contact_count integer NOT NULL,
        created_at TEXT NOT NULL,
        completed_at TEXT
      );
      CREATE INDEX campaigns_by_account ON campaigns (account_id, id);
      -- The scheduler reads running campaigns, and paused or canceled ones still on a call.
      CREATE INDEX campaigns_by_status ON campaigns (status);
      CREATE TABLE campaign_contacts (
        id TEXT PRIMARY KEY,
        campaign_id TEXT NOT NULL,
        account_id TEXT NOT NULL,
        position integer NOT NULL,
        to_number TEXT NOT NULL,
        variables TEXT,
        first_message TEXT,
        context TEXT,
        time_zones TEXT NOT NULL,
        state TEXT NOT NULL,
        attempts integer NOT NULL DEFAULT 0,
        due_at TEXT,
        claimed_at TEXT,
        call_id TEXT,
        last_outcome TEXT,
        updated_at TEXT NOT NULL,
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
        call_id TEXT PRIMARY KEY,
        campaign_id TEXT NOT NULL,
        contact_id TEXT NOT NULL,
        attempt integer NOT NULL,
        created_at TEXT NOT NULL,
        -- One call per attempt, whatever the number of schedulers.
        UNIQUE (contact_id, attempt)
      );
      -- Data rules: how long transcripts and recordings are kept, and what was erased, by whom.
      CREATE TABLE retention_rules (
        account_id TEXT PRIMARY KEY REFERENCES accounts (id),
        retention_days integer NOT NULL,
        updated_at TEXT NOT NULL
      );
      ALTER TABLE calls ADD COLUMN transcript_erased_at TEXT;
      -- Caps on how fast calls leave one caller ID or one trunk (calls per second).
      CREATE TABLE dial_rates (
        account_id TEXT NOT NULL REFERENCES accounts (id),
        scope TEXT NOT NULL,
        subject TEXT NOT NULL,
        calls_per_second integer NOT NULL,
        updated_at TEXT NOT NULL,
        PRIMARY KEY (account_id, scope, subject)
      );
      -- An account's quiet hours: when no call starts, in the callee's zone.
      CREATE TABLE quiet_hours (
        account_id TEXT PRIMARY KEY REFERENCES accounts (id),
        start_time TEXT NOT NULL,
        end_time TEXT NOT NULL,
        time_zone TEXT NOT NULL,
        updated_at TEXT NOT NULL
      );
      CREATE TABLE audit_log (
        id TEXT PRIMARY KEY,
        account_id TEXT NOT NULL REFERENCES accounts (id),
        action TEXT NOT NULL,
        actor TEXT NOT NULL,
        subject TEXT NOT NULL,
        detail TEXT NOT NULL,
        created_at TEXT NOT NULL
      );
      CREATE INDEX audit_log_by_account ON audit_log (account_id, id);
    `,
  },
  {
    version: 12,
    name: 'status events',
    // The table is rebuilt (SQLite cannot drop NOT NULL or UNIQUE in place): migrate() runs
    // with foreign keys off and checks them before it commits.
    sql: `
      -- Events beyond call.completed: a call's event of each type once, a campaign's once.
      CREATE TABLE events_new (
        id TEXT PRIMARY KEY,
        account_id TEXT NOT NULL REFERENCES accounts (id),
        type TEXT NOT NULL,
        call_id TEXT REFERENCES calls (id),
        campaign_id TEXT,
        body TEXT NOT NULL,
        created_at TEXT NOT NULL,
        status TEXT NOT NULL DEFAULT 'pending',
        attempts INTEGER NOT NULL DEFAULT 0,
        next_attempt_at TEXT,
        delivered_at TEXT
      );
      INSERT INTO events_new (id, account_id, type, call_id, body, created_at, status, attempts,
        next_attempt_at, delivered_at)
        SELECT id, account_id, type, call_id, body, created_at, status, attempts, next_attempt_at,
          delivered_at FROM events;
      DROP TABLE events;
      ALTER TABLE events_new RENAME TO events;
      CREATE INDEX events_by_account ON events (account_id, id);
      CREATE UNIQUE INDEX events_once_per_call ON events (call_id, type) WHERE call_id IS NOT NULL;
      CREATE UNIQUE INDEX events_once_per_campaign ON events (campaign_id, type)
        WHERE campaign_id IS NOT NULL;
      -- The event types an endpoint receives (a JSON array); call.completed always.
      ALTER TABLE webhook_endpoints ADD COLUMN event_types TEXT NOT NULL DEFAULT '["call.completed"]';
    `,
  },
  {
    version: 13,
    name: 'trunk settings',
    sql: `
      -- A trunk's settings beyond its URI (TLS CA and verification, …) as one JSON document.
      ALTER TABLE trunks ADD COLUMN settings TEXT NOT NULL DEFAULT '{}';
      -- The latest registration state a worker saw (JSON), for trunks that register.
      ALTER TABLE trunks ADD COLUMN registration TEXT;
    `,
  },
  {
    version: 14,
    name: 'agent tests',
    sql: `
      -- A sandbox call placed by an agent test run (docs/testing.md): the scenario its callee
      -- plays and is checked against, and the agent settings this call alone runs with.
      CREATE TABLE agent_test_calls (
        call_id TEXT PRIMARY KEY,
        run_id TEXT NOT NULL,
        account_id TEXT NOT NULL REFERENCES accounts (id),
        agent_id TEXT NOT NULL,
        position INTEGER NOT NULL,
        repeat_index INTEGER NOT NULL,
        scenario TEXT NOT NULL,
        agent_overrides TEXT,
        replay_of TEXT,
        created_at TEXT NOT NULL
      );
      CREATE INDEX agent_test_calls_by_run ON agent_test_calls (account_id, run_id, position);
      CREATE INDEX agent_test_calls_by_agent ON agent_test_calls (account_id, agent_id, created_at);
    `,
  },
  {
    version: 15,
    name: 'campaign counters',
    // A campaign's progress as counters kept by triggers (src/store/campaignCounterSql.ts).
    sql: sqliteCampaignCountersSql(),
  },
  ...sqliteCampaignSchedulingMigrations,
  // In version order: 371 (results), 372 and 374 (rules), 375 (caller-ID health), 380 (hold audio).
  ...sqliteCampaignResultsMigrations,
  ...sqliteCampaignRulesMigrations,
  ...sqliteCallerIdHealthMigrations,
  ...sqliteHoldAudioMigrations,
  // 405 (web calls).
  ...sqliteWebCallMigrations,
  // 450 (inbound calls).
  ...sqliteInboundCallMigrations,
];
