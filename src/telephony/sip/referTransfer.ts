import { contactHeader, type Dialog } from './dialog.js';
import { answerDigestChallenge, type DigestCredentials } from './digest.js';
import type { CallServices } from './inDialog.js';
import { headerValue, type ParsedSipRequest, type SipHeader } from './message.js';
import type { NetworkTarget } from './transport.js';

/**
 * A cold transfer (RFC 3515 REFER, RFC 5589): asks the far end to call `referTo` instead of us,
 * then follows the implicit subscription's NOTIFYs (`message/sipfrag`, RFC 3420) until one carries
 * a final status. The transferor hangs up after a 2xx; a refused REFER or a failed attempt leaves
 * the call as it was.
 */

export type TransferResult =
  /** The far end reached the target (the NOTIFY's sipfrag said 2xx). */
  | {
      readonly kind: 'transferred';
      readonly status: number;
      /**
       * Absent: the far end transferred (REFER). `bridge`: the line refused REFER, callwright dialled
       * the target and bridged the legs; `warm`: callwright dialled, briefed and bridged.
       */
      readonly via?: 'bridge' | 'warm';
      /** What the person taking the call was told first (a warm transfer). */
      readonly whisper?: string;
    }
  /** The REFER itself was refused (e.g. 405, 501, 603: the trunk does not transfer). */
  | { readonly kind: 'refused'; readonly status: number }
  /** Accepted, but the target was not reached (busy, no answer…), or no final NOTIFY came. */
  | {
      readonly kind: 'failed';
      readonly status: number | null;
      readonly reason: string;
      /** The target rang out without answering (callwright's own ring timeout). */
      readonly noAnswer?: boolean;
      /** The person who answered a warm transfer declined it (settings.transfer.decline_digit). */
      readonly declined?: boolean;
    };

/** The status code of a sipfrag body's status line (`SIP/2.0 200 OK`), or null. */
export function sipfragStatus(body: string): number | null {
  const match = /^SIP\/2\.0\s+(\d{3})\b/.exec(body.trimStart());
  return match ? Number(match[1]) : null;
}

export class ReferTransfer {
  readonly result: Promise<TransferResult>;
  private settle: (result: TransferResult) => void = () => {};
  private settled = false;
  private accepted = false;
  private readonly timer: NodeJS.Timeout;

  constructor(
    private readonly services: CallServices,
    private readonly dialog: Dialog,
    private readonly target: NetworkTarget,
    private readonly referTo: string,
    options: { timeoutMs: number; credentials?: DigestCredentials },
  ) {
    this.result = new Promise((resolve) => {
      this.settle = resolve;
    });
    this.timer = setTimeout(
      () => this.finish({ kind: 'failed', status: null, reason: 'no final NOTIFY in time' }),
      options.timeoutMs,
    );
    this.timer.unref();
    this.send(null, options.credentials);
  }

  /** A NOTIFY of this transfer's subscription (already answered 200). */
  notify(request: ParsedSipRequest): void {
    if (!this.accepted) this.accepted = true;
    const status = sipfragStatus(request.body);
    const terminated = /^terminated/i.test(headerValue(request, 'Subscription-State') ?? '');
    if (status === null || status < 200) {
      if (terminated)
        this.finish({ kind: 'failed', status, reason: 'the subscription ended without a result' });
      return;
    }
    this.finish(
      status < 300
        ? { kind: 'transferred', status }
        : { kind: 'failed', status, reason: `the target answered ${status}` },
    );
  }

  private send(authorization: SipHeader | null, credentials: DigestCredentials | undefined): void {
    const headers: SipHeader[] = [
      { name: 'Refer-To', value: `<${this.referTo}>` },
      { name: 'Referred-By', value: `<${addressUri(this.dialog.localAddress)}>` },
      contactHeader(this.services.local),
      ...(authorization ? [authorization] : []),
    ];
    const refer = this.dialog.createRequest('REFER', this.services.local, { headers });
    this.services.logger.info({ callId: this.dialog.callId }, 'SIP REFER sent');
    this.services.layer.sendRequest(refer, this.target, {
      onResponse: (response) => {
        if (response.status < 200) return;
        if (response.status < 300) {
          this.accepted = true;
          return;
        }
        const retry =
          authorization === null && credentials !== undefined
            ? answerDigestChallenge(response, credentials, { method: 'REFER', uri: this.dialog.remoteTarget })
            : null;
        if (retry !== null) {
          this.send(retry, credentials);
          return;
        }
        this.finish({ kind: 'refused', status: response.status });
      },
      onTimeout: () => this.finish({ kind: 'failed', status: null, reason: 'no response to REFER' }),
      onTransportError: (error) => this.finish({ kind: 'failed', status: null, reason: error.message }),
    });
  }

  private finish(result: TransferResult): void {
    if (this.settled) return;
    this.settled = true;
    clearTimeout(this.timer);
    this.services.logger.info({ callId: this.dialog.callId, result: result.kind }, 'SIP transfer over');
    this.settle(result);
  }
}

/** The URI inside a From/To value (`"Name" <sip:a@b>;tag=x` → `sip:a@b`). */
function addressUri(value: string): string {
  const bracketed = /<([^>]+)>/.exec(value);
  return bracketed ? (bracketed[1] as string) : (value.split(';')[0] ?? value).trim();
}
