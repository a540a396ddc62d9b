import { keyForCallsPlacedBy } from '../admin/apiKeys.js';
import { createOutboundCall } from '../calls/createOutboundCall.js';
import { typedVariablesFromText } from '../domain/agentVariables.js';
import { parseOutboundCallRequest } from '../domain/outboundCallRequest.js';
import type { AccountRecord, AgentRecord, CallRecord } from '../domain/records.js';
import type { VariableValue } from '../domain/templates.js';
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
  request: {
    agentId: string;
    fromNumber: string;
    toNumber: string;
    variables: Record<string, VariableValue>;
  },
): Promise<CallRecord> {
  const key = await keyForCallsPlacedBy(options.store, account.id, testCallKeyName);
  const outbound = parseOutboundCallRequest({
    agent_id: request.agentId,
    from_number: request.fromNumber,
    to_number: request.toNumber,
    variables: request.variables,
  });
  const call = await createOutboundCall(options.store, { account, apiKeyId: key.id }, outbound);
  options.callControl?.wake();
  return call;
}

/** The test-call form's variable fields as the request's `variables`, typed by the agent's declarations. */
export function testCallVariables(
  agent: AgentRecord,
  fieldValue: (name: string) => string,
): Record<string, VariableValue> {
  return typedVariablesFromText(
    agent.variables,
    Object.fromEntries(agent.variables.map((variable) => [variable.name, fieldValue(variable.name)])),
  );
}
