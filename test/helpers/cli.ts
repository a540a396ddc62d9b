import { type ChildProcess, execFile, execFileSync, spawn } from 'node:child_process';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { resolve } from 'node:path';
import { expect } from 'vitest';
import { listenOnlyScriptPath } from './agentScripts.js';

/** The built command line, run as users run it. */
export const mainScript = resolve(import.meta.dirname, '../../dist/main.js');

export interface CliResult {
  code: number;
  stdout: string;
  stderr: string;
}

/** Runs `callwright ARGS` on the data directory `dataDir` with only PATH and `env` set. */
export function runCli(
  dataDir: string,
  args: string[],
  env: Record<string, string> = {},
): Promise<CliResult> {
  return new Promise((done) => {
    execFile(
      process.execPath,
      [mainScript, ...args],
      { env: { PATH: process.env.PATH, CALLWRIGHT_DATA_DIR: dataDir, ...env }, timeout: 20_000 },
      (error, stdout, stderr) => {
        const code = error ? (typeof error.code === 'number' ? error.code : 1) : 0;
        done({ code, stdout, stderr });
      },
    );
  });
}

/** Runs the CLI with exactly `env` (plus PATH) in `cwd`, `input` on its standard input. */
export function runCliWith(
  options: { cwd?: string; env?: Record<string, string>; input?: string },
  args: string[],
): Promise<CliResult> {
  return new Promise((done) => {
    const child = execFile(
      process.execPath,
      [mainScript, ...args],
      { cwd: options.cwd, env: { PATH: process.env.PATH ?? '', ...options.env }, timeout: 20_000 },
      (error, stdout, stderr) =>
        done({ code: error ? (typeof error.code === 'number' ? error.code : 1) : 0, stdout, stderr }),
    );
    child.stdin?.end(options.input ?? '');
  });
}

/** Runs a verb with `--json` and returns its one JSON object, failing the test on any error. */
export async function runCliJson(
  dataDir: string,
  args: string[],
  env: Record<string, string> = {},
): Promise<Record<string, unknown>> {
  const result = await runCli(dataDir, [...args, '--json'], env);
  expect(result.stderr).toBe('');
  expect(result.code).toBe(0);
  const lines = result.stdout.trim().split('\n');
  expect(lines).toHaveLength(1);
  return JSON.parse(lines[0] as string);
}

export interface ServeProcess {
  child: ChildProcess;
  /** The API's address, read from the "callwright listening" log line. */
  url: string;
  /** Sends SIGTERM and resolves with the exit code. */
  stop(): Promise<number | null>;
}

/**
 * Starts `callwright serve ARGS` as its own process with exactly `env` (plus PATH) and resolves
 * once it logs that it listens. Output is kept (the last 20 kB) for the error when it does not.
 */
