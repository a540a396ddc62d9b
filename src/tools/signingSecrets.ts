import type { AgentRecord } from '../domain/records.js';
import type { SecretBox } from '../secrets/secretBox.js';
import type { Store } from '../store/types.js';
import { activeSecrets } from '../webhooks/deliveryWorker.js';

/** Whether the agent declares tools of its own (only then are the signing secrets opened). */
export function agentHasTools(agent: AgentRecord): boolean {
  const tools = (agent.settings as { tools?: unknown }).tools;
  return Array.isArray(tools) && tools.length > 0;
}

/**
 * The secrets a tool request is signed with: the account's webhook secrets (the current one, and
 * the previous one while a rotation lasts), so the customer verifies tools and events with one
 * code. Null when the account has no webhook endpoint (its tools then answer with an error).
 */
export async function toolSigningSecrets(
  store: Pick<Store, 'webhookEndpoints'>,
  secretBox: SecretBox,
  accountId: string,
): Promise<string[] | null> {
  const endpoint = await store.webhookEndpoints.get(accountId);
  return endpoint ? activeSecrets(endpoint, Date.now(), secretBox) : null;
}
