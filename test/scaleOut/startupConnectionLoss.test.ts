import { mkdtempSync, rmSync } from 'node:fs';
import { connect, createServer, type Server, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { createLogger } from '../../src/logger.js';
import { type ServiceRole, startService } from '../../src/server.js';
import { loopbackServiceConfig } from '../helpers/fullService.js';
import { request } from '../helpers/http.js';
import { dropTestSchema, newTestSchema, testPostgresUrl } from '../helpers/postgres.js';
import { LogCapture } from '../helpers/service.js';

/**
 * A connection to PostgreSQL dropped while the service starts (a failover, a proxy's idle-kill,
 * `pg_terminate_backend` — CI's chaos test once caught a restarted worker at that moment and the
 * process exited). Between the service and PostgreSQL sits a TCP proxy that cuts the connection
 * carrying the Nth message the service sends, so the drop lands at a different start-up step for
 * each N: migrations, the job queue's installation, sealing secrets, the setup token.
 */

interface CuttingProxy {
  url: string;
  /** When the cut happened (ms since epoch), or null if the service never sent that many messages. */
  cutAtMs(): number | null;
  close(): Promise<void>;
}

/** Forwards to PostgreSQL and destroys the connection that carries the `cutAtMessage`th chunk. */
async function startCuttingProxy(cutAtMessage: number): Promise<CuttingProxy> {
  const upstream = new URL(testPostgresUrl());
  const sockets = new Set<Socket>();
  let messages = 0;
  let cutAt: number | null = null;
  const server: Server = createServer((client) => {
    const server = connect(Number(upstream.port || 5432), upstream.hostname);
    sockets.add(client).add(server);
    const end = () => {
      client.destroy();
      server.destroy();
    };
    client.on('error', end).on('close', end);
    server.on('error', end).on('close', end);
    server.on('data', (chunk) => client.write(chunk));
    client.on('data', (chunk) => {
      messages++;
      if (messages === cutAtMessage) {
        cutAt = Date.now();
        end();
        return;
      }
      server.write(chunk);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address() as { port: number };
  const url = new URL(testPostgresUrl());
  url.host = `127.0.0.1:${address.port}`;
  return {
    url: url.toString(),
    cutAtMs: () => cutAt,
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}

const schemas: string[] = [];
const dataDirs: string[] = [];

afterAll(async () => {
  for (const dir of dataDirs) rmSync(dir, { recursive: true, force: true });
  for (const schema of schemas) await dropTestSchema(schema);
});

async function startThroughCut(role: ServiceRole, cutAtMessage: number) {
  const proxy = await startCuttingProxy(cutAtMessage);
  const schema = newTestSchema();
  schemas.push(schema);
  const dataDir = mkdtempSync(join(tmpdir(), 'callwright-startcut-'));
  dataDirs.push(dataDir);
  const config = loopbackServiceConfig(dataDir, {
    DATABASE_URL: proxy.url,
    CALLWRIGHT_DATABASE_SCHEMA: schema,
    CALLWRIGHT_SECRET_KEY: Buffer.alloc(32, 9).toString('base64'),
  });
  const logs = new LogCapture();
  try {
    const service = await startService(config, createLogger('info', logs), { role });
    const startedAtMs = Date.now();
    try {
      const health = await request(`${service.url}/readyz`);
      return { cutAtMs: proxy.cutAtMs(), startedAtMs, logs: logs.text(), readyStatus: health.status };
    } finally {
      await service.close();
    }
  } finally {
    await proxy.close();
  }
}

describe('a PostgreSQL connection dropped during start-up', () => {
  // The first messages are the migration's, on one connection in order (startup packet, advisory
  // lock, BEGIN…): a cut there always hits a statement in flight, and start-up must run again.
  // Later ones reach pg-boss's installation, the secrets and the setup token over several pooled
  // connections: a cut may then land on an idle one, which the pool replaces without a retry.
  it.each([
    [2, true],
    [6, true],
    [15, true],
    [30, false],
    [54, false],
  ])('does not end the process: cut at message %i (start-up runs again: %s)', async (cutAt, mustRestart) => {
    const result = await startThroughCut('api', cutAt);
    expect(result.cutAtMs).not.toBeNull();
    expect(result.cutAtMs as number).toBeLessThan(result.startedAtMs);
    if (mustRestart)
      expect(result.logs).toContain('PostgreSQL connection lost during start-up: starting again');
    expect(result.readyStatus).toBe(200);
  });

  it('a worker process too (its call worker and job listener start on the second attempt)', async () => {
    const result = await startThroughCut('worker', 6);
    expect(result.cutAtMs as number).toBeLessThan(result.startedAtMs);
    expect(result.logs).toContain('starting again');
    expect(result.readyStatus).toBe(200);
  });
});
