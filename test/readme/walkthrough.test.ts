import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort } from '../helpers/freePort.js';

/**
 * Issue 13's "Done when": the README's commands, run as written, on a fresh clone of the
 * committed tree — start the service, create a key, an agent and a number, place a call with
 * curl, read it back with its transcript and recording, restart allowing loopback webhooks, run the
 * receiver and see it verify the busy call's delivery.
 *
 * What differs from a person's terminal, and only this: `npm ci` is replaced by a link to this
 * checkout's node_modules (the packages are the same lock file's); the service gets free ports
 * through PORT and CALLWRIGHT_SIP_PORT, so `localhost:3000` and the receiver's port 4000 in the
 * commands are replaced by those ports; KEY and AGENT pass from one block's shell to the next
 * through a file, as a terminal would keep them; and the blocks the README marks
 * `<!-- walkthrough: NAME -->` run in bash one after the other, each in its own process group.
 */

const repoRoot = new URL('../../', import.meta.url).pathname;
const workDir = mkdtempSync(join(tmpdir(), 'callwright-readme-'));
const cloneDir = join(workDir, 'callwright');
const started: ChildProcess[] = [];

interface Running {
  child: ChildProcess;
  output: () => string;
  exited: Promise<number | null>;
}

function startInClone(command: string, env: Record<string, string>): Running {
  const child = spawn('bash', ['-c', command], {
    cwd: cloneDir,
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? workDir, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true,
  });
  started.push(child);
  let output = '';
  child.stdout?.on('data', (chunk: Buffer) => {
    output += chunk.toString();
  });
  child.stderr?.on('data', (chunk: Buffer) => {
    output += chunk.toString();
  });
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  return { child, output: () => output, exited };
}

function stopGroup(child: ChildProcess): void {
  if (child.pid === undefined || child.exitCode !== null) return;
  try {
    process.kill(-child.pid, 'SIGTERM');
  } catch {
    // already gone
  }
}

async function stop(running: Running): Promise<void> {
  stopGroup(running.child);
  await running.exited;
}

async function until<T>(
  what: string,
  check: () => T | undefined | Promise<T | undefined>,
  timeoutMs: number,
  log: () => string,
) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value !== undefined) return value;
    if (Date.now() > deadline)
      throw new Error(`${what} did not happen in ${timeoutMs} ms:\n${log().slice(-4000)}`);
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
}

async function healthy(port: number): Promise<true | undefined> {
  try {
    return (await fetch(`http://127.0.0.1:${port}/healthz`)).ok ? true : undefined;
  } catch {
    return undefined;
  }
}

/** The README's marked ```sh blocks, by name. */
function walkthroughBlocks(readme: string): Map<string, string> {
  const blocks = new Map<string, string>();
  for (const match of readme.matchAll(/<!-- walkthrough: ([\w-]+) -->\n```sh\n([\s\S]*?)```/g))
    blocks.set(match[1] as string, match[2] as string);
  return blocks;
}

let blocks: Map<string, string>;
let env: Record<string, string>;
let apiPort: number;

beforeAll(async () => {
  execFileSync('git', ['clone', '-q', repoRoot, cloneDir]);
  symlinkSync(join(repoRoot, 'node_modules'), join(cloneDir, 'node_modules'));
  blocks = walkthroughBlocks(readFileSync(join(cloneDir, 'README.md'), 'utf8'));
  apiPort = await freePort();
  env = { PORT: String(apiPort), CALLWRIGHT_SIP_PORT: String(await freePort()) };
});

afterAll(() => {
  for (const child of started) stopGroup(child);
  rmSync(workDir, { recursive: true, force: true });
});

const onOurPort = (block: string) => block.replaceAll('localhost:3000', `localhost:${apiPort}`);

