import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.js';

/** The SIP limits of issue 34 are read, defaulted and validated with the variable named. */
describe('SIP limit settings', () => {
  it('default to the documented values', () => {
    const { telephony } = loadConfig({});
    expect(telephony.sipTcp).toEqual({
      maxConnections: 256,
      maxConnectionsPerAddress: 16,
      firstRequestTimeoutMs: 10_000,
      idleTimeoutMs: 600_000,
    });
    expect(telephony.registration).toEqual({ minRefreshMs: 60_000, maxAttemptsPerMinute: 6 });
  });

  it('take what is set', () => {
    const { telephony } = loadConfig({
      CALLWRIGHT_SIP_TCP_MAX_CONNECTIONS: '50',
      CALLWRIGHT_SIP_TCP_MAX_CONNECTIONS_PER_ADDRESS: '5',
      CALLWRIGHT_SIP_TCP_FIRST_REQUEST_TIMEOUT_S: '3',
      CALLWRIGHT_SIP_TCP_IDLE_TIMEOUT_S: '30',
      CALLWRIGHT_REGISTRATION_MIN_REFRESH_S: '120',
      CALLWRIGHT_REGISTRATION_MAX_ATTEMPTS_PER_MINUTE: '2',
    });
    expect(telephony.sipTcp).toEqual({
      maxConnections: 50,
      maxConnectionsPerAddress: 5,
      firstRequestTimeoutMs: 3_000,
      idleTimeoutMs: 30_000,
    });
    expect(telephony.registration).toEqual({ minRefreshMs: 120_000, maxAttemptsPerMinute: 2 });
  });

  it.each([
    ['CALLWRIGHT_SIP_TCP_MAX_CONNECTIONS', '0'],
    ['CALLWRIGHT_SIP_TCP_MAX_CONNECTIONS_PER_ADDRESS', 'many'],
    ['CALLWRIGHT_SIP_TCP_FIRST_REQUEST_TIMEOUT_S', '301'],
    ['CALLWRIGHT_SIP_TCP_IDLE_TIMEOUT_S', '-1'],
    ['CALLWRIGHT_REGISTRATION_MIN_REFRESH_S', '0'],
    ['CALLWRIGHT_REGISTRATION_MAX_ATTEMPTS_PER_MINUTE', '601'],
  ])('refuse a bad %s naming it', (name, value) => {
    expect(() => loadConfig({ [name]: value })).toThrow(new RegExp(`^${name}: must be a whole number`));
  });
});
