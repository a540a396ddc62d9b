import { type WebSocket, WebSocketServer } from 'ws';
import { encodeG711 } from '../../src/telephony/rtp/g711.js';
import { garbageFrame, type StreamFault, takeFault } from './streamFaults.js';
import { startVendorRestServer } from './vendorRestServer.js';

/**
 * A stand-in for Cartesia's TTS WebSocket (`wss://api.cartesia.ai/tts/websocket`), following its
 * API reference (Text to Speech, WebSocket, version 2026-03-01):
 *
 * - auth `Authorization: Bearer <key>` and a `Cartesia-Version` header on the upgrade;
 * - a generation request `{model_id, transcript, voice: {mode: "id", id}, language, context_id,
 *   output_format: {container, encoding, sample_rate}, continue}`; a cancel `{context_id, cancel: true}`;
 * - responses `{"type":"chunk","data":<base64>,"done":false,"status_code":206,"step_time",…}`, then
 *   `{"type":"done","done":true,…}`; an error `{"type":"error","done":true,"status_code",
 *   "error_code","title","message","context_id"}`.
 *
 * The audio is a tone, 60 ms per character of the transcript, in 100 ms chunks of the encoding
 * asked for (this fake speaks `pcm_mulaw` at 8 kHz). It stands for the vendor, not for our code.
 */

export interface CartesiaScript {
  apiKey: string;
  voiceIds: string[];
  firstAudioDelayMs: number;
  chunkIntervalMs: number;
  hang: boolean;
  /**
   * Faults at any point of a generation (see streamFaults.ts): `error` is the documented error
   * message for the context (status 500), `close` a close 1011, `garbage` a frame that is not JSON.
   */
  faults: StreamFault[];
}

export interface CartesiaConnection {
  version: string | undefined;
  requests: Record<string, unknown>[];
  chunksSent: number;
  canceled: boolean;
}

export interface FakeCartesia {
  baseUrl: string;
  script: CartesiaScript;
  connections: CartesiaConnection[];
  close(): Promise<void>;
}

function toneBytes(durationMs: number): Uint8Array {
  const samples = new Int16Array(8 * durationMs);
  for (let i = 0; i < samples.length; i++)
    samples[i] = Math.round(4000 * Math.sin((2 * Math.PI * 180 * i) / 8000));
  return encodeG711('PCMU', samples);
}

export async function startFakeCartesia(
  script: Partial<CartesiaScript> & { apiKey: string; voiceIds: string[] },
): Promise<FakeCartesia> {
  const fullScript: CartesiaScript = {
    firstAudioDelayMs: 20,
    chunkIntervalMs: 10,
    hang: false,
    faults: [],
    ...script,
  };
  const connections: CartesiaConnection[] = [];
  const rest = await startVendorRestServer((request) =>
    request.url === '/voices'
      ? request.headers.authorization === `Bearer ${fullScript.apiKey}` && request.headers['cartesia-version']
        ? {
            status: 200,
            body: { data: fullScript.voiceIds.map((id) => ({ id, name: 'Fake voice' })), has_more: false },
          }
        : { status: 401, body: { error: 'Invalid API key.' } }
      : { status: 404, body: { error: 'Not found' } },
  );
  const server = new WebSocketServer({
    server: rest.http,
    verifyClient: (info, accept) => {
      if (!info.req.url?.startsWith('/tts/websocket')) return accept(false, 404, 'Not Found');
      if (info.req.headers.authorization !== `Bearer ${fullScript.apiKey}`)
        return accept(false, 401, 'Unauthorized');
      if (!info.req.headers['cartesia-version']) return accept(false, 400, 'Bad Request');
      accept(true);
    },
  });
  server.on('connection', (socket: WebSocket, request) => {
    const connection: CartesiaConnection = {
      version: request.headers['cartesia-version'] as string | undefined,
      requests: [],
      chunksSent: 0,
      canceled: false,
    };
    connections.push(connection);
    socket.on('message', async (data) => {
      const message = JSON.parse(String(data)) as Record<string, unknown>;
      connection.requests.push(message);
      const contextId = message.context_id as string;
      if (message.cancel === true) {
        connection.canceled = true;
        return;
      }
      const fail = (statusCode: number, errorCode: string, title: string, detail: string) =>
        socket.send(
          JSON.stringify({
            type: 'error',
            done: true,
            status_code: statusCode,
            error_code: errorCode,
            title,
            message: detail,
            context_id: contextId,
          }),
        );
      const voice = message.voice as { mode?: string; id?: string } | undefined;
      if (voice?.mode !== 'id' || !fullScript.voiceIds.includes(voice.id ?? ''))
        return fail(400, 'voice_not_found', 'Voice not found', `No voice with id ${voice?.id}.`);
      const format = message.output_format as { container?: string; encoding?: string; sample_rate?: number };
      if (format?.container !== 'raw' || format.encoding !== 'pcm_mulaw' || format.sample_rate !== 8000)
        return fail(
          400,
          'invalid_output_format',
          'Invalid output format',
          'This fake produces raw pcm_mulaw at 8000 Hz.',
        );
      if (fullScript.hang) return;
      const fault = takeFault(fullScript.faults, String(message.transcript ?? ''));
      const bytes = toneBytes(Math.max(100, String(message.transcript ?? '').length * 60));
      await new Promise((resolve) => setTimeout(resolve, fullScript.firstAudioDelayMs));
      for (let offset = 0; offset < bytes.length; offset += 800) {
        if (connection.canceled || socket.readyState !== socket.OPEN) return;
        if (fault && offset / 800 === fault.afterChunks) {
          if (fault.kind === 'stall') return;
          if (fault.kind === 'error')
            return fail(500, 'internal_server_error', 'Internal server error', 'The generation failed.');
          if (fault.kind === 'close') return socket.close(1011, 'internal error');
          socket.send(garbageFrame);
          if (fault.kind === 'garbage') return;
        }
        socket.send(
          JSON.stringify({
            type: 'chunk',
            data: Buffer.from(bytes.subarray(offset, offset + 800)).toString('base64'),
            done: false,
            status_code: 206,
            step_time: 12,
            context_id: contextId,
          }),
        );
        connection.chunksSent++;
        await new Promise((resolve) => setTimeout(resolve, fullScript.chunkIntervalMs));
      }
      if (socket.readyState === socket.OPEN)
        socket.send(JSON.stringify({ type: 'done', done: true, status_code: 206, context_id: contextId }));
    });
  });
  const { port } = rest;
  return {
    baseUrl: `ws://127.0.0.1:${port}`,
    script: fullScript,
    connections,
    close: () => rest.close(server),
  };
}
