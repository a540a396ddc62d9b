import type {
  RealtimeClientEvent,
  RealtimeServerEvent,
  RealtimeSessionCreateRequest,
} from 'openai/resources/realtime/realtime';
import WebSocket from 'ws';
import type { RealtimeTurnDetection } from '../../../domain/agentVoiceSettings.js';
import { vendorErrorCode } from '../../../domain/secretScrubbing.js';
import type { VendorOptions } from '../../../domain/vendorOptions.js';
import type { Logger } from '../../../logger.js';
import type { GuardedConnections } from '../../../net/guardedConnections.js';
import { decodeG711, encodeG711 } from '../../../telephony/rtp/g711.js';
import { ProviderError } from '../providerError.js';
import { base64Pattern, socketOptions, webSocketBase } from '../tts/replySocket.js';
import type {
  SpeechToSpeech,
  SpeechToSpeechEvent,
  SpeechToSpeechOptions,
  SpeechToSpeechSession,
} from './types.js';

export interface OpenAiRealtimeOptions {
  apiKey: string;
  /** The REST base (`https://api.openai.com/v1`); the socket is its `/realtime` as ws(s). */
  baseUrl?: string | null | undefined;
  model?: string;
  turnDetection?: RealtimeTurnDetection;
  /** The model that transcribes the callee for the transcript (the session hears audio, not text). */
  transcriptionModel?: string;
  /** How long the socket and its configuration may take before the session counts as refused. */
  openTimeoutMs?: number;
  /**
   * The agent's options, placed in `session.update`: `speed` (audio.output), `noise_reduction` and
   * `transcription_model` (audio.input), `threshold`, `prefix_padding_ms`, `silence_duration_ms`,
   * `idle_timeout_ms` (server_vad) and `eagerness` (semantic_vad) in the turn detection,
   * `max_output_tokens` on the session.
   */
  vendorOptions?: VendorOptions;
  /** The address guard of the socket (an account's base URL); absent: none. */
  connections?: GuardedConnections;
  /**
   * The socket is pinged (RFC 6455) while the session lasts; a session that answers no ping for this
   * long has failed, even with its socket open. Default 3 000 ms.
   */
  pongTimeoutMs?: number;
  logger: Logger;
}

/** The turn detection the session asks for, with the agent's tuning of it. */
function turnDetectionOf(
  kind: RealtimeTurnDetection,
  vendorOptions: VendorOptions,
): NonNullable<NonNullable<RealtimeSessionCreateRequest['audio']>['input']>['turn_detection'] {
  const { threshold, prefix_padding_ms, silence_duration_ms, idle_timeout_ms, eagerness } = vendorOptions;
  if (kind === 'semantic_vad')
    return {
      type: 'semantic_vad',
      create_response: true,
      interrupt_response: true,
      ...(typeof eagerness === 'string'
        ? { eagerness: eagerness as 'low' | 'medium' | 'high' | 'auto' }
        : {}),
    };
  return {
    type: 'server_vad',
    create_response: true,
    interrupt_response: true,
    silence_duration_ms: typeof silence_duration_ms === 'number' ? silence_duration_ms : 500,
    ...(typeof threshold === 'number' ? { threshold } : {}),
    ...(typeof prefix_padding_ms === 'number' ? { prefix_padding_ms } : {}),
    ...(typeof idle_timeout_ms === 'number' ? { idle_timeout_ms } : {}),
  };
}

const provider = 'openai-realtime';

/** Error codes that concern one request we sent (a truncate after the audio ended…), not the session. */
const harmlessErrorCodes = new Set([
  'response_cancel_not_active',
  'conversation_already_has_active_response',
]);

/**
 * OpenAI's Realtime API over its WebSocket (`wss://api.openai.com/v1/realtime?model=…`), with the
 * event types of the official SDK (`openai/resources/realtime/realtime`). The SDK's own socket class
 * forces `wss:` whatever the base URL says, so a self-hosted or test endpoint could not be reached;
 * `ws` speaks the same protocol (docs/decisions.md).
 *
 * The session is asked for G.711 μ-law both ways (`audio/pcmu`, 8 kHz: nothing is resampled), the
 * vendor's turn detection (`server_vad` or `semantic_vad`) with `interrupt_response`, transcription
 * of the callee, the agent's instructions, voice and tools. Barge-in truncates the agent's item to
 * what was played, so the model's memory holds what the callee actually heard.
 */
