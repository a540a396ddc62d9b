import { type ChildProcess, spawn } from 'node:child_process';
import { createSocket, type Socket } from 'node:dgram';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { createLogger, prettyDestination } from '../../src/logger.js';
import { loopbackServeEnv, mainScript, runCli } from '../helpers/cli.js';
import { freePort } from '../helpers/freePort.js';

/**
 * `serve` as a person starts it (issue 13, item 4): a start-up that names the setting to change
 * when the OS refuses, a plain-text block on a terminal, pretty log lines on a terminal and JSON
 * lines otherwise, health polls kept out of the info log, one `component` per line.
 */

const workDir = mkdtempSync(join(tmpdir(), 'callwright-startup-'));
const started: ChildProcess[] = [];
let rtpBase = 47_000 + (process.pid % 40) * 100;
const nextRtpBase = () => {
  rtpBase += 100;
  return rtpBase;
};

afterAll(() => {
  for (const child of started) if (child.pid && child.exitCode === null) process.kill(-child.pid, 'SIGKILL');
  rmSync(workDir, { recursive: true, force: true });
});

function dataDir(): string {
  return mkdtempSync(join(workDir, 'data-'));
}

interface Running {
  child: ChildProcess;
  output: () => string;
  exited: Promise<number | null>;
}

