import type { Config } from '../config.js';
import type { Logger } from '../logger.js';
import { PostgresStore } from './postgres/postgresStore.js';
import { SqliteStore } from './sqlite/sqliteStore.js';

/** The store a process runs on, chosen by the configuration. */
export type ServiceStore = SqliteStore | PostgresStore;

/** PostgreSQL when DATABASE_URL is set (migrated on open), otherwise the embedded SQLite file. */
export async function openConfiguredStore(
  config: Pick<Config, 'database' | 'sqlitePath'>,
  logger: Logger,
): Promise<ServiceStore> {
  if (config.database.url === null) return SqliteStore.open(config.sqlitePath);
  return PostgresStore.open({
    connectionString: config.database.url,
    schema: config.database.schema,
    logger: logger.child({ component: 'postgres' }),
  });
}
