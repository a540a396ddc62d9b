import type { FastifyInstance } from 'fastify';
import { pageByIdDescending } from '../admin/pagination.js';
import type { CallControl } from '../calls/callControl.js';
import { createOutboundCall } from '../calls/createOutboundCall.js';
import { type CallStatus, isTerminal } from '../domain/callStatus.js';
import { AppError } from '../domain/errors.js';
import { isIdOf } from '../domain/ids.js';
import { parseOutboundCallRequest } from '../domain/outboundCallRequest.js';
import type { CallDirection, CallRecord } from '../domain/records.js';
import { toCallResource, toCreatedCall } from '../presentation/callResource.js';
import type { Store } from '../store/types.js';
import { authOf } from './auth.js';
import type { StoreAuthorizedRequests } from './authorizedCreate.js';
import { readJsonBody } from './jsonBody.js';
import type { RecordingLinks } from './recordingLinks.js';
import {
  callIdParamsSchema,
  callListQuerySchema,
  callListSchema,
  callResourceSchema,
  createdCallSchema,
  errorResponses,
  outboundCallRequestSchema,
} from './schemas.js';

/**
 * The calls resource: the specification's one operation and the read extensions. With
 * `oneRoundTrip` (a store that checks and writes a creation in one round trip), the create route
 * authenticates and rate-limits itself in that round trip; otherwise the app's hooks have done so.
 */
export function registerCallRoutes(
  app: FastifyInstance,
  store: Store,
  control: CallControl | null,
  oneRoundTrip: StoreAuthorizedRequests | null = null,
  recordingLinks: RecordingLinks | null = null,
  /** Runs a call's analysis again (src/calls/callReanalysis.ts); null where no voice stack runs. */
  reanalyze: ((accountId: string, callId: string) => Promise<CallRecord>) | null = null,
): void {
  const resourceOf = (call: CallRecord) => toCallResource(call, recordingLinks?.urlFor(call) ?? null);

  app.post(
    '/calls/outbound',
    {
      ...(oneRoundTrip
        ? { errorHandler: (error, request, reply) => oneRoundTrip.handleError(app, error, request, reply) }
        : {}),
      schema: {
        summary: 'Queue an outbound AI call',
        description:
          'Authenticates, rate-limits, validates and durably queues a call; answers at once with its call_id. ' +
          'Each successful request creates a new call: there is no de-duplication.',
        operationId: 'createOutboundCall',
        tags: ['calls'],
        response: { 200: createdCallSchema, ...errorResponses(400, 401, 404, 422, 429, 500) },
      },
      config: { requestBody: outboundCallRequestSchema, authorizesInStore: oneRoundTrip !== null },
    },
    async (request, reply) => {
      if (oneRoundTrip) {
        const call = await oneRoundTrip.handle(request, reply);
        control?.wake();
        return toCreatedCall(call);
      }
      const caller = authOf(request);
      const body = readJsonBody(request);
      const outbound = parseOutboundCallRequest(body);
      const call = await createOutboundCall(store, caller, outbound);
      control?.wake();
      return toCreatedCall(call);
    },
  );

  app.get<{ Params: { call_id: string } }>(
    '/calls/:call_id',
    {
      schema: {
        summary: 'Get a call (extension)',
        operationId: 'getCall',
        tags: ['calls'],
        params: callIdParamsSchema,
        response: { 200: callResourceSchema, ...errorResponses(400, 401, 404, 429, 500) },
      },
    },
    async (request) => {
      const caller = authOf(request);
      const callId = request.params.call_id;
      const call = isIdOf('call', callId) ? await store.calls.get(caller.account.id, callId) : null;
      if (!call) throw new AppError('not_found', `call ${callId.slice(0, 64)} not found`);
      return resourceOf(call);
    },
  );

  app.get<{
    Querystring: { limit: number; status?: CallStatus; direction?: CallDirection; cursor?: string };
  }>(
    '/calls',
    {
      schema: {
        summary: 'List calls, newest first (extension)',
        operationId: 'listCalls',
        tags: ['calls'],
        querystring: callListQuerySchema,
        response: { 200: callListSchema, ...errorResponses(400, 401, 429, 500) },
      },
    },
    async (request) => {
      const caller = authOf(request);
      const { limit, status, direction, cursor } = request.query;
      return pageByIdDescending(
        'call',
        { limit, cursor },
        (query) =>
          direction
            ? store.inboundCalls.list(caller.account.id, {
                ...query,
                direction,
                ...(status ? { status } : {}),
              })
            : store.calls.list(caller.account.id, { ...query, ...(status ? { status } : {}) }),
        (calls) => calls.map(resourceOf),
      );
    },
  );

  app.post<{ Params: { call_id: string } }>(
    '/calls/:call_id/cancel',
    {
      schema: {
        summary: 'Cancel a queued call or hang up a live one (extension)',
        description:
          'A queued call ends as `canceled` at once; a live call is cancelled or hung up and the record is ' +
          'returned once it has ended. A call that has already ended gives 409 `conflict`.',
        operationId: 'cancelCall',
        tags: ['calls'],
        params: callIdParamsSchema,
        response: { 200: callResourceSchema, ...errorResponses(400, 401, 404, 409, 429, 500, 503) },
      },
    },
    async (request) => {
      const caller = authOf(request);
      const callId = request.params.call_id;
      const call = isIdOf('call', callId) ? await store.calls.get(caller.account.id, callId) : null;
      if (!call) throw new AppError('not_found', `call ${callId.slice(0, 64)} not found`);
      if (isTerminal(call.status))
        throw new AppError('conflict', `call ${call.id} has already ended (${call.status})`);
      if (!control) throw new AppError('unavailable', 'this process does not place calls');
      const ended = (await control.cancel(call)) ?? (await store.calls.get(caller.account.id, callId));
      if (!ended) throw new AppError('not_found', `call ${callId.slice(0, 64)} not found`);
      return resourceOf(ended);
    },
  );

  app.post<{ Params: { call_id: string } }>(
    '/calls/:call_id/analysis',
    {
      schema: {
        summary: "Run an ended call's analysis again (extension)",
        description:
          'Re-runs the post-call analysis (extracted_data, summary, success) of an ended, answered call ' +
          "with its agent's current `settings.analysis` and extraction fields, stores the result in " +
          'place of the old one and returns the call. A failed analysis is stored and returned with ' +
          '`analysis.status: failed` and its reason. No webhook is sent: `call.completed` was the ' +
          "call's one completion event. 404 for a call of another account; 409 `conflict` for a call " +
          'that has not ended or was never answered, or whose agent was deleted.',
        operationId: 'reanalyzeCall',
        tags: ['calls'],
        params: callIdParamsSchema,
        response: { 200: callResourceSchema, ...errorResponses(400, 401, 404, 409, 429, 500, 503) },
      },
    },
    async (request) => {
      const caller = authOf(request);
      const callId = request.params.call_id;
      if (!isIdOf('call', callId)) throw new AppError('not_found', `call ${callId.slice(0, 64)} not found`);
      if (!reanalyze) throw new AppError('unavailable', 'this process does not run the voice stack');
      return resourceOf(await reanalyze(caller.account.id, callId));
    },
  );
}
