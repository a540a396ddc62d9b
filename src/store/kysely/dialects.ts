import type BetterSqlite3 from 'better-sqlite3';
import {
  Kysely,
  type SqliteDatabase as KyselySqliteDatabase,
  PostgresDialect,
  type RawBuilder,
  SqliteDialect,
  sql,
} from 'kysely';
import type pg from 'pg';
import { isUniqueViolation as isPostgresUniqueViolation } from '../postgres/database.js';
import { postgresColumns } from '../postgres/rows.js';
import type { ColumnCodec } from '../recordsFromRows.js';
import { isUniqueViolation as isSqliteUniqueViolation } from '../sqlite/database.js';
import { sqliteColumns } from '../sqlite/rows.js';
import type { Database, StoredBool } from './schema.js';

/**
 * Everything that differs between SQLite and PostgreSQL for the Kysely repositories, in one
 * place: how values go in (booleans), how columns come back (the codec), the few expressions
 * whose SQL differs, which error is a unique violation, and how a check-then-write is kept atomic.
 * The repositories (accounts.ts, agents.ts, telephony.ts, dashboard.ts beside this file) are
 * written once against it.
 */
export interface QueryDialect {
  readonly name: 'sqlite' | 'postgres';
  /** How this driver hands columns back (booleans, JSON, timestamps). */
  readonly columns: ColumnCodec;
  bool(value: boolean): StoredBool;
  /** Orders text byte-wise on every server locale (SQLite's default; PostgreSQL's "C" collation). */
  byteOrder(column: string): RawBuilder<string>;
  /** The UTC day (`YYYY-MM-DD`) of a timestamp column. */
  utcDay(column: string): RawBuilder<string>;
  /** An ISO 8601 value typed as a timestamp, where no column gives it its type (INSERT … SELECT). */
  timestamp(iso: string): RawBuilder<string>;
  isUniqueViolation(error: unknown): boolean;
  /**
   * Runs a check-then-write so that no other writer (in any process) interleaves with it.
   * PostgreSQL: one transaction holding an advisory lock named `lockName`. SQLite: `write` must be
   * ONE statement (e.g. INSERT … SELECT … WHERE NOT EXISTS), which SQLite runs under its single
   * write lock; the SQLite Kysely refuses transactions (see `sqliteQueries`).
   */
  serialized<T>(
    db: Kysely<Database>,
    lockName: string,
    write: (db: Kysely<Database>) => Promise<T>,
  ): Promise<T>;
}

/** What a Kysely repository is given: the query builder on the store's connection, and its dialect. */
export interface StoreQueries {
  readonly db: Kysely<Database>;
  readonly dialect: QueryDialect;
}

const sqliteDialect: QueryDialect = {
  name: 'sqlite',
  columns: sqliteColumns,
  bool: (value) => (value ? 1 : 0) as unknown as StoredBool,
  byteOrder: (column) => sql<string>`${sql.ref(column)}`,
  utcDay: (column) => sql<string>`substr(${sql.ref(column)}, 1, 10)`,
  timestamp: (iso) => sql<string>`${iso}`,
  isUniqueViolation: isSqliteUniqueViolation,
  serialized: (db, _lockName, write) => write(db),
};

const postgresDialect: QueryDialect = {
  name: 'postgres',
  columns: postgresColumns,
  bool: (value) => value as unknown as StoredBool,
  byteOrder: (column) => sql<string>`${sql.ref(column)} COLLATE "C"`,
  utcDay: (column) => sql<string>`to_char(${sql.ref(column)} AT TIME ZONE 'UTC', 'YYYY-MM-DD')`,
  timestamp: (iso) => sql<string>`CAST(${iso} AS timestamptz)`,
  isUniqueViolation: isPostgresUniqueViolation,
  serialized: (db, lockName, write) =>
    db.transaction().execute(async (transaction) => {
      await sql`SELECT pg_advisory_xact_lock(hashtext(${lockName}))`.execute(transaction);
      return write(transaction);
    }),
};

/** How many distinct statements the SQLite Kysely keeps prepared (its SQL texts are few and fixed). */
const sqliteStatementCacheSize = 256;

/**
 * Kysely on the store's better-sqlite3 handle. Statements are prepared once per SQL text and kept,
 * as the hand-written code does. Transactions are refused: the handle is shared with synchronous
 * transactions (group commit, the call lifecycle), and an async transaction left open across an
 * `await` would swallow their statements. Closing stays the store's job.
 */
export function sqliteQueries(database: BetterSqlite3.Database): StoreQueries {
  const statements = new Map<string, BetterSqlite3.Statement>();
  const shared: KyselySqliteDatabase = {
    close: () => undefined,
    prepare(text) {
      let statement = statements.get(text);
      if (!statement) {
        if (/^\s*(begin|commit|rollback|savepoint|release)\b/i.test(text)) {
          throw new Error(
            'no Kysely transactions on SQLite: write one statement, or a synchronous transaction by hand',
          );
        }
        statement = database.prepare(text);
        if (statements.size >= sqliteStatementCacheSize) {
          statements.delete(statements.keys().next().value as string);
        }
        statements.set(text, statement);
      }
      return statement as unknown as ReturnType<KyselySqliteDatabase['prepare']>;
    },
  };
  return {
    db: new Kysely<Database>({ dialect: new SqliteDialect({ database: shared }) }),
    dialect: sqliteDialect,
  };
}

/** Kysely on the store's pg pool (ending the pool stays the store's job). */
export function postgresQueries(pool: pg.Pool): StoreQueries {
  const shared = { connect: () => pool.connect(), end: async () => undefined };
  return {
    db: new Kysely<Database>({ dialect: new PostgresDialect({ pool: shared }) }),
    dialect: postgresDialect,
  };
}