export class OpenAiRealtimeSpeechToSpeech implements SpeechToSpeech {
  constructor(private readonly options: OpenAiRealtimeOptions) {}

  open(
    options: SpeechToSpeechOptions,
    onEvent: (event: SpeechToSpeechEvent) => void,
  ): Promise<SpeechToSpeechSession> {
    const model = this.options.model ?? 'gpt-realtime';
    const url = `${webSocketBase(this.options.baseUrl, 'https://api.openai.com/v1')}/realtime?model=${encodeURIComponent(model)}`;
    const socket = new WebSocket(
      url,
      socketOptions(url, { Authorization: `Bearer ${this.options.apiKey}` }, this.options.connections),
    );
    const session = new OpenAiRealtimeSession(
      socket,
      onEvent,
      this.options.logger,
      this.options.pongTimeoutMs ?? 3_000,
    );
    const vendorOptions = this.options.vendorOptions ?? {};
    const { speed, noise_reduction, transcription_model, max_output_tokens } = vendorOptions;
    const configuration: RealtimeSessionCreateRequest = {
      type: 'realtime',
      model,
      instructions: options.instructions,
      output_modalities: ['audio'],
      ...(typeof max_output_tokens === 'number' ? { max_output_tokens } : {}),
      audio: {
        input: {
          format: { type: 'audio/pcmu' },
          transcription: {
            model:
              typeof transcription_model === 'string'
                ? transcription_model
                : (this.options.transcriptionModel ?? 'gpt-4o-mini-transcribe'),
            ...(options.language ? { language: options.language.slice(0, 2) } : {}),
          },
          turn_detection: turnDetectionOf(this.options.turnDetection ?? 'server_vad', vendorOptions),
          ...(noise_reduction === 'near_field' || noise_reduction === 'far_field'
            ? { noise_reduction: { type: noise_reduction } }
            : {}),
        },
        output: {
          format: { type: 'audio/pcmu' },
          ...(options.voice ? { voice: options.voice } : {}),
          ...(typeof speed === 'number' ? { speed } : {}),
        },
      },
      tools: options.tools.map((tool) => ({ type: 'function' as const, ...tool })),
      tool_choice: 'auto',
    };
    return session.configure(configuration, this.options.openTimeoutMs ?? 5_000);
  }
}

class OpenAiRealtimeSession implements SpeechToSpeechSession {
  private closed = false;
  private configured = false;
  private sentEvents = 0;
  /** The words of reply items so far, until their transcript is done (a cancelled reply's never is). */
  private readonly partialWords = new Map<string, string>();

  private keepAlive: NodeJS.Timeout | null = null;
  private lastPongAtMs = 0;

  constructor(
    private readonly socket: WebSocket,
    private readonly onEvent: (event: SpeechToSpeechEvent) => void,
    private readonly logger: Logger,
    private readonly pongTimeoutMs: number,
  ) {}

  /**
   * Pings the vendor a few times per pong timeout; one that has answered none for the whole timeout
   * is gone (a half-open connection, a frozen server) and the session fails, whatever it owes.
   */
  private startKeepAlive(): void {
    this.lastPongAtMs = performance.now();
    this.socket.on('pong', () => {
      this.lastPongAtMs = performance.now();
    });
    const everyMs = Math.max(100, Math.floor(this.pongTimeoutMs / 3));
    this.keepAlive = setInterval(() => {
      if (this.closed || this.socket.readyState !== WebSocket.OPEN) return;
      if (performance.now() - this.lastPongAtMs > this.pongTimeoutMs) {
        this.fail(
          new ProviderError(provider, `answered no ping for ${this.pongTimeoutMs} ms`, { kind: 'timeout' }),
        );
        return;
      }
      this.socket.ping();
    }, everyMs);
    this.keepAlive.unref();
  }

