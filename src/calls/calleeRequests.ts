import type { CallRecord } from '../domain/records.js';
import { retryBriefly } from '../net/retryBriefly.js';
import type { Store } from '../store/types.js';

/**
 * The callee asked on the call not to be called again (an agent tool or script step): the number
 * goes on the account's do-not-call list, for every later call and campaign.
 */
export async function addCalleeToDoNotCall(store: Pick<Store, 'doNotCall'>, call: CallRecord): Promise<void> {
  const entry = {
    // On an inbound call the person on the line is the caller (issue 40).
    number: call.direction === 'inbound' ? call.fromNumber : call.toNumber,
    reason: 'the callee asked not to be called',
    source: 'callee_request' as const,
  };
  await retryBriefly(() => store.doNotCall.add(call.accountId, [entry]));
}
