import alawmulaw from 'alawmulaw';
import Fastify from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { installErrorHandlers } from '../../src/api/errors.js';
import { registerHealthRoutes } from '../../src/api/health.js';
import { openSqliteStore } from '../../src/openStore.js';
import type { EngineHealth } from '../../src/voice/providers/enginePool.js';
import {
  FliteTextToSpeech,
  PocketsphinxSpeechToText,
  ProviderError,
} from '../../src/voice/providers/index.js';
import { callFixture, startFullService, waitForTerminal } from '../helpers/fullService.js';
import { postCall, request } from '../helpers/http.js';
import { childProcessesTitled, waitFor } from '../helpers/processes.js';

/**
 * Issue 12, defect 0: one failed recognition silenced offline recognition for the whole process
 * (the broken recognizer went back to the pool), and nothing showed it. Now each engine runs in a
 * process of its own; one that dies fails only the call it served, is replaced, and /healthz,
 * /readyz and /metrics show it. The processes are ended for real (SIGSEGV, as a native crash).
 */

describe('offline engines whose process dies', () => {
  let tts: FliteTextToSpeech;
  let stt: PocketsphinxSpeechToText;
  const phrases = ['yes', 'no', 'wednesday', 'call me back later'];

  /** Flite speech as it arrives from a phone line: through G.711 µ-law and back. */
  async function speak(text: string): Promise<Int16Array> {
    const pieces: Int16Array[] = [];
    for await (const chunk of tts.synthesize(text)) pieces.push(chunk.samples);
    const samples = new Int16Array(pieces.reduce((total, piece) => total + piece.length, 0));
    let offset = 0;
    for (const piece of pieces) {
      samples.set(piece, offset);
      offset += piece.length;
    }
    return alawmulaw.mulaw.decode(alawmulaw.mulaw.encode(samples));
  }

  beforeAll(async () => {
    [tts, stt] = await Promise.all([
      FliteTextToSpeech.start(),
      PocketsphinxSpeechToText.start({ freeForm: false }),
    ]);
  });
  afterAll(async () => {
    await Promise.all([tts?.close(), stt?.close()]);
  });

  it('a recognizer that crashes mid-utterance fails that session alone; the next one recognizes speech', async () => {
    const said = await speak('call me back later');
    const session = await stt.startSession({ phrases });
    session.pushAudio(said.subarray(0, said.length / 2));
    const [crashedProcessId] = stt.processIds();
    process.kill(crashedProcessId as number, 'SIGSEGV');
    const failed = session.finish();
    await expect(failed).rejects.toBeInstanceOf(ProviderError);
    await expect(failed).rejects.toThrow(/killed by SIGSEGV/);
    session.close();

    // The next call waits for the replacement rather than hearing nothing.
    const next = await stt.startSession({ phrases });
    next.pushAudio(await speak('wednesday'));
    expect((await next.finish()).matchedPhrase).toBe('wednesday');
    next.close();
    expect(stt.processIds()).not.toContain(crashedProcessId);
    expect(stt.health()).toEqual({
      engine: 'pocketsphinx',
      processes: 1,
      ready: 1,
      failures: 1,
      startFailures: 0,
      available: true,
    });
  });

  it('a flite process that dies is replaced, and the next synthesis speaks', async () => {
    const [crashedProcessId] = tts.processIds();
    process.kill(crashedProcessId as number, 'SIGSEGV');
    await waitFor(() => tts.health().failures === 1);
    const samples = await speak('Thank you, goodbye.');
    expect(samples.length).toBeGreaterThan(4000);
    expect(tts.processIds()).not.toContain(crashedProcessId);
    expect(tts.health()).toMatchObject({ engine: 'flite', ready: 1, failures: 1, available: true });
  });
});

