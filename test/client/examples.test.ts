import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type AgentInput, createAgent, parseVariableDeclaration } from '../../src/admin/agents.js';
import { setWebhookEndpoint } from '../../src/admin/webhooks.js';
import { callCompletedEventSchema } from '../../src/api/webhookSchemas.js';
import { CallwrightClient, ConflictError } from '../../src/client/index.js';
import { freePort } from '../helpers/freePort.js';
import { callFixture, startFullService } from '../helpers/fullService.js';
import { createAccountFixture, startTestService } from '../helpers/service.js';
import { waitFor } from './harness.js';

/** The examples under examples/, run as integrators run them: node on the built package. */

const examplesDir = new URL('../../examples/', import.meta.url).pathname;
const repoRoot = new URL('../../', import.meta.url).pathname;

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

function runExample(
  file: string,
  args: string[],
  env: Record<string, string>,
  timeoutMs = 30_000,
): Promise<Run> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [join(examplesDir, file), ...args], {
      env: { PATH: process.env.PATH ?? '', ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => {
      stdout += chunk.toString('utf8');
    });
    child.stderr.on('data', (chunk: Buffer) => {
      stderr += chunk.toString('utf8');
    });
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`${file} did not finish within ${timeoutMs} ms\n${stdout}\n${stderr}`));
    }, timeoutMs);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

function jsonLines(text: string): Array<Record<string, unknown>> {
  return text
    .split('\n')
    .filter((line) => line.startsWith('{'))
    .map((line) => JSON.parse(line) as Record<string, unknown>);
}

/** The `agents create` command in the header comment of examples/batch-from-csv.mjs, as AgentInput. */
function agentFromExampleHeader(): AgentInput {
  const header = readFileSync(join(examplesDir, 'batch-from-csv.mjs'), 'utf8')
    .split('\n')
    .filter((line) => line.startsWith('//'))
    .map((line) => line.slice(2).trim())
    .join(' ')
    .replace(/\\ /g, '');
  const command = /npx callwright agents create (.*?--variable [^ ]+(?: --variable [^ ]+)*)/.exec(
    header,
  )?.[1];
  if (!command) throw new Error('the example no longer says which agent to create');
  const flags = [...command.matchAll(/--([a-z-]+) (?:"([^"]*)"|(\S+))/g)].map(
    (match) => [match[1], match[2] ?? match[3]] as [string, string],
  );
  const value = (flag: string) => flags.find(([name]) => name === flag)?.[1] ?? '';
  return {
    name: value('name'),
    prompt: value('prompt'),
    script: JSON.parse(readFileSync(join(repoRoot, value('script')), 'utf8')),
    variables: flags
      .filter(([name]) => name === 'variable')
      .map(([, spec]) => parseVariableDeclaration(spec)),
  };
}

describe('examples/batch-from-csv.mjs', () => {
  it('places every row of the CSV, paced so the service never answers 429', async () => {
    const service = await startTestService({ ratePolicy: '5/1s' });
    try {
      const fixture = await createAccountFixture(service.store);
      // The agent the example's header tells the user to create, flag by flag.
      const agent = await createAgent(service.store, fixture.accountId, agentFromExampleHeader());
      const run = await runExample('batch-from-csv.mjs', [join(examplesDir, 'calls.csv')], {
        CALLWRIGHT_URL: service.url,
        CALLWRIGHT_API_KEY: fixture.key,
        AGENT_ID: agent.id,
        FROM_NUMBER: fixture.number,
        RATE_LIMIT: '5/1s',
      });
      expect(run.stderr).toBe('');
      expect(run.code).toBe(0);
      const lines = jsonLines(run.stdout);
      expect(lines.at(-1)).toEqual({ placed: 12, failed: 0 });
      expect(lines.filter((line) => typeof line.call_id === 'string')).toHaveLength(12);
      const statuses = service.logs.lines
        .map((line) => JSON.parse(line) as { msg?: string; status?: number })
        .filter((entry) => entry.msg === 'request')
        .map((entry) => entry.status);
      expect(statuses).toHaveLength(12);
      expect(statuses.every((status) => status === 200)).toBe(true);
      const calls = await service.store.calls.list(fixture.accountId, { limit: 50 });
      expect(calls.map((call) => call.variables?.customer_name).sort()).toContain('Chen, Li');
      expect(calls.every((call) => call.agentId === agent.id)).toBe(true);
    } finally {
      await service.close();
    }
  });
});

