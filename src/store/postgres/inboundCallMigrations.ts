/** Issue 40's inbound calls for PostgreSQL, kept apart from migrations.ts so that parallel work appends without conflicts. */
export const postgresInboundCallMigrations: readonly { version: number; name: string; sql: string }[] = [
  {
    version: 450,
    name: 'inbound calls: direction, callback link, a number inbound agent and per-number cap',
    sql: `
      -- 'outbound' (every call before this version) or 'inbound' (someone called one of our numbers).
      ALTER TABLE calls ADD COLUMN direction text NOT NULL DEFAULT 'outbound';
      -- An inbound call from the callee of a recent outbound call from that number: that call's id.
      ALTER TABLE calls ADD COLUMN callback_of text COLLATE "C";
      -- The agent that answers calls to the number; null: no inbound agent (see inbound_fallback).
      ALTER TABLE phone_numbers ADD COLUMN inbound_agent_id text COLLATE "C";
      -- What an inbound call to a number without an agent gets: 'refuse' (default) or 'voicemail'.
      ALTER TABLE phone_numbers ADD COLUMN inbound_fallback text NOT NULL DEFAULT 'refuse';
      -- Live calls on the number (inbound and outbound together); null: only the account's cap.
      ALTER TABLE phone_numbers ADD COLUMN max_live_calls integer;
      -- The callback lookup: the latest outbound call from our number to the caller.
      CREATE INDEX calls_callback_lookup ON calls (account_id, from_number, to_number, created_at);
    `,
  },
];
