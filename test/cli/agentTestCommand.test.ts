import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type AgentTestRun, CallwrightClient } from '../../src/client/index.js';
import { appointmentScript, appointmentTestAccount } from '../helpers/agentTests.js';
import { type CliResult, mainScript } from '../helpers/cli.js';
import { freePort } from '../helpers/freePort.js';
import { startFullService } from '../helpers/fullService.js';

/**
 * `callwright test` as a user runs it: the built CLI against a whole service on loopback over
 * HTTP (it opens no database), each scenario a real sandbox call. Independent invocations run at
 * once; only "change the agent, see it pass" has a second round.
 */

const examples = resolve(import.meta.dirname, '../../examples');
const confirmsPath = resolve(examples, 'scenarios/appointment/confirms.json');
const confirms = JSON.parse(readFileSync(confirmsPath, 'utf8'));
const script = appointmentScript as { nodes: Record<string, unknown> };

let service: Awaited<ReturnType<typeof startFullService>>;
let workDir = '';
let key = '';
let agentId = '';

/** Runs the built `callwright ARGS` with exactly `env` (plus PATH); no data folder is set. */
function callwright(args: string[], env: Record<string, string> = {}): Promise<CliResult> {
  return new Promise((done) => {
    execFile(
      process.execPath,
      [mainScript, ...args],
      { env: { PATH: process.env.PATH ?? '', ...env }, timeout: 90_000 },
      (error, stdout, stderr) =>
        done({ code: error ? (typeof error.code === 'number' ? error.code : 1) : 0, stdout, stderr }),
    );
  });
}

/** `callwright test ARGS --agent AGENT` with the service's URL and key from the environment. */
const runTests = (args: string[]) =>
  callwright(['test', ...args, '--agent', agentId], { CALLWRIGHT_URL: service.url, CALLWRIGHT_API_KEY: key });

function scenarioFile(name: string, scenario: unknown): string {
  const path = join(workDir, name);
  writeFileSync(path, JSON.stringify(scenario));
  return path;
}

function expectNoKey(result: CliResult): void {
  expect(result.stdout).not.toContain(key);
  expect(result.stderr).not.toContain(key);
}

beforeAll(async () => {
  workDir = mkdtempSync(join(tmpdir(), 'callwright-test-command-'));
  service = await startFullService({ CALLWRIGHT_WORKER_MAX_CALLS: '20' });
  ({ key, agentId } = await appointmentTestAccount(service, { name: 'cli tests', maxLiveCalls: 20 }));
});

afterAll(async () => {
  await service?.dispose();
  rmSync(workDir, { recursive: true, force: true });
});

