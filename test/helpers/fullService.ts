import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type AgentInput, createAgent, parseVariableDeclaration } from '../../src/admin/agents.js';
import { createApiKey } from '../../src/admin/apiKeys.js';
import { addPhoneNumber } from '../../src/admin/numbers.js';
import { addTrunk, type TrunkInput } from '../../src/admin/trunks.js';
import { loadConfig } from '../../src/config.js';
import type { CallRecord } from '../../src/domain/records.js';
import { createLogger } from '../../src/logger.js';
import { loadSecretBox } from '../../src/secrets/secretBox.js';
import { type RunningService, type StartServiceOptions, startService } from '../../src/server.js';
import { listenOnlyScript } from './agentScripts.js';
import { postCall } from './http.js';
import { LogCapture } from './service.js';

let nextRtpBase = 20_000 + (process.pid % 200) * 100;

/**
 * The configuration of a whole service on loopback: free HTTP and SIP ports, its own RTP range, a
 * 5 s ring timeout, no practical rate limit. `env` overrides any of it.
 */
export function loopbackServiceConfig(dataDir: string, env: Record<string, string> = {}) {
  const rtpBase = nextRtpBase;
  nextRtpBase += 100;
  return loadConfig({
    PORT: '0',
    HOST: '127.0.0.1',
    CALLWRIGHT_DATA_DIR: dataDir,
    CALLWRIGHT_SIP_BIND: '127.0.0.1',
    CALLWRIGHT_PUBLIC_IP: '127.0.0.1',
    CALLWRIGHT_SIP_PORT: '0',
    CALLWRIGHT_RTP_PORTS: `${rtpBase}-${rtpBase + 98}`,
    CALLWRIGHT_RATE_LIMIT: '100000/10s',
    CALLWRIGHT_RING_TIMEOUT_S: '5',
    ...env,
  });
}

/** The whole embedded service as `serve` runs it (API, dispatcher, SIP, RTP, sandbox) on loopback. */
export async function startFullService(
  env: Record<string, string> = {},
  options: StartServiceOptions = {},
): Promise<RunningService & { dataDir: string; logs: LogCapture; dispose(): Promise<void> }> {
  const dataDir = mkdtempSync(join(tmpdir(), 'callwright-full-'));
  const config = loopbackServiceConfig(dataDir, env);
  const logs = new LogCapture();
  const service = await startService(config, createLogger('info', logs), options);
  return {
    ...service,
    dataDir,
    logs,
    async dispose() {
      await service.close();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

export async function callFixture(
  service: RunningService,
  options: { maxDurationS?: number; maxLiveCalls?: number } = {},
) {
  const account = await service.store.accounts.create({
    name: 'calls',
    maxLiveCalls: options.maxLiveCalls ?? 10,
  });
  const { key } = await createApiKey(service.store, account.id, 'calls');
  const agent = await createAgent(service.store, account.id, {
    name: 'Caller',
    prompt: 'p',
    script: listenOnlyScript,
    maxDurationS: options.maxDurationS ?? 3,
  });
  await addPhoneNumber(service.store, account.id, '+15550009999');
  return { accountId: account.id, key, agentId: agent.id, from: '+15550009999' };
}

/** Polls the store until the call is terminal (or the time is up). */
export async function waitForTerminal(
  service: RunningService,
  callId: string,
  timeoutMs = 20_000,
): Promise<CallRecord> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const call = await service.store.calls.getById(callId);
    if (call && ['completed', 'busy', 'no_answer', 'failed', 'canceled'].includes(call.status)) return call;
    if (Date.now() > deadline) throw new Error(`call ${callId} still ${call?.status} after ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

let trunkCallSeq = 0;

interface TrunkCallOptions {
  maxDurationS?: number;
  firstMessage?: string;
  toNumber?: string;
  /** A script agent instead of the line check (its dialog script), and the call's variables. */
  script?: unknown;
  variables?: Record<string, string>;
  /** The agent's settings (e.g. `transfer`). */
  settings?: Record<string, unknown>;
  /** Runs once the agent and the API key exist, before the call is placed (e.g. an upload). */
  beforeCall?: (made: { agentId: string; key: string }) => Promise<void>;
}

/**
 * A call through a SIP trunk as a user makes one: a fresh account with the trunk (`trunk`, private
 * addresses allowed), a caller ID routed to it, an API key and an agent that greets and listens
 * (at most `maxDurationS`), then `POST /v1/calls/outbound` and the record once the call has ended.
 */
export async function callThroughTrunk(
  service: Awaited<ReturnType<typeof startFullService>>,
  trunk: Omit<TrunkInput, 'name'>,
  options: TrunkCallOptions & { timeoutMs?: number } = {},
): Promise<CallRecord> {
  const callId = await placeTrunkCall(service, trunk, options);
  return waitForTerminal(service, callId, options.timeoutMs ?? 30_000);
}

/** As callThroughTrunk, but returns the call's id as soon as the call is queued. */
export async function placeTrunkCall(
  service: Awaited<ReturnType<typeof startFullService>>,
  trunk: Omit<TrunkInput, 'name'>,
  options: TrunkCallOptions = {},
): Promise<string> {
  trunkCallSeq++;
  const account = await service.store.accounts.create({ name: `trunk call ${trunkCallSeq}` });
  const secretBox = loadSecretBox({ configuredKeyBase64: null, dataDir: service.dataDir });
  await addTrunk(service.store, secretBox, account.id, { name: 'carrier', ...trunk }, { allowPrivate: true });
  const from = `+1555008${String(trunkCallSeq).padStart(4, '0')}`;
  await addPhoneNumber(service.store, account.id, from, 'carrier');
  const { key } = await createApiKey(service.store, account.id, 'trunk call');
  const agent = await createAgent(service.store, account.id, {
    name: 'Line check',
    prompt: 'You check a line.',
    ...(options.script === undefined
      ? { firstMessage: options.firstMessage ?? 'Hello, this is a line check.' }
      : { script: options.script as AgentInput['script'] }),
    ...(options.variables
      ? { variables: Object.keys(options.variables).map((name) => parseVariableDeclaration(`${name}=`)) }
      : {}),
    maxDurationS: options.maxDurationS ?? 20,
    ...(options.settings ? { settings: options.settings } : {}),
  });
  await options.beforeCall?.({ agentId: agent.id, key });
  const placed = await postCall(service.url, key, {
    agent_id: agent.id,
    from_number: from,
    to_number: options.toNumber ?? '+14155550123',
    ...(options.variables ? { variables: options.variables } : {}),
  });
  if (placed.status !== 200) throw new Error(`the call was refused: ${JSON.stringify(placed.body)}`);
  return (placed.body as { call_id: string }).call_id;
}
