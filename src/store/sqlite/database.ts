import { dirname } from 'node:path';
import Database from 'better-sqlite3';
import { createPrivateFile, makePrivateDirectory } from '../../secrets/privateFiles.js';
import { sqliteMigrations } from './migrations.js';

export type SqliteDatabase = Database.Database;

/**
 * Opens (creating if needed) the SQLite file and brings its schema up to date. A new file (and a
 * new folder for it) is made private, 0600 (0700), whatever the umask; SQLite gives the -wal and
 * -shm files the mode of the database file.
 * WAL with synchronous=FULL: a committed transaction survives a power cut, not only a crash;
 * the cost of the fsync is shared between requests by group commit (see groupCommit.ts).
 */
export function openSqliteDatabase(path: string): SqliteDatabase {
  if (path !== ':memory:') {
    makePrivateDirectory(dirname(path));
    createPrivateFile(path);
  }
  const db = new Database(path);
  db.pragma('journal_mode = WAL');
  db.pragma('synchronous = FULL');
  db.pragma('foreign_keys = ON');
  db.pragma('busy_timeout = 5000');
  // Deleted rows are overwritten with zeros, in their page and in pages put on the free list:
  // an erasure leaves no bytes of what it erased in the file (issue 34). The WAL's copies are
  // removed by the checkpoint that follows an erasure (KyselyPrivacy.reclaimErased).
  db.pragma('secure_delete = ON');
  migrate(db);
  return db;
}

export function migrate(db: SqliteDatabase): number[] {
  db.exec(`CREATE TABLE IF NOT EXISTS schema_migrations (
    version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at TEXT NOT NULL)`);
  const applied = new Set(
    db
      .prepare('SELECT version FROM schema_migrations')
      .all()
      .map((row) => (row as { version: number }).version),
  );
  const newlyApplied: number[] = [];
  if (sqliteMigrations.every((migration) => applied.has(migration.version))) return newlyApplied;
  // A migration may rebuild a table others refer to (SQLite's way to change a column): that needs
  // foreign keys off, which only holds outside a transaction. Each migration checks them itself.
  const foreignKeys = db.pragma('foreign_keys', { simple: true }) === 1;
  db.pragma('foreign_keys = OFF');
  try {
    for (const migration of sqliteMigrations) {
      if (applied.has(migration.version)) continue;
      applyMigration(db, migration, newlyApplied);
    }
  } finally {
    if (foreignKeys) db.pragma('foreign_keys = ON');
  }
  return newlyApplied;
}

function applyMigration(
  db: SqliteDatabase,
  migration: (typeof sqliteMigrations)[number],
  newlyApplied: number[],
): void {
  // IMMEDIATE takes the write lock first, so two processes starting together cannot both migrate.
  db.transaction(() => {
    const again = db.prepare('SELECT 1 FROM schema_migrations WHERE version = ?').get(migration.version);
    if (again) return;
    db.exec(migration.sql);
    const broken = db.pragma('foreign_key_check') as unknown[];
    if (broken.length > 0) {
      throw new Error(`migration ${migration.version} would break ${broken.length} foreign key(s)`);
    }
    db.prepare('INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, ?)').run(
      migration.version,
      migration.name,
      new Date().toISOString(),
    );
    newlyApplied.push(migration.version);
  }).immediate();
}

/** True for a primary-key or unique-constraint violation. */
export function isUniqueViolation(error: unknown): boolean {
  const code = (error as { code?: string } | null)?.code;
  return code === 'SQLITE_CONSTRAINT_UNIQUE' || code === 'SQLITE_CONSTRAINT_PRIMARYKEY';
}
