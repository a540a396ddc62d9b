import { createSocket } from 'node:dgram';
import { pino } from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { buildDigestChallenge, verifyDigestAuthorization } from './digest.js';
import { headerValue, headerValues, type ParsedSipRequest, parseSipMessage } from './message.js';
import type { RegistrationState } from './registration.js';
import { SipUserAgent } from './userAgent.js';

/** REGISTER against a registrar written here: digest, refresh, 423, back-off, removal. */

const logger = pino({ level: 'silent' });
const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

type Verdict = { status: number; headers?: string[] };

/** Challenges every REGISTER without valid credentials (user 1001, password pw); `decide` answers the rest. */
async function startRegistrar(decide: (request: ParsedSipRequest, index: number) => Verdict) {
  const socket = createSocket('udp4');
  await new Promise<void>((resolve) => socket.bind(0, '127.0.0.1', resolve));
  cleanups.push(() => new Promise<void>((resolve) => socket.close(() => resolve())));
  const registers: ParsedSipRequest[] = [];
  let authorized = 0;
  const challenge = buildDigestChallenge({ realm: 'pbx.test', nonce: 'n0nce', qop: true });
  socket.on('message', (data, remote) => {
    const parsed = parseSipMessage(data);
    if (!parsed.ok || parsed.message.kind !== 'request') return;
    const request = parsed.message;
    registers.push(request);
    const authorization = headerValue(request, 'Authorization');
    const valid =
      authorization !== undefined &&
      verifyDigestAuthorization(authorization, {
        method: 'REGISTER',
        realm: 'pbx.test',
        credentials: { username: '1001', password: 'pw' },
        nonce: 'n0nce',
      });
    const verdict: Verdict = valid
      ? decide(request, authorized++)
      : { status: 401, headers: [`WWW-Authenticate: ${challenge}`] };
    const lines = [
      `SIP/2.0 ${verdict.status} Reason`,
      ...headerValues(request, 'Via').map((via) => `Via: ${via}`),
      `From: ${headerValue(request, 'From')}`,
      `To: ${headerValue(request, 'To')};tag=reg`,
      `Call-ID: ${request.callId}`,
      `CSeq: ${request.cseq.seq} REGISTER`,
      ...(verdict.headers ?? []),
      'Content-Length: 0',
      '',
      '',
    ];
    socket.send(lines.join('\r\n'), remote.port, remote.address);
  });
  return { port: socket.address().port, registers };
}

async function register(
  port: number | number[],
  extra: {
    expiresS?: number;
    retryMinMs?: number;
    minRefreshMs?: number;
    maxAttemptsPerMinute?: number;
  } = {},
) {
  const agent = await SipUserAgent.start({ bindAddress: '127.0.0.1', port: 0, logger, timers: { t1Ms: 20 } });
  cleanups.push(() => agent.close());
  const registration = agent.register({
    registrars: (Array.isArray(port) ? port : [port]).map((each) => ({ host: '127.0.0.1', port: each })),
    registrarUri: 'sip:pbx.test',
    aor: 'sip:1001@pbx.test',
    credentials: { username: '1001', password: 'pw' },
    ...extra,
  });
  const states: RegistrationState[] = [];
  registration.on('state', (state) => states.push(state));
  registration.start();
  return { registration, states };
}

const until = async (condition: () => boolean, limitMs = 4_000) => {
  const deadline = Date.now() + limitMs;
  while (!condition() && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 20));
};

