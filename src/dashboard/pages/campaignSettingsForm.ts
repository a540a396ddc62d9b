import type { FastifyInstance, FastifyReply } from 'fastify';
import { campaignOf } from '../../campaigns/campaignControl.js';
import { editCampaign } from '../../campaigns/editCampaign.js';
import { callerIdHealthLimits } from '../../domain/callerIdHealth.js';
import { builtInHolidays, campaignRuleLimits } from '../../domain/campaignRules.js';
import { type CampaignRecord, campaignLimits } from '../../domain/campaigns.js';
import { AppError, isAppError } from '../../domain/errors.js';
import { isIdOf } from '../../domain/ids.js';
import { type DashboardOptions, field, formOf, redirectTo, type Viewer, viewerOf } from '../context.js';
import { type Html, html } from '../html.js';
import { csrfField } from '../layout.js';

/**
 * The campaign settings fields shared by the create form and the campaign page's "Edit settings"
 * form (issue 37), and that form's route. The form is read into the API's own body and checked by
 * the API's own code (`createCampaign`, `editCampaign` → `parseCampaignEdit`): no second validator.
 * An edit sends only the settings that differ from the campaign's, audited as `user:<id>`.
 */

export const weekdayNames = ['Mon', 'Tue', 'Wed', 'Thu', 'Fri', 'Sat', 'Sun'];
const retryOutcomes = ['busy', 'no_answer', 'voicemail', 'failed'] as const;
const healthFields = [
  ['window_attempts', 'health_window_attempts'],
  ['min_attempts', 'health_min_attempts'],
  ['min_share_of_pool', 'health_min_share'],
  ['rest_minutes', 'health_rest_minutes'],
] as const;

/** A form field's value: the submitted one, else the given default. */
export type FieldValue = (name: string, fallback: string) => string;

export function fieldValueOf(form: URLSearchParams | undefined): FieldValue {
  return (name, fallback) => (form ? field(form, name) : fallback);
}

/** The window fieldset (from, until, weekdays); `prefix` keeps ids apart on one page. */
export function windowFields(value: FieldValue, days: readonly string[], prefix: string): Html {
  return html`<fieldset><legend>Calling window, in each callee's local time</legend>
    <div class="fields">
    <label for="${prefix}window-start">From<input id="${prefix}window-start" name="window_start" type="time" required value="${value('window_start', '09:00')}"></label>
    <label for="${prefix}window-end">Until<input id="${prefix}window-end" name="window_end" type="time" required value="${value('window_end', '17:00')}"></label>
    </div>
    ${weekdayNames.map(
      (name, index) =>
        html`<label class="inline"><input type="checkbox" name="weekdays" value="${index + 1}"${days.includes(String(index + 1)) ? ' checked' : ''}> ${name}</label>`,
    )}
  </fieldset>`;
}

export function paceFields(value: FieldValue, prefix: string): Html {
  return html`<div class="fields">
  <label for="${prefix}concurrency">Calls at once<input id="${prefix}concurrency" name="max_concurrency" type="number" min="1" max="${campaignLimits.maxConcurrencyMax}" value="${value('max_concurrency', '2')}"></label>
  <label for="${prefix}pace">Calls per minute<input id="${prefix}pace" name="calls_per_minute" type="number" min="1" max="${campaignLimits.callsPerMinuteMax}" value="${value('calls_per_minute', '10')}"></label>
  </div>`;
}

export function retryFields(value: FieldValue): Html {
  return html`<fieldset><legend>Retries <span class="hint">empty: no retry of that outcome</span></legend>
    ${retryOutcomes.map(
      (
        outcome,
      ) => html`<div class="retry-rule"><span class="retry-outcome">${outcome.replace('_', ' ')}</span>
      <label class="unit-field">after<input class="short" name="retry_${outcome}_minutes" type="number" min="1" aria-label="${outcome} retry after minutes" value="${value(`retry_${outcome}_minutes`, '')}">min</label>
      <label class="unit-field">up to<input class="short" name="retry_${outcome}_attempts" type="number" min="1" max="10" aria-label="${outcome} attempts in all" value="${value(`retry_${outcome}_attempts`, '')}">attempts in all</label></div>`,
    )}
  </fieldset>`;
}

