import type { Server } from 'node:http';
import type {
  RealtimeClientEvent,
  RealtimeServerEvent,
  RealtimeSessionCreateRequest,
} from 'openai/resources/realtime/realtime';
import { type WebSocket, WebSocketServer } from 'ws';
import { decodeG711, encodeG711 } from '../../src/telephony/rtp/g711.js';
import { garbageFrame, type StreamFault, takeFault } from './streamFaults.js';

/**
 * A stand-in for OpenAI's Realtime API over WebSocket (`wss://api.openai.com/v1/realtime?model=…`),
 * following its API reference and the event types of the official SDK
 * (`openai/resources/realtime/realtime`, which type-checks every message this fake sends and reads):
 *
 * - auth `Authorization: Bearer <key>` on the upgrade (401 otherwise); `session.created` first;
 * - `session.update` with `session.type: "realtime"` → `session.updated` (an `error` event with
 *   `invalid_value` and its `param` for a voice it does not have or an audio format other than
 *   `audio/pcmu`, the only one this fake speaks);
 * - `input_audio_buffer.append` (base64 μ-law) judged by its energy: `input_audio_buffer.speech_started`,
 *   and after the session's `silence_duration_ms` of quiet `speech_stopped`, `committed`,
 *   `conversation.item.input_audio_transcription.completed` (the next of `calleeTranscripts`) and,
 *   with `create_response`, a response; with `interrupt_response`, speech cancels the response in
 *   progress (`response.done` with status `cancelled`);
 * - a response: `response.created`, `response.output_item.added`, `response.output_audio_transcript.delta`,
 *   `response.output_audio.delta`… (a tone, 60 ms per character, 100 ms per event),
 *   `response.output_audio.done`, `response.output_audio_transcript.done`, `response.output_item.done`,
 *   a `function_call` item with `response.function_call_arguments.done` when the reply has a tool
 *   call, `response.done`;
 * - `conversation.item.truncate` → `conversation.item.truncated`; `conversation.item.create` of a
 *   `function_call_output`, `response.create` and `response.cancel` as documented; any other event
 *   type → an `error` event (`invalid_request_error`, `unknown_event`).
 *
 * It stands for the vendor, not for our code.
 */

export interface RealtimeReply {
  text: string;
  toolCall?: { name: string; arguments: string };
}

export interface RealtimeScript {
  apiKey: string;
  voices: string[];
  /** One per response, in order (the last one repeats). */
  replies: RealtimeReply[];
  /** What the callee said, one per detected speech turn (the last one repeats). */
  calleeTranscripts: string[];
  firstAudioDelayMs: number;
  chunkIntervalMs: number;
  /** Accept the session, then never answer a response.create (a vendor that hangs). */
  hang: boolean;
  /** End every response with status `failed` and this error code. */
  failResponsesWith: string | null;
  /**
   * Faults at any point of a response's audio (see streamFaults.ts), matched on the reply's text:
   * `error` is an `error` event of type `server_error`, `close` a close 1011, `garbage` a frame that
   * is not JSON; `stall` leaves the response in progress with the socket open.
   */
  faults: StreamFault[];
  /** Answer WebSocket pings (RFC 6455 says a peer must); false: a frozen server that still holds the socket. */
  answerPings: boolean;
}

export interface RealtimeConnection {
  model: string | null;
  session: RealtimeSessionCreateRequest | null;
  received: RealtimeClientEvent[];
  appendedMs: number;
  truncates: { item_id: string; audio_end_ms: number }[];
  responses: { instructions: string | null; status: string }[];
  toolOutputs: { call_id: string; output: string }[];
}

export interface FakeRealtime {
  script: RealtimeScript;
  connections: RealtimeConnection[];
  close(): void;
}

const speechAmplitude = 500;

