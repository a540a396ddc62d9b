/**
 * `callwright/web`: talk to a callwright agent from a web page. No framework, no dependencies.
 *
 *   import { startWebCall } from 'callwright/web';   // or <script type="module" src=".../v1/web-calls/sdk.js">
 *   const call = await startWebCall({ baseUrl: 'https://calls.example.com', token });
 *   call.ended.then((reason) => …);  call.hangUp();
 *
 * The token comes from your server (POST /v1/web-calls with your API key): never put the API key
 * in a page. The page's origin must be one the account allows (PUT /v1/web-calls/origins).
 */

/** Why a web call could not start: the service's stable error code (or the browser's). */
export type WebCallErrorCode =
  | 'unauthorized' // the token is unknown, used or expired
  | 'forbidden' // this page's origin is not allowed, or the token is for another agent
  | 'rate_limited' // the account is at its live-call cap, or this address connects too often
  | 'validation_error' // the browser's offer was refused (neither Opus nor PCMU audio)
  | 'unavailable' // the service runs no calls here
  | 'microphone' // the microphone was refused or is missing
  | 'network' // the service could not be reached
  | 'server_error';

export class WebCallError extends Error {
  readonly code: WebCallErrorCode;
  /** The HTTP status when the service answered, else 0. */
  readonly status: number;
  /** Seconds to wait before trying again (429), when the service said. */
  readonly retryAfterS: number | null;
  constructor(code: WebCallErrorCode, message: string, status = 0, retryAfterS: number | null = null) {
    super(message);
    this.name = 'WebCallError';
    this.code = code;
    this.status = status;
    this.retryAfterS = retryAfterS;
  }
}

export type WebCallStatus = 'microphone' | 'connecting' | 'connected' | 'ended';

export interface WebCallOptions {
  /** The callwright service, e.g. `https://calls.example.com` (no trailing path). */
  baseUrl: string;
  /** The one-use token your server got from POST /v1/web-calls. */
  token: string;
  /** The agent this page means to talk to: a token for another agent is refused. */
  agentId?: string;
  /** STUN/TURN servers (the `ice_servers` of POST /v1/web-calls' answer); host candidates without. */
  iceServers?: RTCIceServer[];
  /** Where the agent's voice plays; a hidden <audio> element is made when not given. */
  audioElement?: HTMLAudioElement;
  /** Microphone constraints; echo cancellation, noise suppression and gain control are on by default. */
  microphone?: MediaTrackConstraints;
  /** How long ICE may gather before the offer is sent as it is (ms). */
  iceGatheringTimeoutMs?: number;
  /** How long a lost connection may take to come back before the call counts as ended (ms). */
  disconnectedGraceMs?: number;
  onStatus?: (status: WebCallStatus) => void;
}

export interface WebCall {
  readonly callId: string;
  /** The agent's audio as the page receives it (for meters or recording). */
  readonly remoteStream: MediaStream;
  readonly peerConnection: RTCPeerConnection;
  /** Resolves when the call ends: 'hung_up' (this page), 'ended' (the agent or the service), 'failed'. */
  readonly ended: Promise<'hung_up' | 'ended' | 'failed'>;
  /** Mutes or unmutes the microphone (the agent hears silence). */
  setMuted(muted: boolean): void;
  /** Ends the call; the service ends it within a moment and reports it as any call. */
  hangUp(): void;
}

const knownCodes: readonly string[] = [
  'unauthorized',
  'forbidden',
  'rate_limited',
  'validation_error',
  'unavailable',
  'server_error',
];

async function errorOf(response: Response): Promise<WebCallError> {
  let code = 'server_error';
  let message = `the service answered ${response.status}`;
  try {
    const body = (await response.json()) as { error?: { code?: string; message?: string } };
    if (body.error?.code && knownCodes.includes(body.error.code)) code = body.error.code;
    if (body.error?.message) message = body.error.message;
  } catch {
    // Not JSON: the status says enough.
  }
  const retryAfter = Number(response.headers.get('Retry-After'));
  return new WebCallError(
    code as WebCallErrorCode,
    message,
    response.status,
    Number.isFinite(retryAfter) && retryAfter > 0 ? retryAfter : null,
  );
}