  private stopKeepAlive(): void {
    if (this.keepAlive) clearInterval(this.keepAlive);
    this.keepAlive = null;
  }

  /** Resolves once the vendor confirmed the configuration (`session.updated`). */
  configure(session: RealtimeSessionCreateRequest, timeoutMs: number): Promise<SpeechToSpeechSession> {
    return new Promise((resolve, reject) => {
      const refuse = (error: ProviderError) => {
        clearTimeout(timer);
        this.stopKeepAlive();
        this.closed = true;
        this.socket.terminate();
        reject(error);
      };
      const timer = setTimeout(
        () =>
          refuse(
            new ProviderError(provider, `the session was not ready within ${timeoutMs} ms`, {
              kind: 'timeout',
            }),
          ),
        timeoutMs,
      );
      this.socket.on('unexpected-response', (_request, response) => {
        const status = response.statusCode;
        refuse(
          new ProviderError(provider, `the socket was refused (HTTP ${status})`, {
            kind: 'refused',
            ...(status ? { providerStatus: status } : {}),
          }),
        );
      });
      this.socket.on('error', (error) => {
        const failure = new ProviderError(provider, `socket error: ${error.message.slice(0, 200)}`, {
          kind: this.configured ? 'closed' : 'unreachable',
        });
        if (this.configured) this.fail(failure);
        else refuse(failure);
      });
      this.socket.on('open', () => this.send({ type: 'session.update', session }));
      this.socket.on('message', (data, isBinary) => {
        // After a failure (a garbage frame, an error) nothing the socket still delivers is used.
        if (this.closed) return;
        const event = this.parse(data, isBinary);
        if (!event) return;
        if (!this.configured) {
          if (event.type === 'session.updated') {
            this.configured = true;
            clearTimeout(timer);
            this.startKeepAlive();
            resolve(this);
          } else if (event.type === 'error') {
            refuse(
              new ProviderError(provider, `refused the session: ${describe(event.error)}`, {
                kind: 'error_frame',
              }),
            );
          }
          return;
        }
        this.handle(event);
      });
      this.socket.on('close', (code, reason) => {
        const closed = () =>
          new ProviderError(
            provider,
            `the socket closed (${code} ${String(reason).slice(0, 100) || 'no reason'})`,
            {
              kind: 'closed',
              ...(code ? { providerStatus: code } : {}),
            },
          );
        if (!this.configured) refuse(closed());
        else if (!this.closed) this.fail(closed());
        this.stopKeepAlive();
      });
    });
  }

  pushAudio(samples: Int16Array): void {
    if (this.closed || this.socket.readyState !== WebSocket.OPEN) return;
    const audio = Buffer.from(encodeG711('PCMU', samples)).toString('base64');
    this.send({ type: 'input_audio_buffer.append', audio });
  }

  respond(instructions?: string): void {
    this.send({ type: 'response.create', ...(instructions ? { response: { instructions } } : {}) });
  }

  truncate(itemId: string, playedMs: number): void {
    this.send({
      type: 'conversation.item.truncate',
      item_id: itemId,
      content_index: 0,
      audio_end_ms: Math.max(0, Math.round(playedMs)),
    });
  }

  sendToolResult(callId: string, output: string, instructions?: string): void {
    this.send({
      type: 'conversation.item.create',
      item: { type: 'function_call_output', call_id: callId, output },
    });
    this.respond(instructions);
  }

  close(): void {
    this.stopKeepAlive();
    if (this.closed) return;
    this.closed = true;
    if (this.socket.readyState === WebSocket.OPEN) this.socket.close(1000);
    else this.socket.terminate();
  }

  private send(event: RealtimeClientEvent): void {
    if (this.closed || this.socket.readyState !== WebSocket.OPEN) return;
    this.sentEvents++;
    this.socket.send(JSON.stringify({ event_id: `cw_${this.sentEvents}`, ...event }));
  }

  private fail(error: ProviderError): void {
    this.stopKeepAlive();
    if (this.closed) return;
    this.closed = true;
    this.socket.terminate();
    this.onEvent({ type: 'failed', error });
  }