describe('the service reports its offline engines', () => {
  let service: Awaited<ReturnType<typeof startFullService>>;
  const metricsToken = 'metrics-token-engines-0123456789';

  beforeAll(async () => {
    service = await startFullService({
      CALLWRIGHT_METRICS_PORT: '0',
      CALLWRIGHT_METRICS_TOKEN: metricsToken,
    });
  });
  afterAll(async () => {
    await service?.dispose();
  });

  async function scrape(): Promise<string> {
    const metrics = await request(`${service.metricsUrl}/metrics`, {
      headers: { Authorization: `Bearer ${metricsToken}` },
    });
    expect(metrics.status).toBe(200);
    return metrics.text;
  }

  async function engines(): Promise<Array<Record<string, unknown>>> {
    const health = await request(`${service.url}/healthz`);
    expect(health.status).toBe(200);
    return (health.body as { speech_engines: Array<Record<string, unknown>> }).speech_engines;
  }

  it('in /healthz and /metrics, a recognizer crash and its replacement; /readyz stays ready', async () => {
    expect(await engines()).toEqual([
      { engine: 'pocketsphinx', processes: 1, ready: 1, failures: 0, start_failures: 0, available: true },
      { engine: 'flite', processes: 1, ready: 1, failures: 0, start_failures: 0, available: true },
    ]);
    const recognizers = childProcessesTitled('callwright-pocketsphinx');
    expect(recognizers).toHaveLength(1);
    process.kill(recognizers[0] as number, 'SIGSEGV');

    await waitFor(async () => {
      const pocketsphinx = (await engines())[0];
      return pocketsphinx?.failures === 1 && pocketsphinx.ready === 1;
    });
    expect(childProcessesTitled('callwright-pocketsphinx')).not.toContain(recognizers[0]);
    expect((await request(`${service.url}/readyz`)).body).toEqual({ status: 'ready' });
    const metrics = await scrape();
    expect(metrics).toContain('# TYPE callwright_speech_engine_failures_total counter');
    expect(metrics).toContain('callwright_speech_engine_failures_total{engine="pocketsphinx"} 1');
    expect(metrics).toContain('callwright_speech_engine_failures_total{engine="flite"} 0');
    expect(metrics).toContain('callwright_speech_engine_processes_ready{engine="pocketsphinx"} 1');
    expect(metrics).toContain('callwright_speech_engine_available{engine="pocketsphinx"} 1');
  });

  it('a call that is never answered gives back its voice activity detector (shared WASM memory)', async () => {
    // Each detector holds ~1 KB of the one fvad WASM memory all calls share; unanswered calls
    // kept theirs, so enough of them would leave no call able to get one.
    const fixture = await callFixture(service);
    for (const busyNumber of ['+15550100002', '+15550100005']) {
      const created = await postCall(service.url, fixture.key, {
        agent_id: fixture.agentId,
        from_number: fixture.from,
        to_number: busyNumber,
      });
      expect(created.status).toBeLessThan(300);
      await waitForTerminal(service, (created.body as { call_id: string }).call_id);
    }
    await waitFor(async () => (await scrape()).includes('callwright_live_calls{'));
    // No kind of live call left (each kind is a series of its own).
    await waitFor(async () => !/\ncallwright_live_calls\{[^}]*\} [1-9]/.test(await scrape()));
    expect(await scrape()).toContain('\ncallwright_voice_activity_detectors_open 0\n');
  });
});

describe('/readyz when an offline engine cannot be started', () => {
  it('answers 503 unavailable naming the engine, while /healthz (liveness) still answers', async () => {
    const store = openSqliteStore(':memory:');
    let pocketsphinx: EngineHealth = {
      engine: 'pocketsphinx',
      processes: 1,
      ready: 0,
      failures: 3,
      startFailures: 2,
      available: false,
    };
    const app = Fastify({ logger: false });
    installErrorHandlers(app);
    registerHealthRoutes(app, store, () => [pocketsphinx]);
    try {
      const unready = await app.inject({ method: 'GET', url: '/readyz' });
      expect(unready.statusCode).toBe(503);
      expect(unready.json()).toEqual({
        error: { code: 'unavailable', message: 'offline speech engine cannot be started: pocketsphinx' },
      });
      const live = await app.inject({ method: 'GET', url: '/healthz' });
      expect(live.statusCode).toBe(200);
      expect(live.json()).toMatchObject({
        status: 'ok',
        speech_engines: [{ available: false, start_failures: 2 }],
      });

      // A replacement merely starting after a crash (no failed start yet) is still ready.
      pocketsphinx = { ...pocketsphinx, startFailures: 0, available: true };
      expect((await app.inject({ method: 'GET', url: '/readyz' })).json()).toEqual({ status: 'ready' });
    } finally {
      await app.close();
      await store.close();
    }
  });
});
