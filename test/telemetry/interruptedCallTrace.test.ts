import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect, it } from 'vitest';
import { createAgent } from '../../src/admin/agents.js';
import { createApiKey } from '../../src/admin/apiKeys.js';
import { addPhoneNumber } from '../../src/admin/numbers.js';
import { newId } from '../../src/domain/ids.js';
import { createLogger } from '../../src/logger.js';
import { openSqliteStore } from '../../src/openStore.js';
import { startService } from '../../src/server.js';
import { callTraceIds } from '../../src/telemetry/traceIds.js';
import { listenOnlyScript } from '../helpers/agentScripts.js';
import { loopbackServiceConfig, waitForTerminal } from '../helpers/fullService.js';
import { LogCapture } from '../helpers/service.js';
import { attributeOf, startOtlpReceiver } from './otlpReceiver.js';

/**
 * A call whose worker died mid-dial: the process that finds it (here, the next `serve` on the same
 * data directory) ends it failed/interrupted and records its call span — in the trace its id
 * gives, so the webhook attempts of its `call.completed` land beside it.
 */
it('records the call span of a call a dead worker held, when recovery ends it', async () => {
  const otlp = await startOtlpReceiver();
  const dataDir = mkdtempSync(join(tmpdir(), 'callwright-interrupted-'));
  try {
    const config = loopbackServiceConfig(dataDir, { CALLWRIGHT_OTLP_TRACES_URL: otlp.url });
    const store = openSqliteStore(config.sqlitePath);
    const account = await store.accounts.create({ name: 'dead worker' });
    const { key } = await createApiKey(store, account.id, 'k');
    const apiKeyId = (await store.apiKeys.list(account.id))[0]?.id as string;
    const agent = await createAgent(store, account.id, { name: 'a', prompt: 'p', script: listenOnlyScript });
    await addPhoneNumber(store, account.id, '+15550009999');
    const createdAt = new Date(Date.now() - 60_000).toISOString();
    const call = await store.calls.createQueued({
      id: newId('call'),
      accountId: account.id,
      agentId: agent.id,
      apiKeyId,
      fromNumber: '+15550009999',
      toNumber: '+15550100001',
      firstMessage: null,
      context: null,
      variables: null,
      createdAt,
    });
    const callId = call?.id as string;
    // Claimed by a worker that is gone: its lease ran out 30 s ago.
    const claimed = await store.calls.claimForDialing(callId, {
      workerId: 'worker-that-died',
      untilIso: new Date(Date.now() - 30_000).toISOString(),
      atIso: new Date(Date.now() - 50_000).toISOString(),
    });
    expect('claimed' in claimed).toBe(true);
    await store.close();

    const service = await startService(config, createLogger('info', new LogCapture()));
    try {
      const ended = await waitForTerminal(service, callId, 20_000);
      expect(ended).toMatchObject({ status: 'failed', endReason: 'interrupted' });
    } finally {
      await service.close();
    }
    const ids = callTraceIds(callId);
    const inTrace = otlp.spans.filter((span) => span.traceId === ids.traceId);
    const callSpan = inTrace.find((span) => span.name === 'call');
    expect(callSpan?.spanId).toBe(ids.spanId);
    expect(attributeOf(callSpan as never, 'callwright.call.end_reason')).toBe('interrupted');
    expect(callSpan?.status?.code).toBe(2); // ERROR
    const dispatch = inTrace.find((span) => span.name === 'dispatch');
    expect(dispatch?.parentSpanId).toBe(ids.spanId);
    expect(otlp.bodies.join('\n')).not.toContain(key);
    expect(otlp.bodies.join('\n')).not.toContain('5550100001');
  } finally {
    await otlp.close();
    rmSync(dataDir, { recursive: true, force: true });
  }
}, 60_000);
