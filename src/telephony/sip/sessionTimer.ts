import type { Dialog } from './dialog.js';
import type { CallServices } from './inDialog.js';
import {
  headerValue,
  headerValues,
  type ParsedSipRequest,
  type ParsedSipResponse,
  type SipHeader,
  type SipMessage,
} from './message.js';
import type { TimerGroup } from './timers.js';
import type { NetworkTarget } from './transport.js';

/**
 * Session timers (RFC 4028): a dialog is refreshed by re-INVITE or UPDATE every half interval by
 * the side named `refresher`; the other side ends the dialog when no refresh came in time.
 */

export const defaultSessionExpiresS = 1800;
/** The smallest interval we accept or ask for (RFC 4028 §4: at least 90 s). */
export const minSessionExpiresS = 90;

export interface SessionExpires {
  readonly intervalS: number;
  /** Who refreshes, as the request or response named it; null when it did not say. */
  readonly refresher: 'uac' | 'uas' | null;
}

/** Reads `Session-Expires: 1800;refresher=uac` (or compact `x:`); null when absent or malformed. */
export function sessionExpiresOf(message: SipMessage): SessionExpires | null {
  const value = headerValue(message, 'Session-Expires');
  const match = value === undefined ? null : /^\s*(\d{1,9})\s*((?:;[^;]*)*)$/.exec(value);
  if (!match) return null;
  const intervalS = Number(match[1]);
  if (intervalS < 1) return null;
  const refresher = /;\s*refresher\s*=\s*(uac|uas)\b/i.exec(match[2] ?? '')?.[1]?.toLowerCase();
  return { intervalS, refresher: refresher === 'uac' || refresher === 'uas' ? refresher : null };
}

/** Whether a header list (Supported, Require, Allow) names `token`, case-insensitively. */
export function listsToken(message: SipMessage, headerName: string, token: string): boolean {
  return headerValues(message, headerName)
    .flatMap((value) => value.split(','))
    .some((item) => item.trim().toLowerCase() === token.toLowerCase());
}

/** The headers of an INVITE (or refresh) asking for session timers with this interval. */
export function sessionTimerRequestHeaders(intervalS: number, refresher?: 'uac'): SipHeader[] {
  return [
    { name: 'Supported', value: 'timer' },
    { name: 'Session-Expires', value: refresher ? `${intervalS};refresher=${refresher}` : String(intervalS) },
    { name: 'Min-SE', value: String(minSessionExpiresS) },
  ];
}

/** The Min-SE of a 422 when it asks for more than we did (and at most a day); else null. */
export function longerSessionAsked(response: SipMessage, askedS: number): number | null {
  const minimumS = Number(headerValue(response, 'Min-SE')?.split(';')[0]?.trim());
  return Number.isInteger(minimumS) && minimumS > askedS && minimumS <= 86_400 ? minimumS : null;
}

/** Runs one dialog's session timer: refresh at half the interval, or expire before its end. */
export class SessionTimer {
  private intervalS = 0;

  constructor(
    private readonly timers: TimerGroup,
    private readonly actions: { refresh(): void; expire(): void },
  ) {}

  /** The interval in force, or 0 when no session timer runs. */
  get currentIntervalS(): number {
    return this.intervalS;
  }

  /** (Re)starts the timer: `weRefresh` sends a refresh at half the interval; otherwise we wait for one. */
  arm(intervalS: number, weRefresh: boolean): void {
    this.stop();
    this.intervalS = intervalS;
    if (weRefresh) {
      this.timers.start('sessionRefresh', (intervalS * 1000) / 2, () => this.actions.refresh());
      return;
    }
    // RFC 4028 §10: the other side has until the interval less a third (at most 32 s) to refresh.
    const graceS = Math.min(32, intervalS / 3);
    this.timers.start('sessionExpiry', (intervalS - graceS) * 1000, () => this.actions.expire());
  }

  stop(): void {
    this.timers.stop('sessionRefresh');
    this.timers.stop('sessionExpiry');
  }
}

/**
 * Sends one refresh of an established dialog: UPDATE without a body when the far end allows
 * UPDATE, else a re-INVITE carrying our current SDP (acknowledged here). Resolves with the final
 * response, or null when none came or it could not be sent.
 */
