import type { FastifyInstance } from 'fastify';
import { campaignResource } from '../campaigns/campaignControl.js';
import { editCampaign } from '../campaigns/editCampaign.js';
import { editableCampaignFields } from '../domain/campaignEdits.js';
import type { Store } from '../store/types.js';
import { authOf } from './auth.js';
import { campaignIdOf, campaignIdParams, campaignRequestSchema, campaignSchema } from './campaignRoutes.js';
import { readJsonBody } from './jsonBody.js';
import { errorResponses } from './schemas.js';

const campaignEditSchema = {
  type: 'object',
  additionalProperties: false,
  minProperties: 1,
  description:
    'Any of the settings below; each is checked as at creation and holds from the next claim. Calls already queued keep their caller ID.',
  properties: Object.fromEntries(
    editableCampaignFields.map((field) => [field, campaignRequestSchema.properties[field]]),
  ),
  examples: [
    { calling_window: { start: '10:00', end: '18:00', weekdays: [1, 2, 3, 4, 5] }, calls_per_minute: 20 },
  ],
} as const;

/** `PATCH /v1/campaigns/{id}`: live edits of a running or paused campaign (docs/campaigns.md). */
export function registerCampaignEditRoutes(app: FastifyInstance, store: Store): void {
  app.patch<{ Params: { campaign_id: string } }>(
    '/campaigns/:campaign_id',
    {
      schema: {
        summary:
          'Change a running or paused campaign: window, pace, caps, retry rules, caller IDs (extension)',
        description:
          'Effective at the next claim; audited (`GET /v1/audit-log`, action `campaign_edit`). 409 for a canceled or completed campaign.',
        operationId: 'updateCampaign',
        tags: ['campaigns'],
        params: campaignIdParams,
        response: { 200: campaignSchema, ...errorResponses(400, 401, 404, 409, 422, 429, 500) },
      },
      config: { requestBody: campaignEditSchema },
    },
    async (request) => {
      const caller = authOf(request);
      const id = campaignIdOf(request.params.campaign_id);
      const { campaign, changes } = await editCampaign(
        store,
        caller.account.id,
        id,
        readJsonBody(request),
        `api_key:${caller.apiKeyId}`,
      );
      request.log.info({ campaignId: id, changed: Object.keys(changes) }, 'campaign changed');
      return campaignResource(store, campaign);
    },
  );
}
