/** Issue 35's hold audio files for PostgreSQL, kept apart from migrations.ts so that parallel work appends without conflicts. */
export const postgresHoldAudioMigrations: readonly { version: number; name: string; sql: string }[] = [
  {
    version: 380,
    name: 'hold audio files of agents',
    sql: `
      -- One uploaded hold audio per agent (settings.transfer.hold_audio "file"), as 8 kHz G.711
      -- mu-law: in the database, so every worker that transfers a call can play it.
      CREATE TABLE agent_hold_audio (
        agent_id text PRIMARY KEY REFERENCES agents (id),
        account_id text NOT NULL,
        mulaw bytea NOT NULL,
        duration_ms integer NOT NULL,
        updated_at timestamptz NOT NULL
      );
    `,
  },
];
