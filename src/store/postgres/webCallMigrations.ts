/** Issue 39's web calls for PostgreSQL, kept apart from migrations.ts so that parallel work appends without conflicts. */
export const postgresWebCallMigrations: readonly { version: number; name: string; sql: string }[] = [
  {
    version: 405,
    name: 'web calls: the call channel and one-use connection tokens',
    sql: `
      -- How the callee is reached: 'phone' (SIP) or 'web' (WebRTC from a browser).
      ALTER TABLE calls ADD COLUMN channel text NOT NULL DEFAULT 'phone';
      -- One row per web call: the SHA-256 of its connection token (never the token), its expiry
      -- and when it was used (one use), with the metadata the request gave.
      CREATE TABLE web_calls (
        call_id text COLLATE "C" PRIMARY KEY REFERENCES calls (id),
        account_id text COLLATE "C" NOT NULL REFERENCES accounts (id),
        token_hash text NOT NULL UNIQUE,
        metadata jsonb,
        created_at timestamptz NOT NULL,
        expires_at timestamptz NOT NULL,
        used_at timestamptz
      );
    `,
  },
  {
    version: 430,
    name: 'web calls: the origins an account allows its browsers to connect from',
    sql: `
      -- One row per account that set an allow-list: the whole list as a JSON array (written at
      -- once, so a reader never sees half of a replacement).
      CREATE TABLE web_call_settings (
        account_id text COLLATE "C" PRIMARY KEY REFERENCES accounts (id),
        origins jsonb NOT NULL,
        updated_at timestamptz NOT NULL
      );
    `,
  },
];
