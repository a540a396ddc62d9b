import { randomBytes } from 'node:crypto';
import { closeSync, openSync, readFileSync, rmSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import Fastify, { type FastifyInstance } from 'fastify';
import { serviceVendorConfigured } from './agentTests/llmPersona.js';
import { buildApp } from './api/app.js';
import { installErrorHandlers } from './api/errors.js';
import { registerHealthRoutes } from './api/health.js';
import { closeConnectionsWithUnreadBodies, httpServerOptions } from './api/httpConnections.js';
import { buildMetricsApp, registerMetricsRoute } from './api/metrics.js';
import { createRecordingLinks, recordingLinkKeyName } from './api/recordingLinks.js';
import { reanalyzeCall } from './calls/callReanalysis.js';
import { type CallWorker, startCallWorker } from './calls/callWorker.js';
import { completedEventBuilder } from './calls/completedEvents.js';
import { remoteCallControl } from './calls/remoteCallControl.js';
import type { CampaignSchedulerOptions } from './campaigns/campaignScheduler.js';
import type { Config } from './config.js';
import { announceSetupToken } from './dashboard/setupToken.js';
import { AppError } from './domain/errors.js';
import { PostgresRateLimiter } from './limits/postgresRateLimiter.js';
import { MemoryRateLimiter } from './limits/rateLimiter.js';
import type { Logger } from './logger.js';
import type { MetricsRegistry } from './metrics/registry.js';
import { ServiceMetrics } from './metrics/serviceMetrics.js';
import type { HostnameLookup } from './net/hostGuard.js';
import { openConfiguredStore, recordingStorageFor, type ServiceStore } from './openStore.js';
import { queueNames } from './queue/types.js';
import { makePrivateDirectory, tightenDataDirectory } from './secrets/privateFiles.js';
import { loadSecretBox, type SecretBox } from './secrets/secretBox.js';
import { openServiceSecret, sealSecretsAtRest } from './secrets/secretsAtRest.js';
import { setupProgress, startupBanner } from './startupBanner.js';
import { connectionErrorSummary, isConnectionLoss } from './store/postgres/database.js';
import { listenForJobs } from './store/postgres/jobNotifications.js';
import { PostgresStore } from './store/postgres/postgresStore.js';
import type { CompletedEventBuilder } from './store/types.js';
import { type MetricsExport, startMetricsExport } from './telemetry/metricsExport.js';
import { startTracing, type Tracing } from './telemetry/tracing.js';
import type { EngineHealth } from './voice/providers/enginePool.js';
import { VoiceStack } from './voice/voiceStack.js';
import {
  type DeliveryWorker,
  type DeliveryWorkerOptions,
  startDeliveryWorker,
} from './webhooks/deliveryWorker.js';

/** api: the public API and dashboard only; worker: calls and webhooks (and /healthz, /readyz); all: both. */
export const serviceRoles = ['all', 'api', 'worker'] as const;
export type ServiceRole = (typeof serviceRoles)[number];

export interface RunningService {
  role: ServiceRole;
  app: FastifyInstance;
  store: ServiceStore;
  /** Null in an API-only process. */
  calls: CallWorker | null;
  /** Null in an API-only process. */
  webhooks: DeliveryWorker | null;
  /** Seals and opens the secrets the store keeps (trunk passwords, webhook secrets). */
  secretBox: SecretBox;
  /** The address the API listens on, e.g. http://127.0.0.1:3000. */
  url: string;
  /** The listener of CALLWRIGHT_METRICS_PORT, e.g. http://127.0.0.1:9464; null: none. */
  metricsUrl: string | null;
  close(): Promise<void>;
}

export function packageVersion(): string {
  const packageJson = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8'));
  return String(packageJson.version);
}

function processIsAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/**
 * The embedded mode is one process per data directory: it alone places calls, so on start-up any
 * live call it finds belongs to a process that died. A lock file with our pid makes that true.
 */
function lockDataDir(dataDir: string): () => void {
  makePrivateDirectory(dataDir);
  const path = join(dataDir, 'serve.lock');
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      const fd = openSync(path, 'wx', 0o600);
      writeSync(fd, String(process.pid));
      closeSync(fd);
      return () => rmSync(path, { force: true });
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
      const holder = Number(readFileSync(path, 'utf8').trim());
      if (Number.isInteger(holder) && holder !== process.pid && processIsAlive(holder)) {
        throw new AppError('conflict', `another callwright serve (pid ${holder}) uses ${dataDir}`);
      }
      rmSync(path, { force: true });
    }
  }
  throw new AppError('conflict', `cannot lock ${dataDir}`);
}

