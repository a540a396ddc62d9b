import { callStatuses } from '../domain/callStatus.js';
import type { JobQueue } from '../queue/types.js';
import { queueNames } from '../queue/types.js';
import type { Store } from '../store/types.js';
import type { EngineHealth } from '../voice/providers/enginePool.js';
import { type Histogram, MetricsRegistry } from './registry.js';
import { type CallFigures, type LiveCallCount, observeCallFigures, turnMetrics } from './turnMetrics.js';

/** What the call worker reports into the metrics. */
export interface CallMetrics {
  /** From the call's creation to the moment its worker claimed it. */
  observeDispatchMs(ms: number): void;
  /**
   * A finished call's figures as its record keeps them (`metrics`: response latencies, the turns'
   * waterfalls, provider failures): the one place the turn and vendor series are fed from.
   */
  observeCallFigures(figures: Readonly<Record<string, unknown>> | null | undefined): void;
}

/**
 * The service's Prometheus series: calls by status, live calls by direction and channel, queue
 * depth and age, the webhook backlog, the dispatch and response latency histograms, the turns'
 * latency histograms and the vendor failures (turnMetrics.ts).
 */
export class ServiceMetrics implements CallMetrics {
  readonly registry = new MetricsRegistry();
  private readonly dispatch: Histogram;
  private readonly response: Histogram;
  private readonly callFigures: CallFigures;
  private readonly inboundScreens: { refusalCounts(): Readonly<Record<string, number>> }[] = [];
  private readonly liveCallSources: (() => readonly LiveCallCount[])[] = [];

  constructor(store: Store, queue: JobQueue) {
    this.registry.gauge({
      name: 'callwright_sip_inbound_refused_total',
      help: 'Out-of-dialog INVITEs refused without a dialog: from an address no trunk lists (403), or dropped over the rate.',
      type: 'counter',
      read: async () => {
        const totals: Record<string, number> = { unknown_source: 0, rate_limited: 0 };
        for (const screen of this.inboundScreens)
          for (const [reason, value] of Object.entries(screen.refusalCounts()))
            totals[reason] = (totals[reason] ?? 0) + value;
        return Object.entries(totals).map(([reason, value]) => ({ labels: { reason }, value }));
      },
    });
    this.registry.gauge({
      name: 'callwright_calls',
      help: 'Calls in the database by status.',
      async read() {
        const counts = await store.calls.countByStatus();
        return callStatuses.map((status) => ({ labels: { status }, value: counts[status] ?? 0 }));
      },
    });
    this.registry.gauge({
      name: 'callwright_live_calls',
      help: 'Live calls (dialing, ringing, in progress) held by this process, by direction and channel.',
      read: async () => {
        const totals = new Map<string, { direction: string; channel: string; value: number }>();
        // Every kind is shown, 0 when none is live, so a series never vanishes.
        for (const direction of ['outbound', 'inbound'])
          for (const channel of ['phone', 'web'])
            totals.set(`${direction}/${channel}`, { direction, channel, value: 0 });
        for (const source of this.liveCallSources)
          for (const { direction, channel, live } of source()) {
            const total = totals.get(`${direction}/${channel}`);
            if (total) total.value += live;
          }
        return [...totals.values()].map(({ direction, channel, value }) => ({
          labels: { direction, channel },
          value,
        }));
      },
    });
    this.registry.gauge({
      name: 'callwright_queue_jobs',
      help: 'Jobs waiting in each queue.',
      async read() {
        return Promise.all(
          Object.values(queueNames).map(async (name) => ({
            labels: { queue: name },
            value: (await queue.depth(name)).count,
          })),
        );
      },
    });
    this.registry.gauge({
      name: 'callwright_queue_oldest_job_age_seconds',
      help: 'Age of the oldest job that is due in each queue (0 when empty).',
      async read() {
        return Promise.all(
          Object.values(queueNames).map(async (name) => {
            const { oldestRunAtMs } = await queue.depth(name);
            const ageS = oldestRunAtMs === null ? 0 : Math.max(0, (Date.now() - oldestRunAtMs) / 1000);
            return { labels: { queue: name }, value: Math.round(ageS * 1000) / 1000 };
          }),
        );
      },
    });
    this.registry.gauge({
      name: 'callwright_webhook_backlog',
      help: 'call.completed deliveries waiting in the queue (due now or scheduled for a retry).',
      async read() {
        return [{ labels: {}, value: (await queue.depth(queueNames.webhook)).count }];
      },
    });
    this.dispatch = this.registry.histogram(
      'callwright_dispatch_latency_seconds',
      'From a call being queued to a worker claiming it.',
      [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
    );
    this.response = this.registry.histogram(
      'callwright_response_latency_seconds',
      "From the end of the callee's turn to the first packet of the agent's reply.",
      [0.025, 0.05, 0.1, 0.25, 0.5, 0.75, 1, 1.5, 2, 3, 5],
    );
    this.callFigures = turnMetrics(this.registry);
  }

  /** Registers a call worker whose live calls are reported (by direction and channel). */
  addWorker(source: () => readonly LiveCallCount[]): void {
    this.liveCallSources.push(source);
  }

  /** Counts the INVITEs refused before any call existed (issue 40), by this worker's screen. */
  addInboundScreen(screen: { refusalCounts(): Readonly<Record<string, number>> }): void {
    this.inboundScreens.push(screen);
  }

  /** Registers the voice stack whose offline engines and detectors are reported. */
  addVoice(voice: { engineHealth(): readonly EngineHealth[]; openVoiceActivityDetectors(): number }): void {
    const series = (value: (health: EngineHealth) => number) => async () =>
      voice.engineHealth().map((health) => ({ labels: { engine: health.engine }, value: value(health) }));
    this.registry.gauge({
      name: 'callwright_speech_engine_processes_ready',
      help: 'Offline speech engine processes serving now (pocketsphinx recognises, flite speaks).',
      read: series((health) => health.ready),
    });
    this.registry.gauge({
      name: 'callwright_speech_engine_available',
      help: '1 while the engine can serve; 0 when none of its processes serves and none can be started.',
      read: series((health) => (health.available ? 1 : 0)),
    });
    this.registry.gauge({
      name: 'callwright_speech_engine_failures_total',
      help: 'Engine processes that failed while serving (crashed, trapped, stuck); each was replaced.',
      type: 'counter',
      read: series((health) => health.failures),
    });
    this.registry.gauge({
      name: 'callwright_speech_engine_start_failures_total',
      help: 'Engine processes that failed to start (retried with a growing delay).',
      type: 'counter',
      read: series((health) => health.startFailures),
    });
    this.registry.gauge({
      name: 'callwright_voice_activity_detectors_open',
      help: 'Voice activity detectors held by calls (one per live call; more means a leak).',
      read: async () => [{ labels: {}, value: voice.openVoiceActivityDetectors() }],
    });
  }

  observeDispatchMs(ms: number): void {
    this.dispatch.observe(ms / 1000);
  }

  observeCallFigures(figures: Readonly<Record<string, unknown>> | null | undefined): void {
    if (!figures) return;
    const latencies = figures.response_latencies_ms;
    if (Array.isArray(latencies))
      for (const value of latencies) if (typeof value === 'number') this.response.observe(value / 1000);
    observeCallFigures(this.callFigures, figures);
  }
}
