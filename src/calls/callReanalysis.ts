import { accountVendorKeys } from '../admin/credentials.js';
import { isTerminal } from '../domain/callStatus.js';
import { AppError } from '../domain/errors.js';
import type { CallRecord } from '../domain/records.js';
import type { Logger } from '../logger.js';
import type { SecretBox } from '../secrets/secretBox.js';
import type { Store } from '../store/types.js';
import type { VoiceStack } from '../voice/voiceStack.js';

export interface CallReanalysisParts {
  store: Store;
  secretBox: SecretBox;
  voice: Pick<VoiceStack, 'reanalyze'>;
  logger: Logger;
}

/**
 * POST /v1/calls/{id}/analysis: runs the post-call analysis of an ended, answered call again with
 * its agent's settings as they are now, and stores the result in place of the old one (analysis
 * and extracted_data). A failed analysis is stored too, with its reason, as at the end of a call.
 */
export async function reanalyzeCall(
  parts: CallReanalysisParts,
  accountId: string,
  callId: string,
): Promise<CallRecord> {
  const call = await parts.store.calls.get(accountId, callId);
  if (!call) throw new AppError('not_found', `call ${callId} not found`);
  if (!isTerminal(call.status))
    throw new AppError('conflict', `call ${call.id} has not ended (${call.status}): analyse it once it has`);
  if (call.inProgressAt === null)
    throw new AppError('conflict', `call ${call.id} was never answered (${call.status}): nothing to analyse`);
  const agent = await parts.store.agents.get(accountId, call.agentId);
  if (!agent) throw new AppError('conflict', `the agent of call ${call.id} no longer exists`);
  const log = parts.logger.child({ callId: call.id });
  const keys = await accountVendorKeys(parts.store, parts.secretBox, accountId);
  const result = await parts.voice.reanalyze(agent, call, log, keys);
  const updated = await parts.store.calls.setAnalysis(accountId, call.id, {
    extractedData: result.data,
    analysis: result.analysis,
  });
  if (!updated) throw new AppError('not_found', `call ${callId} not found`);
  log.info({ status: result.analysis.status }, 'the call was analysed again');
  return updated;
}
