import { newId } from '../domain/ids.js';
import type { OptionalEventType } from '../domain/statusEvents.js';
import type { Logger } from '../logger.js';
import { retryBriefly } from '../net/retryBriefly.js';
import type { EventRepository } from '../store/types.js';

/** What an event is about: exactly one call or one campaign. */
export type StatusEventSubject =
  | { callId: string; campaignId?: never }
  | { campaignId: string; callId?: never };

/**
 * Writes the events beyond `call.completed` (call.ringing, call.answered, call.transferred,
 * campaign.completed) to the outbox, where the delivery worker signs and sends them like any
 * other. The store keeps an event only when the account's endpoint asked for its type, and one of
 * each type per call (campaign). A failed write is tried again briefly and then logged: a status
 * event never ends or delays a call.
 */
export class StatusEventWriter {
  constructor(
    private readonly events: EventRepository,
    private readonly logger: Logger,
  ) {}

  /** `body` builds the payload from the event's id and creation time; resolves to whether it was stored. */
  async write(
    accountId: string,
    type: OptionalEventType,
    subject: StatusEventSubject,
    body: (event: { id: string; createdAt: string }) => object,
  ): Promise<boolean> {
    const id = newId('event');
    const createdAt = new Date().toISOString();
    try {
      return await retryBriefly(() =>
        this.events.addStatusEvent({
          id,
          accountId,
          type,
          callId: subject.callId ?? null,
          campaignId: subject.campaignId ?? null,
          body: JSON.stringify(body({ id, createdAt })),
          createdAt,
        }),
      );
    } catch (error) {
      this.logger.error({ err: error, eventType: type, ...subject }, 'could not store a status event');
      return false;
    }
  }
}
