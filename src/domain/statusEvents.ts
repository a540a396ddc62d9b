import type { AnsweredBy } from './callStatus.js';
import { AppError } from './errors.js';
import type { CallRecord } from './records.js';
import type { TransferOutcome } from './transferSettings.js';

/*
 * Webhook events beyond `call.completed` (DESIGN §9 "Events", issue 17 item 7). `call.completed`
 * is always sent; the others go only to an endpoint that asked for them, with the same signing,
 * retries and attempt log. Each is sent at most once per call (per campaign), whatever the
 * number of processes: the store keeps one row per (call, type) and (campaign, type).
 */

export const alwaysSentEventType = 'call.completed';
export const optionalEventTypes = [
  'call.ringing',
  'call.answered',
  'call.transferred',
  'campaign.completed',
  'campaign.paused',
  'campaign.canceled',
  'number.rested',
] as const;
export type OptionalEventType = (typeof optionalEventTypes)[number];
export const webhookEventTypes = [alwaysSentEventType, ...optionalEventTypes] as const;
export type WebhookEventType = (typeof webhookEventTypes)[number];
export type CallStatusEventType = Exclude<OptionalEventType, `campaign.${string}` | `number.${string}`>;

/**
 * The event types an endpoint asked for, checked: known names only (a repeat counts once);
 * `call.completed` may be named and is always included. In the order of `webhookEventTypes`.
 */
export function parseEventTypes(value: unknown): WebhookEventType[] {
  if (!Array.isArray(value)) throw new AppError('validation_error', 'events must be an array of event types');
  const chosen = new Set<WebhookEventType>([alwaysSentEventType]);
  for (const item of value) {
    if (typeof item !== 'string' || !(webhookEventTypes as readonly string[]).includes(item)) {
      const shown = typeof item === 'string' ? item.slice(0, 40) : typeof item;
      throw new AppError(
        'validation_error',
        `unknown event type ${JSON.stringify(shown)}; one of ${webhookEventTypes.join(', ')}`,
      );
    }
    chosen.add(item as WebhookEventType);
  }
  return webhookEventTypes.filter((type) => chosen.has(type));
}

/** What the store keeps of an endpoint's choice; anything unreadable counts as `call.completed` only. */
export function eventTypesFromStored(stored: string | null | undefined): WebhookEventType[] {
  try {
    return parseEventTypes(JSON.parse(stored ?? '[]'));
  } catch {
    return [alwaysSentEventType];
  }
}

interface EventEnvelope {
  id: string;
  createdAt: string;
}

/**
 * Where a transfer went (the target's name in the agent's settings) and how: `refer` (the line
 * moved the call), `bridge` (callwright dialled the target and joined the legs), `warm` (the same,
 * after a whisper to the person who answered).
 */
export const transferVias = ['refer', 'bridge', 'warm'] as const;
export interface TransferDetail {
  target: string;
  via: (typeof transferVias)[number];
  /** How it ended (src/domain/transferSettings.ts): `connected`, `no_answer`, `busy`, `refused`, `failed`. */
  outcome: TransferOutcome;
  /** The target's (or the line's) SIP status when there was one. */
  sipStatus: number | null;
  /** Why it did not connect, in words; null when connected. */
  reason: string | null;
}

/** The call fields every call status event carries, so a receiver can act without a lookup. */
function callSummary(call: CallRecord) {
  return {
    call_id: call.id,
    agent_id: call.agentId,
    from_number: call.fromNumber,
    to_number: call.toNumber,
    variables: call.variables ?? {},
  };
}

/** The envelope every event has, around a call's summary and what the event adds. */
function callEvent<T extends CallStatusEventType, Extra extends object>(
  type: T,
  call: CallRecord,
  event: EventEnvelope,
  extra: Extra,
) {
  return { type, id: event.id, created_at: event.createdAt, data: { ...callSummary(call), ...extra } };
}

export function callRingingEvent(call: CallRecord, event: EventEnvelope & { ringingAt: string }) {
  return callEvent('call.ringing', call, event, { ringing_at: event.ringingAt });
}

export function callAnsweredEvent(
  call: CallRecord,
  event: EventEnvelope & { answeredAt: string; answeredBy: AnsweredBy },
) {
  return callEvent('call.answered', call, event, {
    answered_at: event.answeredAt,
    answered_by: event.answeredBy,
  });
}

export function callTransferredEvent(
  call: CallRecord,
  event: EventEnvelope & { transferredAt: string; transfer: TransferDetail },
) {
  return callEvent('call.transferred', call, event, {
    transferred_at: event.transferredAt,
    target: event.transfer.target,
    via: event.transfer.via,
    outcome: event.transfer.outcome,
    sip_status: event.transfer.sipStatus,
    reason: event.transfer.reason,
  });
}
