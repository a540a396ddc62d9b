import { readFileSync, statSync } from 'node:fs';
import { keyForCallsPlacedBy } from '../admin/apiKeys.js';
import {
  campaignOf,
  campaignResource,
  campaignResources,
  changeCampaign,
  describeContacts,
} from '../campaigns/campaignControl.js';
import { createCampaign } from '../campaigns/createCampaign.js';
import { editCampaign } from '../campaigns/editCampaign.js';
import { campaignCsvLimits, parseCampaignCsv } from '../domain/campaignCsv.js';
import { type ContactState, contactStates, retryableOutcomes } from '../domain/campaigns.js';
import { waitingReasonTexts } from '../domain/campaignWaits.js';
import { isAppError } from '../domain/errors.js';
import { commandLineKeyName } from './callCommands.js';
import { campaignResultVerbs } from './campaignResultCommands.js';
import { campaignRuleOptions, campaignRuleSettings } from './campaignRuleOptions.js';
import {
  type CommandContext,
  parseOptions,
  print,
  printList,
  requiredOption,
  resolveAccount,
  UsageError,
  withRows,
} from './context.js';

type Verb = (context: CommandContext, args: string[]) => Promise<void>;

/** `--weekdays 1-5` or `1,3,5` as ISO weekday numbers. */
function parseWeekdays(text: string): number[] {
  const range = /^([1-7])-([1-7])$/.exec(text);
  if (range) {
    const days: number[] = [];
    for (let day = Number(range[1]); day <= Number(range[2]); day += 1) days.push(day);
    return days;
  }
  return text.split(',').map(Number);
}

/** `--retry busy=30x3,no_answer=60x2`: after N minutes, up to M attempts in all. */
function parseRetry(text: string): Record<string, { after_minutes: number; max_attempts: number }> {
  const policy: Record<string, { after_minutes: number; max_attempts: number }> = {};
  for (const part of text.split(',')) {
    const match = /^([a-z_]+)=(\d+)x(\d+)$/.exec(part.trim());
    if (!match || !(retryableOutcomes as readonly string[]).includes(match[1] as string))
      throw new UsageError(
        `--retry takes OUTCOME=MINUTESxATTEMPTS (${retryableOutcomes.join(', ')}), got "${part.slice(0, 40)}"`,
      );
    policy[match[1] as string] = { after_minutes: Number(match[2]), max_attempts: Number(match[3]) };
  }
  return policy;
}

function wholeOption(values: Record<string, unknown>, name: string): number | undefined {
  const raw = values[name];
  if (raw === undefined) return undefined;
  const value = Number(raw);
  if (!Number.isInteger(value)) throw new UsageError(`--${name} must be a whole number`);
  return value;
}