export function startServeProcess(
  args: string[],
  env: Record<string, string>,
  timeoutMs = 30_000,
  /** A command the process runs under, e.g. `['prlimit', '--nofile=256:256', '--']`. */
  launcher: readonly string[] = [],
): Promise<ServeProcess> {
  const [command, ...launcherArgs] = [...launcher, process.execPath];
  const child = spawn(command as string, [...launcherArgs, mainScript, 'serve', ...args], {
    env: { PATH: process.env.PATH ?? '', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const exited = new Promise<number | null>((done) => child.once('exit', (code) => done(code)));
  return new Promise((resolveServe, reject) => {
    let output = '';
    const timer = setTimeout(
      () => reject(new Error(`serve did not start within ${timeoutMs} ms: ${output}`)),
      timeoutMs,
    );
    const collect = (chunk: Buffer) => {
      output = (output + chunk.toString()).slice(-20_000);
      const match = /"url":"(http:\/\/[^"]+)"/.exec(output);
      if (match) {
        clearTimeout(timer);
        resolveServe({
          child,
          url: match[1] as string,
          stop: () => {
            child.kill('SIGTERM');
            return exited;
          },
        });
      }
    };
    child.stdout?.on('data', collect);
    child.stderr?.on('data', (chunk: Buffer) => {
      output = (output + chunk.toString()).slice(-20_000);
    });
    void exited.then(() => {
      clearTimeout(timer);
      reject(new Error(`serve exited early: ${output}`));
    });
  });
}

/** Runs `callwright ARGS --json` synchronously with exactly `env` and returns its JSON object. */
export function runCliJsonSync(env: Record<string, string>, args: string[]): Record<string, unknown> {
  return JSON.parse(
    execFileSync(process.execPath, [mainScript, ...args, '--json'], { env, encoding: 'utf8' }),
  );
}

export interface CliCaller {
  accountId: string;
  /** The API key in full, for `X-API-Key`. */
  key: string;
  agentId: string;
}

/**
 * With the CLI: an account, an API key named `keyName`, an agent whose calls last at most
 * `maxDurationS`, and the number +15550009999 (routed to `trunk` when given, added first).
 */
export function createCallerWithCli(
  env: Record<string, string>,
  options: {
    name: string;
    maxLiveCalls?: number;
    keyName?: string;
    maxDurationS: number;
    trunk?: { name: string; uri: string; username: string; password: string };
  },
): CliCaller {
  const cli = (args: string[]) => runCliJsonSync(env, args);
  const accountId = cli([
    ...['accounts', 'create', '--name', options.name],
    ...(options.maxLiveCalls === undefined ? [] : ['--max-live-calls', String(options.maxLiveCalls)]),
  ]).account_id as string;
  const key = cli(['keys', 'create', '--name', options.keyName ?? 'k', '--account', accountId]).key as string;
  const agentId = cli([
    ...['agents', 'create', '--name', 'a', '--prompt', 'p', '--script', listenOnlyScriptPath],
    ...['--max-duration', String(options.maxDurationS), '--account', accountId],
  ]).agent_id as string;
  const { trunk } = options;
  if (trunk) {
    cli([
      ...['trunks', 'add', '--name', trunk.name, '--uri', trunk.uri],
      ...['--username', trunk.username, '--password', trunk.password, '--account', accountId],
    ]);
  }
  cli(['numbers', 'add', '+15550009999', ...(trunk ? ['--route', trunk.name] : []), '--account', accountId]);
  return { accountId, key, agentId };
}

/**
 * An HTTP receiver for webhook deliveries on 127.0.0.1 that answers 200 and reports each one's
 * `webhook-id` and call id; `callwright webhook set` is pointed at it for `accountId`.
 */
export async function startWebhookReceiverWithCli(
  env: Record<string, string>,
  accountId: string,
  onDelivery: (delivery: { webhookId: string; callId: string }) => void,
): Promise<Server> {
  const receiver = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const body = JSON.parse(Buffer.concat(chunks).toString()) as { data: { call_id: string } };
      onDelivery({ webhookId: String(request.headers['webhook-id']), callId: body.data.call_id });
      response.writeHead(200).end();
    });
  });
  await new Promise<void>((done) => receiver.listen(0, '127.0.0.1', done));
  const url = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook`;
  runCliJsonSync(env, ['webhook', 'set', url, '--account', accountId]);
  return receiver;
}

/**
 * The environment for an embedded `serve` process on loopback: API and SIP on ephemeral ports,
 * RTP in the 99 ports from `rtpBase`, data in `dataDir`; `env` adds or overrides.
 */
export function loopbackServeEnv(
  dataDir: string,
  rtpBase: number,
  env: Record<string, string> = {},
): Record<string, string> {
  return {
    PATH: process.env.PATH ?? '',
    CALLWRIGHT_DATA_DIR: dataDir,
    PORT: '0',
    HOST: '127.0.0.1',
    CALLWRIGHT_SIP_BIND: '127.0.0.1',
    CALLWRIGHT_SIP_PORT: '0',
    CALLWRIGHT_RTP_PORTS: `${rtpBase}-${rtpBase + 98}`,
    CALLWRIGHT_RING_TIMEOUT_S: '5',
    ...env,
  };
}

/**
 * The environment for `serve` and the CLI on PostgreSQL at `databaseUrl` (secret key: 32 bytes of
 * `secretKeyByte`), data in `dataDir`, rate limit out of the way, webhooks to loopback allowed.
 */
export function postgresServeEnv(
  databaseUrl: string,
  dataDir: string,
  secretKeyByte: number,
  env: Record<string, string> = {},
): Record<string, string> {
  return {
    PATH: process.env.PATH ?? '',
    DATABASE_URL: databaseUrl,
    CALLWRIGHT_SECRET_KEY: Buffer.alloc(32, secretKeyByte).toString('base64'),
    CALLWRIGHT_DATA_DIR: dataDir,
    CALLWRIGHT_RATE_LIMIT: '100000/1s',
    CALLWRIGHT_RING_TIMEOUT_S: '5',
    CALLWRIGHT_WEBHOOK_ALLOW_PRIVATE: 'true',
    HOST: '127.0.0.1',
    PORT: '0',
    LOG_LEVEL: 'warn',
    ...env,
  };
}

/**
 * `serve --role …` processes of one scale-out deployment, each in its own slot of RTP ports and
 * data directory; remembers them to kill at the end, and any that ended other than by our
 * SIGKILL or SIGTERM (a dropped connection must not end any).
 */
export class ServeFleet {
  readonly children = new Set<ChildProcess>();
  readonly unexpectedExits: string[] = [];

  constructor(
    private readonly baseEnv: () => Record<string, string>,
    private readonly workDir: string,
    private readonly rtpPortsFrom: number,
  ) {}

  /**
   * Starts one process. The start-up time-out is generous: a worker restarted mid-chaos starts
   * beside the live calls' speech on every core (about 2 s, 4-6 s beside three busy loops, 8-15 s
   * beside ten, most of it the speech engines' processes), and the suite's busiest minutes starved
   * restarts past 30 s. These tests are about calls, not start-up speed.
   */
  async serve(role: 'api' | 'worker', slot: number): Promise<{ child: ChildProcess; url: string }> {
    const rtpBase = this.rtpPortsFrom + slot * 1_000;
    const started = await startServeProcess(
      ['--role', role],
      {
        ...this.baseEnv(),
        LOG_LEVEL: 'info',
        CALLWRIGHT_DATA_DIR: resolve(this.workDir, `${role}-${slot}`),
        CALLWRIGHT_SIP_BIND: '127.0.0.1',
        CALLWRIGHT_SIP_PORT: '0',
        CALLWRIGHT_RTP_PORTS: `${rtpBase}-${rtpBase + 998}`,
      },
      90_000,
    );
    this.children.add(started.child);
    started.child.on('exit', (code, signal) => {
      this.children.delete(started.child);
      if (signal !== 'SIGKILL' && signal !== 'SIGTERM')
        this.unexpectedExits.push(`${role}-${slot}: ${code ?? signal}`);
    });
    return started;
  }

  killAll(signal: 'SIGKILL' | 'SIGTERM'): void {
    for (const child of this.children) child.kill(signal);
  }
}
