import { describe, expect, it } from 'vitest';
import { attemptOutcomeOf, callerIdFor, nextAfterAttempt, parseCampaignSettings } from './campaigns.js';

const base = {
  agent_id: 'agt_x',
  from_number: '+15550009999',
  calling_window: { start: '09:00', end: '17:00' },
  time_zone: 'America/New_York',
};

describe('campaign settings', () => {
  it('fills the defaults and keeps what was given', () => {
    expect(parseCampaignSettings(base)).toMatchObject({
      caller_ids: ['+15550009999'],
      caller_id_selection: 'round_robin',
      calling_window: { start: '09:00', end: '17:00', weekdays: [1, 2, 3, 4, 5, 6, 7] },
      max_concurrency: 1,
      calls_per_minute: 10,
      max_daily_attempts: 3,
      retry: {},
      starts_at: null,
      ends_at: null,
    });
  });

  it.each([
    [{ ...base, from_number: undefined }, /from_number, or caller_ids/],
    [{ ...base, caller_ids: ['+15550009999'] }, /not both/],
    [{ ...base, from_number: '5550009999' }, /E\.164/],
    [{ ...base, time_zone: 'Mars/Base' }, /IANA/],
    [{ ...base, max_concurrency: 0 }, /max_concurrency must be a whole number from 1 to 100/],
    [{ ...base, calls_per_minute: 6001 }, /calls_per_minute/],
    [
      { ...base, retry: { answered: { after_minutes: 1, max_attempts: 2 } } },
      /retry: answered is not one of/,
    ],
    [{ ...base, retry: { busy: { after_minutes: 0, max_attempts: 2 } } }, /retry\.busy\.after_minutes/],
    [
      { ...base, starts_at: '2026-12-02T00:00:00Z', ends_at: '2026-12-01T00:00:00Z' },
      /ends_at must be after/,
    ],
    [{ ...base, starts_at: 'tomorrow' }, /starts_at must be an ISO 8601/],
    [{ ...base, colour: 'red' }, /unknown field: colour/],
  ])('refuses %j', (body, message) => {
    expect(() => parseCampaignSettings(body)).toThrow(message);
  });
});

describe('attempts', () => {
  it('reads a call as the retry policy does', () => {
    const call = (status: string, endReason: string | null = null, answeredBy: string | null = null) => ({
      status,
      endReason,
      answeredBy,
    });
    expect(attemptOutcomeOf(call('busy', 'rejected'))).toBe('busy');
    expect(attemptOutcomeOf(call('no_answer'))).toBe('no_answer');
    expect(attemptOutcomeOf(call('failed', 'unreachable'))).toBe('failed');
    expect(attemptOutcomeOf(call('completed', 'callee_hangup', 'human'))).toBe('answered');
    expect(attemptOutcomeOf(call('completed', 'agent_hangup', 'machine'))).toBe('voicemail');
    expect(attemptOutcomeOf(call('completed', 'voicemail'))).toBe('voicemail');
    expect(attemptOutcomeOf(call('canceled', 'do_not_call'))).toBe('do_not_call');
    expect(attemptOutcomeOf(call('canceled', 'outside_calling_hours'))).toBe('expired');
    expect(attemptOutcomeOf(call('canceled'))).toBe('canceled');
  });

  it('retries by outcome while attempts remain, never an answered call', () => {
    const policy = { busy: { after_minutes: 30, max_attempts: 3 } };
    expect(nextAfterAttempt('busy', 1, policy, 0)).toEqual({ state: 'retry_wait', retryAtMs: 1_800_000 });
    expect(nextAfterAttempt('busy', 3, policy, 0)).toEqual({ state: 'done' });
    expect(nextAfterAttempt('no_answer', 1, policy, 0)).toEqual({ state: 'done' });
    expect(nextAfterAttempt('answered', 1, { ...policy }, 0)).toEqual({ state: 'done' });
    expect(nextAfterAttempt('do_not_call', 1, policy, 0)).toEqual({ state: 'do_not_call' });
  });
});

describe('caller IDs from a pool', () => {
  const pool = ['+12125550000', '+13105550000', '+14155550000'];
  it('takes turns by contact and attempt', () => {
    const pick = (position: number, attempts: number) =>
      callerIdFor(pool, 'round_robin', { position, attempts, toNumber: '+12125550123' });
    expect([pick(0, 0), pick(1, 0), pick(2, 0), pick(3, 0), pick(0, 1)]).toEqual([
      pool[0],
      pool[1],
      pool[2],
      pool[0],
      pool[1],
    ]);
  });

  it('matches the area code, else falls back to the turn', () => {
    expect(callerIdFor(pool, 'local_area_code', { position: 0, attempts: 0, toNumber: '+13105550123' })).toBe(
      pool[1],
    );
    expect(callerIdFor(pool, 'local_area_code', { position: 2, attempts: 0, toNumber: '+17185550123' })).toBe(
      pool[2],
    );
  });
});
