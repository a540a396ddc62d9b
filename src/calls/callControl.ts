import type { CallRecord } from '../domain/records.js';

/**
 * What the API and the dashboard may ask of the call workers: the dispatcher in a process that
 * runs calls, or a request through the store in an API-only process (remoteCallControl.ts).
 */
export interface CallControl {
  /** A call was queued: a hint to dispatch now. */
  wake(): void;
  /** Cancels a queued call or hangs up a live one; resolves to the call once it has ended. */
  cancel(call: CallRecord): Promise<CallRecord | null>;
}
