import { describe, expect, it } from 'vitest';
import { diffRuns, scenarioFromCall } from './callReplay.js';
import type { CallRecord, TranscriptEntry } from './records.js';
import { scenarioFailures } from './scenarioChecks.js';
import { parseScenario, type Scenario } from './scenarios.js';

function call(fields: Partial<CallRecord> = {}): CallRecord {
  return {
    id: 'call_1',
    accountId: 'acct_1',
    agentId: 'agt_1',
    channel: 'phone',
    direction: 'outbound',
    callbackOf: null,
    apiKeyId: 'key_1',
    fromNumber: '+15550009999',
    toNumber: '+15550100001',
    firstMessage: null,
    context: null,
    variables: { customer_name: 'Ann' },
    status: 'completed',
    endReason: 'agent_hangup',
    answeredBy: 'human',
    createdAt: '2026-11-27T10:00:00.000Z',
    dialingAt: '2026-11-27T10:00:00.100Z',
    ringingAt: '2026-11-27T10:00:00.200Z',
    inProgressAt: '2026-11-27T10:00:01.000Z',
    endedAt: '2026-11-27T10:00:13.000Z',
    transcript: [],
    recordingPath: '/data/recordings/call_1.wav',
    extractedData: { confirmed: true },
    analysis: null,
    metrics: null,
    sipCallId: 'abc',
    workerId: null,
    leaseExpiresAt: null,
    ...fields,
  };
}

const line = (role: 'agent' | 'callee', text: string, start_ms: number, end_ms: number): TranscriptEntry => ({
  role,
  text,
  start_ms,
  end_ms,
});

const confirms: Scenario = parseScenario({
  name: 'confirms',
  callee: { answers: 'human', turns: [{ say: 'Yes, that works.' }] },
  expect: {
    status: 'completed',
    end_reason: 'agent_hangup',
    data: { confirmed: true, day: { matches: '^tue' }, note: { present: false } },
    says: ['confirmed for Tuesday'],
    must_not_say: ['did not catch that'],
  },
});

describe('scenario files', () => {
  it('take the documented shape', () => {
    expect(confirms.callee.turns).toHaveLength(1);
  });

  it.each([
    [{}, /name/],
    [{ name: 'x', callee: { answers: 'robot' } }, /callee.answers must be one of human, voicemail/],
    [
      { name: 'x', callee: { answers: 'human' }, expect: { outcome: 'ok' } },
      /expect: outcome is not a field/,
    ],
    [{ name: 'x', callee: { answers: 'human', turns: [{ pause_ms: 100 }] } }, /turns.0 must say, play audio/],
    [{ name: 'x', callee: { answers: 'busy', turns: [{ say: 'hi' }] } }, /answers as "human"/],
    [
      { name: 'x', callee: { answers: 'human' }, expect: { data: { a: { matches: '(' } } } },
      /not a regular expression/,
    ],
    [{ name: 'x', callee: { answers: 'human', turns: [{ say: 'a', dtmf: '1x' }] } }, /dtmf must match/],
    [
      {
        name: 'x',
        callee: { answers: 'human', turns: [{ say: 'a', pause_ms: 10, interrupt_after_ms: 500 }] },
      },
      /alternatives/,
    ],
    [
      {
        name: 'x',
        callee: { answers: 'human', turns: [{ audio: { call_id: 'c', start_ms: 500, end_ms: 100 } }] },
      },
      /end_ms must be after start_ms/,
    ],
    ['not json', /must be a JSON object/],
  ])('refuse %j with a reason naming the field', (raw, reason) => {
    expect(() => parseScenario(raw, 'file.json')).toThrow(reason);
  });
});

