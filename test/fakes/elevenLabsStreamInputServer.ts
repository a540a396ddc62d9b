import { type WebSocket, WebSocketServer } from 'ws';
import { encodeG711 } from '../../src/telephony/rtp/g711.js';
import { garbageFrame, type StreamFault, takeFault } from './streamFaults.js';
import { startVendorRestServer } from './vendorRestServer.js';

/**
 * A stand-in for ElevenLabs' text-to-speech WebSocket
 * (`wss://api.elevenlabs.io/v1/text-to-speech/{voice_id}/stream-input`), following its API
 * reference ("WebSocket", text-to-speech stream-input) and its AsyncAPI description:
 *
 * - auth: the `xi-api-key` header on the upgrade (or `xi_api_key` in the first message); a wrong
 *   key is refused;
 * - query: `model_id`, `output_format` (here `ulaw_8000`: base64 of 8 kHz μ-law bytes), `language_code`;
 * - client messages: first `{"text":" "}` (with optional `voice_settings`, `generation_config`),
 *   then text chunks ending in a space, `"flush": true` to generate now, `{"text":""}` to end;
 * - server messages: `{"audio": "<base64>", "isFinal": null, "normalizedAlignment": …, "alignment": …}`
 *   per chunk, then `{"isFinal": true}`; an error is `{"message", "error", "code"}` and a close.
 *
 * The audio is a tone, 60 ms per character, in 100 ms chunks. It stands for the vendor; it is not
 * a mock of our code.
 */

export interface ElevenLabsScript {
  apiKey: string;
  /** Voice ids that exist; another one gets the documented error. */
  voiceIds: string[];
  /** Wait this long before the first chunk of a generation. */
  firstAudioDelayMs: number;
  /** Between chunks. */
  chunkIntervalMs: number;
  /** Accept the text, never answer. */
  hang: boolean;
  /** Answer with a frame that is not JSON. */
  garbage: boolean;
  /** Answer with an error frame (e.g. quota exceeded), then close 1008. */
  errorFrame: { error: string; message: string } | null;
  /**
   * Faults at any point of a generation (see streamFaults.ts): `error` is the documented error
   * message and a close 1008, `close` a close 1011 (internal error), `garbage` a frame that is not
   * JSON.
   */
  faults: StreamFault[];
}

export interface ElevenLabsConnection {
  voiceId: string;
  query: URLSearchParams;
  messages: Record<string, unknown>[];
  chunksSent: number;
  closeCode: number | null;
  closedByClientAtChunk: number | null;
  /** When the upgrade was accepted (Date.now()). */
  openedAtMs: number;
}

export interface FakeElevenLabs {
  baseUrl: string;
  script: ElevenLabsScript;
  connections: ElevenLabsConnection[];
  close(): Promise<void>;
}

const toneAmplitude = 5000;

function toneBytes(durationMs: number): Uint8Array {
  const samples = new Int16Array(8 * durationMs);
  for (let i = 0; i < samples.length; i++)
    samples[i] = Math.round(toneAmplitude * Math.sin((2 * Math.PI * 220 * i) / 8000));
  return encodeG711('PCMU', samples);
}

