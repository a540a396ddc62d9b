// The service a campaign bench runs against: the whole service on the sandbox carrier (SQLite in a
// temporary folder, or PostgreSQL in a schema of its own when DATABASE_URL is set), one account
// with an API key, a script agent that listens for 3 s, and the caller IDs given. `close()` stops
// it and removes its folder and schema.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createAgent } from '../dist/admin/agents.js';
import { createApiKey } from '../dist/admin/apiKeys.js';
import { addPhoneNumber } from '../dist/admin/numbers.js';
import { loadConfig } from '../dist/config.js';
import { createLogger } from '../dist/logger.js';
import { startService } from '../dist/server.js';

export async function startCampaignBenchService({ name, concurrency, callerIds, env = {} }) {
  const dataDir = mkdtempSync(join(tmpdir(), `callwright-bench-${name}-`));
  const schema = `bench_${name}_${process.pid}`;
  const config = loadConfig({
    PORT: '0',
    HOST: '127.0.0.1',
    CALLWRIGHT_DATA_DIR: dataDir,
    CALLWRIGHT_SIP_BIND: '127.0.0.1',
    CALLWRIGHT_PUBLIC_IP: '127.0.0.1',
    CALLWRIGHT_SIP_PORT: '0',
    CALLWRIGHT_RTP_PORTS: '30000-39998',
    CALLWRIGHT_RATE_LIMIT: '100000/1s',
    CALLWRIGHT_RING_TIMEOUT_S: '5',
    ...env,
    ...(process.env.DATABASE_URL
      ? {
          DATABASE_URL: process.env.DATABASE_URL,
          CALLWRIGHT_DATABASE_SCHEMA: schema,
          CALLWRIGHT_SECRET_KEY: Buffer.alloc(32, 9).toString('base64'),
        }
      : {}),
  });
  const service = await startService(config, createLogger('error'));
  const account = await service.store.accounts.create({ name: 'bench', maxLiveCalls: concurrency + 20 });
  const { key } = await createApiKey(service.store, account.id, 'bench');
  const agent = await createAgent(service.store, account.id, {
    name: 'bench',
    prompt: 'p',
    script: { start: 'listening', nodes: { listening: { listen: [{ phrases: [], next: 'listening' }] } } },
    maxDurationS: 3,
  });
  for (const number of callerIds) await addPhoneNumber(service.store, account.id, number);
  return {
    service,
    account,
    key,
    agent,
    async close() {
      await service.close();
      rmSync(dataDir, { recursive: true, force: true });
      if (!process.env.DATABASE_URL) return;
      const pg = (await import('pg')).default;
      const client = new pg.Client({ connectionString: process.env.DATABASE_URL });
      await client.connect();
      await client.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
      await client.query(`DROP SCHEMA IF EXISTS ${schema}_jobs CASCADE`);
      await client.end();
    },
  };
}
