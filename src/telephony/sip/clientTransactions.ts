import { randomBytes } from 'node:crypto';
import { formatVia, paramValue } from './grammar.js';
import { headerValues, type ParsedSipResponse, type SipRequest, serializeSipMessage } from './message.js';
import type { SipClock, TimerGroup } from './timers.js';
import { isReliable, type NetworkTarget } from './transport.js';

/** RFC 3261 magic cookie that marks a branch as globally unique. */
export const branchCookie = 'z9hG4bK';

/** A branch id: the magic cookie and 128 random bits. */
export function newBranch(): string {
  return branchCookie + randomBytes(16).toString('base64url');
}

/** What a client transaction needs from the layer that owns it. */
export interface ClientTransactionContext {
  readonly clock: SipClock;
  sendBytes(data: Buffer, target: NetworkTarget): Promise<void>;
  /** Called once when the transaction ends, so the layer forgets it. */
  removeClient(key: string): void;
}

export interface ClientTransactionEvents {
  /** Every provisional and final response passed up to the transaction user. */
  onResponse(response: ParsedSipResponse): void;
  /** Timer B or F fired without any final response. */
  onTimeout(): void;
  onTransportError(error: Error): void;
}

export function clientTransactionKey(branch: string, method: string): string {
  return `${branch}|${method === 'ACK' ? 'INVITE' : method}`;
}

/** The branch of the top Via a request was built with. */
export function requestBranch(request: SipRequest): string {
  const topVia = headerValues(request, 'Via')[0] ?? '';
  const match = /;\s*branch=([^;,\s]+)/i.exec(topVia);
  return match?.[1] ?? '';
}

abstract class ClientTransaction {
  readonly key: string;
  readonly request: SipRequest;
  readonly target: NetworkTarget;
  protected readonly context: ClientTransactionContext;
  protected readonly events: ClientTransactionEvents;
  protected readonly timers: TimerGroup;
  protected readonly requestBytes: Buffer;
  protected terminated = false;

  constructor(
    context: ClientTransactionContext,
    request: SipRequest,
    target: NetworkTarget,
    events: ClientTransactionEvents,
  ) {
    this.context = context;
    this.request = request;
    this.target = target;
    this.events = events;
    this.timers = context.clock.group();
    this.key = clientTransactionKey(requestBranch(request), request.method);
    this.requestBytes = serializeSipMessage(request);
  }

  abstract start(): void;
  abstract receive(response: ParsedSipResponse): void;

  get isTerminated(): boolean {
    return this.terminated;
  }

  protected transmit(data: Buffer): void {
    this.context.sendBytes(data, this.target).catch((error: unknown) => {
      if (this.terminated) return;
      this.terminate();
      this.events.onTransportError(error instanceof Error ? error : new Error(String(error)));
    });
  }

  terminate(): void {
    if (this.terminated) return;
    this.terminated = true;
    this.timers.stopAll();
    this.context.removeClient(this.key);
  }
}

type InviteClientState = 'calling' | 'proceeding' | 'accepted' | 'completed';

/** INVITE client transaction (RFC 3261 §17.1.1, with the Accepted state of RFC 6026). */
export class InviteClientTransaction extends ClientTransaction {
  private state: InviteClientState = 'calling';
  private ackBytes: Buffer | null = null;

  start(): void {
    const { t1Ms } = this.context.clock.settings;
    this.transmit(this.requestBytes);
    // A stream carries the request itself: timers A and E run only over UDP (RFC 3261 §17.1).
    if (!isReliable(this.target)) this.scheduleRetransmit(t1Ms);
    this.timers.start('B', this.context.clock.transactionTimeoutMs, () => {
      if (this.state !== 'calling') return;
      this.terminate();
      this.events.onTimeout();
    });
  }

  get currentState(): InviteClientState {
    return this.state;
  }

  private scheduleRetransmit(intervalMs: number): void {
    this.timers.start('A', intervalMs, () => {
      if (this.state !== 'calling') return;
      this.transmit(this.requestBytes);
      this.scheduleRetransmit(intervalMs * 2);
    });
  }

