import type { FastifyInstance } from 'fastify';
import { pageByIdDescending } from '../admin/pagination.js';
import { AppError } from '../domain/errors.js';
import { isPlainObject } from '../domain/outboundCallRequest.js';
import { describeAuditEntry, eraseNumber, retentionDaysMax } from '../privacy/dataRules.js';
import type { RecordingStorage } from '../recordings/recordingStorage.js';
import type { Store } from '../store/types.js';
import { authOf } from './auth.js';
import { readJsonBody } from './jsonBody.js';
import { errorResponses, pageQuerySchema, pageSchema } from './schemas.js';

const tags = ['data protection'];
const retentionSchema = {
  type: 'object',
  required: ['retention_days'],
  properties: {
    retention_days: {
      type: ['integer', 'null'],
      description: 'Days a call keeps its transcript and recording after it ends; null keeps them',
    },
  },
} as const;
const auditSchema = {
  type: 'object',
  required: ['audit_id', 'action', 'actor', 'subject', 'created_at'],
  properties: {
    audit_id: { type: 'string' },
    action: { type: 'string', examples: ['erase_number'] },
    actor: { type: 'string', examples: ['api_key:key_01JF3Z8V0Q4T7N5W2X9Y6B1C3D'] },
    subject: {
      type: 'string',
      description: 'The number, masked (erase_number), or the campaign (campaign_edit)',
      examples: ['+1415*****23'],
    },
    detail: { type: 'object', additionalProperties: true },
    created_at: { type: 'string', format: 'date-time' },
  },
} as const;

/** Retention, erasure of a number, and the audit log of what was erased. */
export function registerPrivacyRoutes(
  app: FastifyInstance,
  store: Store,
  recordings: RecordingStorage | null,
): void {
  app.post(
    '/erasures',
    {
      schema: {
        summary: 'Erase everything stored about one phone number (extension)',
        description:
          "Its calls (with transcripts, recordings, events and delivery attempts) and campaign contacts; an audit entry names the number masked. 409 while a call to it is queued or live. The number's do-not-call entry stays.",
        operationId: 'eraseNumber',
        tags,
        response: {
          200: {
            type: 'object',
            required: [
              'calls_erased',
              'recordings_erased',
              'campaign_contacts_erased',
              'audit_id',
              'erased_at',
            ],
            properties: {
              calls_erased: { type: 'integer' },
              recordings_erased: { type: 'integer' },
              campaign_contacts_erased: { type: 'integer' },
              audit_id: { type: 'string' },
              erased_at: { type: 'string', format: 'date-time' },
            },
          },
          ...errorResponses(400, 401, 409, 422, 429, 500),
        },
      },
      config: {
        requestBody: {
          type: 'object',
          required: ['number'],
          properties: { number: { type: 'string', examples: ['+14155550123'] } },
        },
      },
    },
    async (request) => {
      const caller = authOf(request);
      const body = readJsonBody(request);
      if (!isPlainObject(body) || typeof body.number !== 'string' || Object.keys(body).length !== 1)
        throw new AppError('validation_error', 'the body must be {"number": "+E164"}');
      const result = await eraseNumber(
        store,
        recordings,
        caller.account.id,
        body.number,
        `api_key:${caller.apiKeyId}`,
      );
      request.log.info({ auditId: result.audit_id, calls: result.calls_erased }, 'a number was erased');
      return result;
    },
  );

  app.get<{ Querystring: { limit: number; cursor?: string } }>(
    '/audit-log',
    {
      schema: {
        summary: 'What was erased, when and by whom, newest first (extension)',
        operationId: 'listAuditLog',
        tags,
        querystring: pageQuerySchema,
        response: {
          200: pageSchema(auditSchema),
          ...errorResponses(400, 401, 429, 500),
        },
      },
    },
    async (request) => {
      const { limit, cursor } = request.query;
      const accountId = authOf(request).account.id;
      return pageByIdDescending(
        'audit',
        { limit, cursor },
        (query) => store.privacy.listAudit(accountId, query),
        (entries) => entries.map(describeAuditEntry),
      );
    },
  );

  app.get(
    '/retention',
    {
      schema: {
        summary: "The account's retention rule for transcripts and recordings (extension)",
        operationId: 'getRetention',
        tags,
        response: { 200: retentionSchema, ...errorResponses(401, 429, 500) },
      },
    },
    async (request) => ({ retention_days: await store.privacy.retentionDays(authOf(request).account.id) }),
  );

  app.put(
    '/retention',
    {
      schema: {
        summary: 'Set how long calls keep their transcripts and recordings (extension)',
        description:
          'After that many days from its end a call keeps its record (status, times, outcome) but not its transcript or recording. Null keeps them.',
        operationId: 'setRetention',
        tags,
        response: { 200: retentionSchema, ...errorResponses(400, 401, 429, 500) },
      },
      config: { requestBody: retentionSchema },
    },
    async (request) => {
      const accountId = authOf(request).account.id;
      const body = readJsonBody(request);
      const days = isPlainObject(body) ? body.retention_days : undefined;
      if (
        !isPlainObject(body) ||
        Object.keys(body).length !== 1 ||
        !(
          days === null ||
          (Number.isInteger(days) && (days as number) >= 1 && (days as number) <= retentionDaysMax)
        )
      )
        throw new AppError(
          'validation_error',
          `the body must be {"retention_days": 1 to ${retentionDaysMax}, or null}`,
        );
      await store.privacy.setRetentionDays(accountId, days as number | null, new Date().toISOString());
      request.log.info({ retentionDays: days }, 'retention rule set');
      return { retention_days: days as number | null };
    },
  );
}
