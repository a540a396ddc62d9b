import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAgent, parseVariableDeclaration } from '../../src/admin/agents.js';
import { addPhoneNumber } from '../../src/admin/numbers.js';
import { setWebhookEndpoint, setWebhookEventTypes } from '../../src/admin/webhooks.js';
import type { CallRecord } from '../../src/domain/records.js';
import {
  type FakeChatDelta,
  type FakeOpenAiServer,
  fakeToolCallDelta,
} from '../../src/voice/providers/testing/fakeOpenAiServer.js';
import { type startFullService, waitForTerminal } from '../helpers/fullService.js';
import { postCall } from '../helpers/http.js';
import { startLlmTestService } from '../helpers/llmService.js';
import { eventually, type Receiver, startReceiver } from '../webhooks/harness.js';

/**
 * Cold transfer to a human, end to end over SIP: the callee presses 1, the model (a fake of
 * OpenAI's chat protocol) calls `transfer_call`, callwright sends REFER in the dialog and follows
 * the sandbox carrier's NOTIFYs (sipfrag). A target that answers ends the call `transferred`; a
 * busy one, or a line that refuses REFER, comes back to the model, which tells the callee.
 */

let fake: FakeOpenAiServer;
let service: Awaited<ReturnType<typeof startFullService>>;
let key: string;
let accountId: string;
let agentId: string;
let scriptAgentId: string;
let warmAgentId: string;
let warmScriptAgentId: string;
let receiver: Receiver;

const endCall = fakeToolCallDelta('end_call', '{}', 'call_end');

function playModel({ messages }: { messages: Array<Record<string, unknown>> }): FakeChatDelta[] {
  const last = messages.at(-1);
  const target = /Target: (\w+)/.exec(String(messages[0]?.content ?? ''))?.[1] ?? 'human';
  if (String(last?.content ?? '').includes('transfer failed'))
    return [{ delta: { content: 'Sorry, nobody can take your call right now. Goodbye!' } }, endCall];
  const warm = String(messages[0]?.content ?? '').includes('Warm.');
  if (last?.role === 'user')
    return [
      { delta: { content: 'Transferring you now.' } },
      fakeToolCallDelta(
        'transfer_call',
        JSON.stringify(warm ? { target, summary: 'A caller who pressed one.' } : { target }),
        'call_transfer',
      ),
    ];
  return [{ delta: { content: 'Press one to speak to a person.' }, finishReason: 'stop' }];
}

/** The scripted front desk: press 1 (or say "operator") and it says `handoff`, then transfers to `human`. */
function frontDeskScript(handoff: string) {
  return {
    start: 'greet',
    nodes: {
      greet: {
        say: 'Press one to speak to a person.',
        listen: [{ phrases: ['operator'], next: 'handoff' }],
        dtmf: { '1': 'handoff' },
      },
      handoff: { say: handoff, transfer: 'human', transfer_failed: 'sorry' },
      sorry: { say: 'Sorry, nobody is free. Goodbye!', end: true },
    },
  };
}

beforeAll(async () => {
  ({ fake, service, key, accountId } = await startLlmTestService(
    { chatStreamFor: playModel },
    { CALLWRIGHT_WEBHOOK_ALLOW_PRIVATE: 'true' },
  ));
  agentId = (
    await createAgent(service.store, accountId, {
      name: 'Front desk',
      prompt: 'You put callers through to a person. Target: {{target}}',
      variables: ['target'].map(parseVariableDeclaration),
      brain: 'llm',
      settings: {
        llm: { model: 'test-model' },
        transfer: { targets: { human: '+15550100015', busy_desk: '+15550100002' } },
      },
      maxDurationS: 60,
    })
  ).id;
  warmAgentId = (
    await createAgent(service.store, accountId, {
      name: 'Front desk, warm',
      prompt: 'Warm. You brief a person, then put the caller through. Target: {{target}}',
      variables: ['target'].map(parseVariableDeclaration),
      brain: 'llm',
      settings: {
        llm: { model: 'test-model' },
        // No hold tone: the sandbox person on this line answers every sound after a pause, and
        // would hang up after six beeps while `nobody` rings out (test/interop/transferTarget.test.ts
        // hears the tone).
        transfer: {
          targets: { human: '+15550100015', nobody: '+15550100003' },
          warm: true,
          hold_audio: 'none',
        },
      },
      maxDurationS: 60,
    })
  ).id;
  scriptAgentId = (
    await createAgent(service.store, accountId, {
      name: 'Front desk, scripted',
      prompt: 'p',
      brain: 'script',
      script: frontDeskScript('Transferring you now.'),
      // Without the bridge: a refused REFER goes on at transfer_failed.
      settings: { transfer: { targets: { human: '+15550100001' }, bridge_when_refused: false } },
      maxDurationS: 60,
    })
  ).id;
  warmScriptAgentId = (
    await createAgent(service.store, accountId, {
      name: 'Front desk, scripted and warm',
      prompt: 'p',
      brain: 'script',
      script: frontDeskScript('Please hold.'),
      settings: {
        transfer: {
          targets: { human: '+15550100015' },
          warm: true,
          whisper: 'A caller from the front desk.',
        },
      },
      maxDurationS: 60,
    })
  ).id;
  await addPhoneNumber(service.store, accountId, '+15550009995');
  // The account's endpoint asked for call.transferred.
  receiver = await startReceiver();
  await setWebhookEndpoint(service.store, service.secretBox, accountId, receiver.url, { allowPrivate: true });
  await setWebhookEventTypes(service.store, accountId, ['call.transferred']);
});

