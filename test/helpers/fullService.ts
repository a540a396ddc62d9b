import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createAgent } from '../../src/admin/agents.js';
import { createApiKey } from '../../src/admin/apiKeys.js';
import { addPhoneNumber } from '../../src/admin/numbers.js';
import { loadConfig } from '../../src/config.js';
import type { CallRecord } from '../../src/domain/records.js';
import { createLogger } from '../../src/logger.js';
import { type RunningService, type StartServiceOptions, startService } from '../../src/server.js';
import { listenOnlyScript } from './agentScripts.js';
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
