import { readFileSync } from 'node:fs';
import type { FastifyInstance } from 'fastify';
import { buildApp } from './api/app.js';
import type { Config } from './config.js';
import { MemoryRateLimiter } from './limits/rateLimiter.js';
import type { Logger } from './logger.js';
import { SqliteStore } from './store/sqlite/sqliteStore.js';
import type { Store } from './store/types.js';

export interface RunningService {
  app: FastifyInstance;
  store: Store;
  /** The address the API listens on, e.g. http://127.0.0.1:3000. */
  url: string;
  close(): Promise<void>;
}

export function packageVersion(): string {
  const packageJson = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8'));
  return String(packageJson.version);
}

/**
 * Opens the store, builds the API and listens: the `serve` command, and what tests start.
 * With `handleSignals`, SIGTERM and SIGINT close it gracefully (in-flight requests finish).
 */
export async function startService(
  config: Config,
  logger: Logger,
  options: { handleSignals?: boolean } = {},
): Promise<RunningService> {
  const store = SqliteStore.open(config.sqlitePath);
  const app = await buildApp({
    store,
    config,
    logger,
    limiter: new MemoryRateLimiter(),
    version: packageVersion(),
  });
  let url: string;
  try {
    url = await app.listen({ port: config.port, host: config.host });
  } catch (error) {
    await store.close();
    throw error;
  }
  let closing: Promise<void> | undefined;
  const close = () => {
    closing ??= (async () => {
      await app.close();
      await store.close();
      logger.info('stopped');
    })();
    return closing;
  };
  if (options.handleSignals) {
    for (const signal of ['SIGTERM', 'SIGINT'] as const) {
      process.once(signal, () => {
        logger.info({ signal }, 'shutting down');
        void close();
      });
    }
  }
  logger.info({ url, dataDir: config.dataDir }, 'callwright listening');
  return { app, store, url, close };
}
