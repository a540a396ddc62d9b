import { DeepgramClient } from '@deepgram/sdk';
import { vendorErrorCode } from '../../../domain/secretScrubbing.js';
import type { VendorOptions } from '../../../domain/vendorOptions.js';
import type { Logger } from '../../../logger.js';
import type { GuardedConnections } from '../../../net/guardedConnections.js';
import { encodeG711 } from '../../../telephony/rtp/g711.js';
import { ProviderError } from '../providerError.js';
import type {
  FinalTranscript,
  PartialTranscript,
  SpeechToText,
  SpeechToTextSession,
  SpeechToTextSessionOptions,
} from '../types.js';
import { matchPhrase } from './phraseGrammar.js';

export interface DeepgramSpeechToTextOptions {
  apiKey: string;
  /** Deepgram's own (`wss://api.deepgram.com`) when absent; a self-hosted or test endpoint otherwise. */
  baseUrl?: string | null;
  /** Default `nova-3`. */
  model?: string;
  /** BCP-47, e.g. `en-US`; Deepgram's default (English) when absent. */
  language?: string;
  /** How long the socket may take to open. Default 3 000 ms. */
  connectTimeoutMs?: number;
  /** A KeepAlive goes out after this long without audio (Deepgram closes an idle stream at 10 s). */
  keepAliveIntervalMs?: number;
  /** The agent's options (`endpointing`, `smart_format`…), sent as query parameters of the stream. */
  vendorOptions?: VendorOptions;
  /** The address guard of the stream's socket (an account's base URL); absent: none. */
  connections?: GuardedConnections;
  logger?: Logger;
}

const providerName = 'deepgram';

/** One `Results` message as Deepgram's live API sends it (the fields we read). */
interface ResultsMessage {
  type: 'Results';
  is_final?: boolean;
  speech_final?: boolean;
  from_finalize?: boolean;
  channel?: { alternatives?: { transcript?: string; confidence?: number }[] };
}

/** The status in the SDK's failed-upgrade message ("Unexpected server response: 401"). */
function upgradeStatus(message: string): number | undefined {
  const match = /Unexpected server response: (\d{3})/.exec(message);
  return match ? Number(match[1]) : undefined;
}

/**
 * Deepgram live streaming speech-to-text through the official SDK (`listen.v1.connect`). The
 * socket opens when the callee starts speaking, and audio goes out as it arrives — 8 kHz μ-law,
 * Deepgram's `encoding=mulaw`, so nothing is resampled — with interim results. At the end of the
 * turn a `Finalize` flushes what Deepgram holds; its `from_finalize` result closes the utterance,
 * then `CloseStream` ends the socket. Expected phrases go as key terms.
 */
export class DeepgramSpeechToText implements SpeechToText {
  readonly #client: DeepgramClient;

  constructor(private readonly options: DeepgramSpeechToTextOptions) {
    this.#client = new DeepgramClient({
      apiKey: options.apiKey,
      ...(options.baseUrl ? { baseUrl: options.baseUrl } : {}),
      // Every stream's socket goes through the guard's agent for the base URL's scheme.
      ...(options.connections
        ? { agent: options.connections.agentFor(options.baseUrl ?? 'wss://api.deepgram.com') }
        : {}),
    });
  }

  async startSession(sessionOptions: SpeechToTextSessionOptions = {}): Promise<SpeechToTextSession> {
    const phrases = sessionOptions.phrases ?? [];
    const socket = await this.#client.listen.v1.connect({
      model: this.options.model ?? 'nova-3',
      encoding: 'mulaw',
      sample_rate: 8000,
      channels: 1,
      interim_results: 'true',
      punctuate: 'true',
      ...(this.options.language ? { language: this.options.language } : {}),
      ...(phrases.length > 0 ? { keyterm: phrases.slice(0, 20) } : {}),
      // Merged into the query last: `endpointing=300`, `smart_format=true`…
      queryParams: Object.fromEntries(
        Object.entries(this.options.vendorOptions ?? {}).map(([name, value]) => [name, String(value)]),
      ),
      Authorization: `Token ${this.options.apiKey}`,
      reconnectAttempts: 0,
      connectionTimeoutInSeconds: (this.options.connectTimeoutMs ?? 3_000) / 1000,
    });
    const session = new DeepgramSession(socket, phrases, this.options);
    socket.connect();
    try {
      await socket.waitForOpen();
    } catch (error) {
      session.close();
      const message = (error as Error)?.message ?? String(error);
      const status = upgradeStatus(message);
      throw new ProviderError(providerName, `could not open the stream: ${message.slice(0, 200)}`, {
        ...(status !== undefined ? { providerStatus: status } : {}),
      });
    }
    sessionOptions.signal?.addEventListener('abort', () => session.close(), { once: true });
    return session;
  }

  async close(): Promise<void> {
    // Sockets belong to sessions; nothing is held between them.
  }
}

