import type { Tracer } from '@opentelemetry/api';
import { calleeScriptLoader } from '../agentTests/calleeScripts.js';
import { llmPersonaMind } from '../agentTests/llmPersona.js';
import { CallingHoursGate } from '../campaigns/callingHoursGate.js';
import { CampaignScheduler, type CampaignSchedulerOptions } from '../campaigns/campaignScheduler.js';
import type { Config, SipTcpLimits } from '../config.js';
import { openFileSoftLimit, sipConnectionBudget } from '../limits/openFileLimit.js';
import type { RateLimiter } from '../limits/rateLimiter.js';
import type { Logger } from '../logger.js';
import type { ServiceMetrics } from '../metrics/serviceMetrics.js';
import { RetentionSweeper } from '../privacy/dataRules.js';
import type { JobQueue } from '../queue/types.js';
import type { RecordingStorage } from '../recordings/recordingStorage.js';
import type { SecretBox } from '../secrets/secretBox.js';
import type { CompletedEventBuilder, Store } from '../store/types.js';
import { MediaClock, PortAllocator } from '../telephony/rtp/index.js';
import { SandboxCarrier } from '../telephony/sandbox/index.js';
import { InboundScreen } from '../telephony/sip/inboundInvites.js';
import { SipUserAgent } from '../telephony/sip/index.js';
import { createSpeakingSandboxVoice } from '../voice/sandboxPersonVoice.js';
import type { VoiceStack } from '../voice/voiceStack.js';
import { DialRateGate } from './dialRateGate.js';
import { CallDispatcher, newWorkerId } from './dispatcher.js';
import { InboundCalls } from './inboundCalls.js';
import { TrunkRegistrations } from './trunkRegistrations.js';
import { WebCallSweeper } from './webCallSweeper.js';

export interface CallWorker {
  dispatcher: CallDispatcher;
  /** Inbound calls and callbacks (issue 40). */
  inbound: InboundCalls;
  sandbox: SandboxCarrier;
  ua: SipUserAgent;
  workerId: string;
  campaigns: CampaignScheduler;
  /** Stops taking calls, lets live calls end up to `deadlineMs`, then closes SIP and media. */
  close(deadlineMs?: number): Promise<void>;
}

/**
 * The call side of a process: the SIP user agent, the shared media clock, the sandbox carrier on
 * loopback, and the dispatcher that places queued calls through them.
 */
