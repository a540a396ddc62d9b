import { randomBytes } from 'node:crypto';
import { terminalOutcomeOf } from '../domain/callOutcome.js';
import type { CallRecord } from '../domain/records.js';
import type { JobQueue } from '../queue/types.js';
import { queueNames } from '../queue/types.js';
import { CallSession, type CallWorkerContext } from './callSession.js';
import { cancelThroughStore } from './remoteCallControl.js';

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

  /**
   * Starts dispatching. With `recoverOtherWorkers` (the embedded mode, where one process owns the
   * database), every live call not held by this worker is from a process that died: it is
   * finished as failed/interrupted, never dialled again.
   */
  async start(options: { recoverOtherWorkers: boolean }): Promise<void> {
    this.stopped = false;
    await this.recover(options.recoverOtherWorkers);
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

  /** Stops taking calls; hangs up live calls still up after `deadlineMs`, then waits for them to end. */
  async stop(deadlineMs = 10_000): Promise<void> {
    this.stopped = true;
    if (this.pollTimer) clearTimeout(this.pollTimer);
    this.pollTimer = null;
    const live = [...this.sessions.values()];
    const deadline = new Promise<void>((resolve) => setTimeout(resolve, deadlineMs).unref());
    await Promise.race([Promise.all(live.map((session) => session.done)), deadline]);
    for (const session of this.sessions.values()) session.endLocally({ kind: 'interrupted' });
    await Promise.all([...this.sessions.values()].map((session) => session.done));
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
    for (const job of jobs) {
      const callId = String(job.payload.call_id);
      const nowMs = Date.now();
      const result = await this.context.store.calls.claimForDialing(callId, {
        workerId: this.context.workerId,
        untilIso: new Date(nowMs + this.leaseMs).toISOString(),
        atIso: new Date(nowMs).toISOString(),
      });
      if ('refused' in result && result.refused === 'capped') {
        await this.options.queue.retryAt(job.id, nowMs + this.cappedRetryMs);
        continue;
      }
      await this.options.queue.complete(job.id);
      if ('claimed' in result) {
        this.context.metrics?.observeDispatchMs(nowMs - Date.parse(result.claimed.createdAt));
        this.startSession(result.claimed);
      }
    }
    if (jobs.length === capacity) this.pollAgain = true;
  }

  private startSession(call: CallRecord): void {
    // The call is already claimed: whatever happens to this read, a session must own it (a failed
    // read leaves the agent unknown and the session ends the call with internal_error).
    const agentRead = this.context.store.agents.get(call.accountId, call.agentId).catch((error: unknown) => {
      this.context.logger.error(
        { err: error, callId: call.id },
        'could not read the agent of a claimed call',
      );
      return null;
    });
    void agentRead.then((agent) => {
      const session = new CallSession(this.context, call, agent);
      this.sessions.set(call.id, session);
      void session.done.finally(() => {
        this.sessions.delete(call.id);
        this.wake();
      });
    });
  }

  private async heartbeat(): Promise<void> {
    try {
      await this.context.store.calls.renewLeases(
        this.context.workerId,
        new Date(Date.now() + this.leaseMs).toISOString(),
      );
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
      await this.context.store.calls.finish(
        call.id,
        { ...terminalOutcomeOf({ kind: 'interrupted' }), atIso: new Date().toISOString() },
        this.context.buildEvent,
      );
      this.context.logger.warn(
        { callId: call.id, previousWorker: call.workerId },
        'call of a dead worker interrupted',
      );
    }
  }
}
