import { callCompletedEvent } from '../domain/callCompletedEvent.js';
import { newId } from '../domain/ids.js';
import type { CallRecord } from '../domain/records.js';
import type { CompletedEventBuilder } from '../store/types.js';

/**
 * The builder the store calls inside the transaction that makes a call terminal. The body is
 * serialised here once: those exact bytes are stored, signed and sent on every attempt.
 */
export function completedEventBuilder(
  recordingUrlFor: (call: CallRecord) => string | null,
): CompletedEventBuilder {
  return (call) => {
    const id = newId('event');
    const createdAt = new Date().toISOString();
    const event = callCompletedEvent(call, { id, createdAt, recordingUrl: recordingUrlFor(call) });
    return { id, createdAt, body: JSON.stringify(event) };
  };
}
