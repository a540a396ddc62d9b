/**
 * RFC 3261 timer values (§17, table 4) and a scheduler that can be swapped or sped up in tests.
 * Every timer the stack starts is tracked, so closing the user agent leaves none running.
 */

export interface SipTimerSettings {
  /** RTT estimate; base of timers A, B, E, F, G, H, J. Default 500 ms. */
  readonly t1Ms: number;
  /** Maximum retransmission interval for non-INVITE requests and INVITE responses. Default 4 s. */
  readonly t2Ms: number;
  /** Maximum time a message stays in the network. Default 5 s. */
  readonly t4Ms: number;
  /** Wait time for response retransmits after a non-2xx INVITE final (timer D). Default 32 s on UDP. */
  readonly timerDMs: number;
}

export const defaultSipTimerSettings: SipTimerSettings = {
  t1Ms: 500,
  t2Ms: 4_000,
  t4Ms: 5_000,
  timerDMs: 32_000,
};

/** A timer source; the default is Node's global setTimeout/clearTimeout. */
export interface TimerScheduler {
  setTimeout(callback: () => void, delayMs: number): unknown;
  clearTimeout(handle: unknown): void;
}

export const nodeTimerScheduler: TimerScheduler = {
  setTimeout: (callback, delayMs) => setTimeout(callback, delayMs),
  clearTimeout: (handle) => clearTimeout(handle as NodeJS.Timeout),
};

/** Fills in the defaults; with only t1Ms given, timer D scales with it (64 × T1) for fast tests. */
export function resolveTimerSettings(partial: Partial<SipTimerSettings> | undefined): SipTimerSettings {
  if (partial === undefined) return defaultSipTimerSettings;
  const t1Ms = partial.t1Ms ?? defaultSipTimerSettings.t1Ms;
  const scaled = partial.t1Ms !== undefined;
  return {
    t1Ms,
    t2Ms: partial.t2Ms ?? (scaled ? Math.max(t1Ms, t1Ms * 8) : defaultSipTimerSettings.t2Ms),
    t4Ms: partial.t4Ms ?? (scaled ? t1Ms * 10 : defaultSipTimerSettings.t4Ms),
    timerDMs: partial.timerDMs ?? (scaled ? t1Ms * 64 : defaultSipTimerSettings.timerDMs),
  };
}

/** Owns every live timer of one user agent. */
export class SipClock {
  readonly settings: SipTimerSettings;
  private readonly scheduler: TimerScheduler;
  private readonly live = new Set<unknown>();

  constructor(settings: SipTimerSettings, scheduler: TimerScheduler = nodeTimerScheduler) {
    this.settings = settings;
    this.scheduler = scheduler;
  }

  /** 64 × T1: timers B, F, H, J and the 2xx retransmission limit. */
  get transactionTimeoutMs(): number {
    return 64 * this.settings.t1Ms;
  }

  schedule(callback: () => void, delayMs: number): unknown {
    const handle = this.scheduler.setTimeout(() => {
      this.live.delete(handle);
      callback();
    }, delayMs);
    this.live.add(handle);
    return handle;
  }

  cancel(handle: unknown): void {
    if (!this.live.delete(handle)) return;
    this.scheduler.clearTimeout(handle);
  }

  get liveTimerCount(): number {
    return this.live.size;
  }

  cancelAll(): void {
    for (const handle of this.live) this.scheduler.clearTimeout(handle);
    this.live.clear();
  }

  group(): TimerGroup {
    return new TimerGroup(this);
  }
}

/** Named timers of one transaction or call; starting a name again replaces the old timer. */
export class TimerGroup {
  private readonly clock: SipClock;
  private readonly handles = new Map<string, unknown>();

  constructor(clock: SipClock) {
    this.clock = clock;
  }

  start(name: string, delayMs: number, callback: () => void): void {
    this.stop(name);
    const handle = this.clock.schedule(() => {
      this.handles.delete(name);
      callback();
    }, delayMs);
    this.handles.set(name, handle);
  }

  stop(name: string): void {
    const handle = this.handles.get(name);
    if (handle === undefined) return;
    this.handles.delete(name);
    this.clock.cancel(handle);
  }

  stopAll(): void {
    for (const name of [...this.handles.keys()]) this.stop(name);
  }
}