describe('examples against the full sandbox service', () => {
  let service: Awaited<ReturnType<typeof startFullService>>;
  const children: ChildProcess[] = [];
  const dirs: string[] = [];

  beforeAll(async () => {
    service = await startFullService({ CALLWRIGHT_WEBHOOK_ALLOW_PRIVATE: 'true' });
  });

  afterAll(async () => {
    for (const child of children) child.kill('SIGTERM');
    await service?.dispose();
    for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
  });

  it('place-call-and-wait.mjs places a call and prints its verified call.completed event', async () => {
    const fixture = await callFixture(service);
    const port = await freePort();
    const { secret } = await setWebhookEndpoint(
      service.store,
      service.secretBox,
      fixture.accountId,
      `http://127.0.0.1:${port}/hook`,
      {
        allowPrivate: true,
      },
    );
    const run = await runExample('place-call-and-wait.mjs', [], {
      CALLWRIGHT_URL: service.url,
      CALLWRIGHT_API_KEY: fixture.key,
      AGENT_ID: fixture.agentId,
      FROM_NUMBER: fixture.from,
      TO_NUMBER: '+15550100002',
      WEBHOOK_SECRET: secret,
      RECEIVER_PORT: String(port),
      WAIT_TIMEOUT_MS: '20000',
    });
    expect(run.stderr).toBe('');
    expect(run.code).toBe(0);
    const [queued, outcome] = jsonLines(run.stdout);
    expect(queued?.queued).toMatch(/^call_/);
    expect(outcome).toMatchObject({
      call_id: queued?.queued,
      status: 'busy',
      end_reason: 'rejected',
      record_status: 'busy',
    });
    expect(outcome?.event_id).toMatch(/^evt_/);
  });

  it('place-call-and-wait.mjs names VARIABLES and, on the README agent, fails in one line without them', async () => {
    const header = readFileSync(join(examplesDir, 'place-call-and-wait.mjs'), 'utf8')
      .split('\n')
      .filter((line) => line.startsWith('//'))
      .join('\n');
    expect(header).toContain(`VARIABLES='{"customer_name":"Ann"}'`);
    const fixture = await callFixture(service);
    // The README's agent: the appointment script, customer_name required.
    const readmeAgent = await createAgent(service.store, fixture.accountId, {
      name: 'Appointments',
      prompt: 'Confirm the appointment.',
      script: JSON.parse(readFileSync(join(examplesDir, 'agents/appointment-confirmation.json'), 'utf8')),
      variables: ['customer_name!', 'appointment_day=Tuesday', 'reschedule_to='].map(
        parseVariableDeclaration,
      ),
    });
    const port = await freePort();
    const { secret } = await setWebhookEndpoint(
      service.store,
      service.secretBox,
      fixture.accountId,
      `http://127.0.0.1:${port}/hook`,
      { allowPrivate: true },
    );
    const envFor = (variables: string | null) => ({
      CALLWRIGHT_URL: service.url,
      CALLWRIGHT_API_KEY: fixture.key,
      AGENT_ID: readmeAgent.id,
      FROM_NUMBER: fixture.from,
      TO_NUMBER: '+15550100002',
      WEBHOOK_SECRET: secret,
      RECEIVER_PORT: String(port),
      WAIT_TIMEOUT_MS: '20000',
      ...(variables === null ? {} : { VARIABLES: variables }),
    });
    const oneLineFailure = (run: Run, message: RegExp) => {
      expect(run.code).toBe(1);
      expect(run.stdout).toBe('');
      expect(run.stderr.trimEnd().split('\n')).toHaveLength(1);
      expect(run.stderr).toMatch(/^place-call-and-wait: /);
      expect(run.stderr).toMatch(message);
      expect(run.stderr).not.toMatch(/\n\s+at /);
    };
    oneLineFailure(
      await runExample('place-call-and-wait.mjs', [], envFor(null)),
      /the API refused \(4\d\d [a-z_]+\): .*customer_name/,
    );
    oneLineFailure(
      await runExample('place-call-and-wait.mjs', [], envFor('{customer_name: Ann}')),
      /VARIABLES is not JSON/,
    );
    oneLineFailure(
      await runExample('place-call-and-wait.mjs', [], {
        ...envFor(null),
        CALLWRIGHT_API_KEY: 'cw_live_not_a_key',
      }),
      /the API refused \(401 unauthorized\)/,
    );
    const { AGENT_ID: _agent, ...withoutAgent } = envFor('{"customer_name":"Ann"}');
    oneLineFailure(await runExample('place-call-and-wait.mjs', [], withoutAgent), /set AGENT_ID/);

    const run = await runExample('place-call-and-wait.mjs', [], envFor('{"customer_name":"Ann"}'));
    expect(run.stderr).toBe('');
    expect(run.code).toBe(0);
    const [queued, outcome] = jsonLines(run.stdout);
    expect(outcome).toMatchObject({ call_id: queued?.queued, status: 'busy', record_status: 'busy' });
    const call = await service.store.calls.getById(queued?.queued as string);
    expect(call?.variables).toMatchObject({ customer_name: 'Ann' });
  });

  it('idempotent-receiver.mjs stores a delivered event once, however often it is sent', async () => {
    const fixture = await callFixture(service);
    const storeDir = mkdtempSync(join(tmpdir(), 'callwright-received-'));
    dirs.push(storeDir);
    const port = await freePort();
    const { secret } = await setWebhookEndpoint(
      service.store,
      service.secretBox,
      fixture.accountId,
      `http://127.0.0.1:${port}/hook`,
      {
        allowPrivate: true,
      },
    );
    const child = spawn(process.execPath, [join(examplesDir, 'idempotent-receiver.mjs')], {
      env: { PATH: process.env.PATH ?? '', WEBHOOK_SECRET: secret, PORT: String(port), STORE_DIR: storeDir },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    children.push(child);
    let output = '';
    child.stdout?.on('data', (chunk: Buffer) => {
      output += chunk.toString('utf8');
    });
    await waitFor('the receiver to listen', () => (output.includes('listening') ? true : undefined));

    const client = new CallwrightClient({ apiKey: fixture.key, baseUrl: service.url });
    const call = await client.calls.createOutbound({
      agent_id: fixture.agentId,
      from_number: fixture.from,
      to_number: '+15550100005',
    });
    const stored = await waitFor('the event to be stored', () =>
      jsonLines(output).find((line) => line.call_id === call.call_id),
    );
    const eventId = String(stored.stored);
    // The receiver has it before the worker records the attempt: until then a resend is a 409.
    await waitFor('the resend to be taken', () =>
      client.events.resend(eventId).then(
        () => true,
        (error: unknown) => {
          if (error instanceof ConflictError) return undefined;
          throw error;
        },
      ),
    );
    await waitFor('the copy to arrive', () =>
      jsonLines(output).some((line) => line.duplicate === eventId) ? true : undefined,
    );
    // A forged delivery is refused and not stored.
    const forged = await fetch(`http://127.0.0.1:${port}/hook`, {
      method: 'POST',
      headers: {
        'webhook-id': 'evt_forged',
        'webhook-timestamp': String(Math.floor(Date.now() / 1000)),
        'webhook-signature': 'v1,AAAA',
      },
      body: '{}',
    });
    expect(forged.status).toBe(400);

    expect(readdirSync(storeDir)).toEqual([`${eventId}.json`]);
    const event = JSON.parse(readFileSync(join(storeDir, `${eventId}.json`), 'utf8')) as {
      id: string;
      data: { status: string };
    };
    expect(event.id).toBe(eventId);
    expect(event.data.status).toBe('failed');
    // The real event conforms to the call.completed schema of the OpenAPI document.
    const addFormats = addFormatsModule as unknown as (ajv: Ajv2020) => Ajv2020;
    const validate = addFormats(new Ajv2020({ strict: false })).compile(callCompletedEventSchema);
    expect(validate(event), JSON.stringify(validate.errors)).toBe(true);
  });
});
