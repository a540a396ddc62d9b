import { afterEach, describe, expect, it } from 'vitest';
import { personMaxReplies, sandboxPersonaFor, sandboxPersonas, spamLabelledAfterCalls } from './personas.js';
import { type Harness, startHarness, toneShare, waitUntil, within } from './testCaller.js';

/**
 * Every persona through real SIP and RTP on loopback: our user agent dials the sandbox the way
 * the dispatcher will, and each test checks what a carrier would show the caller.
 */

const fast = {
  answerDelayMs: 50,
  replyAfterSilenceMs: 250,
  replyMs: 120,
  greetingMs: 700,
  beepGapMs: 100,
  beepMs: 200,
  hangUpAfterMs: 300,
  dtmfAfterMs: 200,
  goodbyeMs: 200,
};

const harnesses: Harness[] = [];
async function harness(timing: Partial<typeof fast> = fast): Promise<Harness> {
  const started = await startHarness(timing);
  harnesses.push(started);
  return started;
}

afterEach(async () => {
  for (const started of harnesses.splice(0)) {
    await started.close();
    // Nothing of the sandbox outlives its close: every RTP port is back.
    expect(started.sandboxPorts.inUseCount).toBe(0);
    expect(started.carrier.activeCalls).toBe(0);
    // Full numbers never reach the log (maskPhone keeps +1555 and the last two digits).
    expect(started.logLines.join('').includes('5550100')).toBe(false);
  }
});

describe('sandbox persona table', () => {
  it('maps the seventeen fictional numbers, every other E.164 number to the person, non-numbers to null', () => {
    expect(sandboxPersonas.map((persona) => [persona.number, persona.name])).toEqual([
      ['+15550100001', 'person'],
      ['+15550100002', 'busy'],
      ['+15550100003', 'no_answer'],
      ['+15550100004', 'voicemail'],
      ['+15550100005', 'unreachable'],
      ['+15550100006', 'answers_then_hangs_up'],
      ['+15550100007', 'silent'],
      ['+15550100008', 'presses_dtmf_1'],
      ['+15550100009', 'backchannels'],
      ['+15550100010', 'interrupts'],
      ['+15550100011', 'hangs_up_mid_sentence'],
      ['+15550100012', 'refuses_transfer'],
      ['+15550100013', 'ivr'],
      ['+15550100014', 'voicemail_no_beep'],
      ['+15550100015', 'greets_briefly'],
      ['+15550100016', 'greets_at_length'],
      ['+15550100017', 'ivr_without_rfc4733'],
    ]);
    expect(sandboxPersonaFor('+15550100004')).toBe('voicemail');
    expect(sandboxPersonaFor('+442071838750')).toBe('person');
    expect(sandboxPersonaFor('15550100002')).toBeNull();
    // A persona number with up to four more digits is that persona (distinct numbers for a campaign).
    expect(sandboxPersonaFor('+155501000020001')).toBe('busy');
    expect(sandboxPersonaFor('+15550100003999')).toBe('no_answer');
    expect(sandboxPersonaFor('+155501000120')).toBe('refuses_transfer');
    expect(sandboxPersonaFor('alice')).toBeNull();
  });
});

