import { mkdtempSync, rmSync } from 'node:fs';
import type { Server } from 'node:http';
import { connect, createServer, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  type CliCaller,
  createCallerWithCli,
  loopbackServeEnv,
  type ServeProcess,
  startServeProcess,
  startWebhookReceiverWithCli,
} from '../helpers/cli.js';
import { postCall } from '../helpers/http.js';
import { freeUdpPort } from '../sipp/harness.js';

/**
 * Issue 34, finding 4: SIP over TCP must not let anyone hold the process's file descriptors. A
 * `serve` process runs with an open-file limit of 256 and the SIP TCP caps set low (50
 * connections, 20 per address, 3 s for a first request, 6 s idle). Raw sockets from several
 * loopback addresses open connections that never say anything; 300 more flood in. The caps hold,
 * the extra connections are closed at once, the API keeps answering, a call still goes out and
 * its call.completed webhook is delivered (before the fix: EMFILE), and the silent connections
 * are closed after the short first-request timeout while one that sent a request stays.
 */

const dataDir = mkdtempSync(join(tmpdir(), 'callwright-siptcp-'));
let serve: ServeProcess;
let sipPort: number;
const sockets: Socket[] = [];
let caller: CliCaller;
let receiver: Server;
/** The call ids of the call.completed events delivered. */
const delivered: string[] = [];

/** A port free for both UDP and TCP on 127.0.0.1. */
async function freeSipPort(): Promise<number> {
  for (;;) {
    const port = await freeUdpPort();
    const server = createServer();
    const free = await new Promise<boolean>((resolve) => {
      server.once('error', () => resolve(false));
      server.listen(port, '127.0.0.1', () => resolve(true));
    });
    if (free) {
      await new Promise<void>((resolve) => server.close(() => resolve()));
      return port;
    }
  }
}

beforeAll(async () => {
  sipPort = await freeSipPort();
  const rtpBase = 45_000 + (process.pid % 40) * 100;
  const cliEnv = loopbackServeEnv(dataDir, rtpBase, { CALLWRIGHT_WEBHOOK_ALLOW_PRIVATE: 'true' });
  caller = createCallerWithCli(cliEnv, { name: 'siptcp', maxDurationS: 2 });
  receiver = await startWebhookReceiverWithCli(cliEnv, caller.accountId, ({ callId }) =>
    delivered.push(callId),
  );
  serve = await startServeProcess(
    [],
    loopbackServeEnv(dataDir, rtpBase, {
      CALLWRIGHT_WEBHOOK_ALLOW_PRIVATE: 'true',
      CALLWRIGHT_SIP_PORT: String(sipPort),
      CALLWRIGHT_SIP_TCP_MAX_CONNECTIONS: '50',
      CALLWRIGHT_SIP_TCP_MAX_CONNECTIONS_PER_ADDRESS: '20',
      CALLWRIGHT_SIP_TCP_FIRST_REQUEST_TIMEOUT_S: '3',
      CALLWRIGHT_SIP_TCP_IDLE_TIMEOUT_S: '6',
    }),
    30_000,
    ['prlimit', '--nofile=256:256', '--'],
  );
}, 40_000);

afterAll(async () => {
  for (const socket of sockets) socket.destroy();
  await serve?.stop();
  await new Promise((resolve) => receiver?.close(resolve));
  rmSync(dataDir, { recursive: true, force: true });
});

interface Held {
  socket: Socket;
  closed: boolean;
  data: string;
}

/** Opens a TCP connection to the SIP port from `localAddress`; resolves once it is up (or refused). */
function open(localAddress: string): Promise<Held> {
  return new Promise((resolve) => {
    const socket = connect({ host: '127.0.0.1', port: sipPort, localAddress });
    sockets.push(socket);
    const held: Held = { socket, closed: false, data: '' };
    socket.on('data', (chunk: Buffer) => {
      held.data += chunk.toString('latin1');
    });
    socket.on('error', () => {});
    socket.on('close', () => {
      held.closed = true;
      resolve(held);
    });
    socket.on('connect', () => resolve(held));
  });
}