function iceGathered(pc: RTCPeerConnection, timeoutMs: number): Promise<void> {
  return new Promise((resolve) => {
    if (pc.iceGatheringState === 'complete') return resolve();
    const timer = setTimeout(resolve, timeoutMs);
    pc.addEventListener('icegatheringstatechange', () => {
      if (pc.iceGatheringState !== 'complete') return;
      clearTimeout(timer);
      resolve();
    });
  });
}

/** Starts a web call: the microphone, the offer (every candidate in it), the service's answer. */
export async function startWebCall(options: WebCallOptions): Promise<WebCall> {
  const baseUrl = options.baseUrl.replace(/\/+$/, '');
  options.onStatus?.('microphone');
  let microphone: MediaStream;
  try {
    microphone = await navigator.mediaDevices.getUserMedia({
      audio: { echoCancellation: true, noiseSuppression: true, autoGainControl: true, ...options.microphone },
    });
  } catch (error) {
    throw new WebCallError('microphone', `the microphone is not available: ${String(error)}`);
  }
  const pc = new RTCPeerConnection({ iceServers: options.iceServers ?? [] });
  const stopAll = () => {
    for (const track of microphone.getTracks()) track.stop();
    pc.close();
  };
  for (const track of microphone.getTracks()) pc.addTrack(track, microphone);
  const remoteStream = new MediaStream();
  const audio = options.audioElement ?? document.createElement('audio');
  audio.autoplay = true;
  audio.srcObject = remoteStream;
  pc.addEventListener('track', (event) => remoteStream.addTrack(event.track));
  options.onStatus?.('connecting');
  let answer: { call_id: string; sdp: string };
  try {
    await pc.setLocalDescription(await pc.createOffer());
    await iceGathered(pc, options.iceGatheringTimeoutMs ?? 3_000);
    let response: Response;
    try {
      response = await fetch(`${baseUrl}/v1/web-calls/connect`, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json' },
        body: JSON.stringify({
          token: options.token,
          sdp: pc.localDescription?.sdp ?? '',
          ...(options.agentId ? { agent_id: options.agentId } : {}),
        }),
      });
    } catch (error) {
      throw new WebCallError('network', `the service could not be reached: ${String(error)}`);
    }
    if (!response.ok) throw await errorOf(response);
    answer = (await response.json()) as { call_id: string; sdp: string };
    await pc.setRemoteDescription({ type: 'answer', sdp: answer.sdp });
  } catch (error) {
    stopAll();
    throw error;
  }
  let hungUp = false;
  let settle: (reason: 'hung_up' | 'ended' | 'failed') => void = () => {};
  let settled = false;
  const ended = new Promise<'hung_up' | 'ended' | 'failed'>((resolve) => {
    settle = (reason) => {
      if (settled) return;
      settled = true;
      stopAll();
      options.onStatus?.('ended');
      resolve(reason);
    };
  });
  let disconnectedTimer: ReturnType<typeof setTimeout> | undefined;
  pc.addEventListener('connectionstatechange', () => {
    clearTimeout(disconnectedTimer);
    if (pc.connectionState === 'connected') options.onStatus?.('connected');
    if (pc.connectionState === 'failed') settle('failed');
    if (pc.connectionState === 'closed') settle(hungUp ? 'hung_up' : 'ended');
    // The service ended the call (or the network dropped for good): a short blip may recover.
    if (pc.connectionState === 'disconnected')
      disconnectedTimer = setTimeout(() => settle('ended'), options.disconnectedGraceMs ?? 3_000);
  });
  return {
    callId: answer.call_id,
    remoteStream,
    peerConnection: pc,
    ended,
    setMuted(muted) {
      for (const track of microphone.getAudioTracks()) track.enabled = !muted;
    },
    hangUp() {
      hungUp = true;
      settle('hung_up');
    },
  };
}
