import { Readable } from 'node:stream';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { campaignOf } from '../campaigns/campaignControl.js';
import { campaignFigures, campaignResultChunks } from '../campaigns/campaignResults.js';
import {
  type ResultFormat,
  resultColumns,
  resultFormats,
  resultMediaTypes,
} from '../domain/campaignResults.js';
import { AppError } from '../domain/errors.js';
import type { Store } from '../store/types.js';
import { authOf } from './auth.js';
import { campaignIdOf, campaignIdParams } from './campaignRoutes.js';
import { errorResponses } from './schemas.js';

const tags = ['campaigns'];

const nullableNumber = { type: ['number', 'null'] } as const;
const figuresSchema = {
  type: 'object',
  required: ['attempts', 'connected_minutes', 'cost_usd', 'answer_rate', 'voicemail_rate', 'success_rate'],
  properties: {
    attempts: { type: 'integer', description: 'Calls that rang out and finished' },
    connected_minutes: { type: 'number', description: 'Answer to hang-up, summed' },
    cost_usd: { type: 'number' },
    answered: { type: 'integer' },
    voicemail: { type: 'integer' },
    succeeded: { type: 'integer' },
    answer_rate: { ...nullableNumber, description: 'answered / attempts; null without attempts' },
    voicemail_rate: { ...nullableNumber, description: 'voicemail / attempts' },
    success_rate: { ...nullableNumber, description: 'succeeded (post-call analysis) / answered' },
  },
} as const;

const campaignFiguresSchema = {
  type: 'object',
  required: ['campaign_id', 'overall', 'by_caller_id', 'by_local_hour'],
  properties: {
    campaign_id: { type: 'string' },
    overall: figuresSchema,
    by_caller_id: {
      type: 'array',
      items: {
        type: 'object',
        properties: { caller_id: { type: 'string' }, ...figuresSchema.properties },
      },
    },
    by_local_hour: {
      type: 'array',
      description: "Hours of the callee's local day (0–23) with attempts, in order",
      items: {
        type: 'object',
        properties: { local_hour: { type: 'integer', minimum: 0, maximum: 23 }, ...figuresSchema.properties },
      },
    },
  },
} as const;

/** `?format=` wins; else the Accept header (`text/csv` or `application/jsonl`); else CSV. */
function formatOf(request: FastifyRequest<{ Querystring: { format?: string } }>): ResultFormat {
  const asked = request.query.format;
  if (asked !== undefined) {
    if (!(resultFormats as readonly string[]).includes(asked))
      throw new AppError('validation_error', 'format must be csv or jsonl');
    return asked as ResultFormat;
  }
  const accept = String(request.headers.accept ?? '').toLowerCase();
  if (/application\/(jsonl|x-ndjson|x-jsonlines)/.test(accept) && !accept.includes('text/csv'))
    return 'jsonl';
  return 'csv';
}

/** The results export and the figures of a campaign (docs/campaigns.md). */
export function registerCampaignResultRoutes(app: FastifyInstance, store: Store): void {
  app.get<{ Params: { campaign_id: string }; Querystring: { format?: string } }>(
    '/campaigns/:campaign_id/results',
    {
      schema: {
        summary: "Export a campaign's results, one row per contact, as CSV or JSON Lines (extension)",
        description:
          'Streamed in list order. `format=csv|jsonl`, or `Accept: text/csv` / `application/jsonl` (default CSV). ' +
          `Columns: ${resultColumns.join(', ')}. \`status\` is the contact's state, or \`removed\`. ` +
          "CSV cells that begin with `=`, `+`, `-`, `@`, a tab or a carriage return get a leading `'` (OWASP CSV injection); " +
          '`extracted_data` is a JSON text in its cell.',
        operationId: 'exportCampaignResults',
        tags,
        params: campaignIdParams,
        querystring: {
          type: 'object',
          additionalProperties: false,
          properties: { format: { type: 'string', enum: [...resultFormats] } },
        },
        response: errorResponses(400, 401, 404, 429, 500),
      },
      config: {
        extraResponses: {
          200: {
            description: 'The results: a CSV file with a header line, or one JSON object per line.',
            content: {
              'text/csv': { schema: { type: 'string' } },
              'application/jsonl': { schema: { type: 'string' } },
            },
          },
        },
      },
    },
    async (request, reply) => {
      const accountId = authOf(request).account.id;
      const format = formatOf(request);
      const campaign = await campaignOf(store, accountId, campaignIdOf(request.params.campaign_id));
      request.log.info({ campaignId: campaign.id, format }, 'campaign results exported');
      reply.header('content-type', resultMediaTypes[format]);
      reply.header(
        'content-disposition',
        `attachment; filename="${campaign.id}-results.${format === 'csv' ? 'csv' : 'jsonl'}"`,
      );
      reply.header('cache-control', 'private, no-store');
      return reply.send(Readable.from(campaignResultChunks(store, campaign, format)));
    },
  );

  app.get<{ Params: { campaign_id: string } }>(
    '/campaigns/:campaign_id/figures',
    {
      schema: {
        summary:
          "A campaign's figures: attempts, minutes, cost, answer, voicemail and success rates (extension)",
        description:
          "Overall, per caller ID and per hour of the callee's local day; kept as calls finish, so reading them " +
          'costs the same for 10 contacts or 100,000.',
        operationId: 'getCampaignFigures',
        tags,
        params: campaignIdParams,
        response: { 200: campaignFiguresSchema, ...errorResponses(401, 404, 429, 500) },
      },
    },
    async (request) => {
      const accountId = authOf(request).account.id;
      const campaign = await campaignOf(store, accountId, campaignIdOf(request.params.campaign_id));
      return campaignFigures(store, campaign);
    },
  );
}
