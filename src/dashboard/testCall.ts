import { createApiKey } from '../admin/apiKeys.js';
import { createOutboundCall } from '../calls/createOutboundCall.js';
import { parseOutboundCallRequest } from '../domain/outboundCallRequest.js';
import type { AccountRecord, CallRecord } from '../domain/records.js';
import type { DashboardOptions } from './context.js';

/** The key test calls are recorded under (a call always names the key that placed it). */
export const testCallKeyName = 'Dashboard test calls';

/**
 * A test call from the dashboard goes through the API's own path: the same request shape and
 * checks, and `createOutboundCall`. It is recorded under the account's "Dashboard test calls" key,
 * made on first use; its secret is discarded at once, so that key can never be used over HTTP.
 */
export async function placeTestCall(
  options: DashboardOptions,
  account: AccountRecord,
  request: { agentId: string; fromNumber: string; toNumber: string },
): Promise<CallRecord> {
  const keys = await options.store.apiKeys.list(account.id);
  let key = keys.find((entry) => entry.name === testCallKeyName && entry.revokedAt === null);
  key ??= (await createApiKey(options.store, account.id, testCallKeyName)).record;
  const outbound = parseOutboundCallRequest({
    agent_id: request.agentId,
    from_number: request.fromNumber,
    to_number: request.toNumber,
  });
  const call = await createOutboundCall(options.store, { account, apiKeyId: key.id }, outbound);
  options.callControl?.wake();
  return call;
}
