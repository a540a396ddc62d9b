import { agentNotFound, numberNotConfigured } from '../calls/createOutboundCall.js';
import { typedVariablesFromText, variablesProblem } from '../domain/agentVariables.js';
import type { CallingWindow } from '../domain/callingWindow.js';
import type { CampaignCsvResult } from '../domain/campaignCsv.js';
import type { CampaignRules } from '../domain/campaignRules.js';
import {
  type CampaignRecord,
  campaignLimits,
  parseCampaignContact,
  parseCampaignSettings,
} from '../domain/campaigns.js';
import { AppError, isAppError, type RowError } from '../domain/errors.js';
import { newId } from '../domain/ids.js';
import { isPlainObject } from '../domain/outboundCallRequest.js';
import type { AccountRecord, AgentRecord } from '../domain/records.js';
import type { NewCampaignContact, Store } from '../store/types.js';
import { countryOfNumber, nextOpeningPastHolidays } from './holidays.js';
import { timeZonesOfNumber } from './numberTimeZones.js';

/**
 * Each contact is stored due at its window's next opening from the campaign's start (computed once
 * per set of zones), so the scheduler's index on due times finds only contacts it may call: a list
 * that begins with thousands of numbers whose window is shut is never read to reach the open ones.
 * A window that never opens, or opens only after the end, is left to the scheduler (it expires).
 */
export function storeDueAtOpenings(
  contacts: NewCampaignContact[],
  settings: { calling_window: CallingWindow; ends_at: string | null; rules: CampaignRules },
  fromMs: number,
): void {
  const openings = new Map<string, { openingMs: number | null; holiday: boolean }>();
  const endsAtMs = settings.ends_at === null ? null : Date.parse(settings.ends_at);
  const { holidays } = settings.rules;
  // Built-in holidays depend on the number's country: those contacts are grouped by it too.
  const byCountry = holidays.countries.length > 0;
  for (const contact of contacts) {
    const zones = contact.timeZones.join('&');
    const key = byCountry ? `${zones} ${countryOfNumber(contact.toNumber) ?? ''}` : zones;
    let opening = openings.get(key);
    if (opening === undefined) {
      opening = nextOpeningPastHolidays(
        settings.calling_window,
        holidays,
        { zones: contact.timeZones, toNumber: contact.toNumber },
        fromMs,
      );
      openings.set(key, opening);
    }
    const { openingMs } = opening;
    if (openingMs === null || openingMs === fromMs || (endsAtMs !== null && openingMs >= endsAtMs)) continue;
    contact.dueAt = new Date(openingMs).toISOString();
    contact.waitingReason = opening.holiday ? 'holiday' : 'window';
  }
}

/** Bad rows reported in one response, at most (the count names them all). */
const reportedRowsMax = 1_000;

/** The contacts of a request: the JSON list, or a CSV file's rows (their variables still text). */
export type CampaignContactsSource =
  | { kind: 'json'; contacts: unknown }
  | { kind: 'csv'; file: CampaignCsvResult };

function rowsOf(source: CampaignContactsSource, agent: AgentRecord): { label: RowError; value: unknown }[] {
  if (source.kind === 'json') {
    const { contacts } = source;
    if (!Array.isArray(contacts) || contacts.length === 0 || contacts.length > campaignLimits.contactsMax)
      throw new AppError(
        'validation_error',
        `contacts must be a list of 1 to ${campaignLimits.contactsMax} contacts`,
      );
    return contacts.map((value, index) => ({ label: { index, message: '' }, value }));
  }
  return source.file.rows.map(({ line, contact }) => ({
    label: { line, message: '' },
    value: isPlainObject(contact.variables)
      ? {
          ...contact,
          variables: typedVariablesFromText(agent.variables, contact.variables as Record<string, string>),
        }
      : contact,
  }));
}

/**
 * Checks every contact of a request as a single call would be — shape, E.164, the agent's
 * variables — plus repeated numbers (`alreadyIn`: numbers the campaign has already, for contacts
 * added later). One bad row and the whole request is refused: the error lists each bad row by its
 * index (JSON) or line (CSV). The contacts' zones are fixed here: the contact's own, else the
 * number's (libphonenumber), else `defaults.timeZone`.
 */
