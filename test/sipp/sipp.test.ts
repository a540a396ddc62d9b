import { afterEach, describe, expect, it } from 'vitest';
import type {
  CallOutcome,
  InviteOptions,
  OutgoingCall,
  TransferResult,
} from '../../src/telephony/sip/index.js';
import {
  expectSippPassed,
  inviteOptions as harnessInviteOptions,
  outcomeOf,
  startCaller,
  startSipp,
  stopAll,
} from './harness.js';

/**
 * Interoperability: our UAC against SIPp (Debian package `sip-tester`) acting as the callee, on
 * loopback. Each scenario's verdict is SIPp's exit code (0 = every step matched), and our own
 * reported outcome must agree. The media scenarios (RTP echo, PCMA, DTMF) are in media.test.ts.
 */

const offer = [
  'v=0',
  'o=callwright 1 1 IN IP4 127.0.0.1',
  's=callwright',
  'c=IN IP4 127.0.0.1',
  't=0 0',
  'm=audio 41000 RTP/AVP 0 8 101',
  'a=rtpmap:0 PCMU/8000',
  'a=rtpmap:8 PCMA/8000',
  'a=rtpmap:101 telephone-event/8000',
  'a=fmtp:101 0-16',
  'a=ptime:20',
  'a=sendrecv',
  '',
].join('\r\n');

afterEach(stopAll);

function inviteOptions(sippPort: number, overrides: Partial<InviteOptions> = {}): InviteOptions {
  return harnessInviteOptions(sippPort, offer, overrides);
}

function hangUpAfterAnswer(call: OutgoingCall, delayMs: number): void {
  call.on('answered', () => {
    setTimeout(() => void call.hangUp(), delayMs);
  });
}

/** Transfers the call to +15550100001 once it is answered (the REFER follows the ACK in the dialog). */
function transferOnceAnswered(call: OutgoingCall): Promise<TransferResult> {
  return new Promise((resolve) => {
    call.on('answered', () => {
      setTimeout(() => void call.transfer('sip:+15550100001@127.0.0.1').then(resolve), 100);
    });
  });
}

function expectEnded(outcome: CallOutcome, by: 'local' | 'remote'): void {
  expect(outcome.kind).toBe('ended');
  if (outcome.kind !== 'ended') return;
  expect(outcome.ended.by).toBe(by);
  expect(outcome.answered.sdpAnswer).toMatch(/^m=audio \d+ RTP\/AVP 0/m);
}

describe('SIPp as the callee', () => {
  it('answered call: ACK, then our BYE', async () => {
    const { port, run } = await startSipp('uas_answer.xml');
    const caller = await startCaller();
    const call = caller.invite(inviteOptions(port));
    const provisional: number[] = [];
    call.on('provisional', (info) => provisional.push(info.status));
    hangUpAfterAnswer(call, 200);
    expectEnded(await outcomeOf(call, run), 'local');
    expect(provisional).toContain(180);
    await expectSippPassed(run);
  });

  it('callee hangs up: SIPp sends BYE and we answer 200', async () => {
    const { port, run } = await startSipp('uas_callee_hangup.xml');
    const caller = await startCaller();
    const call = caller.invite(inviteOptions(port));
    expectEnded(await outcomeOf(call, run), 'remote');
    await expectSippPassed(run);
  });

  it('486 busy: reported as rejected 486 and ACKed', async () => {
    const { port, run } = await startSipp('uas_busy.xml');
    const caller = await startCaller();
    const call = caller.invite(inviteOptions(port));
    expect(await outcomeOf(call, run)).toEqual({
      kind: 'failed',
      failure: { cause: 'rejected', status: 486, reason: 'Busy Here', timedOut: false },
    });
    await expectSippPassed(run);
  });

  it('ring forever: our ring timeout sends CANCEL, SIPp answers 487, we ACK', async () => {
    const { port, run } = await startSipp('uas_ring_forever.xml');
    const caller = await startCaller();
    const call = caller.invite(inviteOptions(port, { ringTimeoutMs: 700 }));
    expect(await outcomeOf(call, run)).toEqual({
      kind: 'failed',
      failure: { cause: 'ring_timeout', status: 487, reason: 'Request Terminated', timedOut: false },
    });
    await expectSippPassed(run);
  });

  it('401 digest challenge: SIPp verifyauth accepts our Authorization', async () => {
    const { port, run } = await startSipp('uas_digest_401.xml');
    const caller = await startCaller();
    const call = caller.invite(
      inviteOptions(port, { credentials: { username: 'trunkuser', password: 's3cret' } }),
    );
    hangUpAfterAnswer(call, 100);
    expectEnded(await outcomeOf(call, run), 'local');
    await expectSippPassed(run);
  });

  it('401 digest challenge with a wrong password: SIPp refuses it and fails', async () => {
    const { port, run } = await startSipp('uas_digest_401.xml');
    const caller = await startCaller();
    const call = caller.invite(
      inviteOptions(port, { credentials: { username: 'trunkuser', password: 'wrong' } }),
    );
    const outcome = await outcomeOf(call, run);
    expect(outcome).toMatchObject({ kind: 'failed', failure: { cause: 'rejected', status: 403 } });
    const result = await run.exited;
    expect(result.code).not.toBe(0);
  });

  it('in-dialog requests: INFO gets 501, a refresh re-INVITE 200, OPTIONS 200, then the callee BYE', async () => {
    const { port, run } = await startSipp('uas_in_dialog.xml');
    const caller = await startCaller();
    const call = caller.invite(inviteOptions(port));
    expectEnded(await outcomeOf(call, run), 'remote');
    await expectSippPassed(run);
  });

  it('cold transfer: our REFER names the target, NOTIFY sipfrag 100 then 200 ends it transferred, then our BYE', async () => {
    const { port, run } = await startSipp('uas_refer.xml');
    const caller = await startCaller();
    const call = caller.invite(inviteOptions(port));
    const result = await transferOnceAnswered(call);
    expect(result).toEqual({ kind: 'transferred', status: 200 });
    await call.hangUp();
    expectEnded(await outcomeOf(call, run), 'local');
    await expectSippPassed(run);
  });

  it('a REFER the line refuses (405) is reported refused and the call stays up until the callee hangs up', async () => {
    const { port, run } = await startSipp('uas_refer_refused.xml');
    const caller = await startCaller();
    const call = caller.invite(inviteOptions(port));
    expect(await transferOnceAnswered(call)).toEqual({ kind: 'refused', status: 405 });
    expectEnded(await outcomeOf(call, run), 'remote');
    await expectSippPassed(run);
  });
});
