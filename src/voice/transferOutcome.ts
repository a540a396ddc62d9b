import type { TransferResult } from '../telephony/sip/index.js';

/** A transfer's transcript line: `human: transferred (200)`, `busy_desk: failed: …`. */
export function transferTranscriptText(target: string, result: TransferResult): string {
  const how =
    result.kind === 'transferred'
      ? result.via === 'bridge'
        ? `the line refused REFER; dialled and bridged (${result.status})`
        : result.via === 'warm'
          ? `briefed${result.whisper ? ` ("${result.whisper.slice(0, 200)}")` : ''} and bridged (${result.status})`
          : `transferred (${result.status})`
      : result.kind === 'refused'
        ? `refused by the line (${result.status})`
        : `failed: ${result.reason}`;
  return `${target}: ${how}`;
}

/** Why a transfer did not happen, as the agent (the model or the script) is told. */
export function transferFailureReason(result: Exclude<TransferResult, { kind: 'transferred' }>): string {
  return result.kind === 'refused'
    ? `the phone line refused the transfer (SIP ${result.status})`
    : result.status
      ? `the transfer target did not take the call (SIP ${result.status})`
      : `the transfer did not go through (${result.reason})`;
}