describe('judging a call against its scenario', () => {
  const spoken = [
    line('agent', 'Hello Ann, can you make it on Tuesday?', 0, 3_000),
    line('callee', 'yes that works', 3_500, 4_500),
    line('agent', 'Great, you are confirmed for Tuesday. Goodbye!', 4_800, 7_000),
  ];

  it('passes a call that meets every expectation', () => {
    const ok = call({ transcript: spoken, extractedData: { confirmed: true, day: 'Tuesday' } });
    expect(scenarioFailures(confirms, ok)).toEqual([]);
  });

  it('fails a call with wrong data, saying what was expected and what came', () => {
    const wrong = call({ transcript: spoken, extractedData: { confirmed: false, day: 'Monday', note: 'x' } });
    expect(scenarioFailures(confirms, wrong)).toEqual([
      'data.confirmed: expected true, got false',
      'data.day: expected text matching /^tue/, got "Monday"',
      'data.note: expected no value, got "x"',
    ]);
  });

  it('names the missing phrase, the forbidden one said, the end reason and the status', () => {
    const other = call({
      status: 'completed',
      endReason: 'callee_hangup',
      transcript: [line('agent', 'Sorry, I did not catch that.', 0, 2_000)],
    });
    expect(scenarioFailures(confirms, other)).toEqual([
      'end_reason: expected agent_hangup, got callee_hangup',
      'data.day: expected text matching /^tue/, got nothing',
      'the agent never said "confirmed for Tuesday"',
      'the agent said "did not catch that"',
    ]);
  });

  it('checks tool calls with their arguments, the transfer target, latency and duration', () => {
    const scenario = parseScenario({
      name: 'tools',
      callee: { answers: 'human' },
      expect: {
        tool_calls: [{ name: 'lookup_order', arguments: { order: '42' } }, { name: 'refund' }],
        transfer_to: 'billing',
        max_latency_ms: 1_000,
        max_duration_s: 5,
      },
    });
    const made = call({
      transcript: [
        {
          role: 'agent',
          text: 'lookup_order {"order":"41"}',
          start_ms: 100,
          end_ms: 100,
          event: 'tool_call',
        },
        { role: 'agent', text: 'sales: transferred (202)', start_ms: 900, end_ms: 900, event: 'transfer' },
      ],
      metrics: { turns: [{ voice_to_voice_ms: 700 }, { voice_to_voice_ms: 1_450 }] },
    });
    expect(scenarioFailures(scenario, made)).toEqual([
      'tool lookup_order was called with {"order":"41"}, not {"order":"42"}',
      'tool refund was not called (called: lookup_order)',
      'expected a transfer to billing, got sales: transferred (202)',
      'the slowest reply took 1450 ms (at most 1000 ms expected)',
      'the call lasted 12.0 s (at most 5 s expected)',
    ]);
  });

  it('checks data against a JSON Schema', () => {
    const scenario = parseScenario({
      name: 'schema',
      callee: { answers: 'human' },
      expect: { data: { party: { schema: { type: 'integer', minimum: 1 } } } },
    });
    expect(scenarioFailures(scenario, call({ extractedData: { party: 0 } }))).toEqual([
      'data.party: 0 does not fit the schema (the value must be >= 1)',
    ]);
    expect(scenarioFailures(scenario, call({ extractedData: { party: 3 } }))).toEqual([]);
  });
});

