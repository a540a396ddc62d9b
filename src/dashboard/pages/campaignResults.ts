import { Readable } from 'node:stream';
import type { FastifyInstance } from 'fastify';
import { campaignOf } from '../../campaigns/campaignControl.js';
import { campaignFigures, campaignResultChunks } from '../../campaigns/campaignResults.js';
import type { CampaignFiguresResource, FiguresResource } from '../../domain/campaignFigures.js';
import { type ResultFormat, resultMediaTypes } from '../../domain/campaignResults.js';
import type { CampaignRecord } from '../../domain/campaigns.js';
import { AppError } from '../../domain/errors.js';
import { isIdOf } from '../../domain/ids.js';
import { type DashboardOptions, viewerOf } from '../context.js';
import { type Html, html } from '../html.js';

/** The results download and the figures panel of a campaign's page (issue 37). */

function percent(rate: number | null): string {
  return rate === null ? '–' : `${(rate * 100).toFixed(1)}%`;
}

function figureCells(figures: FiguresResource): Html {
  return html`<td data-label="Attempts">${figures.attempts}</td><td data-label="Minutes">${figures.connected_minutes}</td><td data-label="Cost">$${figures.cost_usd.toFixed(4)}</td><td data-label="Answered">${percent(figures.answer_rate)}</td><td data-label="Voicemail">${percent(figures.voicemail_rate)}</td><td data-label="Success">${percent(figures.success_rate)}</td>`;
}

const figureHeads = html`<th scope="col">Attempts</th><th scope="col">Connected minutes</th><th scope="col">Cost</th><th scope="col">Answer rate</th><th scope="col">Voicemail rate</th><th scope="col">Success rate</th>`;

/** Overall, per caller ID and per hour of the callee's day; the download links. */
export async function figuresPanel(options: DashboardOptions, campaign: CampaignRecord): Promise<Html> {
  const figures: CampaignFiguresResource = await campaignFigures(options.store, campaign);
  const rows = (label: string, items: { name: string; figures: FiguresResource }[]) =>
    items.length === 0
      ? ''
      : html`<div class="table-wrap"><table class="data responsive"><caption>${label}</caption><thead><tr><th scope="col">${label}</th>${figureHeads}</tr></thead><tbody>${items.map(
          (item) => html`<tr><th scope="row">${item.name}</th>${figureCells(item.figures)}</tr>`,
        )}</tbody></table></div>`;
  return html`<section class="panel" aria-labelledby="figures-title"><h2 id="figures-title">Figures</h2>
<div class="table-wrap"><table class="data responsive" data-testid="campaign-figures"><thead><tr>${figureHeads}</tr></thead><tbody><tr>${figureCells(figures.overall)}</tr></tbody></table></div>
${rows(
  'Caller ID',
  figures.by_caller_id.map((row) => ({ name: row.caller_id, figures: row })),
)}
${rows(
  "Callee's local hour",
  figures.by_local_hour.map((row) => ({
    name: `${String(row.local_hour).padStart(2, '0')}:00`,
    figures: row,
  })),
)}
<p>Results, one row per contact: <a href="/campaigns/${campaign.id}/results.csv" download>Download CSV</a> · <a href="/campaigns/${campaign.id}/results.jsonl" download>Download JSON Lines</a></p>
</section>`;
}

export function registerCampaignResultPages(app: FastifyInstance, options: DashboardOptions): void {
  for (const format of ['csv', 'jsonl'] as const satisfies readonly ResultFormat[]) {
    app.get<{ Params: { id: string } }>(`/campaigns/:id/results.${format}`, async (request, reply) => {
      const viewer = viewerOf(request);
      if (!isIdOf('campaign', request.params.id)) throw new AppError('not_found', 'No such campaign.');
      const campaign = await campaignOf(options.store, viewer.account.id, request.params.id);
      reply.header('content-type', resultMediaTypes[format]);
      reply.header('content-disposition', `attachment; filename="${campaign.id}-results.${format}"`);
      reply.header('cache-control', 'private, no-store');
      return reply.send(Readable.from(campaignResultChunks(options.store, campaign, format)));
    });
  }
}