/** Caps, holidays and caller-ID health; empty health fields are the defaults (or, in an edit, unchanged). */
export function ruleFields(value: FieldValue, countries: readonly string[], prefix: string): Html {
  return html`<div class="fields">
  <label for="${prefix}cap-hour">Calls per hour, at most <span class="hint">empty: no cap</span><input id="${prefix}cap-hour" name="max_calls_per_hour" type="number" min="1" max="${campaignRuleLimits.callsPerHourMax}" value="${value('max_calls_per_hour', '')}"></label>
  <label for="${prefix}cap-day">Calls per day, at most <span class="hint">empty: no cap</span><input id="${prefix}cap-day" name="max_calls_per_day" type="number" min="1" max="${campaignRuleLimits.callsPerDayMax}" value="${value('max_calls_per_day', '')}"></label>
  </div>
  <fieldset><legend>Holidays, no call starts on the callee's date</legend>
    ${Object.keys(builtInHolidays).map(
      (country) =>
        html`<label class="inline"><input type="checkbox" name="holiday_countries" value="${country}"${countries.includes(country) ? ' checked' : ''}> ${country}</label>`,
    )}
    <label for="${prefix}holiday-dates">Other days <span class="hint">YYYY-MM-DD (that day) or MM-DD (every year), separated by commas</span><input id="${prefix}holiday-dates" name="holiday_dates" type="text" value="${value('holiday_dates', '')}"></label>
  </fieldset>
  <fieldset><legend>Caller-ID health <span class="hint">a number answered far less than the pool is rested; empty: the default; share 0: never rest</span></legend>
    <div class="fields">
    <label for="${prefix}health-window">Over the last … attempts<input id="${prefix}health-window" name="health_window_attempts" type="number" min="1" max="${callerIdHealthLimits.windowAttemptsMax}" value="${value('health_window_attempts', '')}"></label>
    <label for="${prefix}health-min">Judged after … attempts<input id="${prefix}health-min" name="health_min_attempts" type="number" min="1" value="${value('health_min_attempts', '')}"></label>
    <label for="${prefix}health-share">Rested below this share of the pool's rate<input id="${prefix}health-share" name="health_min_share" type="number" min="0" max="1" step="any" value="${value('health_min_share', '')}"></label>
    <label for="${prefix}health-rest">Rested for … minutes<input id="${prefix}health-rest" name="health_rest_minutes" type="number" min="1" max="${callerIdHealthLimits.restMinutesMax}" value="${value('health_rest_minutes', '')}"></label>
    </div>
  </fieldset>`;
}

/** A number field as the API's JSON: absent when empty, else the number (NaN is refused by the API's check). */
export function wholeOf(form: URLSearchParams, name: string): number | undefined {
  const text = field(form, name).trim();
  return text === '' ? undefined : Number(text);
}

/** The window, pace and retry fields as the API's body. */
export function scheduleBodyOf(form: URLSearchParams): Record<string, unknown> {
  const retry: Record<string, unknown> = {};
  for (const outcome of retryOutcomes) {
    const after = wholeOf(form, `retry_${outcome}_minutes`);
    const attempts = wholeOf(form, `retry_${outcome}_attempts`);
    if (after !== undefined || attempts !== undefined)
      retry[outcome] = { after_minutes: after, max_attempts: attempts };
  }
  return {
    calling_window: {
      start: field(form, 'window_start'),
      end: field(form, 'window_end'),
      weekdays: form.getAll('weekdays').map(Number),
    },
    max_concurrency: wholeOf(form, 'max_concurrency'),
    calls_per_minute: wholeOf(form, 'calls_per_minute'),
    retry,
  };
}

/** Caps (null when empty), holidays, and caller-ID health (absent when every field is empty). */
export function rulesBodyOf(form: URLSearchParams): Record<string, unknown> {
  const health: Record<string, unknown> = {};
  for (const [apiName, formName] of healthFields) {
    const number = wholeOf(form, formName);
    if (number !== undefined) health[apiName] = number;
  }
  return {
    max_calls_per_hour: wholeOf(form, 'max_calls_per_hour') ?? null,
    max_calls_per_day: wholeOf(form, 'max_calls_per_day') ?? null,
    holidays: {
      countries: form.getAll('holiday_countries'),
      dates: field(form, 'holiday_dates')
        .split(/[\s,]+/)
        .filter((date) => date !== ''),
    },
    ...(Object.keys(health).length > 0 ? { caller_id_health: health } : {}),
  };
}

