import { randomBytes } from 'node:crypto';
import type { CallingHoursGate } from '../campaigns/callingHoursGate.js';
import { agentWithOverrides } from '../domain/agentOverrides.js';
import { type TelephonyEnding, terminalOutcomeOf } from '../domain/callOutcome.js';
import type { QueuedCallWait } from '../domain/campaignWaits.js';
import { AppError } from '../domain/errors.js';
import type { AgentRecord, CallRecord } from '../domain/records.js';
import { isScenarioCalleeNumber } from '../domain/scenarios.js';
import type { WebIceServer } from '../domain/webCalls.js';
import type { LiveCallCount } from '../metrics/turnMetrics.js';
import { retryBriefly } from '../net/retryBriefly.js';
import type { Job, JobQueue } from '../queue/types.js';
import { queueNames } from '../queue/types.js';
import { recordCallTrace } from '../telemetry/callTrace.js';
import type { IncomingCall } from '../telephony/sip/index.js';
import { CallSession, type CallWorkerContext } from './callSession.js';
import { hangUpOrphanedDialog } from './orphanedDialogs.js';
import { cancelThroughStore } from './remoteCallControl.js';
import { claimAndAnswerWebCall } from './webCallStart.js';

export interface DispatcherOptions {
  queue: JobQueue;
  /** Live calls this process holds at most. */
  maxCalls: number;
  /** How often the queue is polled when nothing wakes the dispatcher. */
  pollIntervalMs?: number;
  /** How long a lease lasts without a heartbeat. */
  leaseMs?: number;
  /** How long a capped call waits before the dispatcher looks at it again. */
  cappedRetryMs?: number;
  /** STUN/TURN servers for web calls' ICE. */
  webCallIceServers?: WebIceServer[];
  /** Answer a browser's Opus offer in Opus (else PCMU always). */
  webCallOpus?: boolean;
}

export function newWorkerId(): string {
  return `wrk_${randomBytes(6).toString('hex')}`;
}

/**
 * Takes queued calls from the durable queue and places them. Each call passes the at-most-once
 * gate (`claimForDialing`: queued → dialing under this worker's lease, within the account's cap)
 * before any INVITE leaves; calls over the cap stay queued and are looked at again shortly.
 */
export class CallDispatcher {
  private readonly sessions = new Map<string, CallSession>();
  /** Claims whose answer was lost (the database dropped the connection): call id → job id. */
  private readonly unresolvedClaims = new Map<string, string>();
  /** Sessions that ended but could not record it yet: their calls stay leased to this worker. */
  private readonly unrecordedEndings = new Set<CallSession>();
  private resolvingClaims: Promise<void> | null = null;
  private pollTimer: NodeJS.Timeout | null = null;
  private heartbeatTimer: NodeJS.Timeout | null = null;
  private cancelCheckTimer: NodeJS.Timeout | null = null;
  private polling = false;
  private pollAgain = false;
  private stopped = true;
  private readonly pollIntervalMs: number;
  private readonly leaseMs: number;
  private readonly cappedRetryMs: number;

  constructor(
    private readonly context: CallWorkerContext,
    private readonly options: DispatcherOptions,
  ) {
    this.pollIntervalMs = options.pollIntervalMs ?? 250;
    this.leaseMs = options.leaseMs ?? 30_000;
    this.cappedRetryMs = options.cappedRetryMs ?? 1_000;
  }

  get liveCallCount(): number {
    return this.sessions.size;
  }

  /** The live calls by direction and channel (for the metrics). */
  liveCallCounts(): LiveCallCount[] {
    const counts = new Map<string, LiveCallCount>();
    for (const { call } of this.sessions.values()) {
      const key = `${call.direction}/${call.channel}`;
      const count = counts.get(key);
      if (count) count.live++;
      else counts.set(key, { direction: call.direction, channel: call.channel, live: 1 });
    }
    return [...counts.values()];
  }

