import { describe, expect, it } from 'vitest';
import { checkTransferOptions } from './agentTools.js';
import { digitSteps, summaryHeaderFor, transferOutcomeOf, withEmbeddedHeader } from './transferSettings.js';

const targets = { billing: '+15550100015' };

describe('settings.transfer: hold_audio, summary_header, digits', () => {
  it('reads them, with a tone and no header by default', () => {
    expect(checkTransferOptions({ targets })).toMatchObject({
      holdAudio: 'tone',
      summaryHeader: null,
      digits: {},
    });
    expect(
      checkTransferOptions({
        targets,
        warm: true,
        hold_audio: 'none',
        summary_header: 'User-to-User',
        digits: { billing: 'ww12#' },
        decline_digit: '2',
      }),
    ).toMatchObject({
      holdAudio: 'none',
      summaryHeader: 'User-to-User',
      digits: { billing: 'ww12#' },
      declineDigit: '2',
    });
  });

  it('reads wait_for_operator (5 s by default) and decline_by_voice, both off by default', () => {
    expect(checkTransferOptions({ targets })).toMatchObject({
      waitForOperator: false,
      declineByVoice: false,
    });
    expect(
      checkTransferOptions({ targets, warm: true, wait_for_operator: true, decline_by_voice: true }),
    ).toMatchObject({ waitForOperator: true, waitForOperatorTimeoutMs: 5_000, declineByVoice: true });
    expect(
      checkTransferOptions({
        targets,
        warm: true,
        wait_for_operator: true,
        wait_for_operator_timeout_ms: 2500,
      }),
    ).toMatchObject({ waitForOperatorTimeoutMs: 2_500 });
  });

  it.each([
    [{ targets, hold_audio: 'music' }, /settings.transfer.hold_audio must be one of tone, file, none/],
    [{ targets, summary_header: 'Subject' }, /settings.transfer.summary_header must be an X- header/],
    [{ targets, summary_header: 'X-A\r\nB' }, /settings.transfer.summary_header/],
    [{ targets, digits: { billing: '12' } }, /settings.transfer.digits needs warm: true/],
    [{ targets, warm: true, digits: { sales: '12' } }, /settings.transfer.digits.sales is not one of/],
    [{ targets, warm: true, digits: { billing: '12x' } }, /settings.transfer.digits.billing must be/],
    [{ targets, warm: true, digits: { billing: 'www' } }, /settings.transfer.digits.billing must be/],
    [{ targets, warm: true, decline_digit: '22' }, /settings.transfer.decline_digit must be one key/],
    [{ targets, decline_digit: '2' }, /settings.transfer.decline_digit needs warm: true/],
    [{ targets, decline_by_voice: true }, /settings.transfer.decline_by_voice needs warm: true/],
    [{ targets, warm: true, decline_by_voice: 'yes' }, /decline_by_voice must be true or false/],
    [{ targets, wait_for_operator: true }, /settings.transfer.wait_for_operator needs warm: true/],
    [
      { targets, warm: true, wait_for_operator: true, wait_for_operator_timeout_ms: 999 },
      /wait_for_operator_timeout_ms must be a whole number from 1000 to 30000/,
    ],
    [
      { targets, warm: true, wait_for_operator: true, wait_for_operator_timeout_ms: 30_001 },
      /wait_for_operator_timeout_ms must be a whole number/,
    ],
    [
      { targets, warm: true, wait_for_operator_timeout_ms: 3000 },
      /wait_for_operator_timeout_ms needs wait_for_operator: true/,
    ],
  ])('refuses %j with a message naming the field', (raw, message) => {
    expect(() => checkTransferOptions(raw)).toThrow(message);
  });
});

describe('the summary header', () => {
  it('cleans an X- header of CR/LF and control characters and caps it at 200 characters', () => {
    const header = summaryHeaderFor(
      'X-Call-Summary',
      `Wants a refund.\r\nInjected: yes\u0000 ${'é'.repeat(300)}`,
    );
    expect(header?.name).toBe('X-Call-Summary');
    for (const control of ['\r', '\n', '\u0000']) expect(header?.value).not.toContain(control);
    expect(header?.value.startsWith('Wants a refund. Injected: yes é')).toBe(true);
    expect([...(header?.value ?? '')]).toHaveLength(200);
    expect(summaryHeaderFor('X-Call-Summary', ' \r\n ')).toBeNull();
  });

  it('hex-encodes User-to-User (RFC 7433) and cuts it at 128 bytes on a character boundary', () => {
    expect(summaryHeaderFor('user-to-user', 'Hi\nthere')).toEqual({
      name: 'User-to-User',
      value: `${Buffer.from('Hi there').toString('hex')};encoding=hex`,
    });
    const long = summaryHeaderFor('User-to-User', `a${'é'.repeat(100)}`);
    const bytes = Buffer.from(long?.value.split(';')[0] ?? '', 'hex');
    expect(bytes.length).toBe(127);
    expect(bytes.toString('utf8')).toBe(`a${'é'.repeat(63)}`);
  });

  it('rides in a Refer-To URI as an escaped embedded header', () => {
    expect(
      withEmbeddedHeader('sip:+15550100015@10.0.0.1', { name: 'X-Call-Summary', value: 'a&b=c ?' }),
    ).toBe('sip:+15550100015@10.0.0.1?X-Call-Summary=a%26b%3Dc%20%3F');
  });
});

describe('digits and outcomes', () => {
  it('splits ww123 into a wait and the digits', () => {
    expect(digitSteps('ww123w#')).toEqual([
      { waitMs: 1000 },
      { digits: '123' },
      { waitMs: 500 },
      { digits: '#' },
    ]);
  });

  it('names the outcome from the SIP status', () => {
    expect(transferOutcomeOf({ kind: 'transferred' })).toBe('connected');
    expect(transferOutcomeOf({ kind: 'refused', status: 405 })).toBe('refused');
    expect(transferOutcomeOf({ kind: 'failed', status: 486 })).toBe('busy');
    expect(transferOutcomeOf({ kind: 'failed', status: 480 })).toBe('no_answer');
    expect(transferOutcomeOf({ kind: 'failed', status: null, noAnswer: true })).toBe('no_answer');
    expect(transferOutcomeOf({ kind: 'failed', status: 404 })).toBe('failed');
    expect(transferOutcomeOf({ kind: 'failed', status: null, declined: true })).toBe('declined');
  });
});
