import { spawnSync } from 'node:child_process';
import { resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { appointmentTestAccount } from '../helpers/agentTests.js';
import { startFullService } from '../helpers/fullService.js';
import { request } from '../helpers/http.js';

/**
 * Issue 34, finding 1: a regular expression an account supplies (a scenario's `matches`, a
 * `pattern` inside a data rule's `schema`, a tool's `parameters`, the analysis `data_schema`) ran on
 * V8's backtracking engine on the main thread: `^(a+)+$` against 'a'×31 + '!' froze the process
 * for 19 s. Now they run on RE2 (linear time), and what RE2 cannot run is refused with a 400.
 *
 * The cost checks run the built checker in a child process so that a regression hangs the child
 * (killed at the guard, the test fails) rather than this test runner.
 */

const distDomain = resolve(import.meta.dirname, '../../dist/domain');
const catastrophic = `${'a'.repeat(5_000)}!`;

function runBuilt(script: string): { status: number | null; stdout: string; stderr: string } {
  const result = spawnSync(process.execPath, ['--input-type=module', '-e', script], {
    encoding: 'utf8',
    // A hang guard, not a performance figure: the backtracking engine needs astronomically longer.
    timeout: 60_000,
  });
  return { status: result.status, stdout: result.stdout, stderr: result.stderr };
}

describe('patterns an account supplies run in linear time', () => {
  it('a scenario expectation `matches` with nested quantifiers judges a hostile value and returns', () => {
    const script = `
      import { scenarioFailures } from ${JSON.stringify(`${distDomain}/scenarioChecks.js`)};
      const scenario = { name: 'x', callee: { answers: 'human' },
        expect: { data: { note: { matches: '^(a+)+$' }, ok: { matches: '^(a|aa)+$' } } } };
      const call = { status: 'completed', endReason: 'agent_hangup', answeredBy: 'human', transcript: [],
        extractedData: { note: ${JSON.stringify(catastrophic)}, ok: 'AAAA' }, metrics: null };
      console.log(JSON.stringify(scenarioFailures(scenario, call)));`;
    const result = runBuilt(script);
    expect(result.stderr).toBe('');
    expect(result.status).toBe(0);
    const failures = JSON.parse(result.stdout) as string[];
    expect(failures).toHaveLength(1);
    expect(failures[0]).toMatch(/^data\.note: expected text matching \/\^\(a\+\)\+\$\//);
  });

  it('a `pattern` inside a data rule schema and inside a tool schema judges a hostile value and returns', () => {
    const script = `
      import { fitsDataSchema } from ${JSON.stringify(`${distDomain}/scenarios.js`)};
      import { schemaProblems } from ${JSON.stringify(`${distDomain}/jsonSchema.js`)};
      const hostile = ${JSON.stringify(catastrophic)};
      const rule = { type: 'string', pattern: '^(a+)+$' };
      const tool = { type: 'object', properties: { id: { type: 'string', pattern: '^(a|a)*$' } },
        patternProperties: { '^(b+)+$': { type: 'number' } } };
      console.log(JSON.stringify([
        fitsDataSchema(rule, hostile), fitsDataSchema(rule, 'aaa'),
        schemaProblems(tool, { id: hostile }), schemaProblems(tool, { id: 'aa' }),
        schemaProblems(tool, { ['b'.repeat(5000) + '!']: 'x', ['bb']: 'not a number' }),
      ]));`;
    const result = runBuilt(script);
    expect(result.stderr).toBe('');
    expect(result.status).toBe(0);
    const [ruleHostile, ruleFine, toolHostile, toolFine, toolKeys] = JSON.parse(result.stdout) as (
      | string
      | null
    )[];
    expect(ruleHostile).toMatch(/must match pattern/);
    expect(ruleFine).toBeNull();
    expect(toolHostile).toMatch(/\/id must match pattern/);
    expect(toolFine).toBeNull();
    expect(toolKeys).toMatch(/\/bb must be number/);
  });
});

let service: Awaited<ReturnType<typeof startFullService>>;
let key = '';
let agentId = '';

beforeAll(async () => {
  service = await startFullService();
  ({ key, agentId } = await appointmentTestAccount(service, { name: 'patterns' }));
});

afterAll(async () => {
  await service?.dispose();
});

const api = (method: string, path: string, body?: unknown) =>
  request(`${service.url}/v1${path}`, {
    method,
    headers: { 'X-API-Key': key, ...(body !== undefined ? { 'Content-Type': 'application/json' } : {}) },
    ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
  });

const errorOf = (result: { body: unknown }) =>
  (result.body as { error: { code: string; message: string } }).error;

function scenarioWith(data: Record<string, unknown>) {
  return { scenarios: [{ name: 'rule', callee: { answers: 'human' }, expect: { data } }] };
}

describe('what the linear-time engine cannot run is refused when it is stored', () => {
  it('refuses backreferences and lookaround in a scenario, naming the field; nothing is dialled', async () => {
    for (const [data, field] of [
      [{ note: { matches: '(a)\\1' } }, 'expect.data.note.matches uses a backreference'],
      [{ note: { matches: '(?<x>a)\\k<x>' } }, 'expect.data.note.matches uses a backreference'],
      [{ note: { matches: '^(?=a)a' } }, 'expect.data.note.matches cannot run on the linear-time engine'],
      [
        { note: { schema: { type: 'string', pattern: '(?<!x)y' } } },
        'expect.data.note.schema is not a valid JSON Schema',
      ],
    ] as const) {
      const refused = await api('POST', `/agents/${agentId}/tests`, scenarioWith(data));
      expect(refused.status).toBe(400);
      expect(errorOf(refused).code).toBe('validation_error');
      expect(errorOf(refused).message).toContain(field);
    }
    const listed = await api('GET', '/calls');
    expect((listed.body as { data: unknown[] }).data).toHaveLength(0);
  });

  it('accepts a pattern both engines run, with JavaScript syntax (named groups, \\d, Unicode)', async () => {
    const accepted = await api(
      'POST',
      `/agents/${agentId}/tests`,
      scenarioWith({ note: { matches: '^(?<day>tue|wed)\\d*\\p{L}*$' } }),
    );
    expect(accepted.status).toBe(201);
  });

  it("refuses a tool's parameters whose pattern RE2 cannot run", async () => {
    const refused = await api('POST', '/agents', {
      name: 'Tools',
      prompt: 'Use the tool.',
      brain: 'llm',
      settings: {
        tools: [
          {
            name: 'lookup',
            description: 'Looks up.',
            parameters: {
              type: 'object',
              properties: { id: { type: 'string', pattern: '^(\\w+)\\s\\1$' } },
            },
            url: 'https://tools.example.com/lookup',
          },
        ],
      },
    });
    expect(refused.status).toBe(400);
    expect(errorOf(refused).message).toContain('settings.tools[0].parameters is not a valid JSON Schema');
    expect(errorOf(refused).message).toContain('backreference');
  });
});
