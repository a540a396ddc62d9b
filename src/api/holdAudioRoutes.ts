import type { FastifyInstance } from 'fastify';
import { holdAudioFileLimits, holdAudioFromWav } from '../calls/holdAudioFile.js';
import { AppError } from '../domain/errors.js';
import type { Store } from '../store/types.js';
import { authOf } from './auth.js';
import { errorResponses } from './schemas.js';

const params = {
  type: 'object',
  required: ['agent_id'],
  properties: { agent_id: { type: 'string', maxLength: 100 } },
} as const;

const holdAudioSchema = {
  type: 'object',
  required: ['agent_id', 'duration_ms'],
  properties: { agent_id: { type: 'string' }, duration_ms: { type: 'integer' } },
} as const;

/**
 * An agent's own hold audio (extension, issue 35): `PUT` a WAV as the body (`Content-Type:
 * audio/wav`), played in a loop to the callee during a transfer when the agent's
 * `settings.transfer.hold_audio` is `"file"`; `DELETE` forgets it (the tone plays instead).
 */
export function registerHoldAudioRoutes(app: FastifyInstance, store: Store): void {
  const tags = ['agents'];
  app.put<{ Params: { agent_id: string } }>(
    '/agents/:agent_id/hold_audio',
    {
      bodyLimit: holdAudioFileLimits.bodyBytesMax,
      schema: {
        summary: "Upload an agent's hold audio: a WAV played to the callee during transfers (extension)",
        description:
          'The body is the WAV itself (Content-Type: audio/wav): 16-bit PCM, mono or stereo, 8–48 kHz, 0.5–30 s, at most 2 MiB. It is converted to 8 kHz G.711 and replaces any earlier file.',
        operationId: 'putAgentHoldAudio',
        tags,
        params,
        response: { 200: holdAudioSchema, ...errorResponses(400, 401, 404, 429, 500) },
      },
    },
    async (request) => {
      const accountId = authOf(request).account.id;
      const contentType = String(request.headers['content-type'] ?? '')
        .split(';')[0]
        ?.trim()
        .toLowerCase();
      if (contentType !== 'audio/wav' && contentType !== 'audio/x-wav' && contentType !== 'audio/wave')
        throw new AppError('validation_error', 'Content-Type must be audio/wav, the body a WAV file');
      const agent = await store.agents.get(accountId, request.params.agent_id);
      if (!agent) throw new AppError('not_found', 'no such agent in this account');
      const raw = Buffer.isBuffer(request.body) ? request.body : Buffer.alloc(0);
      const audio = holdAudioFromWav(raw);
      await store.holdAudio.put(accountId, agent.id, audio, new Date().toISOString());
      request.log.info({ agentId: agent.id, durationMs: audio.durationMs }, 'hold audio uploaded');
      return { agent_id: agent.id, duration_ms: audio.durationMs };
    },
  );

  app.delete<{ Params: { agent_id: string } }>(
    '/agents/:agent_id/hold_audio',
    {
      schema: {
        summary: "Forget an agent's hold audio: transfers play the tone again (extension)",
        operationId: 'deleteAgentHoldAudio',
        tags,
        params,
        response: {
          200: { type: 'object', required: ['agent_id'], properties: { agent_id: { type: 'string' } } },
          ...errorResponses(401, 404, 429, 500),
        },
      },
    },
    async (request) => {
      const accountId = authOf(request).account.id;
      if (!(await store.holdAudio.remove(accountId, request.params.agent_id)))
        throw new AppError('not_found', 'this agent has no hold audio');
      return { agent_id: request.params.agent_id };
    },
  );
}
