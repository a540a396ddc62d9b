import { join } from 'node:path';
import type { Config } from './config.js';
import type { Logger } from './logger.js';
import { PgBossJobQueue } from './queue/pgBossJobQueue.js';
import { SqliteJobQueue } from './queue/sqliteJobQueue.js';
import {
  FileRecordingStorage,
  PostgresRecordingStorage,
  type RecordingStorage,
} from './recordings/recordingStorage.js';
import { PostgresStore } from './store/postgres/postgresStore.js';
import { SqliteStore } from './store/sqlite/sqliteStore.js';

/**
 * The one place a store adapter meets a queue adapter: each store keeps its job queue in its own
 * database and is given it at construction (the transactional enqueue seam, src/queue/types.ts),
 * so the store never imports the queue's implementation and the queue never imports the store.
 */

/** The store a process runs on, chosen by the configuration. */
export type ServiceStore = SqliteStore | PostgresStore;

/** The embedded store: one SQLite file with its `jobs` table. */
export function openSqliteStore(path: string): SqliteStore {
  return SqliteStore.open(path, (db) => new SqliteJobQueue(db));
}

/** The scale-out store: PostgreSQL, with pg-boss's jobs in the schema `<schema>_jobs`. */
export function openPostgresStore(options: {
  connectionString: string;
  schema?: string;
  maxConnections?: number;
  /** How often pg-boss looks for jobs whose worker's lease ran out. */
  queueMaintenanceIntervalS?: number;
  logger: Logger;
}): Promise<PostgresStore> {
  const { queueMaintenanceIntervalS, ...storeOptions } = options;
  return PostgresStore.open({
    ...storeOptions,
    startQueue: ({ pool, schema }) =>
      PgBossJobQueue.start({
        pool,
        bossSchema: `${schema}_jobs`,
        logger: options.logger,
        ...(queueMaintenanceIntervalS ? { maintenanceIntervalS: queueMaintenanceIntervalS } : {}),
      }),
  });
}

/** PostgreSQL when DATABASE_URL is set (migrated on open), otherwise the embedded SQLite file. */
export async function openConfiguredStore(
  config: Pick<Config, 'database' | 'sqlitePath'>,
  logger: Logger,
): Promise<ServiceStore> {
  if (config.database.url === null) return openSqliteStore(config.sqlitePath);
  return openPostgresStore({
    connectionString: config.database.url,
    schema: config.database.schema,
    logger: logger.child({ component: 'postgres' }),
  });
}

/**
 * Where the store's recordings live: scale-out processes may run on different machines, so with
 * PostgreSQL they go in the database; the embedded mode keeps WAV files in the data directory.
 */
export function recordingStorageFor(store: ServiceStore, dataDir: string): RecordingStorage {
  return store instanceof PostgresStore
    ? new PostgresRecordingStorage(store.pool)
    : new FileRecordingStorage(join(dataDir, 'recordings'));
}
