import { newBranch } from './clientTransactions.js';
import { contactHeader, newCallId, newTag, viaHeader } from './dialog.js';
import { answerDigestChallenge, type DigestCredentials } from './digest.js';
import { TypedEvents } from './events.js';
import type { CallServices } from './inDialog.js';
import {
  headerValue,
  headerValues,
  type ParsedSipResponse,
  type SipHeader,
  type SipRequest,
} from './message.js';
import type { TimerGroup } from './timers.js';
import type { NetworkTarget } from './transport.js';

/**
 * A registration (RFC 3261 §10) of our contact at a registrar: REGISTER with digest credentials,
 * refreshed before the granted time runs out, retried with back-off after a failure (honouring
 * 423 Min-Expires and 503 Retry-After), and removed (Expires: 0) when stopped.
 */

export interface RegistrationOptions {
  /**
   * Where REGISTERs go (already resolved and vetted), and over which transport, in order of
   * preference (a domain's SRV targets): a server that does not answer, answers 503 or 408 hands
   * the attempt to the next one at once; the one that registers us keeps our refreshes; when all
   * have failed, the back-off starts and the next attempt begins again at the first.
   */
  readonly registrars: readonly NetworkTarget[];
  /** The Request-URI: the registrar's domain, e.g. `sip:pbx.example.com`. */
  readonly registrarUri: string;
  /** The address of record registered, e.g. `sip:1001@pbx.example.com`. */
  readonly aor: string;
  readonly credentials: DigestCredentials;
  /** The lifetime asked for. Default 3,600 s. */
  readonly expiresS?: number;
  /** Back-off after a failure: first wait, doubled up to the maximum. Defaults 30 s and 30 min. */
  readonly retryMinMs?: number;
  readonly retryMaxMs?: number;
  /** No refresh comes sooner than this after a registration, whatever the grant. Default 60 s. */
  readonly minRefreshMs?: number;
  /** Attempts (rounds of REGISTER) started in any minute; more wait. Default 6. */
  readonly maxAttemptsPerMinute?: number;
}

export const registrationDefaults = { minRefreshMs: 60_000, maxAttemptsPerMinute: 6 };

export type RegistrationState =
  | { readonly state: 'registering' }
  | { readonly state: 'registered'; readonly expiresS: number; readonly at: string }
  | {
      readonly state: 'failed';
      /** The final status, or null when the registrar did not answer. */
      readonly status: number | null;
      readonly reason: string;
      readonly retryInMs: number;
    }
  | { readonly state: 'stopped' };

export class SipRegistration extends TypedEvents<{ state: RegistrationState }> {
  private readonly callId = newCallId();
  private readonly fromTag = newTag();
  private seq = 0;
  private expiresS: number;
  private failures = 0;
  /** Which of `registrars` the REGISTERs go to now. */
  private registrarIndex = 0;
  private current: RegistrationState = { state: 'registering' };
  private stopped = false;
  /** When the attempts of the last minute started. */
  private attemptStartsMs: number[] = [];
  private saidGrantTooShort = false;

  constructor(
    private readonly services: CallServices,
    private readonly timers: TimerGroup,
    private readonly options: RegistrationOptions,
  ) {
    super(services.logger);
    this.expiresS = options.expiresS ?? 3_600;
  }

  get state(): RegistrationState {
    return this.current;
  }

  start(): void {
    void this.attempt();
  }

  /** Stops refreshing and removes our contact from the registrar (best effort). */
  async stop(): Promise<void> {
    if (this.stopped) return;
    this.stopped = true;
    this.timers.stopAll();
    if (this.current.state === 'registered') await this.exchange(0).catch(() => null);
    this.set({ state: 'stopped' });
  }

  private set(state: RegistrationState): void {
    this.current = state;
    this.emit('state', state);
  }

  /**
   * Whether another attempt may start now; otherwise it is put off until the oldest attempt of
   * the last minute leaves the window. A registrar that answers every REGISTER at once with a new
   * 423, a 503 or a short grant cannot make us send (and store a state) faster than this.
   */
  private mayAttemptNow(): boolean {
    const nowMs = Date.now();
    const windowMs = 60_000;
    this.attemptStartsMs = this.attemptStartsMs.filter((startMs) => nowMs - startMs < windowMs);
    const max = this.options.maxAttemptsPerMinute ?? registrationDefaults.maxAttemptsPerMinute;
    if (this.attemptStartsMs.length < max) {
      this.attemptStartsMs.push(nowMs);
      return true;
    }
    const waitMs = (this.attemptStartsMs[0] as number) + windowMs - nowMs;
    this.services.logger.warn({ max, waitMs }, 'SIP registration attempts per minute reached; waiting');
    this.timers.start('register', waitMs, () => void this.attempt());
    return false;
  }