describe('callwright test', () => {
  it('passes, fails with its reason and JUnit, refuses a bad file, names an unreachable service; changing the agent makes a failing scenario pass', async () => {
    const mustFail = scenarioFile('must-fail.json', {
      ...confirms,
      name: 'must fail',
      expect: { ...confirms.expect, data: { confirmed: false } },
    });
    const seeYou = scenarioFile('see-you.json', {
      ...confirms,
      name: 'says see you',
      expect: { status: 'completed', says: ['see you on Tuesday'] },
    });
    const badFolder = mkdtempSync(join(workDir, 'bad-'));
    writeFileSync(join(badFolder, 'a-good.json'), JSON.stringify(confirms));
    writeFileSync(
      join(badFolder, 'b-bad.json'),
      JSON.stringify({ ...confirms, callee: { answers: 'human', turns: [{ pause_ms: 10 }] } }),
    );
    const junitPath = join(workDir, 'results.xml');
    const closedPort = await freePort();

    const timeoutJunitPath = join(workDir, 'timed-out.xml');
    const [passing, failing, before, bad, unreachable, timedOut] = await Promise.all([
      runTests([confirmsPath, '--repeat', '2']),
      runTests([mustFail, '--junit', junitPath]),
      runTests([seeYou]),
      runTests([badFolder]),
      callwright(['test', confirmsPath, '--agent', agentId, '--url', `http://127.0.0.1:${closedPort}`], {
        CALLWRIGHT_API_KEY: key,
      }),
      runTests([confirmsPath, '--timeout', '0.5', '--json', '--junit', timeoutJunitPath]),
    ]);

    // (a) a passing scenario, twice: PASS in the table, a pass rate per scenario.
    expect(passing.code, passing.stdout + passing.stderr).toBe(0);
    const passRows = passing.stdout.split('\n').filter((line) => /^confirms\s+\d\s+PASS\s/.test(line));
    expect(passRows, passing.stdout).toHaveLength(2);
    expect(passing.stdout).toMatch(/^SCENARIO\s+REPEAT\s+RESULT\s+DURATION\s+SLOWEST REPLY\s+REASON$/m);
    expect(passing.stdout).toContain('confirms: 2/2 passed (pass rate 100%)');
    expect(passing.stdout).toMatch(/^2 passed, 0 failed in [0-9.]+ s \(run trn_/m);

    // (b) a scenario that must fail: exit 1, its reason in the table and in full with the transcript.
    const reason = 'data.confirmed: expected false, got true';
    expect(failing.code, failing.stdout + failing.stderr).toBe(1);
    expect(failing.stdout).toMatch(new RegExp(`^must fail\\s+1\\s+FAIL\\s.*${reason}$`, 'm'));
    expect(failing.stdout).toContain(`  - ${reason}`);
    expect(failing.stdout).toMatch(/^\s+[0-9.]+ s {2}agent: Hello Ann, this is Bright Smile Dental/m);
    expect(failing.stdout).toMatch(/^\s+[0-9.]+ s {2}callee: /m);
    expect(failing.stdout).toMatch(/^0 passed, 1 failed in/m);
    const junit = readFileSync(junitPath, 'utf8');
    expect(junit).toMatch(/^<\?xml version="1.0" encoding="UTF-8"\?>/);
    expect(junit).toContain(`<testsuite name="${agentId}" tests="1" failures="1" errors="0"`);
    expect(junit).toMatch(new RegExp(`<testcase classname="${agentId}" name="must fail" time="[0-9.]+">`));
    expect(junit).toContain(`<failure message="${reason}">${reason}\n`);
    expect(junit).toContain('agent: Hello Ann');

    // (d) a bad file: exit 2, one line naming the file and the problem; nothing was started.
    expect(bad.code).toBe(2);
    expect(bad.stdout).toBe('');
    expect(bad.stderr).toBe(
      `callwright: ${join(badFolder, 'b-bad.json')}: callee.turns.0 must say, play audio, press dtmf or hang up\n`,
    );

    // No service there: one clear line, exit 1.
    expect(unreachable.code).toBe(1);
    expect(unreachable.stderr).toMatch(
      new RegExp(
        `^callwright: cannot reach the callwright service at http://127.0.0.1:${closedPort} .*ECONNREFUSED.*\\n$`,
      ),
    );

    // Out of time: exit 1, said so, the report as it stood; the call still running is a JUnit error.
    expect(timedOut.code).toBe(1);
    expect(timedOut.stderr).toMatch(
      /^callwright: timed out after 0.5 s with 1 of 1 calls still running \(run trn_\w+\)\n$/,
    );
    expect(JSON.parse(timedOut.stdout)).toMatchObject({
      status: 'running',
      summary: { total: 1, running: 1 },
    });
    expect(readFileSync(timeoutJunitPath, 'utf8')).toMatch(
      /<testcase classname="[^"]+" name="confirms" time="0">\n\s+<error message="still running when the run timed out">/,
    );

    // (c) change the agent, see it pass: the agent does not say the phrase yet…
    expect(before.code, before.stdout + before.stderr).toBe(1);
    expect(before.stdout).toContain('the agent never said "see you on Tuesday"');
    const client = new CallwrightClient({ apiKey: key, baseUrl: service.url });
    const nodes = script.nodes as Record<string, { say: string }>;
    await client.agents.update(agentId, {
      script: {
        ...script,
        nodes: {
          ...nodes,
          confirmed: {
            ...nodes.confirmed,
            say: 'Great, you are confirmed for {{appointment_day}}. See you on {{appointment_day}}. Goodbye!',
          },
        },
      },
    });
    // …then it does, and the same scenario passes (the report as JSON this time). Meanwhile the
    // failed call is replayed from its recording against the changed agent: the diff shows it.
    const failedCallId = /^FAIL must fail \((call_\w+)\):$/m.exec(failing.stdout)?.[1] ?? '';
    expect(failedCallId).not.toBe('');
    const [after, replay] = await Promise.all([
      runTests([seeYou, '--json']),
      runTests(['--replay', failedCallId]),
    ]);
    expect(after.code, after.stdout + after.stderr).toBe(0);
    const report = JSON.parse(after.stdout) as AgentTestRun;
    expect(report).toMatchObject({ status: 'completed', summary: { total: 1, passed: 1, failed: 0 } });
    expect(report.results[0]).toMatchObject({ scenario: 'says see you', status: 'passed', failures: [] });

    expect(replay.code, replay.stdout + replay.stderr).toBe(0);
    expect(replay.stdout).toMatch(
      new RegExp(`^Replay of ${failedCallId} \\(before\\) as call_\\w+ \\(after\\), turn by turn:$`, 'm'),
    );
    expect(replay.stdout).toMatch(/^TURN\s+CALLEE SAID\s+LATENCY BEFORE → AFTER\s+CHANGES$/m);
    expect(replay.stdout).toMatch(/^1\s+\S.*\s+(\d+|-) → (\d+|-) ms\s+.*the agent says something else/m);
    expect(replay.stdout).toMatch(/^ {2}1 of 1 turns changed$/m);
    expect(replay.stdout).toContain(
      'turn 1, the agent after:  Great, you are confirmed for Tuesday. See you on Tuesday.',
    );

    for (const result of [passing, failing, before, bad, unreachable, timedOut, after, replay])
      expectNoKey(result);
  }, 90_000);

  it('--agent-overrides tries a script agent with another script, inline or from a file, as the API does (issue 38)', async () => {
    // An agent of its own: the first test changes the shared one.
    const own = await appointmentTestAccount(service, { name: 'script overrides', maxLiveCalls: 4 });
    const env = { CALLWRIGHT_URL: service.url, CALLWRIGHT_API_KEY: own.key };
    const nodes = script.nodes as Record<string, { say: string }>;
    const fixed = {
      ...script,
      nodes: {
        ...nodes,
        confirmed: {
          ...nodes.confirmed,
          say: 'Great, you are confirmed for {{appointment_day}}. See you on {{appointment_day}}. Goodbye!',
        },
      },
    };
    const fixedPath = join(workDir, 'fixed-script.json');
    writeFileSync(fixedPath, JSON.stringify(fixed));
    const seeYou = scenarioFile('see-you-overridden.json', {
      ...confirms,
      name: 'says see you',
      expect: { status: 'completed', says: ['see you on Tuesday'] },
    });
    const withOverrides = (overrides: unknown, ...more: string[]) =>
      callwright(
        ['test', seeYou, '--agent', own.agentId, '--agent-overrides', JSON.stringify(overrides), ...more],
        env,
      );
    const [fromFile, inline, broken] = await Promise.all([
      withOverrides({ script: fixedPath }),
      withOverrides({ script: fixed, prompt: 'Confirm the appointment.' }, '--json'),
      withOverrides({ script: { ...fixed, start: 'nowhere' } }),
    ]);
    expect(fromFile.code, fromFile.stdout + fromFile.stderr).toBe(0);
    expect(fromFile.stdout).toMatch(/^says see you\s+1\s+PASS\s/m);
    expect(inline.code, inline.stdout + inline.stderr).toBe(0);
    expect((JSON.parse(inline.stdout) as AgentTestRun).results[0]).toMatchObject({ status: 'passed' });
    // Checked like an agent's script before anything is dialled.
    expect(broken.code).not.toBe(0);
    expect(broken.stderr).toMatch(/^callwright: .*script/);
    // The stored agent keeps its own script: without the override the scenario still fails.
    const client = new CallwrightClient({ apiKey: own.key, baseUrl: service.url });
    expect((await client.agents.get(own.agentId)).script).toEqual(script);
    const plain = await callwright(['test', seeYou, '--agent', own.agentId], env);
    expect(plain.code, plain.stdout + plain.stderr).toBe(1);
    for (const result of [fromFile, inline, broken, plain])
      expect(result.stdout + result.stderr).not.toContain(own.key);
  }, 120_000);

  it('usage mistakes exit 2 before anything is sent, and never echo the key', async () => {
    const results = await Promise.all([
      callwright(['test', confirmsPath], { CALLWRIGHT_API_KEY: key }),
      callwright(['test', confirmsPath, '--agent', agentId]),
      callwright(['test', confirmsPath, '--agent', agentId, '--repeat', '21'], { CALLWRIGHT_API_KEY: key }),
      callwright(['test', '--agent', agentId, '--api-key', key]),
      callwright(['test', join(workDir, 'missing.json'), '--agent', agentId], { CALLWRIGHT_API_KEY: key }),
    ]);
    expect(results.map((result) => result.code)).toEqual([2, 2, 2, 2, 2]);
    expect(results.map((result) => result.stderr)).toEqual([
      'callwright: --agent AGENT_ID is required (see callwright --help)\n',
      'callwright: no API key: set CALLWRIGHT_API_KEY (or pass --api-key) (see callwright --help)\n',
      'callwright: --repeat must be a whole number from 1 to 20 (see callwright --help)\n',
      'callwright: give scenario files or folders to run, or --replay CALL_ID (see callwright --help)\n',
      `callwright: ${join(workDir, 'missing.json')}: no such file or folder\n`,
    ]);
    for (const result of results) expectNoKey(result);
  });
});
