import { defaultCallerIdHealth } from '../../domain/callerIdHealth.js';
import type {
  AttemptOutcome,
  CampaignContactRecord,
  CampaignRecord,
  CampaignStatus,
  ContactState,
} from '../../domain/campaigns.js';
import type { CampaignStatusReason, WaitingReason } from '../../domain/campaignWaits.js';
import type { ColumnCodec } from '../recordsFromRows.js';

/** Campaign and contact rows as either driver hands them back, decoded with the dialect's codec. */

export function campaignFromRow(row: Record<string, unknown>, columns: ColumnCodec): CampaignRecord {
  return {
    id: row.id as string,
    accountId: row.account_id as string,
    apiKeyId: row.api_key_id as string,
    name: row.name as string,
    agentId: row.agent_id as string,
    callerIds: columns.json(row.caller_ids),
    callerIdSelection: row.caller_id_selection as CampaignRecord['callerIdSelection'],
    callingWindow: columns.json(row.calling_window),
    timeZone: row.time_zone as string,
    maxConcurrency: Number(row.max_concurrency),
    callsPerMinute: Number(row.calls_per_minute),
    maxDailyAttempts: Number(row.max_daily_attempts),
    retry: columns.json(row.retry_policy),
    startsAt: columns.timeOrNull(row.starts_at),
    endsAt: columns.timeOrNull(row.ends_at),
    status: row.status as CampaignStatus,
    contactCount: Number(row.contact_count),
    createdAt: columns.time(row.created_at),
    completedAt: columns.timeOrNull(row.completed_at),
    statusReason: (row.status_reason as CampaignStatusReason | null) ?? null,
    rules: {
      maxCallsPerHour: row.max_calls_per_hour == null ? null : Number(row.max_calls_per_hour),
      maxCallsPerDay: row.max_calls_per_day == null ? null : Number(row.max_calls_per_day),
      holidays: columns.json(row.holidays) ?? { countries: [], dates: [] },
      callerIdHealth: { ...defaultCallerIdHealth, ...(columns.json(row.caller_id_health) ?? {}) },
    },
  };
}

export function contactFromRow(row: Record<string, unknown>, columns: ColumnCodec): CampaignContactRecord {
  return {
    id: row.id as string,
    campaignId: row.campaign_id as string,
    position: Number(row.position),
    toNumber: row.to_number as string,
    variables: columns.json(row.variables),
    firstMessage: (row.first_message as string | null) ?? null,
    context: (row.context as string | null) ?? null,
    timeZones: (row.time_zones as string).split('&'),
    state: row.state as ContactState,
    attempts: Number(row.attempts),
    dueAt: columns.timeOrNull(row.due_at),
    callId: (row.call_id as string | null) ?? null,
    lastOutcome: (row.last_outcome as AttemptOutcome | null) ?? null,
    waitingReason: (row.waiting_reason as WaitingReason | null) ?? null,
    priority: Number(row.priority ?? 0),
    callbackAt: columns.timeOrNull(row.callback_at ?? null),
    removedAt: columns.timeOrNull(row.removed_at ?? null),
  };
}
