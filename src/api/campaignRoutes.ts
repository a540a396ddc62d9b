import type { FastifyInstance, FastifyRequest } from 'fastify';
import { pageByIdDescending } from '../admin/pagination.js';
import {
  campaignOf,
  campaignResource,
  campaignResources,
  changeCampaign,
  describeContacts,
} from '../campaigns/campaignControl.js';
import { createCampaign } from '../campaigns/createCampaign.js';
import { parseCampaignCsv } from '../domain/campaignCsv.js';
import {
  attemptOutcomes,
  callerIdSelections,
  campaignLimits,
  campaignStatuses,
  contactStates,
  retryableOutcomes,
} from '../domain/campaigns.js';
import { campaignStatusReasons, waitingReasons } from '../domain/campaignWaits.js';
import { AppError } from '../domain/errors.js';
import { isIdOf } from '../domain/ids.js';
import { isPlainObject } from '../domain/outboundCallRequest.js';
import type { Logger } from '../logger.js';
import type { Store } from '../store/types.js';
import { authOf } from './auth.js';
import {
  callerIdStatusSchema,
  campaignRuleProperties,
  campaignRuleRequestProperties,
  contactPrioritySchema,
} from './campaignRuleSchemas.js';
import { readJsonBody } from './jsonBody.js';
import { batchErrorSchema, errorResponses, pageQuerySchema, pageSchema } from './schemas.js';

const tags = ['campaigns'];
const nullableTime = { type: ['string', 'null'], format: 'date-time' } as const;
const windowSchema = {
  type: 'object',
  required: ['start', 'end'],
  properties: {
    start: { type: 'string', examples: ['09:00'], description: 'Local time HH:MM in the callee zone' },
    end: {
      type: 'string',
      examples: ['17:00'],
      description: 'Local time HH:MM (exclusive); before start runs past midnight',
    },
    weekdays: {
      type: 'array',
      items: { type: 'integer', minimum: 1, maximum: 7 },
      description: 'ISO weekdays, 1 = Monday; default all',
    },
  },
} as const;
const retrySchema = {
  type: 'object',
  description:
    'Per outcome: retry after `after_minutes`, up to `max_attempts` attempts in all (the first included).',
  properties: Object.fromEntries(
    retryableOutcomes.map((outcome) => [
      outcome,
      {
        type: 'object',
        required: ['after_minutes', 'max_attempts'],
        properties: {
          after_minutes: { type: 'integer', minimum: 1, maximum: campaignLimits.retryAfterMinutesMax },
          max_attempts: { type: 'integer', minimum: 1, maximum: campaignLimits.attemptsMax },
        },
      },
    ]),
  ),
} as const;
const countsSchema = (names: readonly string[]) => ({
  type: 'object',
  properties: Object.fromEntries(names.map((name) => [name, { type: 'integer' }])),
});

export const campaignSchema = {
  type: 'object',
  required: ['campaign_id', 'status', 'agent_id', 'contact_count', 'progress', 'created_at'],
  properties: {
    campaign_id: { type: 'string', examples: ['cmp_01JF3Z8V0Q4T7N5W2X9Y6B1C3D'] },
    name: { type: 'string' },
    status: { type: 'string', enum: [...campaignStatuses] },
    status_reason: {
      type: ['string', 'null'],
      enum: [...campaignStatusReasons, null],
      description:
        'Why a paused campaign is paused: `requested`, or `api_key_revoked` (resume it with a valid key).',
    },
    agent_id: { type: 'string' },
    caller_ids: { type: 'array', items: { type: 'string' } },
    caller_id_selection: { type: 'string', enum: [...callerIdSelections] },
    calling_window: windowSchema,
    time_zone: { type: 'string' },
    max_concurrency: { type: 'integer' },
    calls_per_minute: { type: 'integer' },
    max_daily_attempts: { type: 'integer' },
    ...campaignRuleProperties,
    caller_id_status: callerIdStatusSchema,
    retry: retrySchema,
    starts_at: nullableTime,
    ends_at: nullableTime,
    contact_count: { type: 'integer' },
    created_at: { type: 'string', format: 'date-time' },
    completed_at: nullableTime,
    progress: {
      type: 'object',
      description: 'Contacts by state, and by the outcome of their latest attempt',
      properties: {
        ...countsSchema(contactStates).properties,
        outcomes: countsSchema(attemptOutcomes),
      },
    },
  },
} as const;

export const contactRequestSchema = {
  type: 'object',
  required: ['to_number'],
  properties: {
    to_number: { type: 'string', examples: ['+14155550123'] },
    variables: { type: 'object', additionalProperties: { type: ['string', 'number', 'boolean'] } },
    first_message: { type: 'string' },
    context: { type: 'string' },
    time_zone: { type: 'string', description: 'IANA zone; default: from the number, else the campaign zone' },
    priority: contactPrioritySchema,
  },
} as const;