async function openMany(localAddress: string, count: number): Promise<Held[]> {
  const held: Held[] = [];
  for (let index = 0; index < count; index++) held.push(await open(localAddress));
  // The service sees each connection a moment after the client does.
  await new Promise((resolve) => setTimeout(resolve, 400));
  return held;
}

const openCount = (held: Held[]) => held.filter((connection) => !connection.closed).length;

async function healthy(): Promise<boolean> {
  try {
    const response = await fetch(`${serve.url.replace(/\/v1$/, '')}/healthz`, {
      signal: AbortSignal.timeout(5_000),
    });
    return response.status === 200;
  } catch {
    return false;
  }
}

function options(from: string): string {
  return [
    `OPTIONS sip:callwright@127.0.0.1:${sipPort};transport=tcp SIP/2.0`,
    `Via: SIP/2.0/TCP ${from};branch=z9hG4bK-probe-${Date.now()}`,
    'Max-Forwards: 70',
    'From: <sip:probe@127.0.0.9>;tag=probe',
    'To: <sip:callwright@127.0.0.1>',
    `Call-ID: probe-${Date.now()}@127.0.0.9`,
    'CSeq: 1 OPTIONS',
    'Content-Length: 0',
    '',
    '',
  ].join('\r\n');
}

describe('SIP over TCP: connection caps and timeouts (issue 34, finding 4)', () => {
  it('caps connections per address and in total, closes the rest, and the API keeps answering', async () => {
    const first = await openMany('127.0.0.2', 25); // 20 kept (per-address cap), 5 closed
    const second = await openMany('127.0.0.3', 20); // 20 kept: 40 in all
    const third = await openMany('127.0.0.4', 15); // 10 kept (total cap 50), 5 closed
    expect([openCount(first), openCount(second), openCount(third)]).toEqual([20, 20, 10]);

    // 300 more, more than the process's 256 descriptors: each is closed, none starves the API.
    const flood = await Promise.all(
      Array.from({ length: 300 }, (_, index) => open(`127.0.0.${10 + (index % 20)}`)),
    );
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect(openCount(flood)).toBe(0);
    const answers = await Promise.all(Array.from({ length: 20 }, () => healthy()));
    expect(answers.every(Boolean)).toBe(true);
    expect(openCount([...first, ...second, ...third])).toBe(50);

    // A call still goes out (to the sandbox's busy line) and its call.completed webhook arrives.
    const placed = await postCall(serve.url, caller.key, {
      agent_id: caller.agentId,
      from_number: '+15550009999',
      to_number: '+15550100002',
    });
    expect(placed.status).toBe(200);
    const callId = (placed.body as { call_id: string }).call_id;
    const deadline = Date.now() + 20_000;
    while (!delivered.includes(callId) && Date.now() < deadline)
      await new Promise((resolve) => setTimeout(resolve, 200));
    expect(delivered).toContain(callId);
  }, 50_000);

  it('closes a connection that sent no request after the short timeout; one that did stays until idle', async () => {
    // Let the earlier connections go (first-request timeout), so there is room again.
    await new Promise((resolve) => setTimeout(resolve, 3_500));
    const silent = await open('127.0.0.5');
    const talking = await open('127.0.0.6');
    const local = `${talking.socket.localAddress}:${talking.socket.localPort}`;
    talking.socket.write(options(local));
    await new Promise((resolve) => setTimeout(resolve, 1_500));
    expect(silent.closed).toBe(false);
    expect(talking.data).toMatch(/^SIP\/2\.0 200 /);

    await new Promise((resolve) => setTimeout(resolve, 3_000));
    expect(silent.closed).toBe(true);
    expect(talking.closed).toBe(false);

    // No message for the idle timeout (6 s after its request): closed too.
    const deadline = Date.now() + 8_000;
    while (!talking.closed && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 200));
    expect(talking.closed).toBe(true);
    expect(await healthy()).toBe(true);
  }, 30_000);
});