describe('replays', () => {
  const recorded = call({
    endReason: 'callee_hangup',
    transcript: [
      line('callee', 'hello', 100, 600),
      line('agent', 'Hello Ann, can you make it on Tuesday?', 900, 4_000),
      line('callee', 'no', 3_200, 3_600),
      line('agent', 'Which day suits you better?', 4_500, 6_000),
      line('callee', 'wednesday', 6_800, 7_400),
      { role: 'agent', text: 'x', start_ms: 7_000, end_ms: 7_000, event: 'dtmf' },
      line('agent', 'Done, Wednesday.', 7_900, 9_000),
    ],
  });

  it("cut the callee's recording at its turns, spoken over the agent where it was", () => {
    const scenario = scenarioFromCall(recorded);
    expect(scenario.callee.greeting_audio).toEqual({ call_id: 'call_1', start_ms: 0, end_ms: 850 });
    expect(scenario.callee.turns).toEqual([
      { audio: { call_id: 'call_1', start_ms: 3_050, end_ms: 3_850 }, interrupt_after_ms: 2_300 },
      { audio: { call_id: 'call_1', start_ms: 6_650, end_ms: 7_650 } },
    ]);
    expect(scenario.callee.after_last_turn).toBe('hang_up');
    expect(scenario.call?.variables).toEqual({ customer_name: 'Ann' });
    expect(() => parseScenario(scenario)).not.toThrow();
  });

  it('refuse calls without a recording or not answered by a person', () => {
    expect(() => scenarioFromCall(call({ recordingPath: null }))).toThrow(/no recording/);
    expect(() => scenarioFromCall(call({ answeredBy: 'machine' }))).toThrow(/answered by a person/);
    expect(() => scenarioFromCall(call({ status: 'busy' }))).toThrow(/not a completed call/);
  });

  it('diff turn by turn: a turn the agent understood differently says how', () => {
    const transcript = (answer: string) => [
      line('agent', 'Can you make it?', 0, 2_000),
      line('callee', answer, 2_500, 3_000),
      line('agent', 'Goodbye.', 3_300, 4_000),
    ];
    const before = call({
      transcript: transcript('[unclear]'),
      metrics: {
        understanding: [
          { node: 'greet', heard: '', option: null, phrase: null, match: null, reason: 'nothing was heard' },
        ],
      },
    });
    const after = call({
      id: 'call_2',
      transcript: transcript('yes that works for me'),
      metrics: {
        understanding: [
          {
            node: 'greet',
            heard: 'yes that works for me',
            option: 0,
            phrase: 'yes that works',
            match: 'contains',
            reason: 'it contains the listed phrase "yes that works"',
          },
        ],
      },
    });
    const diff = diffRuns(before, after);
    expect(diff.turns[0]?.before?.understood).toBe('greet: none — nothing was heard');
    expect(diff.turns[0]?.after?.understood).toBe(
      'greet: option 1 ("yes that works") — it contains the listed phrase "yes that works"',
    );
    expect(diff.turns[0]?.changes).toContain(
      'understood differently: greet: none — nothing was heard → greet: option 1 ("yes that works") — it contains the listed phrase "yes that works"',
    );
    // Without recorded understanding (an llm agent), nothing is said about it.
    expect(
      diffRuns(call({ transcript: transcript('no') }), call({ transcript: transcript('no') })).turns[0]?.after
        ?.understood,
    ).toBeNull();
  });

  it('diff turn by turn: waits, interruptions, dead air and data', () => {
    const before = call({
      transcript: [
        line('agent', 'Can you make it?', 0, 2_000),
        line('callee', 'no', 2_500, 3_000),
        line('agent', 'Which day?', 3_300, 4_000),
        line('callee', 'wednesday', 4_500, 5_200),
        line('agent', 'Done.', 5_500, 6_000),
      ],
      metrics: {
        turns: [
          { voice_to_voice_ms: 300, end_of_turn_ms: 250 },
          { voice_to_voice_ms: 300, end_of_turn_ms: 250 },
        ],
      },
      extractedData: { new_day: 'Wednesday' },
    });
    const after = call({
      id: 'call_2',
      transcript: [
        line('agent', 'Can you make it?', 0, 2_000),
        line('callee', 'no', 2_500, 3_000),
        line('agent', 'Which day?', 2_800, 4_000),
        line('callee', 'wednesday', 4_500, 5_200),
        line('agent', 'Done.', 7_700, 8_000),
      ],
      metrics: {
        turns: [
          { voice_to_voice_ms: -200, end_of_turn_ms: 300 },
          { voice_to_voice_ms: 2_500, end_of_turn_ms: 1_800 },
        ],
      },
      extractedData: { new_day: 'Monday' },
    });
    const diff = diffRuns(before, after);
    expect(diff.turns.map((turn) => turn.changes)).toEqual([
      ['the agent now talks over the callee', 'answers 500 ms sooner (300 → -200 ms)'],
      [
        'waits 1550 ms longer for the end of the turn (250 → 1800 ms)',
        'answers 2200 ms later (300 → 2500 ms)',
        '2500 ms of dead air',
      ],
    ]);
    expect(diff.data).toEqual([{ field: 'new_day', before: 'Wednesday', after: 'Monday' }]);
    expect(diff.summary).toEqual([
      '2 of 2 turns changed',
      'replies slower by 850 ms on average',
      'extracted data differs in new_day',
    ]);
  });
});
