import { type WebSocket, WebSocketServer } from 'ws';
import { decodeG711 } from '../../src/telephony/rtp/g711.js';
import { startVendorRestServer } from './vendorRestServer.js';

/**
 * A stand-in for Deepgram's live streaming API (`wss://api.deepgram.com/v1/listen`), speaking its
 * documented wire protocol — Deepgram's "Live Audio" API reference and the `@deepgram/sdk` 5.x types
 * (ListenV1Results, ListenV1Metadata, ListenV1Finalize, ListenV1CloseStream, ListenV1KeepAlive):
 *
 * - auth `Authorization: Token <key>` on the upgrade; a wrong key is refused with HTTP 401 there;
 * - query `model`, `encoding`, `sample_rate`, `channels`, `interim_results`, `language`, `keyterm`;
 * - binary frames are the audio (here μ-law 8 kHz, decoded to judge speech by its energy);
 * - `Results` messages: `is_final` false while speech goes on (interim), `is_final` true with
 *   `speech_final` after the endpointing silence, and `from_finalize: true` for the answer to a
 *   `{"type":"Finalize"}`; `{"type":"CloseStream"}` gets a `Metadata` message, then close 1000;
 *   `{"type":"KeepAlive"}` keeps an idle stream open;
 * - nothing received for the idle limit (10 s at Deepgram) closes with 1011 `NET-0001`; audio it
 *   cannot use closes with 1008 `DATA-0000`.
 *
 * Each stream (our adapter opens one per utterance) is answered with the next transcript of
 * `script.transcripts`, as interim results while it is spoken and a final one at its end. A
 * transcript with ` | ` in it is said in parts with pauses between them ("Yes. | That works."): each
 * run of speech after a pause (150 ms or more) is heard as the next part, interim results give the
 * words said so far (a part's last word once the speech pauses), and parts a stream closed before hearing are heard by the next stream
 * (as the audio itself would be). It stands for the vendor; it is not a mock of our code.
 */

export interface DeepgramScript {
  apiKey: string;
  /** What each utterance is heard as, in order (the last one repeats). */
  transcripts: string[];
  /** Silence after speech that makes an `is_final`/`speech_final` result. Default 300 ms. */
  endpointingMs: number;
  /** Wait this long before answering a Finalize. */
  finalizeDelayMs: number;
  /** Never answer a Finalize (a vendor that hangs). */
  hang: boolean;
  /** After this many audio frames, close with 1008 DATA-0000. */
  closeAfterFrames: number | null;
  /** The next `streams` streams drop (1011 NET-0000, as a network fault) after `frames` audio frames. */
  dropStreams: { streams: number; frames: number } | null;
  /** Nothing received for this long closes with 1011 NET-0001 (Deepgram: 10 s). */
  idleCloseMs: number;
  /**
   * The final result says other words than the interim ones did (Deepgram revises its hypothesis
   * once it hears the whole utterance): the interim results give the transcript, the finals this.
   */
  reviseFinal: ((interim: string) => string) | null;
  /** Interim results give the whole transcript from the first one (not the words so far). */
  interimInFull: boolean;
}

export interface DeepgramConnection {
  query: URLSearchParams;
  /** Text messages received, parsed. */
  controls: { type: string }[];
  audioFrames: number;
  /** Mean absolute amplitude of the decoded audio received. */
  meanAmplitude: number;
  closeCode: number | null;
}

export interface FakeDeepgram {
  /** e.g. ws://127.0.0.1:41234 — the SDK appends /v1/listen. */
  baseUrl: string;
  script: DeepgramScript;
  connections: DeepgramConnection[];
  refusedUpgrades: number;
  close(): Promise<void>;
}

const speechAmplitude = 500;

function results(
  text: string,
  flags: { isFinal: boolean; speechFinal?: boolean; fromFinalize?: boolean },
  startS: number,
) {
  return JSON.stringify({
    type: 'Results',
    channel_index: [0, 1],
    duration: 0.5,
    start: startS,
    is_final: flags.isFinal,
    speech_final: flags.speechFinal ?? false,
    ...(flags.fromFinalize ? { from_finalize: true } : {}),
    channel: {
      alternatives: [
        {
          transcript: text,
          confidence: text ? 0.93 : 0,
          words: text
            .split(/\s+/)
            .filter(Boolean)
            .map((word, index) => ({
              word,
              start: startS + index * 0.3,
              end: startS + index * 0.3 + 0.25,
              confidence: 0.93,
            })),
        },
      ],
    },
    metadata: {
      request_id: 'fake-request',
      model_info: { name: 'general-nova-3', version: '2026-01-01', arch: 'nova-3' },
      model_uuid: '00000000-0000-0000-0000-000000000000',
    },
  });
}