  receive(response: ParsedSipResponse): void {
    if (this.terminated) return;
    if (response.status < 200) {
      if (this.state !== 'calling' && this.state !== 'proceeding') return;
      this.state = 'proceeding';
      this.timers.stop('A');
      this.timers.stop('B');
      this.events.onResponse(response);
      return;
    }
    if (response.status < 300) {
      if (this.state === 'completed') return;
      if (this.state !== 'accepted') {
        this.state = 'accepted';
        this.timers.stopAll();
        this.timers.start('M', this.context.clock.transactionTimeoutMs, () => this.terminate());
      }
      // 2xx retransmissions go up too: the dialog layer answers each with its ACK.
      this.events.onResponse(response);
      return;
    }
    if (this.state === 'completed') {
      if (this.ackBytes !== null) this.transmit(this.ackBytes);
      return;
    }
    if (this.state === 'accepted') return;
    this.state = 'completed';
    this.timers.stopAll();
    this.ackBytes = serializeSipMessage(this.buildNon2xxAck(response));
    this.transmit(this.ackBytes);
    const timerDMs = isReliable(this.target) ? 0 : this.context.clock.settings.timerDMs;
    this.timers.start('D', timerDMs, () => this.terminate());
    this.events.onResponse(response);
  }

  /** RFC 3261 §17.1.1.3: same branch, the INVITE's Via and Route, the response's To. */
  private buildNon2xxAck(response: ParsedSipResponse): SipRequest {
    const invite = this.request;
    const topVia = headerValues(invite, 'Via')[0] ?? formatVia(response.vias[0]);
    const copied = invite.headers.filter((header) =>
      ['From', 'Call-ID', 'Route', 'Max-Forwards'].includes(header.name),
    );
    const toHeader = response.headers.find((header) => header.name === 'To');
    const cseq = response.cseq.seq;
    return {
      kind: 'request',
      method: 'ACK',
      requestUri: invite.requestUri,
      headers: [
        { name: 'Via', value: topVia },
        ...copied,
        { name: 'To', value: toHeader?.value ?? '' },
        { name: 'CSeq', value: `${cseq} ACK` },
      ],
      body: '',
    };
  }
}

type NonInviteClientState = 'trying' | 'proceeding' | 'completed';

/** Non-INVITE client transaction (RFC 3261 §17.1.2). */
export class NonInviteClientTransaction extends ClientTransaction {
  private state: NonInviteClientState = 'trying';

  start(): void {
    this.transmit(this.requestBytes);
    if (!isReliable(this.target)) this.scheduleRetransmit(this.context.clock.settings.t1Ms);
    this.timers.start('F', this.context.clock.transactionTimeoutMs, () => {
      if (this.state === 'completed') return;
      this.terminate();
      this.events.onTimeout();
    });
  }

  private scheduleRetransmit(intervalMs: number): void {
    this.timers.start('E', intervalMs, () => {
      if (this.state === 'completed') return;
      this.transmit(this.requestBytes);
      const { t2Ms } = this.context.clock.settings;
      this.scheduleRetransmit(this.state === 'trying' ? Math.min(intervalMs * 2, t2Ms) : t2Ms);
    });
  }

  receive(response: ParsedSipResponse): void {
    if (this.terminated || this.state === 'completed') return;
    if (response.status < 200) {
      this.state = 'proceeding';
      this.events.onResponse(response);
      return;
    }
    this.state = 'completed';
    this.timers.stopAll();
    const timerKMs = isReliable(this.target) ? 0 : this.context.clock.settings.t4Ms;
    this.timers.start('K', timerKMs, () => this.terminate());
    this.events.onResponse(response);
  }
}

/** The branch parameter of a parsed Via, or an empty string. */
export function viaBranch(params: Parameters<typeof paramValue>[0]): string {
  return paramValue(params, 'branch') ?? '';
}