  /**
   * Starts dispatching. With `recoverOtherWorkers` (the embedded mode, where one process owns the
   * database), every live call not held by this worker is from a process that died: it is
   * finished as failed/interrupted, never dialled again.
   */
  async start(options: { recoverOtherWorkers: boolean }): Promise<void> {
    this.stopped = false;
    // The database may be briefly unreachable at start: the heartbeat recovers expired leases later.
    await this.recover(options.recoverOtherWorkers).catch((error: unknown) =>
      this.context.logger.error(
        { err: error },
        'recovering calls of dead workers failed; the heartbeat retries',
      ),
    );
    this.heartbeatTimer = setInterval(
      () => void this.heartbeat(),
      Math.max(1_000, Math.floor(this.leaseMs / 3)),
    );
    this.heartbeatTimer.unref();
    // Cancel requests stored by other processes (an API process, another worker) for our calls.
    this.cancelCheckTimer = setInterval(() => void this.hangUpCancelRequested(), 500);
    this.cancelCheckTimer.unref();
    this.schedulePoll(0);
  }

  /** A hint that a call was queued: poll now rather than at the next tick. */
  wake(): void {
    if (!this.stopped) this.schedulePoll(0);
  }

  /** Cancels a call: a queued one at once, a live one of this worker by hanging up. */
  async cancel(call: CallRecord): Promise<CallRecord | null> {
    if (call.status === 'queued') {
      const finished = await this.context.store.calls.finish(
        call.id,
        { ...terminalOutcomeOf({ kind: 'canceled', answered: false }), atIso: new Date().toISOString() },
        this.context.buildEvent,
      );
      if (finished) return finished;
    }
    const session = this.sessions.get(call.id);
    if (session) {
      session.cancel();
      return session.done;
    }
    // Held by another worker: it hangs up on the request it finds in the store.
    return cancelThroughStore(this.context.store, call, this.context.buildEvent);
  }

  private async hangUpCancelRequested(): Promise<void> {
    if (this.sessions.size === 0) return;
    try {
      for (const callId of await this.context.store.calls.listCancelRequests(this.context.workerId)) {
        this.sessions.get(callId)?.cancel();
      }
    } catch (error) {
      this.context.logger.error({ err: error }, 'cancel request check failed');
    }
  }

  /**
   * Stops taking calls; a call in conversation ends after the sentence the agent is speaking, any
   * still up after `deadlineMs` is hung up (failed / interrupted); then waits for them to end.
   */
  async stop(deadlineMs = 10_000): Promise<void> {
    this.stopped = true;
    if (this.pollTimer) clearTimeout(this.pollTimer);
    this.pollTimer = null;
    // A claim already past the gate when we stopped may still start a session: wait for the poll
    // in flight (bounded) so that call is drained like the others.
    for (let waitedMs = 0; this.polling && waitedMs < deadlineMs; waitedMs += 20)
      await new Promise((resolve) => setTimeout(resolve, 20));
    const live = [...this.sessions.values()];
    // Each call in conversation ends after the agent's current sentence; the deadline still holds.
    for (const session of live)
      void session
        .wrapUp()
        .catch((error: unknown) => this.context.logger.warn({ err: error }, 'wrap-up failed'));
    const deadline = new Promise<void>((resolve) => setTimeout(resolve, deadlineMs).unref());
    await Promise.race([Promise.all(live.map((session) => session.done)), deadline]);
    for (const session of this.sessions.values()) session.endLocally({ kind: 'interrupted' });
    await Promise.all([...this.sessions.values()].map((session) => session.done));
    // Calls of unresolved claims stay leased to this worker: once it is gone, they are interrupted.
    await this.recordUnrecordedEndings();
    if (this.heartbeatTimer) clearInterval(this.heartbeatTimer);
    this.heartbeatTimer = null;
    if (this.cancelCheckTimer) clearInterval(this.cancelCheckTimer);
    this.cancelCheckTimer = null;
  }

