import type { FastifyInstance } from 'fastify';
import { addCampaignContacts, removeCampaignContacts } from '../campaigns/campaignContactChanges.js';
import { campaignResource } from '../campaigns/campaignControl.js';
import type { CampaignContactsSource } from '../campaigns/createCampaign.js';
import { parseCampaignCsv } from '../domain/campaignCsv.js';
import { campaignLimits } from '../domain/campaigns.js';
import { AppError } from '../domain/errors.js';
import { isPlainObject } from '../domain/outboundCallRequest.js';
import type { Store } from '../store/types.js';
import { authOf } from './auth.js';
import {
  campaignIdOf,
  campaignIdParams,
  campaignSchema,
  contactRequestSchema,
  isCsvRequest,
} from './campaignRoutes.js';
import { readJsonBody } from './jsonBody.js';
import { batchErrorSchema, errorResponses } from './schemas.js';

const tags = ['campaigns'];

/** Live contact edits of a running or paused campaign (docs/campaigns.md, "Live edits"). */
export function registerCampaignContactRoutes(app: FastifyInstance, store: Store): void {
  app.post<{ Params: { campaign_id: string } }>(
    '/campaigns/:campaign_id/contacts',
    {
      bodyLimit: campaignLimits.bodyBytesMax,
      schema: {
        summary: 'Add contacts to a running or paused campaign (extension)',
        description:
          'Checked as at creation (one bad row and nothing is added; the 400 lists each bad row by `index` or `line`), ' +
          'including numbers the campaign already has; at most 100,000 contacts per campaign. Due from the next claim; ' +
          'audited (`campaign_contacts_added`). 409 for a canceled or completed campaign.',
        operationId: 'addCampaignContacts',
        tags,
        params: campaignIdParams,
        response: {
          200: {
            type: 'object',
            required: ['added', 'first_position', 'campaign'],
            properties: {
              added: { type: 'integer' },
              first_position: {
                type: 'integer',
                description: 'The list position of the first contact added',
              },
              campaign: campaignSchema,
            },
          },
          400: batchErrorSchema(),
          ...errorResponses(401, 404, 409, 422, 429, 500),
        },
      },
      config: {
        requestBody: {
          type: 'object',
          required: ['contacts'],
          additionalProperties: false,
          properties: {
            contacts: {
              type: 'array',
              items: contactRequestSchema,
              minItems: 1,
              maxItems: campaignLimits.contactsMax,
            },
          },
        },
        requestBodyAlternatives: {
          'text/csv': {
            type: 'string',
            description:
              'The contacts as at creation: header `to_number[,first_message,context,time_zone,VARIABLE…]`.',
            examples: ['to_number,customer_name\n+12125550101,Bea\n'],
          },
        },
      },
    },
    async (request) => {
      const caller = authOf(request);
      const id = campaignIdOf(request.params.campaign_id);
      let source: CampaignContactsSource;
      if (isCsvRequest(request)) {
        const raw = Buffer.isBuffer(request.body) ? request.body : Buffer.alloc(0);
        source = { kind: 'csv', file: await parseCampaignCsv(raw) };
      } else {
        const body = readJsonBody(request);
        if (!isPlainObject(body))
          throw new AppError('validation_error', 'request body must be a JSON object');
        const extra = Object.keys(body).find((key) => key !== 'contacts');
        if (extra) throw new AppError('validation_error', `${extra} is not a field here; send contacts only`);
        source = { kind: 'json', contacts: body.contacts };
      }
      const { campaign, added, firstPosition } = await addCampaignContacts(
        store,
        caller.account.id,
        id,
        source,
        `api_key:${caller.apiKeyId}`,
      );
      request.log.info({ campaignId: id, added }, 'campaign contacts added');
      return { added, first_position: firstPosition, campaign: await campaignResource(store, campaign) };
    },
  );

  app.post<{ Params: { campaign_id: string } }>(
    '/campaigns/:campaign_id/contacts/remove',
    {
      schema: {
        summary: 'Remove contacts from a running or paused campaign, by id or number (extension)',
        description:
          'A waiting contact ends as `canceled` and is never dialled; one on a call is not interrupted and ends as ' +
          '`canceled` when its call ends (never retried). Audited (`campaign_contacts_removed`).',
        operationId: 'removeCampaignContacts',
        tags,
        params: campaignIdParams,
        response: {
          200: {
            type: 'object',
            required: [
              'removed',
              'on_call',
              'unmatched',
              'removed_contact_ids',
              'on_call_contact_ids',
              'campaign',
            ],
            properties: {
              removed: { type: 'integer' },
              on_call: { type: 'integer', description: 'Of those removed, how many were on a call' },
              unmatched: {
                type: 'integer',
                description:
                  'Ids or numbers that named no waiting or calling contact (unknown, finished, removed)',
              },
              removed_contact_ids: { type: 'array', items: { type: 'string' } },
              on_call_contact_ids: { type: 'array', items: { type: 'string' } },
              campaign: campaignSchema,
            },
          },
          ...errorResponses(400, 401, 404, 409, 429, 500),
        },
      },
      config: {
        requestBody: {
          type: 'object',
          additionalProperties: false,
          properties: {
            contact_ids: {
              type: 'array',
              items: { type: 'string' },
              examples: [['cct_01JF3Z8V0Q4T7N5W2X9Y6B1C3D']],
            },
            to_numbers: { type: 'array', items: { type: 'string' }, examples: [['+12125550100']] },
          },
        },
      },
    },
    async (request) => {
      const caller = authOf(request);
      const id = campaignIdOf(request.params.campaign_id);
      const { campaign, ...result } = await removeCampaignContacts(
        store,
        caller.account.id,
        id,
        readJsonBody(request),
        `api_key:${caller.apiKeyId}`,
      );
      request.log.info(
        { campaignId: id, removed: result.removed, onCall: result.on_call },
        'campaign contacts removed',
      );
      return { ...result, campaign: await campaignResource(store, campaign) };
    },
  );
}