export async function startFakeDeepgram(
  script: Partial<DeepgramScript> & { apiKey: string; transcripts: string[] },
): Promise<FakeDeepgram> {
  const fullScript: DeepgramScript = {
    endpointingMs: 300,
    finalizeDelayMs: 0,
    hang: false,
    closeAfterFrames: null,
    dropStreams: null,
    idleCloseMs: 10_000,
    reviseFinal: null,
    interimInFull: false,
    ...script,
  };
  const connections: DeepgramConnection[] = [];
  let utterances = 0;
  let refusedUpgrades = 0;
  const rest = await startVendorRestServer((request) =>
    request.url === '/v1/projects'
      ? request.headers.authorization === `Token ${fullScript.apiKey}`
        ? {
            status: 200,
            body: {
              projects: [{ project_id: 'c8f3b3e2-0d5a-4b8e-9c4e-1f2a3b4c5d6e', name: 'Fake project' }],
            },
          }
        : {
            status: 401,
            body: { err_code: 'INVALID_AUTH', err_msg: 'Invalid credentials.', request_id: 'fake-request' },
          }
      : { status: 404, body: { err_code: 'NOT_FOUND', err_msg: 'Not found.' } },
  );
  const server = new WebSocketServer({
    server: rest.http,
    verifyClient: (info, accept) => {
      if (info.req.headers.authorization !== `Token ${fullScript.apiKey}`) {
        refusedUpgrades++;
        accept(false, 401, 'Unauthorized');
        return;
      }
      if (!info.req.url?.startsWith('/v1/listen')) {
        accept(false, 404, 'Not Found');
        return;
      }
      accept(true);
    },
  });
  const nextTranscript = () =>
    fullScript.transcripts[Math.min(utterances++, fullScript.transcripts.length - 1)] ?? '';
  /** The parts of a transcript said in parts still to be heard (carried from stream to stream). */
  let parts: string[] = [];
  const nextPart = () => {
    if (parts.length === 0)
      parts = nextTranscript()
        .split('|')
        .map((part) => part.trim());
    return parts.shift() ?? '';
  };
  const isSaidInParts = () => parts.length > 0 || fullScript.transcripts.some((text) => text.includes('|'));
  const finalOf = (text: string) => (text && fullScript.reviseFinal ? fullScript.reviseFinal(text) : text);
  const partGapMs = 150;
  /** Quiet inside a part (a stop consonant, flite leaves 60 ms) is shorter than this. */
  const partWordsAfterMs = 80;

  server.on('connection', (socket: WebSocket, request) => {
    const connection: DeepgramConnection = {
      query: new URL(request.url ?? '/', 'ws://fake').searchParams,
      controls: [],
      audioFrames: 0,
      meanAmplitude: 0,
      closeCode: null,
    };
    connections.push(connection);
    const drop = fullScript.dropStreams && fullScript.dropStreams.streams > 0 ? fullScript.dropStreams : null;
    if (drop) drop.streams--;
    let amplitudeSum = 0;
    let sampleCount = 0;
    let speechMs = 0;
    let silenceAfterSpeechMs = 0;
    let pending: string | null = null;
    let drawn = false;
    let inPart = false;
    /** Said in parts: the part being spoken, the parts before it, and whether its words went out. */
    let part = '';
    let heardBefore = '';
    let partWordsSent = false;
    let streamS = 0;
    let idle: NodeJS.Timeout | null = null;
    const armIdle = () => {
      if (idle) clearTimeout(idle);
      idle = setTimeout(() => socket.close(1011, 'NET-0001'), fullScript.idleCloseMs);
    };
    armIdle();
    socket.on('close', (code) => {
      connection.closeCode = code;
      if (idle) clearTimeout(idle);
    });
    socket.on('message', (data, isBinary) => {
      armIdle();
      if (isBinary) {
        connection.audioFrames++;
        if (fullScript.closeAfterFrames !== null && connection.audioFrames >= fullScript.closeAfterFrames) {
          socket.close(1008, 'DATA-0000');
          return;
        }
        if (drop && connection.audioFrames >= drop.frames) {
          // The utterance was never answered: the stream that hears it again gets its transcript.
          if (drawn) utterances = Math.max(0, utterances - 1);
          socket.close(1011, 'NET-0000');
          return;
        }
        const samples = decodeG711('PCMU', new Uint8Array(data as Buffer));
        let frameSum = 0;
        for (const sample of samples) frameSum += Math.abs(sample);
        amplitudeSum += frameSum;
        sampleCount += samples.length;
        connection.meanAmplitude = amplitudeSum / Math.max(1, sampleCount);
        const frameMs = samples.length / 8;
        streamS += frameMs / 1000;
        if (frameSum / Math.max(1, samples.length) > speechAmplitude) {
          speechMs += frameMs;
          silenceAfterSpeechMs = 0;
          if (isSaidInParts()) {
            // Said in parts: each run of speech after a pause is the next part.
            if (!inPart) {
              heardBefore = pending ?? '';
              part = nextPart();
              pending = [heardBefore, part].filter(Boolean).join(' ');
              inPart = true;
              partWordsSent = false;
              speechMs = frameMs;
            }
            // While the part is spoken, its words so far (one per 300 ms) but never its last one: a
            // word is recognised once it has been said. The whole part follows 80 ms of quiet.
            if (speechMs % 200 < frameMs) {
              const words = part.split(/\s+/);
              const said = partWordsSent
                ? words
                : words.slice(0, Math.min(words.length - 1, Math.ceil(speechMs / 300)));
              socket.send(
                results([heardBefore, ...said].filter(Boolean).join(' '), { isFinal: false }, streamS),
              );
            }
            return;
          }
          // One scripted transcript per stream: speech after it was given (a pause inside the turn,
          // a breath) is heard as nothing new.
          pending ??= drawn ? '' : nextTranscript();
          drawn = true;
          // An interim hypothesis every 200 ms of speech: the words so far.
          if (speechMs % 200 < frameMs) {
            const words = pending.split(/\s+/);
            const heard = fullScript.interimInFull
              ? pending
              : words.slice(0, Math.max(1, Math.ceil((words.length * speechMs) / 1000))).join(' ');
            socket.send(results(heard, { isFinal: false }, streamS));
          }
        } else if (pending !== null) {
          if (inPart && !partWordsSent && silenceAfterSpeechMs + frameMs >= partWordsAfterMs) {
            partWordsSent = true;
            socket.send(results(pending, { isFinal: false }, streamS));
          }
          silenceAfterSpeechMs += frameMs;
          if (silenceAfterSpeechMs >= partGapMs) inPart = false;
          if (silenceAfterSpeechMs >= fullScript.endpointingMs) {
            socket.send(results(finalOf(pending), { isFinal: true, speechFinal: true }, streamS));
            pending = null;
            speechMs = 0;
          }
        }
        return;
      }
      let control: { type?: string };
      try {
        control = JSON.parse(String(data));
      } catch {
        socket.close(1008, 'DATA-0000');
        return;
      }
      connection.controls.push({ type: String(control.type) });
      if (control.type === 'Finalize') {
        if (fullScript.hang) return;
        const text = pending ?? '';
        pending = null;
        speechMs = 0;
        setTimeout(() => {
          if (socket.readyState === socket.OPEN)
            socket.send(
              results(finalOf(text), { isFinal: true, speechFinal: true, fromFinalize: true }, streamS),
            );
        }, fullScript.finalizeDelayMs);
      } else if (control.type === 'CloseStream') {
        socket.send(
          JSON.stringify({
            type: 'Metadata',
            transaction_key: 'deprecated',
            request_id: 'fake-request',
            sha256: '',
            created: new Date().toISOString(),
            duration: streamS,
            channels: 1,
          }),
        );
        socket.close(1000);
      }
    });
  });
  const { port } = rest;
  return {
    baseUrl: `ws://127.0.0.1:${port}`,
    script: fullScript,
    connections,
    get refusedUpgrades() {
      return refusedUpgrades;
    },
    close: () => rest.close(server),
  };
}