export async function checkedContacts(
  source: CampaignContactsSource,
  agent: AgentRecord,
  defaults: { callerId: string; timeZone: string; action: string },
  alreadyIn: (numbers: string[]) => Promise<Set<string>> = async () => new Set(),
): Promise<NewCampaignContact[]> {
  const problems: RowError[] = source.kind === 'csv' ? [...source.file.problems] : [];
  const contacts: NewCampaignContact[] = [];
  const firstRowOfNumber = new Map<string, RowError>();
  for (const { label, value } of rowsOf(source, agent)) {
    const problem = (message: string) => problems.push({ ...label, message });
    let contact: ReturnType<typeof parseCampaignContact>;
    try {
      contact = parseCampaignContact(value, agent.id, defaults.callerId);
    } catch (error) {
      if (!isAppError(error)) throw error;
      problem(error.message);
      continue;
    }
    const earlier = firstRowOfNumber.get(contact.to_number);
    if (earlier) {
      problem(
        `to_number repeats ${earlier.line !== undefined ? `line ${earlier.line}` : `contact ${earlier.index}`}`,
      );
      continue;
    }
    firstRowOfNumber.set(contact.to_number, label);
    const variables = variablesProblem(agent.variables, contact.variables);
    if (variables) {
      problem(variables.message);
      continue;
    }
    contacts.push({
      id: newId('campaignContact'),
      position: contacts.length,
      toNumber: contact.to_number,
      variables: contact.variables ?? null,
      firstMessage: contact.first_message ?? null,
      context: contact.context ?? null,
      timeZones: contact.time_zone
        ? [contact.time_zone]
        : (timeZonesOfNumber(contact.to_number) ?? [defaults.timeZone]),
      priority: contact.priority ?? 0,
    });
  }
  const present = await alreadyIn([...firstRowOfNumber.keys()]);
  for (const number of present) {
    const label = firstRowOfNumber.get(number);
    if (label) problems.push({ ...label, message: 'to_number is already in the campaign' });
  }
  if (problems.length > 0) {
    const rows = problems.length === 1 ? 'row needs' : 'rows need';
    throw new AppError(
      'validation_error',
      `${problems.length} ${rows} fixing; nothing was ${defaults.action}`,
      {
        rows: problems.slice(0, reportedRowsMax),
      },
    );
  }
  return contacts;
}

/**
 * A campaign from a request: its settings (the first problem is the error), the agent (404) and
 * caller IDs (400), then every contact (`checkedContacts`). One bad row and nothing is created.
 */
export async function createCampaign(
  store: Store,
  caller: { account: AccountRecord; apiKeyId: string },
  settingsBody: unknown,
  source: CampaignContactsSource,
  now: () => Date = () => new Date(),
): Promise<CampaignRecord> {
  const settings = parseCampaignSettings(settingsBody);
  const accountId = caller.account.id;
  const agent = await store.agents.get(accountId, settings.agent_id);
  if (!agent?.active) throw agentNotFound(settings.agent_id);
  for (const number of settings.caller_ids) {
    if (!(await store.numbers.get(accountId, number))) throw numberNotConfigured();
  }
  const contacts = await checkedContacts(source, agent, {
    callerId: settings.caller_ids[0] as string,
    timeZone: settings.time_zone,
    action: 'created or dialled',
  });
  const createdAt = now().toISOString();
  storeDueAtOpenings(contacts, settings, Date.parse(settings.starts_at ?? createdAt));
  return store.campaigns.create(
    {
      id: newId('campaign'),
      accountId,
      apiKeyId: caller.apiKeyId,
      name: settings.name,
      agentId: agent.id,
      callerIds: settings.caller_ids,
      callerIdSelection: settings.caller_id_selection,
      callingWindow: settings.calling_window,
      timeZone: settings.time_zone,
      maxConcurrency: settings.max_concurrency,
      callsPerMinute: settings.calls_per_minute,
      maxDailyAttempts: settings.max_daily_attempts,
      retry: settings.retry,
      startsAt: settings.starts_at,
      endsAt: settings.ends_at,
      status: 'running',
      contactCount: contacts.length,
      createdAt,
      completedAt: null,
      statusReason: null,
      rules: settings.rules,
    },
    contacts,
  );
}