  private async attempt(): Promise<void> {
    if (this.stopped || !this.mayAttemptNow()) return;
    if (this.current.state !== 'registered') this.set({ state: 'registering' });
    let response = await this.exchange(this.expiresS);
    while (
      !this.stopped &&
      movesToNextServer(response) &&
      this.registrarIndex + 1 < this.options.registrars.length
    ) {
      this.registrarIndex++;
      this.services.logger.info(
        { status: response?.status ?? null, registrar: this.registrarIndex },
        'SIP registration tries the next server',
      );
      response = await this.exchange(this.expiresS);
    }
    if (this.stopped) return;
    if (response === null) return this.fail(null, 'no answer from the registrar');
    if (response.status === 423) {
      const minimumS = Number(headerValue(response, 'Min-Expires'));
      if (Number.isInteger(minimumS) && minimumS > this.expiresS && minimumS <= 86_400) {
        this.expiresS = minimumS;
        return this.attempt();
      }
    }
    if (response.status >= 300) {
      const retryAfterS = Number(headerValue(response, 'Retry-After')?.split(';')[0]);
      return this.fail(
        response.status,
        response.reason,
        Number.isInteger(retryAfterS) ? retryAfterS * 1000 : null,
      );
    }
    const grantedS = grantedExpires(response, this.expiresS);
    this.failures = 0;
    this.set({ state: 'registered', expiresS: grantedS, at: new Date().toISOString() });
    // Refresh with a margin: half the time for short grants, else 30 s before the end; never
    // sooner than the floor (a registrar granting 1 s would otherwise get two REGISTERs a second).
    const refreshInS = grantedS <= 60 ? grantedS / 2 : grantedS - 30;
    const minRefreshMs = this.options.minRefreshMs ?? registrationDefaults.minRefreshMs;
    if (refreshInS * 1000 < minRefreshMs && !this.saidGrantTooShort) {
      this.saidGrantTooShort = true;
      this.services.logger.warn(
        { grantedS, refreshInMs: minRefreshMs },
        'SIP registrar granted a lifetime shorter than the refresh floor; refreshing at the floor',
      );
    }
    this.timers.start('register', Math.max(minRefreshMs, refreshInS * 1000), () => void this.attempt());
  }

  private fail(status: number | null, reason: string, retryAfterMs: number | null = null): void {
    const minMs = this.options.retryMinMs ?? 30_000;
    const maxMs = this.options.retryMaxMs ?? 30 * 60_000;
    const backoffMs = Math.min(maxMs, minMs * 2 ** this.failures);
    this.failures++;
    // The next attempt starts again from the most preferred server.
    this.registrarIndex = 0;
    const retryInMs = Math.max(backoffMs, Math.min(maxMs, retryAfterMs ?? 0));
    this.services.logger.warn({ status, reason: reason.slice(0, 80), retryInMs }, 'SIP registration failed');
    this.set({ state: 'failed', status, reason: reason.slice(0, 200), retryInMs });
    this.timers.start('register', retryInMs, () => void this.attempt());
  }

  /** One REGISTER, answered once more with credentials when challenged; null when nothing answered. */
  private async exchange(expiresS: number): Promise<ParsedSipResponse | null> {
    const first = await this.send(expiresS, null);
    if (first === null || (first.status !== 401 && first.status !== 407)) return first;
    const authorization = answerDigestChallenge(first, this.options.credentials, {
      method: 'REGISTER',
      uri: this.options.registrarUri,
    });
    return authorization === null ? first : this.send(expiresS, authorization);
  }

  private send(expiresS: number, authorization: SipHeader | null): Promise<ParsedSipResponse | null> {
    const local = this.services.local;
    const request: SipRequest = {
      kind: 'request',
      method: 'REGISTER',
      requestUri: this.options.registrarUri,
      headers: [
        viaHeader(local, newBranch()),
        { name: 'Max-Forwards', value: '70' },
        { name: 'From', value: `<${this.options.aor}>;tag=${this.fromTag}` },
        { name: 'To', value: `<${this.options.aor}>` },
        { name: 'Call-ID', value: this.callId },
        { name: 'CSeq', value: `${++this.seq} REGISTER` },
        contactHeader(local),
        { name: 'Expires', value: String(expiresS) },
        ...(authorization ? [authorization] : []),
        { name: 'User-Agent', value: local.userAgentName },
      ],
      body: '',
    };
    return new Promise((resolve) => {
      const registrar = this.options.registrars[this.registrarIndex] as NetworkTarget;
      this.services.layer.sendRequest(request, registrar, {
        onResponse: (response) => {
          if (response.status >= 200) resolve(response);
        },
        onTimeout: () => resolve(null),
        onTransportError: () => resolve(null),
      });
    });
  }
}

/** No answer, 503 (overloaded or down) or 408: another server of the domain may do better. */
function movesToNextServer(response: ParsedSipResponse | null): boolean {
  return response === null || response.status === 503 || response.status === 408;
}

/** The lifetime the registrar granted: our Contact's `expires`, else Expires, else what we asked. */
function grantedExpires(response: ParsedSipResponse, askedS: number): number {
  for (const contact of headerValues(response, 'Contact').flatMap((value) => value.split(/,(?=\s*<)/))) {
    if (!/<sip:callwright@/i.test(contact)) continue;
    const expires = /;\s*expires\s*=\s*(\d+)/i.exec(contact)?.[1];
    if (expires !== undefined) return Math.max(1, Number(expires));
  }
  const header = Number(headerValue(response, 'Expires'));
  return Number.isInteger(header) && header > 0 ? header : askedS;
}
