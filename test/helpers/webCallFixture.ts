import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { createAgent, parseVariableDeclaration } from '../../src/admin/agents.js';
import { createApiKey } from '../../src/admin/apiKeys.js';
import { createLogger } from '../../src/logger.js';
import type { RunningService } from '../../src/server.js';
import { concatSamples } from '../../src/voice/providers/audio/samples.js';
import { encodeWav } from '../../src/voice/providers/audio/wav.js';
import { FliteTextToSpeech } from '../../src/voice/providers/index.js';
import { request } from './http.js';

/** The example appointment agent's variables, as the example site sends them. */
export const appointmentVariables = { customer_name: 'Ann', appointment_day: 'Tuesday' };

/**
 * An account with an API key and the example appointment agent
 * (examples/agents/appointment-confirmation.json), for web call tests.
 */
export async function appointmentAgentAccount(
  service: RunningService,
  options: { name: string; maxLiveCalls: number },
): Promise<{ accountId: string; key: string; agentId: string }> {
  const account = await service.store.accounts.create(options);
  const { key } = await createApiKey(service.store, account.id, 'site');
  const script = JSON.parse(
    readFileSync(resolve(import.meta.dirname, '../../examples/agents/appointment-confirmation.json'), 'utf8'),
  );
  const agent = await createAgent(service.store, account.id, {
    name: 'Dental',
    prompt: 'p',
    script,
    maxDurationS: 60,
    variables: ['customer_name', 'appointment_day'].map(parseVariableDeclaration),
  });
  return { accountId: account.id, key, agentId: agent.id };
}

/** flite kal saying `text`, as an 8 kHz WAV (a visitor's answer for bench/webCallPage.mjs). */
export async function fliteAnswerWav(text = 'yes that works'): Promise<Uint8Array> {
  const flite = await FliteTextToSpeech.start({ defaultVoice: 'kal', logger: createLogger('silent') });
  try {
    const parts: Int16Array[] = [];
    for await (const chunk of flite.synthesize(text)) parts.push(chunk.samples);
    return encodeWav(Int16Array.from(concatSamples(parts)), 8000);
  } finally {
    await flite.close();
  }
}

/** A web call's one-use token from POST /v1/web-calls (the customer's server side). */
export async function appointmentWebCallToken(
  serviceUrl: string,
  key: string,
  agentId: string,
): Promise<string> {
  const made = await request(`${serviceUrl}/v1/web-calls`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json', 'X-API-Key': key },
    body: JSON.stringify({ agent_id: agentId, variables: appointmentVariables }),
  });
  if (made.status !== 200) throw new Error(`POST /v1/web-calls: ${made.status} ${JSON.stringify(made.body)}`);
  return (made.body as { token: string }).token;
}