  private parse(data: WebSocket.RawData, isBinary: boolean): RealtimeServerEvent | null {
    try {
      if (isBinary) throw new Error('binary frame');
      const event = JSON.parse(String(data)) as RealtimeServerEvent;
      if (typeof event?.type !== 'string') throw new Error('no type');
      return event;
    } catch {
      const error = new ProviderError(provider, 'sent a frame that is not a Realtime event', {
        kind: 'garbage',
      });
      if (this.configured) this.fail(error);
      return null;
    }
  }

  private handle(event: RealtimeServerEvent): void {
    for (const meaning of this.read(event)) this.onEvent(meaning);
  }

  /** What a vendor event means for the call; failures end the session here. */
  private read(event: RealtimeServerEvent): SpeechToSpeechEvent[] {
    switch (event.type) {
      case 'input_audio_buffer.speech_started':
        return [{ type: 'speech_started' }];
      case 'input_audio_buffer.speech_stopped':
        return [{ type: 'speech_stopped' }];
      case 'conversation.item.input_audio_transcription.completed':
        return [{ type: 'callee_transcript', text: event.transcript }];
      case 'response.output_audio.delta': {
        const bytes =
          typeof event.delta === 'string' && base64Pattern.test(event.delta)
            ? Buffer.from(event.delta, 'base64')
            : Buffer.alloc(0);
        if (bytes.length === 0) {
          this.fail(new ProviderError(provider, 'sent audio that does not decode', { kind: 'garbage' }));
          return [];
        }
        return [
          { type: 'agent_audio', itemId: event.item_id, samples: decodeG711('PCMU', new Uint8Array(bytes)) },
        ];
      }
      case 'response.output_audio_transcript.delta':
        this.partialWords.set(event.item_id, (this.partialWords.get(event.item_id) ?? '') + event.delta);
        return [];
      case 'response.output_audio_transcript.done':
        this.partialWords.delete(event.item_id);
        return [{ type: 'agent_transcript', itemId: event.item_id, text: event.transcript }];
      case 'response.function_call_arguments.done':
        return [{ type: 'tool_call', callId: event.call_id, name: event.name, arguments: event.arguments }];
      case 'response.done': {
        const { response } = event;
        if (response.status === 'failed') {
          const detail = response.status_details?.error;
          const what = detail ? `${detail.type ?? 'error'} ${detail.code ?? ''}`.trim() : 'no detail';
          this.fail(new ProviderError(provider, `a response failed: ${what}`, { kind: 'error_frame' }));
          return [];
        }
        // A reply cut short (barge-in) has no transcript.done: its words so far stand for it.
        const cut: SpeechToSpeechEvent[] = [...this.partialWords].map(([itemId, text]) => ({
          type: 'agent_transcript',
          itemId,
          text,
        }));
        this.partialWords.clear();
        const usage = response.usage;
        const used: SpeechToSpeechEvent[] = usage
          ? [
              {
                type: 'usage',
                inputTextTokens: usage.input_token_details?.text_tokens ?? 0,
                inputAudioTokens: usage.input_token_details?.audio_tokens ?? 0,
                outputTextTokens: usage.output_token_details?.text_tokens ?? 0,
                outputAudioTokens: usage.output_token_details?.audio_tokens ?? 0,
              },
            ]
          : [];
        return [...cut, ...used, { type: 'response_done' }];
      }
      case 'error':
        if (harmlessErrorCodes.has(event.error.code ?? '')) {
          this.logger.debug({ code: event.error.code }, 'realtime: a request was refused');
        } else if (!event.error.param?.startsWith('audio_end_ms')) {
          // (A truncate that came after the item's audio had ended is harmless as well.)
          this.fail(new ProviderError(provider, describe(event.error), { kind: 'error_frame' }));
        }
        return [];
      default:
        return [];
    }
  }
}

/** The type and code of a Realtime error event; its message is the vendor's free text, not kept. */
function describe(error: { type?: string; code?: string | null; message?: string }): string {
  const code = vendorErrorCode(error.code);
  return `${vendorErrorCode(error.type) ?? 'error'}${code ? ` ${code}` : ''}`;
}