export function sendSessionRefresh(
  services: CallServices,
  dialog: Dialog,
  target: NetworkTarget,
  options: { intervalS: number; useUpdate: boolean; localSdp: string },
): Promise<ParsedSipResponse | null> {
  const method = options.useUpdate ? 'UPDATE' : 'INVITE';
  const headers = sessionTimerRequestHeaders(options.intervalS, 'uac');
  const request = dialog.createRequest(method, services.local, {
    headers,
    ...(options.useUpdate ? {} : { body: options.localSdp }),
  });
  return new Promise((resolve) => {
    services.layer.sendRequest(request, target, {
      onResponse: (response) => {
        if (response.status < 200) return;
        if (method === 'INVITE' && response.status < 300) {
          const ack = dialog.createRequest('ACK', services.local, { seq: response.cseq.seq });
          services.layer.sendStateless(ack, target).catch(() => {});
        }
        resolve(response);
      },
      onTimeout: () => resolve(null),
      onTransportError: () => resolve(null),
    });
  });
}

export interface DialogRefreshContext {
  readonly services: CallServices;
  readonly timers: TimerGroup;
  /** The dialog, and where its requests go now. */
  dialog(): { dialog: Dialog; target: NetworkTarget } | null;
  /** Our SDP as last sent (the body of a re-INVITE refresh). */
  localSdp(): string;
  /** The session ended: no refresh was answered, or the far end did not refresh in time. */
  expired(reason: string): void;
}

/**
 * The session timer of a dialog: for a call we placed armed from the INVITE's 2xx (for one we
 * answered, from the INVITE), re-armed by every refresh
 * either side makes; refreshes itself when it is the refresher, ends the call when a refresh
 * fails (no answer, 481, 408) or the far end lets the session lapse.
 */
export class DialogRefresher {
  private readonly timer: SessionTimer;
  private peerAllowsUpdate = false;

  constructor(private readonly context: DialogRefreshContext) {
    this.timer = new SessionTimer(context.timers, {
      refresh: () => void this.refresh(),
      expire: () => context.expired('session expired: the far end did not refresh it'),
    });
  }

  /** The INVITE's 2xx: a Session-Expires there starts the timer (refresher=uac is us). */
  answered(response: ParsedSipResponse): void {
    this.peerAllowsUpdate = listsToken(response, 'Allow', 'UPDATE');
    const expires = sessionExpiresOf(response);
    if (expires !== null) this.timer.arm(expires.intervalS, expires.refresher !== 'uas');
  }

  /**
   * We answered an INVITE that asked for session timers (the UAS side, issue 40): `headers` go in
   * our 2xx, and the timer runs from now — refreshed by us when we are the refresher, else ended
   * when the caller lets it lapse. Null when the INVITE asked for none.
   */
  answeringInvite(invite: ParsedSipRequest): SipHeader[] {
    const answer = sessionTimerAnswer(invite);
    if (answer === null) return [];
    this.peerAllowsUpdate = listsToken(invite, 'Allow', 'UPDATE');
    this.timer.arm(answer.intervalS, answer.weRefresh);
    return answer.headers;
  }

  /** The far end refreshed (its re-INVITE or UPDATE; refresher=uac is the far end then). */
  refreshedByFarEnd(expires: SessionExpires): void {
    this.timer.arm(expires.intervalS, expires.refresher === 'uas');
  }

  stop(): void {
    this.timer.stop();
  }

  private async refresh(): Promise<void> {
    const current = this.context.dialog();
    if (current === null) return;
    const intervalS = this.timer.currentIntervalS;
    const response = await sendSessionRefresh(this.context.services, current.dialog, current.target, {
      intervalS,
      useUpdate: this.peerAllowsUpdate,
      localSdp: this.context.localSdp(),
    });
    if (response === null || response.status === 481 || response.status === 408) {
      this.context.expired(`session refresh failed (${response?.status ?? 'no answer'})`);
      return;
    }
    // Another failure (a 491 glare, a 5xx) keeps the call: the next refresh is tried in half the time left.
    const expires = response.status < 300 ? sessionExpiresOf(response) : null;
    if (expires !== null) this.timer.arm(expires.intervalS, expires.refresher !== 'uas');
    else this.timer.arm(Math.max(minSessionExpiresS, intervalS / 2), true);
  }
}

/**
 * What a UAS answers to an INVITE's session-timer request (RFC 4028 §9): the caller's refresher
 * stands; unnamed, the caller refreshes if it supports timers, else we do. Null: it asked for none.
 */
export function sessionTimerAnswer(
  invite: ParsedSipRequest,
): { intervalS: number; weRefresh: boolean; headers: SipHeader[] } | null {
  const asked = sessionExpiresOf(invite);
  if (asked === null) return null;
  const callerSupports = listsToken(invite, 'Supported', 'timer');
  const refresher = asked.refresher ?? (callerSupports ? 'uac' : 'uas');
  return {
    intervalS: asked.intervalS,
    weRefresh: refresher === 'uas',
    headers: [
      { name: 'Session-Expires', value: `${asked.intervalS};refresher=${refresher}` },
      ...(callerSupports ? [{ name: 'Require', value: 'timer' }] : []),
    ],
  };
}