/** `campaigns …`: batch calling from a CSV file, and following it. */
export const campaigns: Record<string, Verb> = {
  async create(context, args) {
    const { values } = parseOptions(args, {
      csv: { type: 'string' },
      agent: { type: 'string' },
      from: { type: 'string', multiple: true },
      'caller-id-selection': { type: 'string' },
      window: { type: 'string' },
      weekdays: { type: 'string' },
      'time-zone': { type: 'string' },
      concurrency: { type: 'string' },
      'per-minute': { type: 'string' },
      'daily-attempts': { type: 'string' },
      retry: { type: 'string' },
      'starts-at': { type: 'string' },
      'ends-at': { type: 'string' },
      name: { type: 'string' },
      ...campaignRuleOptions,
    });
    const path = requiredOption(values, 'csv');
    const window = /^(\d{2}:\d{2})-(\d{2}:\d{2})$/.exec(requiredOption(values, 'window'));
    if (!window) throw new UsageError('--window takes local hours as HH:MM-HH:MM, e.g. 09:00-17:00');
    let bytes: Buffer;
    try {
      // The size first: a file over the limit is refused without being read into memory.
      if (statSync(path).size > campaignCsvLimits.bytesMax)
        throw new UsageError(
          `${path} is larger than ${campaignCsvLimits.bytesMax / 1024 / 1024} MiB (the limit of one campaign CSV)`,
        );
      bytes = readFileSync(path);
    } catch (error) {
      if (error instanceof UsageError) throw error;
      throw new UsageError(`cannot read ${path}: ${(error as NodeJS.ErrnoException).code ?? 'error'}`);
    }
    const callerIds = (values.from as string[] | undefined) ?? [];
    const settings = {
      name: typeof values.name === 'string' ? values.name : '',
      agent_id: requiredOption(values, 'agent'),
      ...(callerIds.length === 1 ? { from_number: callerIds[0] } : { caller_ids: callerIds }),
      ...(typeof values['caller-id-selection'] === 'string'
        ? { caller_id_selection: values['caller-id-selection'] }
        : {}),
      calling_window: {
        start: window[1],
        end: window[2],
        ...(typeof values.weekdays === 'string' ? { weekdays: parseWeekdays(values.weekdays) } : {}),
      },
      time_zone: requiredOption(values, 'time-zone'),
      max_concurrency: wholeOption(values, 'concurrency'),
      calls_per_minute: wholeOption(values, 'per-minute'),
      max_daily_attempts: wholeOption(values, 'daily-attempts'),
      ...(typeof values.retry === 'string' ? { retry: parseRetry(values.retry) } : {}),
      starts_at: values['starts-at'],
      ends_at: values['ends-at'],
      ...campaignRuleSettings(values),
    };
    const account = await resolveAccount(context);
    const key = await keyForCallsPlacedBy(context.store, account.id, commandLineKeyName);
    try {
      const campaign = await createCampaign(context.store, { account, apiKeyId: key.id }, settings, {
        kind: 'csv',
        file: await parseCampaignCsv(bytes),
      });
      print(context, await campaignResource(context.store, campaign));
    } catch (error) {
      throw isAppError(error) ? withRows(error) : error;
    }
    if (!context.json)
      context.out.stderr('Created: a running `callwright serve` calls it within its window.\n');
  },
  async list(context, args) {
    const { values } = parseOptions(args, { limit: { type: 'string' } });
    const limit = wholeOption(values, 'limit') ?? 20;
    if (limit < 1 || limit > 100) throw new UsageError('--limit is 1 to 100');
    const account = await resolveAccount(context);
    const rows = await context.store.campaigns.list(account.id, { limit });
    const resources = await campaignResources(context.store, rows);
    printList(context, 'campaigns', resources, (campaign) => {
      const { pending, calling, retry_wait: retryWait } = campaign.progress;
      return {
        campaign_id: campaign.campaign_id,
        status: campaign.status,
        contacts: campaign.contact_count,
        open: pending + calling + retryWait,
        window: `${campaign.calling_window.start}-${campaign.calling_window.end}`,
        time_zone: campaign.time_zone,
        created_at: campaign.created_at,
        name: campaign.name,
      };
    });
  },
  async show(context, args) {
    const { positionals } = parseOptions(args, {}, ['CAMPAIGN_ID']);
    const account = await resolveAccount(context);
    const campaign = await campaignOf(context.store, account.id, positionals[0] ?? '');
    print(context, await campaignResource(context.store, campaign));
  },
  async edit(context, args) {
    const { values, positionals } = parseOptions(
      args,
      {
        window: { type: 'string' },
        weekdays: { type: 'string' },
        concurrency: { type: 'string' },
        'per-minute': { type: 'string' },
        'daily-attempts': { type: 'string' },
        retry: { type: 'string' },
        from: { type: 'string', multiple: true },
        'caller-id-selection': { type: 'string' },
        'ends-at': { type: 'string' },
        name: { type: 'string' },
        ...campaignRuleOptions,
      },
      ['CAMPAIGN_ID'],
    );
    const changes: Record<string, unknown> = {};
    if (typeof values.window === 'string') {
      const window = /^(\d{2}:\d{2})-(\d{2}:\d{2})$/.exec(values.window);
      if (!window) throw new UsageError('--window takes local hours as HH:MM-HH:MM, e.g. 09:00-17:00');
      changes.calling_window = {
        start: window[1],
        end: window[2],
        ...(typeof values.weekdays === 'string' ? { weekdays: parseWeekdays(values.weekdays) } : {}),
      };
    } else if (values.weekdays !== undefined) throw new UsageError('--weekdays goes with --window');
    const whole = {
      concurrency: 'max_concurrency',
      'per-minute': 'calls_per_minute',
      'daily-attempts': 'max_daily_attempts',
    };
    for (const [option, field] of Object.entries(whole)) {
      const value = wholeOption(values, option);
      if (value !== undefined) changes[field] = value;
    }
    if (typeof values.retry === 'string') changes.retry = parseRetry(values.retry);
    const callerIds = values.from as string[] | undefined;
    if (callerIds)
      Object.assign(
        changes,
        callerIds.length === 1 ? { from_number: callerIds[0] } : { caller_ids: callerIds },
      );
    if (typeof values['caller-id-selection'] === 'string')
      changes.caller_id_selection = values['caller-id-selection'];
    if (typeof values['ends-at'] === 'string') changes.ends_at = values['ends-at'];
    if (typeof values.name === 'string') changes.name = values.name;
    Object.assign(changes, campaignRuleSettings(values));
    const account = await resolveAccount(context);
    const { campaign } = await editCampaign(context.store, account.id, positionals[0] ?? '', changes, 'cli');
    print(context, await campaignResource(context.store, campaign));
  },
  async contacts(context, args) {
    const { values, positionals } = parseOptions(
      args,
      { state: { type: 'string' }, limit: { type: 'string' }, after: { type: 'string' } },
      ['CAMPAIGN_ID'],
    );
    const limit = wholeOption(values, 'limit') ?? 100;
    if (limit < 1 || limit > 500) throw new UsageError('--limit is 1 to 500');
    const state = values.state;
    if (state !== undefined && !(contactStates as readonly unknown[]).includes(state))
      throw new UsageError(`--state is one of ${contactStates.join(', ')}`);
    const after = wholeOption(values, 'after');
    const account = await resolveAccount(context);
    const campaign = await campaignOf(context.store, account.id, positionals[0] ?? '');
    const rows = await context.store.campaigns.listContacts(campaign.id, {
      limit,
      ...(after !== undefined ? { afterPosition: after } : {}),
      ...(state !== undefined ? { state: state as ContactState } : {}),
    });
    const described = await describeContacts(context.store, campaign, rows);
    print(context, {
      contacts: described.map((contact) => ({
        position: contact.position,
        to_number: contact.to_number,
        state: contact.state,
        attempts: contact.attempts,
        last_outcome: contact.last_outcome,
        next_attempt_at: contact.next_attempt_at,
        waiting_reason: contact.waiting_reason,
        why: contact.waiting_reason ? waitingReasonTexts[contact.waiting_reason] : null,
      })),
    });
  },
  ...Object.fromEntries(
    (['pause', 'resume', 'cancel'] as const).map((action) => [
      action,
      (async (context, args) => {
        const { positionals } = parseOptions(args, {}, ['CAMPAIGN_ID']);
        const account = await resolveAccount(context);
        // The same path as the API's: a cancel finishes queued calls through the store.
        const key =
          action === 'resume'
            ? await keyForCallsPlacedBy(context.store, account.id, commandLineKeyName)
            : null;
        const campaign = await changeCampaign(context.store, account.id, positionals[0] ?? '', action, {
          ...(key ? { apiKeyId: key.id } : {}),
        });
        print(context, await campaignResource(context.store, campaign));
      }) satisfies Verb,
    ]),
  ),
  ...campaignResultVerbs,
};