afterAll(async () => {
  await service?.dispose();
  await receiver?.close();
  await fake?.close();
});

async function call(to: string, target: string, agent = agentId): Promise<CallRecord> {
  const result = await postCall(service.url, key, {
    agent_id: agent,
    from_number: '+15550009995',
    to_number: to,
    // The scripted agent declares no variables.
    ...(agent === agentId || agent === warmAgentId ? { variables: { target } } : {}),
  });
  expect(result.status).toBe(200);
  return waitForTerminal(service, (result.body as { call_id: string }).call_id, 65_000);
}

/**
 * The call.transferred bodies the receiver got for the call (delivered by the service's worker);
 * `expected` 0: all of them once the call's call.completed is in (an attempt that did not connect
 * is written just before it).
 */
async function transferredEvents(callId: string, expected: number) {
  const bodies = () =>
    receiver.requests
      .map((request) => JSON.parse(request.body) as { type: string; data: Record<string, unknown> })
      .filter((body) => body.type === 'call.transferred' && body.data.call_id === callId);
  if (expected === 0) {
    // Its call.completed is sent after any transfer event: once that is in, nothing more comes.
    await eventually(async () =>
      receiver.requests.some(
        (request) => request.body.includes('"call.completed"') && request.body.includes(callId),
      )
        ? true
        : undefined,
    );
    return bodies();
  }
  return eventually(async () => (bodies().length >= expected ? bodies() : undefined));
}

const transferNotes = (record: CallRecord) =>
  record.transcript.filter((entry) => entry.event === 'transfer').map((entry) => entry.text);
const said = (record: CallRecord) =>
  record.transcript.filter((entry) => entry.role === 'agent' && !entry.event).map((entry) => entry.text);