function toneBase64Chunks(durationMs: number): string[] {
  const samples = new Int16Array(8 * durationMs);
  for (let i = 0; i < samples.length; i++)
    samples[i] = Math.round(4000 * Math.sin((2 * Math.PI * 220 * i) / 8000));
  const bytes = encodeG711('PCMU', samples);
  const chunks: string[] = [];
  for (let offset = 0; offset < bytes.length; offset += 800)
    chunks.push(Buffer.from(bytes.subarray(offset, offset + 800)).toString('base64'));
  return chunks;
}

/** Serves the Realtime socket on `/v1/realtime` of an HTTP server (the fake OpenAI server's). */
export function attachFakeRealtime(
  server: Server,
  script: Partial<RealtimeScript> & { apiKey: string; replies: RealtimeReply[] },
): FakeRealtime {
  const fullScript: RealtimeScript = {
    voices: ['alloy', 'marin', 'cedar'],
    calleeTranscripts: [''],
    firstAudioDelayMs: 30,
    chunkIntervalMs: 20,
    hang: false,
    failResponsesWith: null,
    faults: [],
    answerPings: true,
    ...script,
  };
  const connections: RealtimeConnection[] = [];
  // Pongs are sent by hand, so that a frozen server can be played (answerPings: false).
  const sockets = new WebSocketServer({ noServer: true, autoPong: false });
  server.on('upgrade', (request, socket, head) => {
    const url = new URL(request.url ?? '/', 'http://fake');
    if (url.pathname !== '/v1/realtime') {
      socket.end('HTTP/1.1 404 Not Found\r\ncontent-length: 0\r\n\r\n');
      return;
    }
    if (request.headers.authorization !== `Bearer ${fullScript.apiKey}`) {
      const body = JSON.stringify({ error: { type: 'invalid_request_error', code: 'invalid_api_key' } });
      socket.end(
        `HTTP/1.1 401 Unauthorized\r\ncontent-type: application/json\r\ncontent-length: ${body.length}\r\n\r\n${body}`,
      );
      return;
    }
    sockets.handleUpgrade(request, socket, head, (ws) => serve(ws, url.searchParams.get('model')));
  });

  function serve(ws: WebSocket, model: string | null): void {
    const connection: RealtimeConnection = {
      model,
      session: null,
      received: [],
      appendedMs: 0,
      truncates: [],
      responses: [],
      toolOutputs: [],
    };
    connections.push(connection);
    ws.on('ping', (data) => {
      if (fullScript.answerPings && ws.readyState === ws.OPEN) ws.pong(data);
    });
    let serial = 0;
    const id = (prefix: string) => `${prefix}_${++serial}`;
    const send = (event: RealtimeServerEvent) => {
      if (ws.readyState === ws.OPEN) ws.send(JSON.stringify(event));
    };
    const fail = (code: string, message: string, param: string | null, clientEventId?: string) =>
      send({
        type: 'error',
        event_id: id('event'),
        error: { type: 'invalid_request_error', code, message, param, event_id: clientEventId ?? null },
      });
    let speaking = false;
    let speechStartMs = 0;
    let quietMs = 0;
    let turns = 0;
    let speechItem = '';
    let active: { id: string; cancelled: boolean } | null = null;

    send({
      type: 'session.created',
      event_id: id('event'),
      session: { type: 'realtime', object: 'realtime.session', id: id('sess'), model: model ?? undefined },
    } as RealtimeServerEvent);

    async function respond(instructions: string | null): Promise<void> {
      const reply = fullScript.replies[Math.min(connection.responses.length, fullScript.replies.length - 1)];
      const record = { instructions, status: 'in_progress' };
      connection.responses.push(record);
      if (fullScript.hang || !reply) return;
      const responseId = id('resp');
      const response = {
        id: responseId,
        object: 'realtime.response' as const,
        status: 'in_progress' as const,
      };
      active = { id: responseId, cancelled: false };
      const mine = active;
      send({ type: 'response.created', event_id: id('event'), response });
      const itemId = id('item');
      const where = { response_id: responseId, item_id: itemId, output_index: 0, content_index: 0 };
      send({
        type: 'response.output_item.added',
        event_id: id('event'),
        response_id: responseId,
        output_index: 0,
        item: { id: itemId, type: 'message', role: 'assistant', status: 'in_progress', content: [] },
      });
      const fault = takeFault(fullScript.faults, reply.text);
      await new Promise((resolve) => setTimeout(resolve, fullScript.firstAudioDelayMs));
      send({
        type: 'response.output_audio_transcript.delta',
        event_id: id('event'),
        ...where,
        delta: reply.text,
      });
      for (const [index, delta] of toneBase64Chunks(Math.max(200, reply.text.length * 60)).entries()) {
        if (mine.cancelled || ws.readyState !== ws.OPEN) break;
        if (fault && index === fault.afterChunks) {
          if (fault.kind === 'stall') return;
          if (fault.kind === 'close') return ws.close(1011, 'internal error');
          if (fault.kind === 'error')
            return send({
              type: 'error',
              event_id: id('event'),
              error: {
                type: 'server_error',
                code: 'server_error',
                message: 'The server had an error while processing your request.',
                param: null,
                event_id: null,
              },
            });
          ws.send(garbageFrame);
          if (fault.kind === 'garbage') return;
        }
        send({ type: 'response.output_audio.delta', event_id: id('event'), ...where, delta });
        await new Promise((resolve) => setTimeout(resolve, fullScript.chunkIntervalMs));
      }
      if (mine.cancelled) {
        record.status = 'cancelled';
        send({
          type: 'response.done',
          event_id: id('event'),
          response: {
            ...response,
            status: 'cancelled',
            status_details: { type: 'cancelled', reason: 'turn_detected' },
          },
        });
        return;
      }
      send({ type: 'response.output_audio.done', event_id: id('event'), ...where });
      send({
        type: 'response.output_audio_transcript.done',
        event_id: id('event'),
        ...where,
        transcript: reply.text,
      });
      send({
        type: 'response.output_item.done',
        event_id: id('event'),
        response_id: responseId,
        output_index: 0,
        item: { id: itemId, type: 'message', role: 'assistant', status: 'completed', content: [] },
      });
      if (reply.toolCall) {
        const callItem = id('item');
        const callId = id('call');
        send({
          type: 'response.function_call_arguments.done',
          event_id: id('event'),
          response_id: responseId,
          item_id: callItem,
          output_index: 1,
          call_id: callId,
          name: reply.toolCall.name,
          arguments: reply.toolCall.arguments,
        });
      }
      active = null;
      if (fullScript.failResponsesWith) {
        record.status = 'failed';
        send({
          type: 'response.done',
          event_id: id('event'),
          response: {
            ...response,
            status: 'failed',
            status_details: {
              type: 'failed',
              error: { type: 'server_error', code: fullScript.failResponsesWith },
            },
          },
        });
        return;
      }
      record.status = 'completed';
      // Token counts as the reference gives them: about 10 audio tokens a second of audio out.
      const outputAudioTokens = Math.ceil(reply.text.length * 0.6);
      const inputAudioTokens = Math.ceil(connection.appendedMs / 100);
      send({
        type: 'response.done',
        event_id: id('event'),
        response: {
          ...response,
          status: 'completed',
          usage: {
            total_tokens: inputAudioTokens + 120 + outputAudioTokens + reply.text.length,
            input_tokens: inputAudioTokens + 120,
            output_tokens: outputAudioTokens + reply.text.length,
            input_token_details: { audio_tokens: inputAudioTokens, text_tokens: 120, cached_tokens: 0 },
            output_token_details: { audio_tokens: outputAudioTokens, text_tokens: reply.text.length },
          },
        },
      });
    }

    function hear(audioBase64: string): void {
      const samples = decodeG711('PCMU', new Uint8Array(Buffer.from(audioBase64, 'base64')));
      const frameMs = samples.length / 8;
      let sum = 0;
      for (const sample of samples) sum += Math.abs(sample);
      const loud = sum / Math.max(1, samples.length) > speechAmplitude;
      const turnDetection = connection.session?.audio?.input?.turn_detection;
      if (loud) {
        quietMs = 0;
        if (!speaking) {
          speaking = true;
          speechStartMs = connection.appendedMs;
          speechItem = id('item');
          send({
            type: 'input_audio_buffer.speech_started',
            event_id: id('event'),
            audio_start_ms: speechStartMs,
            item_id: speechItem,
          });
          if (active && turnDetection?.interrupt_response) active.cancelled = true;
        }
      } else if (speaking) {
        quietMs += frameMs;
        const silenceMs =
          turnDetection?.type === 'server_vad' ? (turnDetection.silence_duration_ms ?? 500) : 500;
        if (quietMs >= silenceMs) {
          speaking = false;
          send({
            type: 'input_audio_buffer.speech_stopped',
            event_id: id('event'),
            audio_end_ms: connection.appendedMs,
            item_id: speechItem,
          });
          send({
            type: 'input_audio_buffer.committed',
            event_id: id('event'),
            item_id: speechItem,
            previous_item_id: null,
          });
          const transcript =
            fullScript.calleeTranscripts[Math.min(turns++, fullScript.calleeTranscripts.length - 1)] ?? '';
          send({
            type: 'conversation.item.input_audio_transcription.completed',
            event_id: id('event'),
            item_id: speechItem,
            content_index: 0,
            transcript,
            usage: { type: 'duration', seconds: Math.ceil((connection.appendedMs - speechStartMs) / 1000) },
          });
          if (turnDetection?.create_response !== false) void respond(null);
        }
      }
      connection.appendedMs += frameMs;
    }

    ws.on('message', (data) => {
      let event: RealtimeClientEvent;
      try {
        event = JSON.parse(String(data)) as RealtimeClientEvent;
      } catch {
        fail('invalid_json', 'The event is not JSON.', null);
        return;
      }
      connection.received.push(event);
      switch (event.type) {
        case 'session.update': {
          const session = event.session as RealtimeSessionCreateRequest;
          const voice = session.audio?.output?.voice;
          if (typeof voice === 'string' && !fullScript.voices.includes(voice))
            return fail(
              'invalid_value',
              `Invalid voice ${voice}.`,
              'session.audio.output.voice',
              event.event_id,
            );
          if (
            session.audio?.input?.format?.type !== 'audio/pcmu' ||
            session.audio?.output?.format?.type !== 'audio/pcmu'
          )
            return fail(
              'invalid_value',
              'This fake speaks audio/pcmu only.',
              'session.audio',
              event.event_id,
            );
          connection.session = session;
          send({ type: 'session.updated', event_id: id('event'), session } as RealtimeServerEvent);
          return;
        }
        case 'input_audio_buffer.append':
          return hear(event.audio);
        case 'response.create':
          void respond(event.response?.instructions ?? null);
          return;
        case 'response.cancel':
          if (active) active.cancelled = true;
          else fail('response_cancel_not_active', 'There is no active response.', null, event.event_id);
          return;
        case 'conversation.item.truncate':
          connection.truncates.push({ item_id: event.item_id, audio_end_ms: event.audio_end_ms });
          send({
            type: 'conversation.item.truncated',
            event_id: id('event'),
            item_id: event.item_id,
            content_index: event.content_index,
            audio_end_ms: event.audio_end_ms,
          });
          return;
        case 'conversation.item.create':
          if (event.item.type === 'function_call_output')
            connection.toolOutputs.push({ call_id: event.item.call_id, output: event.item.output });
          return;
        default:
          fail('unknown_event', `Unknown event type ${(event as { type: string }).type}.`, 'type');
      }
    });
  }

  return {
    script: fullScript,
    connections,
    close: () => {
      for (const client of sockets.clients) client.terminate();
      sockets.close();
    },
  };
}