type V1Socket = Awaited<ReturnType<DeepgramClient['listen']['v1']['connect']>>;

class DeepgramSession implements SpeechToTextSession {
  readonly #finals: { text: string; confidence: number }[] = [];
  readonly #partialListeners: ((partial: PartialTranscript) => void)[] = [];
  readonly #endOfSpeechListeners: (() => void)[] = [];
  #finalized: { resolve: () => void; reject: (error: Error) => void } | null = null;
  #failure: ProviderError | null = null;
  #closed = false;
  #keepAlive: NodeJS.Timeout | null = null;

  constructor(
    private readonly socket: V1Socket,
    private readonly phrases: string[],
    private readonly options: DeepgramSpeechToTextOptions,
  ) {
    socket.on('message', (message) => this.handleMessage(message as { type: string }));
    socket.on('close', (event) => {
      if (this.#closed) return;
      // Any close before our own is a failure: 1008 (audio it cannot decode), 1011 (nothing sent
      // in time, or a fault on Deepgram's side), or a network drop.
      this.fail(
        new ProviderError(
          providerName,
          `the stream closed (${event.code} ${vendorErrorCode(event.reason, [this.options.apiKey]) ?? 'no code'})`,
        ),
      );
    });
    socket.on('error', (error) =>
      this.fail(new ProviderError(providerName, `stream error: ${error.message.slice(0, 200)}`)),
    );
    this.armKeepAlive();
  }

  private armKeepAlive(): void {
    if (this.#keepAlive) clearTimeout(this.#keepAlive);
    if (this.#closed) return;
    this.#keepAlive = setTimeout(() => {
      try {
        this.socket.sendKeepAlive({ type: 'KeepAlive' });
      } catch {
        // closing: the close handler reports it
      }
      this.armKeepAlive();
    }, this.options.keepAliveIntervalMs ?? 4_000);
    this.#keepAlive.unref();
  }

  private handleMessage(message: { type: string }): void {
    if (message.type !== 'Results') return;
    const results = message as ResultsMessage;
    const best = results.channel?.alternatives?.[0];
    const text = (best?.transcript ?? '').trim();
    if (results.is_final) {
      if (text) this.#finals.push({ text, confidence: best?.confidence ?? 0 });
      if (results.from_finalize) this.#finalized?.resolve();
      // Deepgram's endpointing heard the end of speech after words: the callee has finished.
      else if (results.speech_final && this.#finals.length > 0)
        for (const listener of this.#endOfSpeechListeners) listener();
      return;
    }
    const partial = [...this.#finals.map((entry) => entry.text), text].filter(Boolean).join(' ');
    for (const listener of this.#partialListeners) listener({ text: partial });
  }

  private fail(error: ProviderError): void {
    if (this.#failure) return;
    this.#failure = error;
    this.#finalized?.reject(error);
  }

  pushAudio(samples: Int16Array): void {
    if (this.#closed || this.#failure) return;
    try {
      this.socket.sendMedia(encodeG711('PCMU', samples));
      this.armKeepAlive();
    } catch (error) {
      this.fail(new ProviderError(providerName, `could not send audio: ${(error as Error).message}`));
    }
  }

  onPartial(listener: (partial: PartialTranscript) => void): void {
    this.#partialListeners.push(listener);
  }

  onEndOfSpeech(listener: () => void): void {
    this.#endOfSpeechListeners.push(listener);
  }

  async finish(): Promise<FinalTranscript> {
    if (this.#failure) throw this.#failure;
    if (this.#closed) throw new ProviderError(providerName, 'session already closed');
    await new Promise<void>((resolve, reject) => {
      this.#finalized = { resolve, reject };
      this.socket.sendFinalize({ type: 'Finalize' });
    });
    try {
      this.socket.sendCloseStream({ type: 'CloseStream' });
    } catch {
      // already closing
    }
    this.close();
    const text = this.#finals.map((entry) => entry.text).join(' ');
    const confidence =
      this.#finals.length === 0
        ? undefined
        : this.#finals.reduce((sum, entry) => sum + entry.confidence, 0) / this.#finals.length;
    const matchedPhrase = matchPhrase(text, this.phrases);
    this.options.logger?.debug(
      { segments: this.#finals.length, matched: matchedPhrase !== undefined },
      'transcribed',
    );
    return {
      text,
      ...(confidence !== undefined ? { confidence } : {}),
      ...(matchedPhrase !== undefined ? { matchedPhrase } : {}),
    };
  }

  close(): void {
    if (this.#closed) return;
    this.#closed = true;
    if (this.#keepAlive) clearTimeout(this.#keepAlive);
    this.#finalized?.reject(new ProviderError(providerName, 'session closed'));
    try {
      this.socket.close();
    } catch {
      // not open
    }
  }
}