describe('sandbox personas over SIP and RTP', () => {
  it('busy: 100 Trying, then 486 Busy Here', async () => {
    const h = await harness();
    const call = await h.dial('+15550100002');
    const outcome = await within(call.outcome, 3_000, 'the busy outcome');
    expect(outcome).toMatchObject({ kind: 'failed', failure: { cause: 'rejected', status: 486 } });
    expect(call.provisionalStatuses).toEqual([100]);
  });

  it('unreachable: 404 Not Found', async () => {
    const h = await harness();
    const call = await h.dial('+15550100005');
    const outcome = await within(call.outcome, 3_000, 'the 404');
    expect(outcome).toMatchObject({ kind: 'failed', failure: { cause: 'rejected', status: 404 } });
  });

  it('never answers: 180 Ringing until the caller cancels, then 487', async () => {
    const h = await harness();
    const call = await h.dial('+15550100003', { ringTimeoutMs: 400 });
    await waitUntil(() => call.provisionalStatuses.includes(180), 2_000, '180 Ringing');
    expect(h.carrier.activeCalls).toBe(1);
    const outcome = await within(call.outcome, 3_000, 'the ring timeout');
    expect(outcome).toMatchObject({ kind: 'failed', failure: { cause: 'ring_timeout', status: 487 } });
    expect(call.answeredAtMs).toBeNull();
    await waitUntil(() => h.carrier.activeCalls === 0, 1_000, 'the sandbox to drop the call');
  });

  it('a spam-labelled caller ID (+15550199 + K) is answered K times, then rings out at every callee', async () => {
    expect(spamLabelledAfterCalls('+155501990002')).toBe(2);
    expect(spamLabelledAfterCalls('+15550199002')).toBeNull();
    expect(spamLabelledAfterCalls('+15557654321')).toBeNull();
    const h = await harness({ answerDelayMs: 50, hangUpAfterMs: 100 });
    const labelled = '+155501990002';
    for (const callee of ['+15550100006', '+155501000060001']) {
      const call = await h.dial(callee, { fromNumber: labelled });
      await within(call.answered, 3_000, `call from the labelled number to ${callee} answered`);
      await within(call.outcome, 3_000, 'its BYE');
    }
    const third = await h.dial('+155501000060002', { fromNumber: labelled, ringTimeoutMs: 400 });
    expect(await within(third.outcome, 3_000, 'the ring timeout')).toMatchObject({
      kind: 'failed',
      failure: { cause: 'ring_timeout', status: 487 },
    });
    expect(third.provisionalStatuses).toContain(180);
    expect(third.answeredAtMs).toBeNull();
    // Another caller ID still reaches the persona.
    const other = await h.dial('+155501000060003', { fromNumber: '+155501990050' });
    await within(other.answered, 3_000, 'a call from another number answered');
    await within(other.outcome, 3_000, 'its BYE');
    await waitUntil(() => h.carrier.activeCalls === 0, 1_000, 'the sandbox to drop the calls');
  });

  it('answers then hangs up: BYE about 2 s after the answer (default timing)', async () => {
    const h = await harness({});
    const call = await h.dial('+15550100006');
    const outcome = await within(call.outcome, 6_000, 'the BYE');
    expect(call.provisionalStatuses).toContain(180);
    expect(outcome).toMatchObject({ kind: 'ended', ended: { by: 'remote' } });
    const upMs = (call.endedAtMs ?? 0) - (call.answeredAtMs ?? 0);
    expect(upMs).toBeGreaterThanOrEqual(1_950);
    expect(upMs).toBeLessThan(2_600);
    await waitUntil(() => h.carrier.activeCalls === 0, 1_000, 'the sandbox to drop the call');
  });

  it('presses DTMF 1 about dtmfAfterMs after the answer, then stays on the line', async () => {
    const h = await harness();
    const call = await h.dial('+15550100008');
    await within(call.answered, 3_000, 'the answer');
    await waitUntil(() => call.digits.length > 0, 2_000, 'a DTMF digit');
    expect(call.digits).toEqual(['1']);
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(call.sip.state).toBe('answered');
    expect(call.digits).toEqual(['1']);
    await call.sip.hangUp();
    expect(await call.outcome).toMatchObject({ kind: 'ended', ended: { by: 'local' } });
    await waitUntil(() => h.carrier.activeCalls === 0, 1_000, 'the sandbox to drop the call');
  });

  it('stays silent until the caller hangs up', async () => {
    const h = await harness();
    const call = await h.dial('+15550100007', { codecs: ['PCMA'] });
    await within(call.answered, 3_000, 'the answer');
    await waitUntil(() => call.received.length >= 25, 2_000, 'half a second of audio');
    expect(call.rtp.stats().packetsReceived).toBeGreaterThan(0);
    expect(Math.max(...call.received.map((frame) => frame.rms))).toBeLessThan(50);
    expect(h.carrier.activeCalls).toBe(1);
    await call.sip.hangUp();
    await waitUntil(() => h.carrier.activeCalls === 0, 1_000, 'the sandbox to drop the call');
  });

  it('voicemail: a greeting, then a 1 kHz beep, then silence', async () => {
    const h = await harness();
    const call = await h.dial('+15550100004');
    await within(call.answered, 3_000, 'the answer');
    const beepFrames = Math.round(fast.beepMs / 20);
    const isBeep = (index: number) => {
      const frame = call.received[index];
      return frame !== undefined && frame.rms > 1_000 && toneShare(frame.samples, 1_000) > 0.7;
    };
    await waitUntil(
      () =>
        call.received.filter((_, index) => isBeep(index)).length >= beepFrames - 1 &&
        call.received.length > 60,
      4_000,
      'the beep and some silence after it',
    );
    const frames = call.received;
    const firstBeep = frames.findIndex((_, index) => isBeep(index));
    const beepCount = frames.filter((_, index) => isBeep(index)).length;
    expect(beepCount).toBeGreaterThanOrEqual(beepFrames - 1);
    expect(beepCount).toBeLessThanOrEqual(beepFrames + 1);
    // Before the beep: the greeting, loud for most of its length and with no 1 kHz in it.
    const greeting = frames.slice(0, firstBeep).filter((frame) => frame.rms > 300);
    expect(greeting.length * 20).toBeGreaterThan(fast.greetingMs * 0.5);
    expect(Math.max(...greeting.map((frame) => toneShare(frame.samples, 1_000)))).toBeLessThan(0.2);
    // After the beep: silence.
    const after = frames.slice(firstBeep + beepCount + 1);
    expect(after.length).toBeGreaterThan(5);
    expect(Math.max(...after.map((frame) => frame.rms))).toBeLessThan(50);
    expect(call.sip.state).toBe('answered');
  });
});

