/** Issue 39's web calls for SQLite, kept apart from migrations.ts so that parallel work appends without conflicts. */
export const sqliteWebCallMigrations: readonly { version: number; name: string; sql: string }[] = [
  {
    version: 405,
    name: 'web calls: the call channel and one-use connection tokens',
    sql: `
      -- How the callee is reached: 'phone' (SIP) or 'web' (WebRTC from a browser).
      ALTER TABLE calls ADD COLUMN channel TEXT NOT NULL DEFAULT 'phone';
      -- One row per web call: the SHA-256 of its connection token (never the token), its expiry
      -- and when it was used (one use), with the metadata the request gave.
      CREATE TABLE web_calls (
        call_id TEXT PRIMARY KEY REFERENCES calls (id),
        account_id TEXT NOT NULL REFERENCES accounts (id),
        token_hash TEXT NOT NULL UNIQUE,
        metadata TEXT,
        created_at TEXT NOT NULL,
        expires_at TEXT NOT NULL,
        used_at TEXT
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
        account_id TEXT PRIMARY KEY REFERENCES accounts (id),
        origins TEXT NOT NULL,
        updated_at TEXT NOT NULL
      );
    `,
  },
];