  private schedulePoll(delayMs: number): void {
    if (this.stopped) return;
    if (this.pollTimer) clearTimeout(this.pollTimer);
    this.pollTimer = setTimeout(() => void this.poll(), delayMs);
  }

  private async poll(): Promise<void> {
    if (this.polling) {
      this.pollAgain = true;
      return;
    }
    this.polling = true;
    try {
      do {
        this.pollAgain = false;
        await this.dispatchDueCalls();
      } while (this.pollAgain && !this.stopped);
    } catch (error) {
      this.context.logger.error({ err: error }, 'dispatch poll failed');
    } finally {
      this.polling = false;
      this.schedulePoll(this.pollIntervalMs);
    }
  }

  private async dispatchDueCalls(): Promise<void> {
    const capacity = this.options.maxCalls - this.sessions.size;
    if (capacity <= 0 || this.stopped) return;
    const jobs = await this.options.queue.claim(
      queueNames.dispatch,
      this.context.workerId,
      capacity,
      this.leaseMs,
    );
    for (const job of jobs) await this.dispatchJob(job);
    if (jobs.length === capacity && !this.stopped) this.pollAgain = true;
  }

  /** Passes one claimed job's call through the at-most-once gate; never throws. */
  private async dispatchJob(job: Job): Promise<void> {
    const callId = String(job.payload.call_id);
    const nowMs = Date.now();
    // Both gates may need the call row: it is read once, and only if one of them asks.
    let callRead: Promise<CallRecord | null> | undefined;
    const loadCall = () => {
      callRead ??= this.context.store.calls.getById(callId);
      return callRead;
    };
    const hours = await this.withinCallingHours(job, callId, nowMs, loadCall);
    if (!hours) return;
    const { campaignId } = hours;
    if (!(await this.withinDialRates(job, callId, nowMs, loadCall, campaignId))) return;
    // Draining (SIGTERM) since this batch was claimed: the call goes back to the queue for another
    // worker, never dialled here (it would only be hung up at the shutdown deadline).
    if (this.stopped) {
      await this.settleJob(job.id, () => this.options.queue.retryAt(job.id, Date.now()));
      return;
    }
    let result: Awaited<ReturnType<CallWorkerContext['store']['calls']['claimForDialing']>>;
    try {
      result = await this.context.store.calls.claimForDialing(callId, {
        workerId: this.context.workerId,
        untilIso: new Date(nowMs + this.leaseMs).toISOString(),
        atIso: new Date(nowMs).toISOString(),
      });
    } catch (error) {
      // The claim may have committed before its answer was lost: the call row will tell.
      this.context.logger.error(
        { err: error, callId },
        'claiming a call failed; resolving it from the call row',
      );
      this.unresolvedClaims.set(callId, job.id);
      await this.resolveUnresolvedClaims();
      return;
    }
    if ('refused' in result && result.refused === 'capped') {
      if (campaignId) this.noteCampaignWait(callId, 'account_live_calls');
      await this.settleJob(job.id, () => this.options.queue.retryAt(job.id, nowMs + this.cappedRetryMs));
      return;
    }
    // A campaign canceled between the gate and the claim: the claimed call is ended, never dialled.
    if ('claimed' in result && campaignId && (await this.campaignCanceled(result.claimed, campaignId))) {
      await this.endBeforeDialing(job, callId, { kind: 'canceled', answered: false }, nowMs);
      return;
    }
    // The session first: a job that cannot be completed comes back after its lease, finds the
    // call no longer queued and is completed then; a claimed call without a session would be stuck.
    if ('claimed' in result) {
      this.context.metrics?.observeDispatchMs(nowMs - Date.parse(result.claimed.createdAt));
      this.startSession(result.claimed);
    }
    await this.settleJob(job.id, () => this.options.queue.complete(job.id));
  }