export const campaignRequestSchema = {
  type: 'object',
  required: ['agent_id', 'contacts', 'calling_window', 'time_zone'],
  properties: {
    name: { type: 'string', maxLength: campaignLimits.nameMaxChars },
    agent_id: { type: 'string' },
    from_number: { type: 'string', description: 'The caller ID; or give a pool as caller_ids' },
    caller_ids: { type: 'array', items: { type: 'string' }, maxItems: campaignLimits.callerIdsMax },
    caller_id_selection: { type: 'string', enum: [...callerIdSelections] },
    contacts: {
      type: 'array',
      items: contactRequestSchema,
      minItems: 1,
      maxItems: campaignLimits.contactsMax,
    },
    calling_window: windowSchema,
    time_zone: {
      type: 'string',
      examples: ['America/New_York'],
      description: 'The zone of contacts whose own is unknown',
    },
    max_concurrency: { type: 'integer', minimum: 1, maximum: campaignLimits.maxConcurrencyMax, default: 1 },
    calls_per_minute: { type: 'integer', minimum: 1, maximum: campaignLimits.callsPerMinuteMax, default: 10 },
    max_daily_attempts: {
      type: 'integer',
      minimum: 1,
      maximum: campaignLimits.maxDailyAttemptsMax,
      default: 3,
      description: "Calls to one number in any 24 h, counting the account's other campaigns and single calls",
    },
    ...campaignRuleRequestProperties,
    retry: retrySchema,
    starts_at: { type: 'string', format: 'date-time' },
    ends_at: { type: 'string', format: 'date-time' },
  },
} as const;

const contactSchema = {
  type: 'object',
  required: ['contact_id', 'position', 'to_number', 'state', 'attempts', 'calls'],
  properties: {
    contact_id: { type: 'string' },
    position: { type: 'integer' },
    priority: { type: 'integer' },
    to_number: { type: 'string' },
    state: { type: 'string', enum: [...contactStates] },
    attempts: { type: 'integer' },
    last_outcome: { type: ['string', 'null'], enum: [...attemptOutcomes, null] },
    next_attempt_at: nullableTime,
    waiting_reason: {
      type: ['string', 'null'],
      enum: [...waitingReasons, null],
      description:
        'Why a contact not on a call waits (null once on a call or finished): window, holiday, daily_cap, hourly_cap, retry, paused, ' +
        'starts_at, concurrency, pace, or for a queued call quiet_hours, dial_rate, account_live_calls, dispatch.',
    },
    time_zones: { type: 'array', items: { type: 'string' } },
    calls: {
      type: 'array',
      items: {
        type: 'object',
        properties: {
          attempt: { type: 'integer' },
          call_id: { type: 'string' },
          created_at: { type: 'string', format: 'date-time' },
          status: { type: ['string', 'null'] },
          end_reason: { type: ['string', 'null'] },
          answered_by: { type: ['string', 'null'] },
        },
      },
    },
  },
} as const;

export const campaignIdParams = {
  type: 'object',
  required: ['campaign_id'],
  properties: { campaign_id: { type: 'string', maxLength: 64 } },
} as const;

export function campaignIdOf(value: string): string {
  if (!isIdOf('campaign', value)) throw new AppError('not_found', `campaign ${value.slice(0, 64)} not found`);
  return value;
}

/** Whether the body is a CSV file (`text/csv`, a charset parameter allowed). */
export function isCsvRequest(request: FastifyRequest): boolean {
  const contentType = request.headers['content-type'];
  return typeof contentType === 'string' && contentType.split(';')[0]?.trim().toLowerCase() === 'text/csv';
}

/** A CSV request's settings: the `settings` query parameter, one JSON object. */
function settingsFromQuery(query: unknown): unknown {
  const text = isPlainObject(query) ? query.settings : undefined;
  if (typeof text !== 'string' || text.length === 0)
    throw new AppError(
      'validation_error',
      'settings (the campaign settings as JSON, in the query string) is required with a text/csv body',
    );
  try {
    return JSON.parse(text);
  } catch {
    throw new AppError('validation_error', 'settings is not valid JSON');
  }
}