/** A worker process serves no /v1: only liveness and readiness (and /metrics with its token) on its port. */
async function buildWorkerApp(
  store: ServiceStore,
  config: Config,
  metricsOnMainPort: { registry: MetricsRegistry; token: string } | undefined,
  speechEngines: (() => readonly EngineHealth[]) | undefined,
): Promise<FastifyInstance> {
  const app = Fastify({ ...httpServerOptions(config.httpTimeouts), logger: false });
  installErrorHandlers(app);
  closeConnectionsWithUnreadBodies(app);
  registerHealthRoutes(app, store, speechEngines);
  if (metricsOnMainPort) registerMetricsRoute(app, metricsOnMainPort.registry, metricsOnMainPort);
  await app.ready();
  return app;
}

/**
 * Where /metrics is served (issue 12, defect 10): on a listener of its own when
 * CALLWRIGHT_METRICS_PORT is set, else on the main port only behind CALLWRIGHT_METRICS_TOKEN, else not.
 */
async function startMetricsListener(
  config: Config,
  logger: Logger,
  registry: MetricsRegistry,
): Promise<{ app: FastifyInstance | null; url: string | null }> {
  const { port, host, token } = config.metrics;
  if (port === null) {
    if (token === null)
      logger.info('GET /metrics is off: set CALLWRIGHT_METRICS_TOKEN or CALLWRIGHT_METRICS_PORT');
    return { app: null, url: null };
  }
  const app = await buildMetricsApp({ registry, token, logger, httpTimeouts: config.httpTimeouts });
  try {
    return { app, url: await app.listen({ port, host }) };
  } catch (error) {
    await app.close();
    throw error;
  }
}

/** Start-up options of `startService`. */
export interface StartServiceOptions {
  /** SIGTERM and SIGINT close the service gracefully. */
  handleSignals?: boolean;
  /** Which parts this process runs (`serve --role`); default all. */
  role?: ServiceRole;
  /** The terminal `serve` runs in, for the first-run setup token; null or absent: none. */
  terminal?: ((text: string) => void) | null;
  /** Test and benchmark knobs of the webhook delivery worker (short retry delays, timeouts). */
  webhookDelivery?: Pick<
    DeliveryWorkerOptions,
    'retryDelay' | 'timeoutMs' | 'pollIntervalMs' | 'concurrency'
  >;
  /** Test and benchmark knobs of the campaign scheduler (its tick, and a clock to move forward). */
  campaignScheduler?: Pick<CampaignSchedulerOptions, 'tickMs' | 'nowMs' | 'claimGraceMs'>;
  /** How often a call held by calling or quiet hours looks again (tests shorten it). Default 60 s. */
  callingHoursRecheckMs?: number;
  /** How often workers read the trunks to register again (tests shorten it). Default 30 s. */
  registrationSyncMs?: number;
  /** How vendor hosts are resolved at each connection; default the system's (tests use their own DNS server). */
  vendorHostLookup?: HostnameLookup;
}

/** How often start-up runs again when PostgreSQL drops a connection midway through it. */
const startAttemptsOnConnectionLoss = 5;

/**
 * Opens the store, starts the call worker and the API: the `serve` command, and what tests start.
 * On PostgreSQL a connection dropped during start-up (a failover, a proxy's
 * idle-kill, `pg_terminate_backend`) fails one attempt, which closes everything it opened; start-up
 * then runs again (each step is idempotent: migrations and the queue's installation under their
 * lock, secrets sealed row by row) instead of ending the process.
 */
export async function startService(
  config: Config,
  logger: Logger,
  options: StartServiceOptions = {},
): Promise<RunningService> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await startServiceOnce(config, logger, options);
    } catch (error) {
      if (
        config.database.url === null ||
        !isConnectionLoss(error) ||
        attempt >= startAttemptsOnConnectionLoss
      )
        throw error;
      logger.warn(
        { err: connectionErrorSummary(error), attempt },
        'PostgreSQL connection lost during start-up: starting again',
      );
      await new Promise((resolve) => setTimeout(resolve, 250 * attempt));
    }
  }
}