function spawnInGroup(command: string, args: string[], env: Record<string, string>): Running {
  const child = spawn(command, args, { env, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
  started.push(child);
  let output = '';
  child.stdout?.on('data', (chunk: Buffer) => {
    output += chunk.toString();
  });
  child.stderr?.on('data', (chunk: Buffer) => {
    output += chunk.toString();
  });
  return {
    child,
    output: () => output,
    exited: new Promise((done) => child.once('exit', (code) => done(code))),
  };
}

async function until(
  what: string,
  check: () => boolean,
  running: Running,
  timeoutMs = 30_000,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`${what} did not happen:\n${running.output().slice(-3000)}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

async function stopGroup(running: Running): Promise<void> {
  if (running.child.pid && running.child.exitCode === null) process.kill(-running.child.pid, 'SIGTERM');
  await running.exited;
}

describe('serve names the setting to change when it cannot start', () => {
  it('PORT already taken', async () => {
    const taken: Server = createServer();
    const port = await freePort();
    await new Promise<void>((resolve) => taken.listen(port, '127.0.0.1', resolve));
    try {
      const result = await runCli(
        dataDir(),
        ['serve'],
        loopbackServeEnv('', nextRtpBase(), { PORT: String(port) }),
      );
      expect(result.code).toBe(1);
      expect(result.stderr).toMatch(
        new RegExp(`^callwright: PORT: 127\\.0\\.0\\.1:${port} is already in use.*set PORT`, 'm'),
      );
      expect(result.stderr).not.toContain('unexpected error');
    } finally {
      taken.close();
    }
  });

  it('CALLWRIGHT_SIP_PORT already taken', async () => {
    const port = await freePort();
    const taken: Socket = createSocket('udp4');
    await new Promise<void>((resolve) => taken.bind(port, '127.0.0.1', resolve));
    try {
      const directory = dataDir();
      const result = await runCli(
        directory,
        ['serve'],
        loopbackServeEnv(directory, nextRtpBase(), { CALLWRIGHT_SIP_PORT: String(port) }),
      );
      expect(result.code).toBe(1);
      expect(result.stderr).toMatch(
        /^callwright: CALLWRIGHT_SIP_PORT: UDP 127\.0\.0\.1:\d+ is already in use/m,
      );
    } finally {
      taken.close();
    }
  });

  it('CALLWRIGHT_DATA_DIR that is a file', async () => {
    const file = join(workDir, 'not-a-folder');
    writeFileSync(file, 'x');
    const result = await runCli(file, ['serve'], loopbackServeEnv(file, nextRtpBase()));
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(/^callwright: CALLWRIGHT_DATA_DIR: .*not-a-folder is not a folder/m);
  });

  it('an RTP range too small for any call says why', async () => {
    const directory = dataDir();
    const result = await runCli(directory, ['serve'], {
      ...loopbackServeEnv(directory, 0),
      CALLWRIGHT_RTP_PORTS: '40000-40003',
    });
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(
      /^callwright: CALLWRIGHT_RTP_PORTS: 40000-40003 holds 4 ports, too few for any call/m,
    );
  });
});

describe('serve for a person and for a log collector', () => {
  it('without a terminal: JSON lines, one component each, and no info line per health poll', async () => {
    const directory = dataDir();
    const running = spawnInGroup(
      process.execPath,
      [mainScript, 'serve'],
      loopbackServeEnv(directory, nextRtpBase()),
    );
    try {
      await until('listening', () => /"msg":"callwright listening"/.test(running.output()), running);
      const url = /"url":"(http:\/\/[^"]+)"/.exec(running.output())?.[1];
      for (let poll = 0; poll < 5; poll++) expect((await fetch(`${url}/healthz`)).status).toBe(200);
      expect((await fetch(`${url}/v1/calls/call_x`)).status).toBe(401);
      await until('the 401 logged', () => /"path":"\/v1\/calls\/call_x"/.test(running.output()), running);
      const lines = running.output().trim().split('\n');
      for (const line of lines) {
        expect(() => JSON.parse(line), line).not.toThrow();
        expect(line.match(/"component":/g)?.length ?? 0, line).toBeLessThanOrEqual(1);
      }
      expect(lines.some((line) => /"component":"sandbox"/.test(line))).toBe(true);
      expect(running.output()).not.toMatch(/"path":"\/healthz"/);
      expect(running.output()).not.toContain('Dashboard');
    } finally {
      await stopGroup(running);
    }
  });

  it('on a terminal: a start-up block with the dashboard, the data folder and the first commands, then pretty lines', async () => {
    const directory = dataDir();
    const env = loopbackServeEnv(directory, nextRtpBase());
    // `script` gives the process a pseudo-terminal, as a person's shell would.
    const running = spawnInGroup(
      'script',
      ['-qfec', `${process.execPath} ${mainScript} serve`, '/dev/null'],
      {
        ...env,
        TERM: 'dumb',
      },
    );
    try {
      // The setup token is announced once the store has been asked for users, after the block.
      await until(
        'the start-up block and the setup token',
        () =>
          /Ctrl-C here stops the service/.test(running.output()) &&
          /No dashboard user yet/.test(running.output()),
        running,
      );
      const text = running.output();
      expect(text).toMatch(/callwright is running \(API, dashboard and call worker\)/);
      expect(text).toMatch(/ {2}Dashboard {2}http:\/\/\S+\//);
      expect(text).toContain(`Data       ${directory} (SQLite database, secret key, recordings)`);
      expect(text).toContain('npx callwright keys create --name first-key');
      expect(text).toMatch(/No dashboard user yet/);
      expect(text).toMatch(/^\d\d:\d\d:\d\d\.\d{3} INFO {2}\[sandbox\] /m);
      expect(text).not.toMatch(/^\{"level"/m);
    } finally {
      await stopGroup(running);
    }
  });

  it('CALLWRIGHT_LOG_FORMAT=pretty without a terminal, with secrets still redacted', async () => {
    const written: string[] = [];
    const logger = createLogger('info', prettyDestination({ write: (text: string) => written.push(text) }));
    logger.child({ component: 'api' }).info({ password: 'hunter2', keyId: 'key_1' }, 'signed in');
    expect(written).toHaveLength(1);
    expect(written[0]).toMatch(
      /^\d\d:\d\d:\d\d\.\d{3} INFO {2}\[api\] signed in password=\[redacted\] keyId=key_1\n$/,
    );
    expect(written[0]).not.toContain('hunter2');

    const directory = dataDir();
    const running = spawnInGroup(
      process.execPath,
      [mainScript, 'serve'],
      loopbackServeEnv(directory, nextRtpBase(), { CALLWRIGHT_LOG_FORMAT: 'pretty' }),
    );
    try {
      await until('listening', () => / callwright listening /.test(running.output()), running);
      expect(running.output()).not.toMatch(/^\{"level"/m);
    } finally {
      await stopGroup(running);
    }
    const refused = await runCli(dataDir(), ['keys', 'list'], { CALLWRIGHT_LOG_FORMAT: 'colour' });
    expect(refused.stderr).toMatch(/CALLWRIGHT_LOG_FORMAT: must be one of auto, pretty, json, got "colour"/);
  });
});
