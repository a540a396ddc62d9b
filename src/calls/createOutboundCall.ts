import { variablesProblem } from '../domain/agentVariables.js';
import { AppError, invalidApiKeyMessage } from '../domain/errors.js';
import { newId } from '../domain/ids.js';
import type { OutboundCallRequest } from '../domain/outboundCallRequest.js';
import type { AccountRecord, CallRecord, NewQueuedCall } from '../domain/records.js';
import type { Store } from '../store/types.js';

/** DESIGN §1 step 6: 404. */
export function agentNotFound(agentId: string): AppError {
  return new AppError('not_found', `agent ${agentId} does not exist or is inactive`);
}

/** DESIGN §1 step 7: 400. */
export function numberNotConfigured(): AppError {
  return new AppError('validation_error', 'from_number is not a phone number configured in this account');
}

/** The call a valid request asks for, with its new id; the caller adds whose it is. */
export function newCallFields(
  request: OutboundCallRequest,
  now: () => Date = () => new Date(),
): Omit<NewQueuedCall, 'accountId' | 'apiKeyId'> {
  return {
    id: newId('call'),
    agentId: request.agent_id,
    fromNumber: request.from_number,
    toNumber: request.to_number,
    firstMessage: request.first_message ?? null,
    context: request.context ?? null,
    variables: request.variables ?? null,
    createdAt: now().toISOString(),
  };
}

/**
 * DESIGN §1 steps 6 to 9, after the request has been authenticated, rate-limited and shaped:
 * the agent (404), the caller ID (400), the declared variables (400), then one durable
 * transaction that re-checks the key and writes the call with its dispatch job.
 */
export async function createOutboundCall(
  store: Store,
  caller: { account: AccountRecord; apiKeyId: string },
  request: OutboundCallRequest,
  now: () => Date = () => new Date(),
): Promise<CallRecord> {
  const accountId = caller.account.id;
  const agent = await store.agents.get(accountId, request.agent_id);
  if (!agent?.active) throw agentNotFound(request.agent_id);
  const number = await store.numbers.get(accountId, request.from_number);
  if (!number) throw numberNotConfigured();
  const variables = variablesProblem(agent.variables, request.variables);
  if (variables) throw variables;
  const created = await store.calls.createQueued({
    ...newCallFields(request, now),
    accountId,
    agentId: agent.id,
    apiKeyId: caller.apiKeyId,
  });
  if (!created) throw new AppError('unauthorized', invalidApiKeyMessage);
  return created;
}
