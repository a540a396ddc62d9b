import type { FastifyInstance, FastifyRequest } from 'fastify';
import { AppError } from '../domain/errors.js';
import { isIdOf } from '../domain/ids.js';
import type { RecordingStorage } from '../recordings/recordingStorage.js';
import type { Store } from '../store/types.js';
import type { RecordingLinks } from './recordingLinks.js';
import { callIdParamsSchema, errorResponses } from './schemas.js';

export interface RecordingAccess {
  links: RecordingLinks;
  /** Where the recordings are (files here, or PostgreSQL in the scale-out mode). */
  storage: RecordingStorage;
}

const recordingRouteUrl = '/v1/calls/:call_id/recording';

const recordingQuerySchema = {
  type: 'object',
  additionalProperties: false,
  properties: {
    expires: { type: 'string', maxLength: 12, description: 'Unix seconds; part of a signed link.' },
    signature: { type: 'string', maxLength: 100, description: 'HMAC of a signed link.' },
  },
} as const;

interface RecordingRequestParts {
  params: { call_id?: string };
  query: { expires?: string; signature?: string };
}

/**
 * Run before the API-key hook: true when the request is a recording link whose signature is
 * valid (no API key needed), false when it carries no link parameters (the API key decides).
 * A bad signature is 401 and an expired one 403, whatever API key comes with it.
 */
export function signedRecordingRequest(request: FastifyRequest, links: RecordingLinks | null): boolean {
  if (request.routeOptions.url !== recordingRouteUrl) return false;
  const { params, query } = request as unknown as RecordingRequestParts;
  if (query?.expires === undefined && query?.signature === undefined) return false;
  const check = links ? links.check(params.call_id ?? '', query.expires, query.signature) : 'invalid';
  if (check === 'invalid') throw new AppError('unauthorized', 'invalid recording link signature');
  if (check === 'expired') throw new AppError('forbidden', 'the recording link has expired');
  return true;
}

/** `GET /v1/calls/{call_id}/recording`: the WAV, for the API key or a signed link. */
export function registerRecordingRoutes(
  app: FastifyInstance,
  store: Store,
  access: RecordingAccess | null,
): void {
  app.get<{ Params: { call_id: string }; Querystring: { expires?: string; signature?: string } }>(
    '/calls/:call_id/recording',
    {
      schema: {
        summary: "Get a call's recording (extension)",
        description:
          'The stereo WAV (callee left, agent right). Authorised by the API key, or by the signed, expiring ' +
          '`recording_url` of the call.completed event (then no API key is needed). 404 when the call has no recording.',
        operationId: 'getCallRecording',
        tags: ['calls'],
        params: callIdParamsSchema,
        querystring: recordingQuerySchema,
        response: errorResponses(400, 401, 403, 404, 429, 500),
      },
      config: {
        extraResponses: {
          200: {
            description: 'The recording, a stereo 16-bit PCM WAV (callee left, agent right).',
            content: { 'audio/wav': { schema: { type: 'string', contentMediaType: 'audio/wav' } } },
          },
        },
      },
    },
    async (request, reply) => {
      const callId = request.params.call_id;
      const call = !isIdOf('call', callId)
        ? null
        : request.auth
          ? await store.calls.get(request.auth.account.id, callId)
          : await store.calls.getById(callId);
      if (!call) throw new AppError('not_found', `call ${callId.slice(0, 64)} not found`);
      if (call.recordingPath === null || !access) {
        throw new AppError('not_found', `call ${call.id} has no recording`);
      }
      const recording = await access.storage.open(call.recordingPath);
      if (!recording) throw new AppError('not_found', `the recording of call ${call.id} is not available`);
      reply.header('content-type', 'audio/wav');
      reply.header('content-length', String(recording.sizeBytes));
      reply.header('cache-control', 'private, no-store');
      return reply.send(recording.body);
    },
  );
}