describe('SIP registration', () => {
  it('answers the digest challenge, takes the granted lifetime, refreshes before it ends, and removes itself', async () => {
    const registrar = await startRegistrar((request) => ({
      status: 200,
      headers: [`Contact: ${headerValue(request, 'Contact')};expires=2`],
    }));
    const { registration, states } = await register(registrar.port, { minRefreshMs: 100 });
    await until(() => states.filter((state) => state.state === 'registered').length >= 2);
    expect(states.filter((state) => state.state === 'registered')).toHaveLength(2);
    expect(states.find((state) => state.state === 'registered')).toMatchObject({ expiresS: 2 });
    const [first] = registrar.registers as [ParsedSipRequest];
    expect(headerValue(first, 'Expires')).toBe('3600');
    expect(headerValue(first, 'To')).toBe('<sip:1001@pbx.test>');
    // The refresh keeps the Call-ID and counts CSeq up (RFC 3261 §10.2.4).
    const refresh = registrar.registers.at(-1) as ParsedSipRequest;
    expect(refresh.callId).toBe(first.callId);
    expect(refresh.cseq.seq).toBeGreaterThan(first.cseq.seq);
    await registration.stop();
    expect(headerValue(registrar.registers.at(-1) as ParsedSipRequest, 'Expires')).toBe('0');
    expect(registration.state).toEqual({ state: 'stopped' });
  });

  it('asks again with Min-Expires after 423', async () => {
    const registrar = await startRegistrar((request) =>
      headerValue(request, 'Expires') === '3600'
        ? { status: 423, headers: ['Min-Expires: 7200'] }
        : { status: 200, headers: ['Expires: 7200'] },
    );
    const { states } = await register(registrar.port);
    await until(() => states.some((state) => state.state === 'registered'));
    expect(states.find((state) => state.state === 'registered')).toMatchObject({ expiresS: 7200 });
  });

  it('reports a refusal and retries with growing back-off', async () => {
    const registrar = await startRegistrar(() => ({ status: 403 }));
    const { states } = await register(registrar.port, { retryMinMs: 100 });
    await until(() => states.filter((state) => state.state === 'failed').length >= 3);
    const failures = states.filter((state) => state.state === 'failed');
    expect(failures[0]).toMatchObject({ status: 403, retryInMs: 100 });
    expect(failures[1]).toMatchObject({ retryInMs: 200 });
    expect(failures[2]).toMatchObject({ retryInMs: 400 });
  });

  it('tries the next server on 503, and after all have failed starts again at the first; a refusal (403) is final for the round', async () => {
    const first = await startRegistrar(() => ({ status: 503, headers: ['Retry-After: 1'] }));
    const second = await startRegistrar(() => ({ status: 503 }));
    const { states } = await register([first.port, second.port], { retryMinMs: 100 });
    await until(() => states.filter((state) => state.state === 'failed').length >= 2);
    const authorized = (registrar: { registers: ParsedSipRequest[] }) =>
      registrar.registers.filter((request) => headerValue(request, 'Authorization') !== undefined).length;
    // Each round: the first server, then the second; then the back-off; then the first again.
    expect(authorized(first)).toBeGreaterThanOrEqual(2);
    expect(authorized(second)).toBeGreaterThanOrEqual(1);
    expect(states.find((state) => state.state === 'failed')).toMatchObject({ status: 503 });
    const refusing = await startRegistrar(() => ({ status: 403 }));
    const never = await startRegistrar(() => ({ status: 200 }));
    const refused = await register([refusing.port, never.port], { retryMinMs: 5_000 });
    await until(() => refused.states.some((state) => state.state === 'failed'));
    expect(refused.states.find((state) => state.state === 'failed')).toMatchObject({ status: 403 });
    expect(never.registers).toHaveLength(0);
  });

  // Issue 34, finding 8: a hostile registrar must not make us send REGISTERs (each a database write
  // of the state) as fast as it likes.
  it('refreshes no sooner than the floor, whatever short lifetime the registrar grants', async () => {
    const registrar = await startRegistrar((request) => ({
      status: 200,
      headers: [`Contact: ${headerValue(request, 'Contact')};expires=1`],
    }));
    const { states } = await register(registrar.port, { minRefreshMs: 1_500 });
    await new Promise((resolve) => setTimeout(resolve, 2_500));
    // The first registration and one refresh at 1.5 s; at expires=1 it used to be one every 0.5 s.
    const registered = states.filter((state) => state.state === 'registered');
    expect(registered).toHaveLength(2);
    expect(registered[0]).toMatchObject({ expiresS: 1 });
  });

  it('caps attempts per minute: an endless run of 423s does not become a storm of REGISTERs', async () => {
    let minimum = 3_600;
    const registrar = await startRegistrar(() => {
      minimum++;
      return { status: 423, headers: [`Min-Expires: ${minimum}`] };
    });
    await register(registrar.port, { maxAttemptsPerMinute: 3 });
    await new Promise((resolve) => setTimeout(resolve, 1_500));
    const authorized = registrar.registers.filter(
      (request) => headerValue(request, 'Authorization') !== undefined,
    );
    expect(authorized).toHaveLength(3);
  });
});