/** Campaigns: batch calling with windows, pacing and retries (docs/campaigns.md). */
export function registerCampaignRoutes(app: FastifyInstance, store: Store, logger: Logger): void {
  app.post(
    '/campaigns',
    {
      bodyLimit: campaignLimits.bodyBytesMax,
      schema: {
        summary: 'Create a campaign: contacts called within their local calling window (extension)',
        description:
          'Every contact is checked as a single call would be; one bad contact and nothing is created — the 400 lists each bad row in `error.rows`.',
        operationId: 'createCampaign',
        tags,
        querystring: {
          type: 'object',
          properties: {
            settings: {
              type: 'string',
              description:
                'With a `text/csv` body: the settings (everything but `contacts`) as one JSON object',
            },
          },
        },
        response: {
          201: campaignSchema,
          400: batchErrorSchema(),
          ...errorResponses(401, 404, 422, 429, 500),
        },
      },
      config: {
        requestBody: campaignRequestSchema,
        requestBodyAlternatives: {
          'text/csv': {
            type: 'string',
            description:
              'The contacts as the CLI reads them (header `to_number[,first_message,context,time_zone,VARIABLE…]`, UTF-8, ' +
              'at most 32 MiB); the settings as JSON in the `settings` query parameter. Bad rows are named by `line`.',
            examples: ['to_number,customer_name\n+12125550100,Ann\n'],
          },
        },
      },
    },
    async (request, reply) => {
      const caller = authOf(request);
      const owner = { account: caller.account, apiKeyId: caller.apiKeyId };
      let campaign: Awaited<ReturnType<typeof createCampaign>>;
      if (isCsvRequest(request)) {
        // CSV over HTTP: the same parser, checks and line-numbered report as the command line.
        const raw = Buffer.isBuffer(request.body) ? request.body : Buffer.alloc(0);
        campaign = await createCampaign(store, owner, settingsFromQuery(request.query), {
          kind: 'csv',
          file: await parseCampaignCsv(raw),
        });
      } else {
        const body = readJsonBody(request);
        if (!isPlainObject(body))
          throw new AppError('validation_error', 'request body must be a JSON object');
        const { contacts, ...settings } = body;
        campaign = await createCampaign(store, owner, settings, { kind: 'json', contacts });
      }
      request.log.info({ campaignId: campaign.id, contacts: campaign.contactCount }, 'campaign created');
      return reply.code(201).send(await campaignResource(store, campaign));
    },
  );

  app.get<{ Querystring: { limit: number; cursor?: string } }>(
    '/campaigns',
    {
      schema: {
        summary: 'List campaigns, newest first (extension)',
        operationId: 'listCampaigns',
        tags,
        querystring: pageQuerySchema,
        response: {
          200: pageSchema(campaignSchema),
          ...errorResponses(400, 401, 429, 500),
        },
      },
    },
    async (request) => {
      const { limit, cursor } = request.query;
      const accountId = authOf(request).account.id;
      return pageByIdDescending(
        'campaign',
        { limit, cursor },
        (query) => store.campaigns.list(accountId, query),
        (campaigns) => campaignResources(store, campaigns),
      );
    },
  );

  app.get<{ Params: { campaign_id: string } }>(
    '/campaigns/:campaign_id',
    {
      schema: {
        summary: 'Read a campaign with its progress (extension)',
        operationId: 'getCampaign',
        tags,
        params: campaignIdParams,
        response: { 200: campaignSchema, ...errorResponses(401, 404, 429, 500) },
      },
    },
    async (request) => {
      const id = campaignIdOf(request.params.campaign_id);
      return campaignResource(store, await campaignOf(store, authOf(request).account.id, id));
    },
  );

  for (const action of ['pause', 'resume', 'cancel'] as const) {
    app.post<{ Params: { campaign_id: string } }>(
      `/campaigns/:campaign_id/${action}`,
      {
        schema: {
          summary: {
            pause: 'Pause a campaign: no new attempts (calls already placed go on) (extension)',
            resume: 'Resume a paused campaign (extension)',
            cancel: 'Cancel a campaign: no new attempts, queued calls canceled (extension)',
          }[action],
          operationId: `${action}Campaign`,
          tags,
          params: campaignIdParams,
          response: { 200: campaignSchema, ...errorResponses(401, 404, 409, 429, 500) },
        },
      },
      async (request) => {
        const caller = authOf(request);
        const id = campaignIdOf(request.params.campaign_id);
        const campaign = await changeCampaign(store, caller.account.id, id, action, {
          apiKeyId: caller.apiKeyId,
          logger,
        });
        request.log.info({ campaignId: id, action }, 'campaign changed');
        return campaignResource(store, campaign);
      },
    );
  }

  app.get<{
    Params: { campaign_id: string };
    Querystring: { limit: number; after?: number; state?: string };
  }>(
    '/campaigns/:campaign_id/contacts',
    {
      schema: {
        summary: "A campaign's contacts in list order, each with its attempts and their calls (extension)",
        operationId: 'listCampaignContacts',
        tags,
        params: campaignIdParams,
        querystring: {
          type: 'object',
          additionalProperties: false,
          properties: {
            limit: { type: 'integer', minimum: 1, maximum: 500, default: 100 },
            after: { type: 'integer', minimum: -1, description: 'next_after of the previous page' },
            state: { type: 'string', enum: [...contactStates] },
          },
        },
        response: {
          200: {
            type: 'object',
            required: ['data', 'next_after'],
            properties: {
              data: { type: 'array', items: contactSchema },
              next_after: { type: ['integer', 'null'] },
            },
          },
          ...errorResponses(400, 401, 404, 429, 500),
        },
      },
    },
    async (request) => {
      const accountId = authOf(request).account.id;
      const campaign = await campaignOf(store, accountId, campaignIdOf(request.params.campaign_id));
      const { limit, after, state } = request.query;
      const rows = await store.campaigns.listContacts(campaign.id, {
        limit: limit + 1,
        ...(after !== undefined ? { afterPosition: after } : {}),
        ...(state ? { state: state as (typeof contactStates)[number] } : {}),
      });
      const page = rows.slice(0, limit);
      return {
        data: await describeContacts(store, campaign, page),
        next_after: rows.length > limit ? (page.at(-1)?.position ?? null) : null,
      };
    },
  );
}
