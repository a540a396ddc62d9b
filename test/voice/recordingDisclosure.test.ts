import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAgent, parseVariableDeclaration } from '../../src/admin/agents.js';
import { createApiKey } from '../../src/admin/apiKeys.js';
import { addPhoneNumber } from '../../src/admin/numbers.js';
import type { CallRecord } from '../../src/domain/records.js';
import { startFullService, waitForTerminal } from '../helpers/fullService.js';
import { postCall, request } from '../helpers/http.js';

/**
 * Recording rules per agent (issue 17, item 6), on the sandbox: a disclosure rendered with the
 * call's variables is said first and in full — even to a callee who talks over the agent — before
 * the greeting; an agent with recording off keeps the transcript but no audio.
 */

let service: Awaited<ReturnType<typeof startFullService>>;
let key: string;
let accountId: string;

beforeAll(async () => {
  service = await startFullService();
  const account = await service.store.accounts.create({ name: 'recorded' });
  accountId = account.id;
  ({ key } = await createApiKey(service.store, account.id, 'k'));
  await addPhoneNumber(service.store, account.id, '+15550009960');
});

afterAll(async () => {
  await service?.dispose();
});

async function callWith(settings: Record<string, unknown>, to: string): Promise<CallRecord> {
  const agent = await createAgent(service.store, accountId, {
    name: 'Clinic',
    prompt: 'p',
    variables: ['customer_name'].map(parseVariableDeclaration),
    firstMessage: 'Hello {{customer_name}}, this is the clinic.',
    settings,
    maxDurationS: 12,
  });
  const created = await postCall(service.url, key, {
    agent_id: agent.id,
    from_number: '+15550009960',
    to_number: to,
    variables: { customer_name: 'Ann' },
  });
  return waitForTerminal(service, (created.body as { call_id: string }).call_id, 30_000);
}

describe('recording rules', () => {
  it('says the disclosure first and in full, even to a callee who talks over it', async () => {
    // +15550100010 answers over the agent 1.5 s into its first turn.
    const call = await callWith(
      { recording: { disclosure: 'This call is recorded, {{customer_name}}, so we can check our work.' } },
      '+15550100010',
    );
    const agentLines = call.transcript.filter((line) => line.role === 'agent' && !line.event);
    expect(agentLines[0]?.text).toBe('This call is recorded, Ann, so we can check our work.');
    const calleeLine = call.transcript.find((line) => line.role === 'callee');
    // The callee did talk over it.
    expect(calleeLine?.start_ms).toBeLessThan(agentLines[0]?.end_ms as number);
    expect(call.recordingPath).not.toBeNull();
  }, 40_000);

  it('recording off: the disclosure then the greeting; the transcript is kept, no audio is, the recording is 404', async () => {
    const call = await callWith(
      { recording: { enabled: false, disclosure: 'This call is not recorded.' } },
      '+15550100001',
    );
    expect(call.transcript.slice(0, 2).map((line) => line.text)).toEqual([
      'This call is not recorded.',
      'Hello Ann, this is the clinic.',
    ]);
    expect(call.recordingPath).toBeNull();
    const recording = await request(`${service.url}/v1/calls/${call.id}/recording`, {
      headers: { 'X-API-Key': key },
    });
    expect(recording.status).toBe(404);
  }, 40_000);
});