export async function startCallWorker(options: {
  config: Pick<Config, 'telephony' | 'webhookAllowPrivate' | 'voice'> &
    Partial<Pick<Config, 'webCallIceServers' | 'webCallOpus'>>;
  store: Store;
  queue: JobQueue;
  logger: Logger;
  secretBox: SecretBox;
  buildEvent: CompletedEventBuilder;
  /** The embedded mode: this process alone owns the database. */
  soleWorker: boolean;
  /** Speech engines for the agents (and the sandbox person's voice); null runs calls voiceless. */
  voice: VoiceStack | null;
  recordings: RecordingStorage;
  metrics?: ServiceMetrics;
  /** Where each finished call's trace goes (the no-op tracer when tracing is off). */
  tracer?: Tracer;
  /** The buckets of the per-caller-ID and per-trunk caps (shared by all processes on PostgreSQL). */
  limiter?: RateLimiter;
  /** The ports this process serves HTTP on: SIP over TCP never takes them. */
  httpPorts?: readonly number[];
  /** How often trunk registrations are synced with the store (tests shorten it). Default 30 s. */
  registrationSyncMs?: number;
  /** How often a call held by calling or quiet hours looks again; default 60 s. */
  callingHoursRecheckMs?: number;
  /** The campaign scheduler's tick and clock (tests move the clock to reach retries and windows). */
  /** How often expired, unused web call tokens' calls are ended (default 30 s; tests shorten it). */
  webCallSweepMs?: number;
  campaignScheduler?: Pick<CampaignSchedulerOptions, 'tickMs' | 'nowMs' | 'claimGraceMs'>;
}): Promise<CallWorker> {
  const { telephony } = options.config;
  const logger = options.logger.child({ component: 'calls' });
  const clock = new MediaClock({ logger });
  // The sandbox's RTP ports come from the top of the range, the calls' from the bottom half.
  const split = telephony.rtpPortMin + Math.floor((telephony.rtpPortMax - telephony.rtpPortMin) / 2);
  const callPorts = new PortAllocator({ minPort: telephony.rtpPortMin, maxPort: split - 1 });
  const sandboxPorts = new PortAllocator({ minPort: split, maxPort: telephony.rtpPortMax });
  const ua = await SipUserAgent.start({
    bindAddress: telephony.bindAddress,
    port: telephony.sipPort,
    publicAddress: telephony.publicAddress,
    // SIP over TCP shares the SIP port's number; never take the HTTP listeners' port (UDP alone
    // could share it before, and a deployment may rely on that).
    listenTcp: telephony.sipPort === 0 || !(options.httpPorts ?? []).includes(telephony.sipPort),
    stream: sipStreamLimits(telephony.sipTcp, logger),
    // Children of the service's logger, not of `logger`: a child's component would repeat the key.
    logger: options.logger.child({ component: 'sip' }),
  });
  const sandboxLogger = options.logger.child({ component: 'sandbox' });
  const sandbox = await SandboxCarrier.start({
    logger: sandboxLogger,
    clock,
    ports: sandboxPorts,
    bindAddress: '127.0.0.1',
    sipPort: 0,
    inviteLog: options.store.sandboxInvites,
    ...(options.voice ? { voice: createSpeakingSandboxVoice(options.voice.offlineTts) } : {}),
    scriptedCallees: calleeScriptLoader(
      options.store,
      options.recordings,
      options.config.voice,
      sandboxLogger,
    ),
    personaMind: llmPersonaMind(options.config.voice, sandboxLogger),
  });
  const sandboxAddress = /^sip:(.+):(\d+)$/.exec(sandbox.sipUri);
  const workerId = newWorkerId();
  let campaigns: CampaignScheduler | null = null;
  const dispatcher = new CallDispatcher(
    {
      store: options.store,
      logger,
      workerId,
      ua,
      clock,
      ports: callPorts,
      mediaBindAddress: telephony.bindAddress,
      mediaPublicAddress: telephony.publicAddress,
      sandbox: sandboxAddress ? { host: sandboxAddress[1] as string, port: Number(sandboxAddress[2]) } : null,
      secretBox: options.secretBox,
      ringTimeoutMs: telephony.ringTimeoutMs,
      trunkAllowPrivate: telephony.trunkAllowPrivate,
      toolAllowPrivate: options.config.webhookAllowPrivate,
      buildEvent: options.buildEvent,
      voice: options.voice,
      recordings: options.recordings,
      ...(options.metrics ? { metrics: options.metrics } : {}),
      ...(options.tracer ? { tracer: options.tracer } : {}),
      callingHours: new CallingHoursGate(options.store, telephony.quietHours, {
        ...(options.callingHoursRecheckMs ? { recheckMs: options.callingHoursRecheckMs } : {}),
      }),
      ...(options.limiter ? { dialRates: new DialRateGate(options.store, options.limiter) } : {}),
      onCallEnded: () => campaigns?.wake(),
    },
    {
      queue: options.queue,
      maxCalls: telephony.workerMaxCalls,
      webCallIceServers: options.config.webCallIceServers ?? [],
      webCallOpus: options.config.webCallOpus ?? false,
    },
  );
  campaigns = new CampaignScheduler({
    store: options.store,
    logger: options.logger.child({ component: 'campaigns' }),
    wakeDispatcher: () => dispatcher.wake(),
    ...options.campaignScheduler,
  });
  await dispatcher.start({ recoverOtherWorkers: options.soleWorker });
  campaigns.start();
  const retention = new RetentionSweeper({
    store: options.store,
    recordings: options.recordings,
    logger: options.logger.child({ component: 'retention' }),
  });
  retention.start();
  const webCallSweeper = new WebCallSweeper({
    store: options.store,
    buildEvent: options.buildEvent,
    logger: options.logger.child({ component: 'web-calls' }),
    ...(options.webCallSweepMs ? { intervalMs: options.webCallSweepMs } : {}),
  });
  webCallSweeper.start();
  // Inbound calls (issue 40): INVITEs from the trunks' addresses (and the sandbox caller) are answered.
  const inboundScreen = new InboundScreen({ logger: options.logger.child({ component: 'sip' }) });
  const inbound = new InboundCalls({
    store: options.store,
    logger,
    workerId,
    runner: dispatcher,
    screen: inboundScreen,
    callbackWindowMs: telephony.callbackWindowMs,
    secretBox: options.secretBox,
    sandboxSource: sandboxAddress
      ? { host: sandboxAddress[1] as string, port: Number(sandboxAddress[2]) }
      : null,
    ...(options.registrationSyncMs === undefined ? {} : { ruleSyncMs: options.registrationSyncMs }),
  });
  await inbound.start();
  ua.onInvite((incoming) => inbound.receive(incoming));
  options.metrics?.addInboundScreen(inboundScreen);
  const registrations = new TrunkRegistrations({
    store: options.store,
    ua,
    secretBox: options.secretBox,
    logger: options.logger.child({ component: 'registrations' }),
    trunkAllowPrivate: telephony.trunkAllowPrivate,
    ...(options.registrationSyncMs === undefined ? {} : { syncIntervalMs: options.registrationSyncMs }),
    limits: telephony.registration,
  });
  registrations.start();
  options.metrics?.addWorker(() => dispatcher.liveCallCounts());
  logger.info(
    { workerId, sip: `${telephony.publicAddress}:${ua.boundPort}`, sandbox: sandbox.sipUri },
    'call worker ready',
  );
  return {
    dispatcher,
    inbound,
    sandbox,
    ua,
    workerId,
    campaigns,
    async close(deadlineMs = 10_000) {
      retention.stop();
      webCallSweeper.stop();
      inbound.stop();
      await registrations.stop();
      await campaigns.stop();
      await dispatcher.stop(deadlineMs);
      await sandbox.close();
      await ua.close();
      clock.stop();
    },
  };
}

/**
 * The SIP TCP listener's caps and timeouts as configured, the connection cap kept within half the
 * process's open-file limit (said once at start when that lowers it).
 */
function sipStreamLimits(limits: SipTcpLimits, logger: Logger) {
  const softLimit = openFileSoftLimit();
  const maxInboundConnections = sipConnectionBudget(limits.maxConnections, softLimit);
  if (maxInboundConnections < limits.maxConnections) {
    logger.warn(
      { configured: limits.maxConnections, used: maxInboundConnections, openFileLimit: softLimit },
      'CALLWRIGHT_SIP_TCP_MAX_CONNECTIONS is over half the open-file limit (ulimit -n); using half',
    );
  }
  return {
    maxInboundConnections,
    maxInboundConnectionsPerAddress: limits.maxConnectionsPerAddress,
    firstRequestTimeoutMs: limits.firstRequestTimeoutMs,
    inboundIdleTimeoutMs: limits.idleTimeoutMs,
  };
}