describe('cold transfer by REFER', () => {
  it('hands the call to a target that answers and ends it transferred', async () => {
    const record = await call('+15550100008', 'human');
    expect(record).toMatchObject({ status: 'completed', endReason: 'transferred' });
    expect(transferNotes(record)).toEqual(['human: transferred (200)']);
    const [event, ...more] = await transferredEvents(record.id, 1);
    expect(more).toEqual([]);
    expect(event?.data).toMatchObject({
      call_id: record.id,
      target: 'human',
      via: 'refer',
      outcome: 'connected',
      sip_status: 200,
      reason: null,
    });
    expect(said(record)).toEqual(['Press one to speak to a person.', 'Transferring you now.']);
    // The model was offered the targets by name, never their numbers.
    const streamed = fake.requests.find(
      (request) => (request.json as { tools?: unknown } | undefined)?.tools,
    );
    const offered =
      (streamed?.json as { tools?: Array<{ function: { name: string; parameters: unknown } }> } | undefined)
        ?.tools ?? [];
    const transfer = offered.find((tool) => tool.function.name === 'transfer_call');
    expect(JSON.stringify(transfer?.function.parameters)).toContain('"enum":["human","busy_desk"]');
    expect(JSON.stringify(transfer)).not.toContain('+1555');
  }, 45_000);

  it('comes back to the callee when the target is busy (the final NOTIFY says 486)', async () => {
    const record = await call('+15550100008', 'busy_desk');
    expect(record).toMatchObject({ status: 'completed', endReason: 'agent_hangup' });
    expect(transferNotes(record)).toEqual(['busy_desk: failed: the target answered 486']);
    // The outcome of the attempt that did not connect, written once, before call.completed.
    const events = await transferredEvents(record.id, 0);
    expect(events.map((event) => event.data)).toMatchObject([
      { target: 'busy_desk', via: 'refer', outcome: 'busy', sip_status: 486 },
    ]);
    expect(said(record).slice(-2)).toEqual(['Sorry, nobody can take your call right now.', 'Goodbye!']);
  }, 45_000);

  it('dials the target itself and bridges the legs when the line refuses REFER (405)', async () => {
    const before = (await service.store.sandboxInvites.list()).length;
    const record = await call('+15550100012', 'human');
    expect(record).toMatchObject({ status: 'completed', endReason: 'transferred' });
    expect(transferNotes(record)).toEqual(['human: the line refused REFER; dialled and bridged (200)']);
    expect((await transferredEvents(record.id, 1))[0]?.data).toMatchObject({
      target: 'human',
      via: 'bridge',
      outcome: 'connected',
    });
    expect(said(record).at(-1)).toBe('Transferring you now.');
    // A second INVITE went to the target, over the call's own route.
    const invites = (await service.store.sandboxInvites.list()).slice(before);
    expect(invites.map((invite) => invite.toNumber).sort()).toEqual(['+15550100012', '+15550100015']);
    await expectTheyTalked(record);
  }, 70_000);

  it('is a script step too: transfer, and transfer_failed when the line refuses (bridge off)', async () => {
    const [done, refused] = await Promise.all([
      call('+15550100008', 'human', scriptAgentId),
      call('+15550100012', 'human', scriptAgentId),
    ]);
    expect(done).toMatchObject({ status: 'completed', endReason: 'transferred' });
    expect(transferNotes(done)).toEqual(['human: transferred (200)']);
    expect(refused).toMatchObject({ status: 'completed', endReason: 'agent_hangup' });
    expect(transferNotes(refused)).toEqual(['human: refused by the line (405)']);
    expect(said(refused).slice(-2)).toEqual(['Transferring you now.', 'Sorry, nobody is free. Goodbye!']);
  }, 45_000);

  it('refuses, when the agent is saved, a script that transfers to a target the settings lack', async () => {
    const account = await service.store.accounts.create({ name: 'bad transfers' });
    await expect(
      createAgent(service.store, account.id, {
        name: 'x',
        prompt: 'p',
        script: {
          start: 'a',
          nodes: { a: { say: 'hi', transfer: 'sales', transfer_failed: 'b' }, b: { end: true } },
        },
        settings: { transfer: { targets: { human: '+15550100001' } } },
      }),
    ).rejects.toThrow(/transfer to "sales", which is not one of settings.transfer.targets/);
  });
});

/**
 * After the agent left, the callee and the target talked over the bridge: each sandbox person only
 * speaks after hearing the other pause, and hangs up after six replies — so the call ends by a
 * hang-up well after the agent's last words (twelve flite replies take about 25 s) and well before
 * its 60 s limit. With no audio across
 * the bridge neither would speak and the call would run to the limit.
 */
async function expectTheyTalked(record: CallRecord): Promise<void> {
  const callMs = Date.parse(record.endedAt as string) - Date.parse(record.inProgressAt as string);
  const agentDoneMs = Math.max(...record.transcript.map((entry) => entry.end_ms));
  expect(callMs - agentDoneMs).toBeGreaterThan(8_000);
  expect(callMs).toBeLessThan(50_000);
}

describe('warm transfer', () => {
  it('dials the person, briefs them with the summary, then bridges the callee in', async () => {
    const record = await call('+15550100012', 'human', warmAgentId);
    expect(record).toMatchObject({ status: 'completed', endReason: 'transferred' });
    expect(transferNotes(record)).toEqual(['human: briefed ("A caller who pressed one.") and bridged (200)']);
    await expectTheyTalked(record);
  }, 70_000);

  it("is a script step too: the agent's whisper briefs the person", async () => {
    const record = await call('+15550100012', 'human', warmScriptAgentId);
    expect(record).toMatchObject({ status: 'completed', endReason: 'transferred' });
    expect(transferNotes(record)).toEqual([
      'human: briefed ("A caller from the front desk.") and bridged (200)',
    ]);
    expect(said(record).at(-1)).toBe('Please hold.');
    await expectTheyTalked(record);
  }, 70_000);

  it('comes back to the callee when the person does not answer, and says so', async () => {
    const record = await call('+15550100012', 'nobody', warmAgentId);
    expect(record).toMatchObject({ status: 'completed', endReason: 'agent_hangup' });
    expect(transferNotes(record)).toEqual(['nobody: failed: the target did not answer']);
    expect((await transferredEvents(record.id, 0)).map((event) => event.data)).toMatchObject([
      { target: 'nobody', via: 'warm', outcome: 'no_answer' },
    ]);
    expect(said(record).slice(-2)).toEqual(['Sorry, nobody can take your call right now.', 'Goodbye!']);
  }, 45_000);
});
