import { type WebSocket, WebSocketServer } from 'ws';
import { encodeG711 } from '../../src/telephony/rtp/g711.js';
import { garbageFrame, type StreamFault, takeFault } from './streamFaults.js';
import { startVendorRestServer } from './vendorRestServer.js';

/**
 * A stand-in for Deepgram Aura's streaming text-to-speech WebSocket (`wss://api.deepgram.com/v1/speak`),
 * following its API reference and the message types of the official SDK (SpeakV1Text, SpeakV1Flush,
 * SpeakV1Clear, SpeakV1Close; SpeakV1Metadata, SpeakV1Flushed, SpeakV1Cleared, SpeakV1Warning):
 *
 * - auth `Authorization: Token <key>` on the upgrade (401 otherwise); `model`, `encoding` and
 *   `sample_rate` in the query (400 for a model it does not have, or audio other than `mulaw` at
 *   8000 Hz, the only format this fake speaks);
 * - `Metadata` once connected; `{"type":"Speak","text"}` adds text; `{"type":"Flush"}` makes the audio
 *   — binary frames of raw μ-law (a tone, 60 ms per character, 100 ms a frame) — then
 *   `{"type":"Flushed","sequence_id"}`; `{"type":"Clear"}` drops what is being made and answers
 *   `Cleared`; `{"type":"Close"}` closes with 1000; anything else gets a `Warning`.
 *
 * The REST read a key test makes (`GET /v1/projects`) is served on the same address. It stands for
 * the vendor, not for our code.
 */

export interface DeepgramSpeakScript {
  apiKey: string;
  models: string[];
  firstAudioDelayMs: number;
  chunkIntervalMs: number;
  /**
   * Faults at any point of a flush's audio (see streamFaults.ts). Aura reports errors as a close
   * frame whose reason carries the error (its TTS troubleshooting guide): `error` is a close 1008
   * with a `DATA-0000` reason, `close` a close 1011 with `NET-0001`; `garbage` a text frame that is
   * not JSON.
   */
  faults: StreamFault[];
}

export interface DeepgramSpeakConnection {
  query: URLSearchParams;
  messages: Record<string, unknown>[];
  framesSent: number;
  cleared: number;
  closeCode: number | null;
}

export interface FakeDeepgramSpeak {
  baseUrl: string;
  script: DeepgramSpeakScript;
  connections: DeepgramSpeakConnection[];
  close(): Promise<void>;
}

function toneFrames(durationMs: number): Buffer[] {
  const samples = new Int16Array(8 * durationMs);
  for (let i = 0; i < samples.length; i++)
    samples[i] = Math.round(4000 * Math.sin((2 * Math.PI * 200 * i) / 8000));
  const bytes = Buffer.from(encodeG711('PCMU', samples));
  const frames: Buffer[] = [];
  for (let offset = 0; offset < bytes.length; offset += 800)
    frames.push(bytes.subarray(offset, offset + 800));
  return frames;
}

export async function startFakeDeepgramSpeak(
  script: Partial<DeepgramSpeakScript> & { apiKey: string },
): Promise<FakeDeepgramSpeak> {
  const fullScript: DeepgramSpeakScript = {
    models: ['aura-2-thalia-en', 'aura-2-orion-en'],
    firstAudioDelayMs: 20,
    chunkIntervalMs: 10,
    faults: [],
    ...script,
  };
  const connections: DeepgramSpeakConnection[] = [];
  const rest = await startVendorRestServer((request) =>
    request.url === '/v1/projects'
      ? request.headers.authorization === `Token ${fullScript.apiKey}`
        ? { status: 200, body: { projects: [{ project_id: 'fake-project', name: 'Fake project' }] } }
        : { status: 401, body: { err_code: 'INVALID_AUTH', err_msg: 'Invalid credentials.' } }
      : { status: 404, body: { err_code: 'NOT_FOUND', err_msg: 'Not found.' } },
  );
  const server = new WebSocketServer({
    server: rest.http,
    verifyClient: (info, accept) => {
      const url = new URL(info.req.url ?? '/', 'ws://fake');
      if (url.pathname !== '/v1/speak') return accept(false, 404, 'Not Found');
      if (info.req.headers.authorization !== `Token ${fullScript.apiKey}`)
        return accept(false, 401, 'Unauthorized');
      const model = url.searchParams.get('model') ?? 'aura-asteria-en';
      if (!fullScript.models.includes(model)) return accept(false, 400, 'Bad Request');
      if (url.searchParams.get('encoding') !== 'mulaw' || url.searchParams.get('sample_rate') !== '8000')
        return accept(false, 400, 'Bad Request');
      accept(true);
    },
  });
  server.on('connection', (socket: WebSocket, request) => {
    const connection: DeepgramSpeakConnection = {
      query: new URL(request.url ?? '/', 'ws://fake').searchParams,
      messages: [],
      framesSent: 0,
      cleared: 0,
      closeCode: null,
    };
    connections.push(connection);
    socket.on('close', (code) => {
      connection.closeCode = code;
    });
    const send = (message: unknown) => {
      if (socket.readyState === socket.OPEN) socket.send(JSON.stringify(message));
    };
    send({
      type: 'Metadata',
      request_id: `fake-${connections.length}`,
      model_name: connection.query.get('model'),
      model_version: '2025-04-07',
      model_uuid: 'fake-model-uuid',
    });
    let text = '';
    let sequence = 0;
    let generation = 0;
    socket.on('message', async (data) => {
      const message = JSON.parse(String(data)) as Record<string, unknown>;
      connection.messages.push(message);
      switch (message.type) {
        case 'Speak':
          text += String(message.text ?? '');
          return;
        case 'Flush': {
          const mine = ++generation;
          const fault = takeFault(fullScript.faults, text);
          const frames = toneFrames(Math.max(100, text.length * 60));
          text = '';
          await new Promise((resolve) => setTimeout(resolve, fullScript.firstAudioDelayMs));
          for (const [index, frame] of frames.entries()) {
            if (mine !== generation || socket.readyState !== socket.OPEN) return;
            if (fault && index === fault.afterChunks) {
              if (fault.kind === 'stall') return;
              if (fault.kind === 'error')
                return socket.close(1008, 'DATA-0000: The payload cannot be decoded as audio.');
              if (fault.kind === 'close')
                return socket.close(1011, 'NET-0001: The service did not receive audio in time.');
              socket.send(garbageFrame);
              if (fault.kind === 'garbage') return;
            }
            socket.send(frame, { binary: true });
            connection.framesSent++;
            await new Promise((resolve) => setTimeout(resolve, fullScript.chunkIntervalMs));
          }
          send({ type: 'Flushed', sequence_id: sequence++ });
          return;
        }
        case 'Clear':
          generation++;
          text = '';
          connection.cleared++;
          send({ type: 'Cleared', sequence_id: sequence++ });
          return;
        case 'Close':
          socket.close(1000);
          return;
        default:
          send({
            type: 'Warning',
            code: 'UNKNOWN_MESSAGE_TYPE',
            description: `Unknown type ${String(message.type)}`,
          });
      }
    });
  });
  return {
    baseUrl: `ws://127.0.0.1:${rest.port}`,
    script: fullScript,
    connections,
    close: () => rest.close(server),
  };
}