async function startServiceOnce(
  config: Config,
  logger: Logger,
  options: StartServiceOptions,
): Promise<RunningService> {
  const role = options.role ?? 'all';
  const scaleOut = config.database.url !== null;
  if (!scaleOut && role !== 'all') {
    throw new AppError(
      'validation_error',
      `--role ${role} needs DATABASE_URL (PostgreSQL): SQLite is one process`,
    );
  }
  // Embedded: one process per data directory. PostgreSQL: any number, recovery by lease expiry.
  const unlock = scaleOut ? () => undefined : lockDataDir(config.dataDir);
  tightenDataDirectory({ dataDir: config.dataDir, sqlitePath: scaleOut ? null : config.sqlitePath }, logger);
  let store: ServiceStore;
  try {
    store = await openConfiguredStore(config, logger);
  } catch (error) {
    unlock();
    throw error;
  }
  let calls: CallWorker | undefined;
  let webhooks: DeliveryWorker | undefined;
  let app: FastifyInstance | undefined;
  let metricsApp: FastifyInstance | null = null;
  let tracing: Tracing | undefined;
  let metricsExport: MetricsExport | undefined;
  let voice: VoiceStack | undefined;
  let jobListener: ReturnType<typeof listenForJobs> | null = null;
  try {
    const secretBox = loadSecretBox({
      configuredKeyBase64: config.secretKeyBase64,
      dataDir: config.dataDir,
      sharedDatabase: scaleOut,
      logger,
    });
    // Before anything reads a secret: the key is the database's, and nothing is left in plain text.
    await sealSecretsAtRest(store, secretBox, { serviceSecretNames: [recordingLinkKeyName], logger });
    const recordingLinks = createRecordingLinks({
      publicUrl: config.publicUrl,
      keyBase64: await openServiceSecret(store, secretBox, recordingLinkKeyName, () =>
        randomBytes(32).toString('base64'),
      ),
    });
    const runsWorkers = role !== 'api';
    tracing = await startTracing(config.tracing, logger.child({ component: 'tracing' }));
    const deliveries = !runsWorkers
      ? null
      : startDeliveryWorker({
          events: store.events,
          endpoints: store.webhookEndpoints,
          queue: store.queue,
          logger,
          secretBox,
          allowPrivate: config.webhookAllowPrivate,
          workerId: `webhooks-${process.pid}-${randomBytes(4).toString('hex')}`,
          ...(tracing.enabled ? { tracer: tracing.tracer } : {}),
          ...options.webhookDelivery,
        });
    webhooks = deliveries ?? undefined;
    const buildEvent = completedEventBuilder((call) => recordingLinks.urlFor(call));
    // The event is committed with the call in the same batch; the hint runs after that commit.
    const buildEventAndWake: CompletedEventBuilder = (call) => {
      setImmediate(() => deliveries?.wake());
      return buildEvent(call);
    };
    const metrics = new ServiceMetrics(store, store.queue);
    // One limiter for the API's limits and the dial caps: in scale-out its buckets are rows.
    const limiter =
      store instanceof PostgresStore ? new PostgresRateLimiter(store.pool) : new MemoryRateLimiter();
    // Scale-out processes may run on different machines: recordings go where all of them can read.
    const recordingStorage = recordingStorageFor(store, config.dataDir);
    // The sandbox carrier runs inside each worker process (its own, on loopback).
    voice = runsWorkers
      ? await VoiceStack.start(config.voice, logger.child({ component: 'voice' }), {
          ...(options.vendorHostLookup ? { vendorHostLookup: options.vendorHostLookup } : {}),
        })
      : undefined;
    const startedVoice = voice;
    const speechEngines = startedVoice ? () => startedVoice.engineHealth() : undefined;
    if (startedVoice) metrics.addVoice(startedVoice);
    calls = !voice
      ? undefined
      : await startCallWorker({
          config,
          voice,
          recordings: recordingStorage,
          metrics,
          tracer: tracing.tracer,
          store,
          queue: store.queue,
          logger,
          secretBox,
          buildEvent: buildEventAndWake,
          soleWorker: !scaleOut,
          limiter,
          ...(options.campaignScheduler ? { campaignScheduler: options.campaignScheduler } : {}),
          ...(options.registrationSyncMs ? { registrationSyncMs: options.registrationSyncMs } : {}),
          ...(options.callingHoursRecheckMs ? { callingHoursRecheckMs: options.callingHoursRecheckMs } : {}),
          httpPorts: [config.port, ...(config.metrics.port === null ? [] : [config.metrics.port])],
        });
    // Once the voice's and the worker's series are registered: the OTLP bridge reads them all.
    metricsExport = await startMetricsExport(
      config.otlpMetrics,
      metrics.registry,
      logger.child({ component: 'metrics-export' }),
    );
    const runningMetricsExport = metricsExport;
    const metricsOnMainPort =
      config.metrics.port === null && config.metrics.token !== null
        ? { registry: metrics.registry, token: config.metrics.token }
        : undefined;
    app =
      role === 'worker'
        ? await buildWorkerApp(store, config, metricsOnMainPort, speechEngines)
        : await buildApp({
            ...(metricsOnMainPort ? { metrics: metricsOnMainPort } : {}),
            store,
            config,
            logger,
            limiter: limiter,
            ...(tracing.enabled ? { tracer: tracing.tracer } : {}),
            version: packageVersion(),
            callControl: calls ? calls.dispatcher : remoteCallControl(store, buildEvent),
            webCalls: calls?.dispatcher ?? null,
            ...(startedVoice
              ? {
                  reanalyzeCall: (accountId: string, callId: string) =>
                    reanalyzeCall({ store, secretBox, voice: startedVoice, logger }, accountId, callId),
                }
              : {}),
            ...(speechEngines ? { speechEngines } : {}),
            dashboard: {
              secretBox,
              cookieSecure: config.cookieSecure,
              dataDir: config.dataDir,
              webhookAllowPrivate: config.webhookAllowPrivate,
              trunkAllowPrivate: config.telephony.trunkAllowPrivate,
              providerAllowPrivate: config.voice.providerAllowPrivate,
              webCallIceServers: config.webCallIceServers,
            },
            recordings: { links: recordingLinks, storage: recordingStorage },
            wakeWebhookDelivery: () => deliveries?.wake(),
            secretBox,
            providerAllowPrivate: config.voice.providerAllowPrivate,
            webhookAllowPrivate: config.webhookAllowPrivate,
            vendorConfigured: (provider) => serviceVendorConfigured(config.voice, provider),
          });
    const url = await app.listen({ port: config.port, host: config.host });
    const metricsListener = await startMetricsListener(config, logger, metrics.registry);
    metricsApp = metricsListener.app;
    // Started once nothing else can fail, so start-up errors leave no connection behind.
    jobListener =
      config.database.url !== null && runsWorkers
        ? listenForJobs({
            connectionString: config.database.url,
            logger,
            onJob: (queue) => (queue === queueNames.dispatch ? calls?.dispatcher.wake() : deliveries?.wake()),
          })
        : null;
    let closing: Promise<void> | undefined;
    const runningApp = app;
    const runningCalls = calls;
    const runningVoice = voice;
    const runningJobListener = jobListener;
    const close = () => {
      closing ??= (async () => {
        await runningApp.close();
        await metricsListener.app?.close();
        await runningJobListener?.close();
        await runningCalls?.close(config.telephony.shutdownGraceMs);
        await deliveries?.stop();
        await runningVoice?.close();
        await tracing?.shutdown();
        // Its last export reads the store (calls by status, queues): before the store closes.
        await runningMetricsExport.shutdown();
        await store.close();
        unlock();
        logger.info('stopped');
      })();
      return closing;
    };
    logger.info({ url, role, store: scaleOut ? 'postgres' : 'sqlite' }, 'callwright listening');
    if (options.terminal)
      options.terminal(
        startupBanner({
          config,
          role,
          sipAddress: calls ? `${config.telephony.bindAddress}:${calls.ua.boundPort}` : null,
          progress: await setupProgress(store),
        }),
      );
    if (role !== 'worker') {
      const signUpUrl = `${config.publicUrl.replace(/\/$/, '')}/sign-up`;
      await announceSetupToken({ store, logger, signUpUrl, terminal: options.terminal ?? null });
    }
    // Once start-up can no longer fail (a failed attempt must not leave its handlers behind).
    if (options.handleSignals) {
      for (const signal of ['SIGTERM', 'SIGINT'] as const) {
        process.once(signal, () => {
          logger.info({ signal }, 'shutting down');
          void close();
        });
      }
    }
    return {
      role,
      app,
      store,
      calls: calls ?? null,
      webhooks: deliveries,
      secretBox,
      url,
      metricsUrl: metricsListener.url,
      close,
    };
  } catch (error) {
    await app?.close();
    await metricsApp?.close();
    await jobListener?.close();
    await calls?.close(0);
    await webhooks?.stop();
    await voice?.close();
    await metricsExport?.shutdown();
    await tracing?.shutdown();
    await store.close();
    unlock();
    throw error;
  }
}