  /**
   * The calling-hours gate: a call that may not start yet goes back to the queue until its window
   * opens (it stays queued; it looks again at least every minute); one that may never start in
   * time ends as outside_calling_hours, a suppressed number's as do_not_call, a canceled
   * campaign's as canceled — all before the claim, so none is ever `dialing`. The open decision
   * (with the call's campaign) when the call may be claimed now, else null.
   */
  private async withinCallingHours(
    job: Job,
    callId: string,
    nowMs: number,
    loadCall: () => Promise<CallRecord | null>,
  ): Promise<{ campaignId: string | null } | null> {
    const gate = this.context.callingHours;
    if (!gate) return { campaignId: null };
    let decision: Awaited<ReturnType<CallingHoursGate['decide']>>;
    try {
      decision = await gate.decide(callId, nowMs, loadCall);
    } catch (error) {
      this.context.logger.warn(
        { err: error, callId },
        'calling hours could not be read; looking again shortly',
      );
      await this.settleJob(job.id, () => this.options.queue.retryAt(job.id, nowMs + this.cappedRetryMs));
      return null;
    }
    if (decision.kind === 'open') return { campaignId: decision.campaignId };
    if (decision.kind === 'wait') {
      if (decision.campaignId) this.noteCampaignWait(callId, decision.reason);
      await this.settleJob(job.id, () => this.options.queue.retryAt(job.id, decision.untilMs));
      return null;
    }
    const ending: TelephonyEnding =
      decision.kind === 'expired'
        ? { kind: 'outside_calling_hours' }
        : decision.kind === 'suppressed'
          ? { kind: 'do_not_call' }
          : { kind: 'canceled', answered: false };
    await this.endBeforeDialing(job, callId, ending, nowMs);
    return null;
  }

  /** Ends a call that is never dialled (no INVITE, no `dialed_at`) and completes its job. */
  private async endBeforeDialing(job: Job, callId: string, ending: TelephonyEnding, nowMs: number) {
    const ended = await this.context.store.calls
      .finish(
        callId,
        { ...terminalOutcomeOf(ending), atIso: new Date(nowMs).toISOString() },
        this.context.buildEvent,
      )
      .catch((error: unknown) => {
        this.context.logger.warn(
          { err: error, callId, ending: ending.kind },
          'could not end an undialled call',
        );
        return undefined;
      });
    if (ended !== undefined) {
      await this.settleJob(job.id, () => this.options.queue.complete(job.id));
      this.context.onCallEnded?.();
    }
  }

  /** Whether the campaign of a call just claimed was canceled meanwhile (read failures: not canceled). */
  private async campaignCanceled(call: CallRecord, campaignId: string): Promise<boolean> {
    const campaign = await this.context.store.campaigns.get(call.accountId, campaignId).catch(() => null);
    if (campaign?.status === 'canceled') return true;
    // A contact removed by a live edit between the gate and the claim: not dialled either.
    const attempt = await this.context.store.campaigns.ofCall(call.id).catch(() => null);
    return Boolean(attempt?.contact.removedAt);
  }

  /** Why a campaign call waits in the queue, for its contact's `waiting_reason` (best effort). */
  private noteCampaignWait(callId: string, reason: QueuedCallWait): void {
    void this.context.store.campaigns.noteQueuedCallWait(callId, reason).catch((error: unknown) => {
      this.context.logger.debug({ err: error, callId }, 'could not note why a campaign call waits');
    });
  }

  /** The per-caller-ID and per-trunk caps: a call over one waits in the queue. True: dial now. */
  private async withinDialRates(
    job: Job,
    callId: string,
    nowMs: number,
    loadCall: () => Promise<CallRecord | null>,
    campaignId: string | null,
  ): Promise<boolean> {
    const gate = this.context.dialRates;
    if (!gate) return true;
    const waitMs = await gate.waitMs(nowMs, loadCall).catch((error: unknown) => {
      this.context.logger.warn({ err: error, callId }, 'dial rates could not be read; looking again shortly');
      return this.cappedRetryMs;
    });
    if (waitMs === null) return true;
    if (campaignId) this.noteCampaignWait(callId, 'dial_rate');
    await this.settleJob(job.id, () => this.options.queue.retryAt(job.id, nowMs + waitMs));
    return false;
  }

