import { maskPhone } from '../../domain/phone.js';
import { parseNameAddr } from '../sip/index.js';
import { type SandboxPersonaName, sandboxPersonaFor } from './personas.js';
import type { SandboxCall } from './sandboxCall.js';

/**
 * How the sandbox carrier answers a cold transfer (REFER) on one of its calls, as a carrier that
 * transfers does: 202, a NOTIFY `100 Trying`, then a final NOTIFY with what the target did — the
 * target being the persona its number reaches (busy → 486, no_answer → 480 after a ring,
 * unreachable → 404, anyone else answers: 200). The refuses_transfer persona's line refuses REFER
 * with 405, as a trunk without transfers does. The transferor hangs up after the 200.
 */

const tryingAfterMs = 20;

function finalNotifyFor(target: SandboxPersonaName | null): { statusLine: string; afterMs: number } {
  switch (target) {
    case null:
    case 'unreachable':
      return { statusLine: 'SIP/2.0 404 Not Found', afterMs: 100 };
    case 'busy':
      return { statusLine: 'SIP/2.0 486 Busy Here', afterMs: 150 };
    case 'no_answer':
      return { statusLine: 'SIP/2.0 480 Temporarily Unavailable', afterMs: 1_000 };
    default:
      return { statusLine: 'SIP/2.0 200 OK', afterMs: 300 };
  }
}

/** The E.164 user of a Refer-To value (`<sip:+15550100001@host>`), or null. */
function referredNumber(referTo: string): string | null {
  return parseNameAddr(referTo)?.uri.user ?? null;
}

export function handleSandboxTransfers(call: SandboxCall, persona: SandboxPersonaName): void {
  call.incoming.referHandler = (referTo) => {
    if (persona === 'refuses_transfer') {
      call.logger.info('sandbox line refuses the transfer: 405');
      return 405;
    }
    const number = referredNumber(referTo);
    const target = number === null ? null : sandboxPersonaFor(number);
    const final = finalNotifyFor(target);
    call.logger.info({ to: number ? maskPhone(number) : null, result: final.statusLine }, 'sandbox transfer');
    call.after(tryingAfterMs, () => call.incoming.notifyTransfer('SIP/2.0 100 Trying', false));
    call.after(final.afterMs, () => call.incoming.notifyTransfer(final.statusLine, true));
    return 202;
  };
}
