import { randomBytes } from 'node:crypto';
import { closeSync, mkdirSync, openSync, readFileSync, rmSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import type { FastifyInstance } from 'fastify';
import { buildApp } from './api/app.js';
import { createRecordingLinks, recordingLinkKeyName } from './api/recordingLinks.js';
import { type CallWorker, startCallWorker } from './calls/callWorker.js';
import { completedEventBuilder } from './calls/completedEvents.js';
import type { Config } from './config.js';
import { AppError } from './domain/errors.js';
import { MemoryRateLimiter } from './limits/rateLimiter.js';
import type { Logger } from './logger.js';
import { ServiceMetrics } from './metrics/serviceMetrics.js';
import { loadSecretBox } from './secrets/secretBox.js';
import { SqliteStore } from './store/sqlite/sqliteStore.js';
import type { CompletedEventBuilder } from './store/types.js';
import { VoiceStack } from './voice/voiceStack.js';
import {
  type DeliveryWorker,
  type DeliveryWorkerOptions,
  startDeliveryWorker,
} from './webhooks/deliveryWorker.js';

export interface RunningService {
  app: FastifyInstance;
  store: SqliteStore;
  calls: CallWorker;
  webhooks: DeliveryWorker;
  /** The address the API listens on, e.g. http://127.0.0.1:3000. */
  url: string;
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
  mkdirSync(dataDir, { recursive: true });
  const path = join(dataDir, 'serve.lock');
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      const fd = openSync(path, 'wx');
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

/**
 * Opens the store, starts the call worker and the API: the `serve` command, and what tests start.
 * With `handleSignals`, SIGTERM and SIGINT close it gracefully.
 */
export async function startService(
  config: Config,
  logger: Logger,
  options: {
    handleSignals?: boolean;
    /** Test and benchmark knobs of the webhook delivery worker (short retry delays, timeouts). */
    webhookDelivery?: Pick<
      DeliveryWorkerOptions,
      'retryDelay' | 'timeoutMs' | 'pollIntervalMs' | 'concurrency'
    >;
  } = {},
): Promise<RunningService> {
  const unlock = lockDataDir(config.dataDir);
  const store = SqliteStore.open(config.sqlitePath);
  let calls: CallWorker | undefined;
  let webhooks: DeliveryWorker | undefined;
  let app: FastifyInstance | undefined;
  let voice: VoiceStack | undefined;
  try {
    const secretBox = loadSecretBox({ configuredKeyBase64: config.secretKeyBase64, dataDir: config.dataDir });
    const recordingLinks = createRecordingLinks({
      publicUrl: config.publicUrl,
      keyBase64: await store.serviceSecret(recordingLinkKeyName, () => randomBytes(32).toString('base64')),
    });
    const deliveries = startDeliveryWorker({
      events: store.events,
      endpoints: store.webhookEndpoints,
      queue: store.queue,
      logger,
      allowPrivate: config.webhookAllowPrivate,
      workerId: `webhooks-${process.pid}-${randomBytes(4).toString('hex')}`,
      ...options.webhookDelivery,
    });
    webhooks = deliveries;
    const buildEvent = completedEventBuilder((call) => recordingLinks.urlFor(call));
    // The event is committed with the call in the same batch; the hint runs after that commit.
    const buildEventAndWake: CompletedEventBuilder = (call) => {
      setImmediate(() => deliveries.wake());
      return buildEvent(call);
    };
    const metrics = new ServiceMetrics(store, store.queue);
    voice = await VoiceStack.start(config.voice, logger.child({ component: 'voice' }));
    calls = await startCallWorker({
      config,
      voice,
      recordingsDir: join(config.dataDir, 'recordings'),
      metrics,
      store,
      queue: store.queue,
      logger,
      secretBox,
      buildEvent: buildEventAndWake,
      soleWorker: true,
    });
    app = await buildApp({
      metrics: metrics.registry,
      store,
      config,
      logger,
      limiter: new MemoryRateLimiter(),
      version: packageVersion(),
      callControl: calls.dispatcher,
      dashboard: {
        secretBox,
        cookieSecure: config.cookieSecure,
        dataDir: config.dataDir,
        webhookAllowPrivate: config.webhookAllowPrivate,
      },
      recordings: { links: recordingLinks, baseDir: config.dataDir },
      wakeWebhookDelivery: () => deliveries.wake(),
    });
    const url = await app.listen({ port: config.port, host: config.host });
    let closing: Promise<void> | undefined;
    const runningApp = app;
    const runningCalls = calls;
    const runningVoice = voice;
    const close = () => {
      closing ??= (async () => {
        await runningApp.close();
        await runningCalls.close();
        await deliveries.stop();
        await runningVoice.close();
        await store.close();
        unlock();
        logger.info('stopped');
      })();
      return closing;
    };
    if (options.handleSignals) {
      for (const signal of ['SIGTERM', 'SIGINT'] as const) {
        process.once(signal, () => {
          logger.info({ signal }, 'shutting down');
          void close();
        });
      }
    }
    logger.info({ url, dataDir: config.dataDir }, 'callwright listening');
    return { app, store, calls, webhooks: deliveries, url, close };
  } catch (error) {
    await app?.close();
    await calls?.close(0);
    await webhooks?.stop();
    await voice?.close();
    await store.close();
    unlock();
    throw error;
  }
}