  /** Completes or reschedules a job; on failure the job's lease runs out and it comes back. */
  private async settleJob(jobId: string, settle: () => Promise<void>): Promise<void> {
    try {
      await settle();
    } catch (error) {
      this.context.logger.warn(
        { err: error, jobId },
        'could not settle a dispatch job; it returns after its lease',
      );
    }
  }

  /**
   * Claims whose outcome is unknown: a call still queued was not claimed (its job runs again), one
   * dialling under this worker without a session was claimed and is placed now (nothing has dialled
   * it: only a session sends an INVITE), any other state belongs to someone else. One resolution
   * runs at a time, so no call gets two sessions.
   */
  private resolveUnresolvedClaims(): Promise<void> {
    this.resolvingClaims ??= this.resolveClaimsOnce().finally(() => {
      this.resolvingClaims = null;
    });
    return this.resolvingClaims;
  }

  private async resolveClaimsOnce(): Promise<void> {
    for (const [callId, jobId] of [...this.unresolvedClaims]) {
      let call: CallRecord | null;
      try {
        call = await retryBriefly(() => this.context.store.calls.getById(callId));
      } catch (error) {
        this.context.logger.warn({ err: error, callId }, 'cannot read the call of an unresolved claim yet');
        continue;
      }
      this.unresolvedClaims.delete(callId);
      if (call?.status === 'queued') {
        await this.settleJob(jobId, () => this.options.queue.retryAt(jobId, Date.now()));
        continue;
      }
      if (
        call?.status === 'dialing' &&
        call.workerId === this.context.workerId &&
        !this.sessions.has(callId) &&
        !this.stopped
      ) {
        this.context.logger.warn({ callId }, 'the lost claim had committed: placing the call now');
        this.startSession(call);
      }
      await this.settleJob(jobId, () => this.options.queue.complete(jobId));
    }
  }

  /** Retries what a dropped database connection left undone: unresolved claims, unrecorded endings. */
  private async settleUnfinishedBusiness(): Promise<void> {
    if (!this.stopped) await this.resolveUnresolvedClaims();
    await this.recordUnrecordedEndings();
  }

  private async recordUnrecordedEndings(): Promise<void> {
    for (const session of [...this.unrecordedEndings]) {
      if (await session.recordEnd()) this.unrecordedEndings.delete(session);
    }
  }

  private startSession(call: CallRecord): void {
    // The call is already claimed: whatever happens to this read, a session must own it (a failed
    // read, after a few tries, leaves the agent unknown and the session ends the call with
    // internal_error).
    const { store } = this.context;
    // A test call runs with its run's agent overrides (src/agentTests/testRuns.ts).
    const agentRead = Promise.all([
      retryBriefly(() => store.agents.get(call.accountId, call.agentId)),
      // Only a call to one of the scenarios' numbers can be a test call: no read for the rest.
      isScenarioCalleeNumber(call.toNumber) ? retryBriefly(() => store.agentTests.forCall(call.id)) : null,
    ]).then(([agent, test]) => ({
      agent: agent ? agentWithOverrides(agent, test?.agentOverrides ?? null) : null,
      testCall: test !== null,
    }));
    const agentOrNull = agentRead.catch((error: unknown) => {
      this.context.logger.error(
        { err: error, callId: call.id },
        'could not read the agent of a claimed call',
      );
      return { agent: null, testCall: false };
    });
    void agentOrNull.then(({ agent, testCall }) =>
      this.adopt(new CallSession(this.context, call, agent, testCall)),
    );
  }

