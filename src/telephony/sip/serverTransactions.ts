import { hasParam, paramValue, type Via } from './grammar.js';
import { type ParsedSipRequest, type SipResponse, serializeSipMessage } from './message.js';
import type { SipClock, TimerGroup } from './timers.js';
import { isReliable, type NetworkTarget } from './transport.js';

export interface ServerTransactionContext {
  readonly clock: SipClock;
  sendBytes(data: Buffer, target: NetworkTarget): Promise<void>;
  removeServer(key: string): void;
  reportSendError(error: unknown): void;
}

/**
 * Server transaction key (RFC 3261 §17.2.3): branch, sent-by and method, ACK folded into INVITE.
 * Requests from RFC 2543 peers (no magic cookie) fall back to Call-ID, CSeq number and From tag.
 */
export function serverTransactionKey(request: ParsedSipRequest, methodOverride?: string): string {
  const topVia = request.vias[0];
  const method = methodOverride ?? (request.method === 'ACK' ? 'INVITE' : request.method);
  const branch = paramValue(topVia.params, 'branch') ?? '';
  const sentBy = `${topVia.host.toLowerCase()}:${topVia.port ?? 5060}`;
  if (branch.startsWith('z9hG4bK')) return `${branch}|${sentBy}|${method}`;
  const fromTag = paramValue(request.from.params, 'tag') ?? '';
  return `2543|${request.callId}|${request.cseq.seq}|${fromTag}|${sentBy}|${method}`;
}

/**
 * Where responses go (RFC 3581 §4 over RFC 3261 §18.2.2): always the address the request came
 * from, and its source port when the Via asks for rport, otherwise the Via's sent-by port. A Via
 * `maddr` (or `received`) is never followed: it would let anyone who can send us a datagram aim
 * our responses and their retransmissions at a third address.
 */
export function responseTarget(topVia: Via, source: NetworkTarget): NetworkTarget {
  // Over a stream the response goes back on the connection the request came in on (§18.2.2).
  if (isReliable(source)) return source;
  if (hasParam(topVia.params, 'rport')) return source;
  return { host: source.host, port: topVia.port ?? 5060 };
}

abstract class ServerTransaction {
  readonly key: string;
  readonly request: ParsedSipRequest;
  readonly source: NetworkTarget;
  protected readonly context: ServerTransactionContext;
  protected readonly timers: TimerGroup;
  protected readonly target: NetworkTarget;
  protected lastResponse: Buffer | null = null;
  protected lastStatus = 0;
  protected terminated = false;

  constructor(context: ServerTransactionContext, request: ParsedSipRequest, source: NetworkTarget) {
    this.context = context;
    this.request = request;
    this.source = source;
    this.key = serverTransactionKey(request);
    this.timers = context.clock.group();
    this.target = responseTarget(request.vias[0], source);
  }

  /** The final status sent, or 0 while none has been. */
  get finalStatus(): number {
    return this.lastStatus >= 200 ? this.lastStatus : 0;
  }

  get isTerminated(): boolean {
    return this.terminated;
  }

  protected transmit(data: Buffer): void {
    this.context.sendBytes(data, this.target).catch((error: unknown) => this.context.reportSendError(error));
  }

  /** A retransmission of the request: repeat the last response, if any. */
  receiveRetransmission(): void {
    if (this.lastResponse !== null && !this.terminated) this.transmit(this.lastResponse);
  }

  terminate(): void {
    if (this.terminated) return;
    this.terminated = true;
    this.timers.stopAll();
    this.context.removeServer(this.key);
  }
}

/** Non-INVITE server transaction (RFC 3261 §17.2.2). */
export class NonInviteServerTransaction extends ServerTransaction {
  respond(response: SipResponse): void {
    if (this.terminated || this.finalStatus !== 0) return;
    this.lastResponse = serializeSipMessage(response);
    this.lastStatus = response.status;
    this.transmit(this.lastResponse);
    if (response.status >= 200) {
      const timerJMs = isReliable(this.source) ? 0 : this.context.clock.transactionTimeoutMs;
      this.timers.start('J', timerJMs, () => this.terminate());
    }
  }
}

type InviteServerState = 'proceeding' | 'accepted' | 'completed' | 'confirmed';

/**
 * INVITE server transaction (RFC 3261 §17.2.1 with RFC 6026). It also retransmits a 2xx until
 * the dialog reports the ACK (the UAS core duty of §13.3.1.4), so callers only say "answered".
 */
export class InviteServerTransaction extends ServerTransaction {
  private state: InviteServerState = 'proceeding';
  /** Called when a final response was never acknowledged (timer H, or 64 × T1 for a 2xx). */
  onAckTimeout: (() => void) | null = null;

  get currentState(): InviteServerState {
    return this.state;
  }

  respond(response: SipResponse): void {
    if (this.terminated || this.state !== 'proceeding') return;
    const bytes = serializeSipMessage(response);
    this.lastResponse = bytes;
    this.lastStatus = response.status;
    this.transmit(bytes);
    if (response.status < 200) return;
    this.state = response.status < 300 ? 'accepted' : 'completed';
    // A 2xx is repeated until its ACK whatever the transport (the UAS core's duty, §13.3.1.4); a
    // non-2xx only over UDP (timer G, §17.2.1).
    if (response.status < 300 || !isReliable(this.source))
      this.scheduleRetransmit(this.context.clock.settings.t1Ms);
    this.timers.start('H', this.context.clock.transactionTimeoutMs, () => {
      const unacknowledged = this.state === 'accepted' || this.state === 'completed';
      this.terminate();
      if (unacknowledged) this.onAckTimeout?.();
    });
  }

  private scheduleRetransmit(intervalMs: number): void {
    this.timers.start('G', intervalMs, () => {
      if (this.lastResponse === null || (this.state !== 'accepted' && this.state !== 'completed')) return;
      this.transmit(this.lastResponse);
      this.scheduleRetransmit(Math.min(intervalMs * 2, this.context.clock.settings.t2Ms));
    });
  }

  /** An ACK matched this transaction (the ACK of a non-2xx final). */
  receiveAck(): void {
    if (this.state !== 'completed') return;
    this.state = 'confirmed';
    this.timers.stopAll();
    const timerIMs = isReliable(this.source) ? 0 : this.context.clock.settings.t4Ms;
    this.timers.start('I', timerIMs, () => this.terminate());
  }

  /** The dialog received the ACK for our 2xx: stop retransmitting, absorb stray INVITE copies a while. */
  acknowledge2xx(): void {
    if (this.state !== 'accepted') return;
    this.state = 'confirmed';
    this.timers.stopAll();
    this.timers.start('L', this.context.clock.transactionTimeoutMs, () => this.terminate());
  }
}

export type AnyServerTransaction = InviteServerTransaction | NonInviteServerTransaction;