export async function startFakeElevenLabs(
  script: Partial<ElevenLabsScript> & { apiKey: string; voiceIds: string[] },
): Promise<FakeElevenLabs> {
  const fullScript: ElevenLabsScript = {
    firstAudioDelayMs: 20,
    chunkIntervalMs: 10,
    hang: false,
    garbage: false,
    errorFrame: null,
    faults: [],
    ...script,
  };
  const connections: ElevenLabsConnection[] = [];
  const rest = await startVendorRestServer((request) =>
    request.url === '/v1/user'
      ? request.headers['xi-api-key'] === fullScript.apiKey
        ? {
            status: 200,
            body: { user_id: 'fake-user', subscription: { tier: 'creator', character_count: 0 } },
          }
        : { status: 401, body: { detail: { status: 'invalid_api_key', message: 'Invalid API key' } } }
      : { status: 404, body: { detail: 'Not Found' } },
  );
  const server = new WebSocketServer({
    server: rest.http,
    verifyClient: (info, accept) => {
      const match = /^\/v1\/text-to-speech\/([^/?]+)\/stream-input/.exec(info.req.url ?? '');
      if (!match) return accept(false, 404, 'Not Found');
      if (info.req.headers['xi-api-key'] !== fullScript.apiKey) return accept(false, 401, 'Unauthorized');
      accept(true);
    },
  });

  server.on('connection', (socket: WebSocket, request) => {
    const url = new URL(request.url ?? '/', 'ws://fake');
    const connection: ElevenLabsConnection = {
      voiceId: decodeURIComponent(/\/text-to-speech\/([^/]+)\//.exec(url.pathname)?.[1] ?? ''),
      query: url.searchParams,
      messages: [],
      chunksSent: 0,
      closeCode: null,
      closedByClientAtChunk: null,
      openedAtMs: Date.now(),
    };
    connections.push(connection);
    let text = '';
    let generating = false;
    socket.on('close', (code) => {
      connection.closeCode = code;
      if (generating) connection.closedByClientAtChunk = connection.chunksSent;
    });
    const sendError = (error: string, message: string) => {
      socket.send(JSON.stringify({ message, error, code: 1008 }));
      socket.close(1008, error);
    };
    const generate = async () => {
      if (fullScript.hang || generating) return;
      if (fullScript.garbage) {
        socket.send('<html>Bad Gateway</html>');
        return;
      }
      if (fullScript.errorFrame) return sendError(fullScript.errorFrame.error, fullScript.errorFrame.message);
      if (!fullScript.voiceIds.includes(connection.voiceId))
        return sendError('voice_not_found', `A voice with the voice_id ${connection.voiceId} was not found.`);
      if (connection.query.get('output_format') !== 'ulaw_8000')
        return sendError('invalid_output_format', 'this fake speaks ulaw_8000 only');
      generating = true;
      const fault = takeFault(fullScript.faults, text);
      const bytes = toneBytes(Math.max(100, text.trim().length * 60));
      await new Promise((resolve) => setTimeout(resolve, fullScript.firstAudioDelayMs));
      for (let offset = 0; offset < bytes.length; offset += 800) {
        if (socket.readyState !== socket.OPEN) return;
        if (fault && offset / 800 === fault.afterChunks) {
          if (fault.kind === 'stall') return;
          if (fault.kind === 'error')
            return sendError('internal_error', 'An internal error occurred while generating audio.');
          if (fault.kind === 'close') return socket.close(1011, 'internal error');
          socket.send(garbageFrame);
          if (fault.kind === 'garbage') return;
        }
        const piece = bytes.subarray(offset, offset + 800);
        socket.send(
          JSON.stringify({
            audio: Buffer.from(piece).toString('base64'),
            isFinal: null,
            normalizedAlignment: {
              chars: [...text.slice(0, 3)],
              charStartTimesMs: [0, 60, 120],
              charDurationsMs: [60, 60, 60],
            },
            alignment: {
              chars: [...text.slice(0, 3)],
              charStartTimesMs: [0, 60, 120],
              charDurationsMs: [60, 60, 60],
            },
          }),
        );
        connection.chunksSent++;
        await new Promise((resolve) => setTimeout(resolve, fullScript.chunkIntervalMs));
      }
      generating = false;
      if (socket.readyState === socket.OPEN) socket.send(JSON.stringify({ isFinal: true }));
    };
    socket.on('message', (data) => {
      let message: { text?: unknown; flush?: unknown };
      try {
        message = JSON.parse(String(data));
      } catch {
        return sendError('invalid_message', 'messages are JSON');
      }
      connection.messages.push(message as Record<string, unknown>);
      if (connection.messages.length === 1 && message.text !== ' ')
        return sendError('invalid_message', 'the first message must have the text " "');
      if (typeof message.text === 'string' && message.text !== ' ') text += message.text;
      if (message.flush === true || message.text === '') void generate();
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