  /**
   * Starts a web call whose browser presented its token and offer (webCallStart.ts): claimed like
   * a dialled call, answered, then run by a session like any other. Resolves to the SDP answer.
   */
  async startWebCall(callId: string, offerSdp: string): Promise<{ callId: string; answerSdp: string }> {
    if (this.stopped) throw new AppError('unavailable', 'the call worker is stopping');
    const { call, browser } = await claimAndAnswerWebCall(this.context, callId, offerSdp, {
      leaseMs: this.leaseMs,
      leg: { iceServers: this.options.webCallIceServers ?? [], opus: this.options.webCallOpus ?? false },
    });
    const agent = await retryBriefly(() => this.context.store.agents.get(call.accountId, call.agentId)).catch(
      (error: unknown) => {
        this.context.logger.error({ err: error, callId }, 'could not read the agent of a web call');
        return null;
      },
    );
    this.adopt(new CallSession(this.context, call, agent, false, browser));
    return { callId, answerSdp: browser.answerSdp };
  }

  /**
   * Whether this worker takes another call now (an inbound INVITE is refused with 503 otherwise).
   */
  get hasRoom(): boolean {
    return !this.stopped && this.sessions.size < this.options.maxCalls;
  }

  /** How long a lease this worker's calls hold (an inbound call is written with one). */
  get callLeaseMs(): number {
    return this.leaseMs;
  }

  /** Runs an inbound call (inboundCalls.ts) written live under this worker's lease: answered, then a call like any other. */
  runInbound(call: CallRecord, agent: AgentRecord, incoming: IncomingCall): void {
    this.adopt(new CallSession(this.context, call, agent, false, null, incoming));
  }

  private adopt(session: CallSession): void {
    const { call } = session;
    this.sessions.set(call.id, session);
    void session.done.finally(() => {
      this.sessions.delete(call.id);
      this.context.onCallEnded?.();
      // Its lease is still renewed by this worker: the heartbeat records the ending later.
      if (!session.endRecorded) this.unrecordedEndings.add(session);
      this.wake();
    });
  }

  private async heartbeat(): Promise<void> {
    try {
      await this.context.store.calls.renewLeases(
        this.context.workerId,
        new Date(Date.now() + this.leaseMs).toISOString(),
      );
      await this.settleUnfinishedBusiness();
      await this.recover(false);
    } catch (error) {
      this.context.logger.error({ err: error }, 'lease heartbeat failed');
    }
  }

  /** Finishes calls whose worker is gone as failed/interrupted, with their event. */
  private async recover(otherWorkersAreDead: boolean): Promise<void> {
    const abandoned = await this.context.store.calls.listAbandoned({
      beforeIso: new Date().toISOString(),
      ...(otherWorkersAreDead ? { notHeldBy: this.context.workerId } : {}),
    });
    for (const call of abandoned) {
      if (this.sessions.has(call.id)) continue;
      const interrupted = await this.context.store.calls.finish(
        call.id,
        { ...terminalOutcomeOf({ kind: 'interrupted' }), atIso: new Date().toISOString() },
        this.context.buildEvent,
      );
      this.context.logger.warn(
        { callId: call.id, previousWorker: call.workerId },
        'call of a dead worker interrupted',
      );
      // Only the process whose finish ended the call sends its BYE: at most one per call.
      if (interrupted) this.hangUpOrphanedDialog(call);
      // The worker that held it cannot build its trace any more: the call span comes from here.
      if (interrupted && this.context.tracer) recordCallTrace(this.context.tracer, interrupted);
    }
  }

  /**
   * BYE for the dialog a dead worker left up, so the carrier's leg ends now rather than on its own
   * timers. In the background: a silent far end must not hold recovery up for 64 × T1.
   */
  private hangUpOrphanedDialog(call: CallRecord): void {
    void hangUpOrphanedDialog(this.context, call).catch((error: unknown) =>
      this.context.logger.error({ err: error, callId: call.id }, 'BYE for the call of a dead worker failed'),
    );
  }
}