describe('sandbox person', () => {
  it('answers after one ring and replies only once the agent has spoken and paused', async () => {
    const h = await harness();
    const call = await h.dial('+15550100001');
    await within(call.answered, 3_000, 'the answer');
    expect(call.provisionalStatuses).toContain(180);
    const spokeUntilMs = await call.speak(300);
    await waitUntil(() => call.loudRuns().length === 1, 3_000, 'the first reply');
    const run = call.loudRuns()[0];
    const replyStartMs = call.received[run?.start ?? 0]?.atMs ?? 0;
    expect(replyStartMs - spokeUntilMs).toBeGreaterThanOrEqual(fast.replyAfterSilenceMs - 20);
    expect(call.sip.state).toBe('answered');
  });

  it('stays on the line without replying while the agent says nothing', async () => {
    const h = await harness();
    const call = await h.dial('+15550100001');
    await within(call.answered, 3_000, 'the answer');
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    expect(call.received.length).toBeGreaterThan(30);
    expect(call.loudRuns()).toEqual([]);
    expect(call.sip.state).toBe('answered');
    expect(h.carrier.activeCalls).toBe(1);
  });

  it(`hangs up after ${personMaxReplies} replies`, async () => {
    const h = await harness();
    const call = await h.dial('+14155550123');
    await within(call.answered, 3_000, 'the answer');
    for (let turn = 1; turn <= personMaxReplies; turn++) {
      expect(call.sip.state).toBe('answered');
      await call.speak(200);
      await waitUntil(
        () => call.loudRuns().length === turn && (call.loudRuns()[turn - 1]?.end ?? 0) < call.received.length,
        3_000,
        `reply ${turn}`,
      );
    }
    const outcome = await within(call.outcome, 2_000, 'the BYE after the last reply');
    expect(outcome).toMatchObject({ kind: 'ended', ended: { by: 'remote' } });
    const runs = call.loudRuns();
    expect(runs).toHaveLength(personMaxReplies);
    for (const run of runs) {
      expect((run.end - run.start) * 20).toBeGreaterThanOrEqual(fast.replyMs - 40);
      expect((run.end - run.start) * 20).toBeLessThanOrEqual(fast.replyMs + 40);
    }
    await waitUntil(() => h.carrier.activeCalls === 0, 1_000, 'the sandbox to drop the call');
  });

  it('hangs up at once when the agent sends DTMF #', async () => {
    const h = await harness();
    const call = await h.dial('+15550100001');
    await within(call.answered, 3_000, 'the answer');
    await call.rtp.sendDtmf('#');
    const outcome = await within(call.outcome, 1_000, 'the BYE after #');
    expect(outcome).toMatchObject({ kind: 'ended', ended: { by: 'remote' } });
    expect(call.loudRuns()).toEqual([]);
  });
});