describe("the README's path, on a fresh clone", () => {
  it('marks the blocks it walks', () => {
    expect([...blocks.keys()]).toEqual([
      'place-call',
      'restart-allowing-loopback-webhooks',
      'receive-webhook',
    ]);
    expect(readFileSync(join(cloneDir, 'README.md'), 'utf8')).toMatch(/```sh\nnpm ci && npm start\n```/);
  });

  it('npm start, a first call that is a two-sided conversation with a recording, then a verified webhook', async () => {
    let service = startInClone('npm start', env);
    try {
      await until('npm start serving /healthz', () => healthy(apiPort), 120_000, service.output);
      // The person's terminal keeps KEY and AGENT for the later blocks; bash processes do not, so
      // the block's shell writes them down and the webhook block's shell reads them back.
      const placeCall = startInClone(
        `${onOurPort(blocks.get('place-call') ?? '')}\nprintf 'KEY=%q\\nAGENT=%q\\n' "$KEY" "$AGENT" > ../terminal.env\n`,
        env,
      );
      const code = await Promise.race([
        placeCall.exited,
        new Promise<string>((resolve) => setTimeout(() => resolve('timed out'), 90_000)),
      ]);
      const printed = placeCall.output();
      expect(code, printed).toBe(0);
      const firstCallId = /^queued (call_[0-9A-Z]{26})$/m.exec(printed)?.[1];
      expect(firstCallId, printed).toBeDefined();
      expect(printed).toMatch(/^completed agent_hangup human \{"confirmed":true\}$/m);
      const turns = printed.split('\n').filter((line) => /^\s*\d+\.\d (agent|callee) /.test(line));
      expect(
        turns.some((line) => / agent +Hello Ann, this is Bright Smile Dental/.test(line)),
        printed,
      ).toBe(true);
      expect(
        turns.some((line) => / callee +\S/.test(line)),
        printed,
      ).toBe(true);
      const wav = readFileSync(join(cloneDir, 'call.wav'));
      expect(wav.subarray(0, 4).toString('latin1')).toBe('RIFF');
      expect(wav.subarray(8, 12).toString('latin1')).toBe('WAVE');
      expect(wav.length).toBeGreaterThan(8000 * 2 * 2 * 5); // stereo 16-bit 8 kHz, several seconds

      // "stop the service (Ctrl-C), start it with the setting"
      await stop(service);
      service = startInClone(blocks.get('restart-allowing-loopback-webhooks') ?? '', env);
      await until('the restarted service serving /healthz', () => healthy(apiPort), 120_000, service.output);

      const receiverPort = await freePort();
      const webhookBlock = (blocks.get('receive-webhook') ?? '')
        .replaceAll('127.0.0.1:4000', `127.0.0.1:${receiverPort}`)
        .replaceAll('listen(4000,', `listen(${receiverPort},`);
      expect(webhookBlock).not.toMatch(/\b4000\b/);
      const receive = startInClone(`source ../terminal.env\n${onOurPort(webhookBlock)}\nwait\n`, env);
      const verified = await until(
        'the receiver printing a verified delivery',
        () =>
          /^verified evt_[0-9A-Z]{26} (call_[0-9A-Z]{26}) busy rejected$/m.exec(receive.output()) ??
          undefined,
        60_000,
        () => `${receive.output()}\n--- service ---\n${service.output()}`,
      );
      // The first call's event, kept while no endpoint was set, arrives too (in either order).
      await until(
        "the receiver printing the first call's held event",
        () =>
          new RegExp(`^verified evt_[0-9A-Z]{26} ${firstCallId} completed agent_hangup$`, 'm').test(
            receive.output(),
          )
            ? true
            : undefined,
        60_000,
        () => `${receive.output()}\n--- service ---\n${service.output()}`,
      );
      expect(receive.output()).not.toMatch(/refused:/);
      // The curl's answer named the same call the delivery was about.
      expect(receive.output()).toContain(`"call_id":"${verified[1]}"`);
      // The block waits for its receiver: both events were delivered at the first attempt (issue 38:
      // the receiver used to start after the endpoint was set, so the held event's first try was
      // refused and it came on the retry 5 s later, every time).
      const firstTries = await until(
        'both events recorded as delivered',
        async () => {
          const listing = startInClone('node dist/main.js events list --json', env);
          await listing.exited;
          const start = listing.output().indexOf('{');
          if (start < 0) return undefined;
          const events = (JSON.parse(listing.output().slice(start)) as { data: Record<string, unknown>[] })
            .data;
          return events.length === 2 && events.every((event) => event.status === 'delivered')
            ? events
            : undefined;
        },
        20_000,
        () => receive.output(),
      );
      expect(firstTries.map((event) => event.attempts)).toEqual([1, 1]);
      stopGroup(receive.child);
      await receive.exited;
    } finally {
      await stop(service);
    }
  }, 360_000);
});