/** The campaign's current settings as the edit form's fields. */
function formOfCampaign(campaign: CampaignRecord): URLSearchParams {
  const form = new URLSearchParams();
  const { callingWindow: window, rules } = campaign;
  form.set('window_start', window.start);
  form.set('window_end', window.end);
  for (const day of window.weekdays) form.append('weekdays', String(day));
  form.set('max_concurrency', String(campaign.maxConcurrency));
  form.set('calls_per_minute', String(campaign.callsPerMinute));
  for (const outcome of retryOutcomes) {
    const rule = campaign.retry[outcome];
    form.set(`retry_${outcome}_minutes`, rule ? String(rule.after_minutes) : '');
    form.set(`retry_${outcome}_attempts`, rule ? String(rule.max_attempts) : '');
  }
  form.set('max_calls_per_hour', rules.maxCallsPerHour === null ? '' : String(rules.maxCallsPerHour));
  form.set('max_calls_per_day', rules.maxCallsPerDay === null ? '' : String(rules.maxCallsPerDay));
  for (const country of rules.holidays.countries) form.append('holiday_countries', country);
  form.set('holiday_dates', rules.holidays.dates.join(', '));
  const health = rules.callerIdHealth;
  form.set('health_window_attempts', String(health.windowAttempts));
  form.set('health_min_attempts', String(health.minAttempts));
  form.set('health_min_share', String(health.minShareOfPool));
  form.set('health_rest_minutes', String(health.restMinutes));
  for (const number of campaign.callerIds) form.append('caller_ids', number);
  return form;
}

function bodyOfForm(form: URLSearchParams): Record<string, unknown> {
  return { ...scheduleBodyOf(form), ...rulesBodyOf(form), caller_ids: form.getAll('caller_ids') };
}

/** The settings as the form showed them, kept in the form so that a change made meanwhile elsewhere is not undone. */
function shownSettings(form: URLSearchParams, campaign: CampaignRecord): Record<string, unknown> {
  try {
    const shown: unknown = JSON.parse(field(form, 'shown'));
    if (shown && typeof shown === 'object' && !Array.isArray(shown)) return shown as Record<string, unknown>;
  } catch {
    // Not sent or not JSON: compare with the campaign as it is.
  }
  return bodyOfForm(formOfCampaign(campaign));
}

/**
 * Only the settings the user changed: the submitted form against the values it was shown with (a
 * setting changed meanwhile by the API or another user, and not touched here, stays as it is).
 * Whatever is sent is checked by the API's own code.
 */
export function editBodyOf(form: URLSearchParams, campaign: CampaignRecord): Record<string, unknown> {
  const wanted = bodyOfForm(form);
  const shown = shownSettings(form, campaign);
  const normal = (value: unknown) =>
    JSON.stringify(value, (_key, inner: unknown) =>
      Array.isArray(inner) ? [...inner].map(String).sort() : inner,
    );
  return Object.fromEntries(
    Object.entries(wanted).filter(([name, value]) => normal(value) !== normal(shown[name])),
  );
}

/** What the edit form shows again after a refusal: the fields sent, and why nothing changed. */
export interface EditFormState {
  form: URLSearchParams;
  error: AppError;
}

/** The form's label for the API field an error names first (`holidays.dates must …` → Other days). */
const fieldLabels: [RegExp, string][] = [
  [/^calling_window/, 'Calling window'],
  [/^max_concurrency/, 'Calls at once'],
  [/^calls_per_minute/, 'Calls per minute'],
  [/^max_calls_per_hour/, 'Calls per hour, at most'],
  [/^max_calls_per_day/, 'Calls per day, at most'],
  [/^holidays\.dates/, 'Other days'],
  [/^holidays/, 'Holidays'],
  [/^caller_id_health\.window_attempts/, 'Over the last … attempts'],
  [/^caller_id_health\.min_attempts/, 'Judged after … attempts'],
  [/^caller_id_health\.min_share_of_pool/, "Rested below this share of the pool's rate"],
  [/^caller_id_health\.rest_minutes/, 'Rested for … minutes'],
  [/^retry\.(\w+)/, 'Retries'],
  [/^from_number|^caller_ids|caller ID/, 'Caller IDs'],
];

export function fieldLabelOf(message: string): string | undefined {
  return fieldLabels.find(([pattern]) => pattern.test(message))?.[1];
}

/** The "Edit settings" form of a running or paused campaign, prefilled with its current values. */
export async function editSettingsForm(
  options: DashboardOptions,
  viewer: Viewer,
  campaign: CampaignRecord,
  state?: EditFormState,
): Promise<Html> {
  if (campaign.status !== 'running' && campaign.status !== 'paused') return html``;
  const numbers = await options.store.numbers.list(viewer.account.id);
  const form = state?.form ?? formOfCampaign(campaign);
  const value = fieldValueOf(form);
  const pool = form.getAll('caller_ids');
  const offered = [...new Set([...numbers.map((entry) => entry.number), ...campaign.callerIds])];
  return html`<section class="panel" aria-labelledby="edit-title"><h2 id="edit-title">Edit settings</h2>
${state ? html`<div class="error" role="alert" data-testid="edit-report"><p><strong>Nothing was changed: ${state.error.message}</strong></p>${fieldLabelOf(state.error.message) ? html`<p>See the field <em data-testid="edit-field">${fieldLabelOf(state.error.message)}</em>.</p>` : ''}</div>` : ''}
<form method="post" action="/campaigns/${campaign.id}/edit" class="stack">
  ${csrfField(viewer.session.csrfToken)}
  <input type="hidden" name="shown" value="${state ? field(state.form, 'shown') : JSON.stringify(bodyOfForm(form))}">
  <p class="hint">Each change holds from the next call placed; calls already on the line go on as they are. The default time zone (${campaign.timeZone}) cannot change.</p>
  ${windowFields(value, form.getAll('weekdays'), 'edit-')}
  ${paceFields(value, 'edit-')}
  ${ruleFields(value, form.getAll('holiday_countries'), 'edit-')}
  ${retryFields(value)}
  <fieldset><legend>Caller IDs <span class="hint">the campaign's calls rotate over the ones ticked</span></legend>
    ${offered.map(
      (number) =>
        html`<label class="inline"><input type="checkbox" name="caller_ids" value="${number}"${pool.includes(number) ? ' checked' : ''}> ${number}</label>`,
    )}
  </fieldset>
  <button type="submit">Save the settings</button>
</form></section>`;
}

/** `POST /campaigns/:id/edit`: `showRefusal` renders the page with the form's report (400). */
export function registerCampaignEditPage(
  app: FastifyInstance,
  options: DashboardOptions,
  showRefusal: (
    reply: FastifyReply,
    viewer: Viewer,
    campaign: CampaignRecord,
    state: EditFormState,
  ) => Promise<FastifyReply>,
): void {
  app.post<{ Params: { id: string } }>('/campaigns/:id/edit', async (request, reply) => {
    const viewer = viewerOf(request);
    if (!isIdOf('campaign', request.params.id)) throw new AppError('not_found', 'No such campaign.');
    const form = formOf(request);
    const campaign = await campaignOf(options.store, viewer.account.id, request.params.id);
    const body = editBodyOf(form, campaign);
    if (Object.keys(body).length === 0)
      return redirectTo(reply, `/campaigns/${campaign.id}?notice=settings-unchanged`);
    try {
      const { changes } = await editCampaign(
        options.store,
        viewer.account.id,
        campaign.id,
        body,
        `user:${viewer.user.id}`,
      );
      request.log.info(
        { campaignId: campaign.id, changed: Object.keys(changes) },
        'dashboard changed a campaign',
      );
      return redirectTo(reply, `/campaigns/${campaign.id}?notice=settings-changed`);
    } catch (error) {
      if (!isAppError(error) || error.status >= 500 || error.code === 'not_found') throw error;
      const kept = new URLSearchParams(form);
      kept.delete('csrf_token');
      return showRefusal(reply, viewer, campaign, { form: kept, error });
    }
  });
}
