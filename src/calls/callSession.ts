import { randomBytes } from 'node:crypto';
import type { Tracer } from '@opentelemetry/api';
import { accountVendorKeys } from '../admin/credentials.js';
import { scheduleCampaignCallback } from '../campaigns/callbacks.js';
import type { CallingHoursGate } from '../campaigns/callingHoursGate.js';
import { type TelephonyEnding, terminalOutcomeOf } from '../domain/callOutcome.js';
import type { AnsweredBy } from '../domain/callStatus.js';
import { isAppError } from '../domain/errors.js';
import type { AgentRecord, CallFinish, CallRecord, TranscriptEntry } from '../domain/records.js';
import type { VariableValue } from '../domain/templates.js';
import { costOf, type Price } from '../domain/usage.js';
import type { Logger } from '../logger.js';
import type { CallMetrics } from '../metrics/serviceMetrics.js';
import { retryBriefly } from '../net/retryBriefly.js';
import type { RecordingStorage } from '../recordings/recordingStorage.js';
import type { SecretBox } from '../secrets/secretBox.js';
import type { CompletedEventBuilder, Store } from '../store/types.js';
import { recordCallTrace } from '../telemetry/callTrace.js';
import { type MediaClock, type PortAllocator, type RemoteMedia, RtpSession } from '../telephony/rtp/index.js';
import type { CallFailure, IncomingCall, OutgoingCall, SipUserAgent } from '../telephony/sip/index.js';
import type { WebRtcLeg } from '../telephony/webrtc/webRtcLeg.js';
import { agentHasTools, toolSigningSecrets } from '../tools/signingSecrets.js';
import { SpeechPrefetch } from '../voice/agentSpeaker.js';
import { type AgentEnding, Conversation } from '../voice/conversation.js';
import { providerFailureMetrics } from '../voice/conversationResult.js';
import { ProviderFailureLog } from '../voice/providers/fallbackProviders.js';
import { ProviderError } from '../voice/providers/providerError.js';
import { RealtimeConversation } from '../voice/realtimeConversation.js';
import { type CallVoice, StageUnusableError, type VoiceStack } from '../voice/voiceStack.js';
import { StatusEventWriter } from '../webhooks/statusEventWriter.js';
import { addCalleeToDoNotCall } from './calleeRequests.js';
import { type CallRoute, type CallRouteOptions, inviteForCall, type SandboxAddress } from './callRoute.js';
import { CallStatusEvents } from './callStatusEvents.js';
import type { DialRateGate } from './dialRateGate.js';
import { mediaMetrics } from './mediaMetrics.js';
import { MediaRenegotiation } from './mediaRenegotiation.js';
import { sipDialogRecordOf } from './orphanedDialogs.js';
import { answerTone } from './placeholderMedia.js';
import { SessionTransfers } from './sessionTransfers.js';

/** Everything a worker needs to place calls; built once per process. */
export interface CallWorkerContext {
  store: Store;
  logger: Logger;
  workerId: string;
  ua: SipUserAgent;
  clock: MediaClock;
  ports: PortAllocator;
  mediaBindAddress: string;
  mediaPublicAddress: string;
  sandbox: SandboxAddress | null;
  secretBox: SecretBox;
  ringTimeoutMs: number;
  /** CALLWRIGHT_TRUNK_ALLOW_PRIVATE: trunks may reach private, loopback and other internal addresses. */
  trunkAllowPrivate: boolean;
  /** CALLWRIGHT_WEBHOOK_ALLOW_PRIVATE: an agent's tools, like webhooks, may reach private addresses. */
  toolAllowPrivate: boolean;
  buildEvent: CompletedEventBuilder;
  /** The speech engines; null runs calls without an agent voice (a tone, then listening). */
  voice: VoiceStack | null;
  /** Where stereo call recordings are stored. */
  recordings: RecordingStorage;
  metrics?: CallMetrics;
  /** Each finished call's trace is recorded here (off: absent or the no-op tracer). */
  tracer?: Tracer;
  /** Campaign windows and quiet hours, asked right before a queued call is claimed for dialling. */
  callingHours?: CallingHoursGate;
  /** Calls per second per caller ID and trunk, asked right before the claim. */
  dialRates?: DialRateGate;
  /** Told when a session ends (the campaign scheduler settles the attempt). */
  onCallEnded?: () => void;
}

function endingOfFailure(failure: CallFailure, localEnding: TelephonyEnding | null): TelephonyEnding {
  switch (failure.cause) {
    case 'rejected':
      return failure.status === null
        ? { kind: 'carrier_error', detail: failure.reason }
        : { kind: 'sip_rejected', status: failure.status };
    case 'ring_timeout':
      return { kind: 'ring_timeout' };
    case 'canceled':
      return localEnding ?? { kind: 'canceled', answered: false };
    case 'transport_timeout':
      return { kind: 'carrier_unresponsive' };
    case 'transport_error':
    case 'auth_failed':
    case 'bad_answer':
      return localEnding ?? { kind: 'carrier_error', detail: `${failure.cause}: ${failure.reason}` };
  }
}

/**
 * One leased call from the INVITE to its terminal status: SIP signalling, RTP media, the
 * transitions with their timestamps, the limits, and the one `finish` that writes its event.
 */
export class CallSession {
  readonly done: Promise<CallRecord | null>;
  private localEnding: TelephonyEnding | null = null;
  private outgoing: OutgoingCall | null = null;
  private rtp: RtpSession | null = null;
  /** The media figures, taken when the RTP session closes. */
  private media: Record<string, unknown> | null = null;
  private answeredBy: AnsweredBy | null = null;
  private maxDurationTimer: NodeJS.Timeout | null = null;
  private callVoice: CallVoice | null = null;
  /** The greeting, synthesised while the phone rings. */
  private prefetch: SpeechPrefetch | null = null;
  /** Why the call was not dialled, when a voice stage could not be used (for its metrics). */
  private notDialledFor: ProviderError | null = null;
  private conversation: Conversation | RealtimeConversation | null = null;
  private pendingTranscript: TranscriptEntry[] | null = null;
  private transcriptWrite: Promise<void> | null = null;
  private readonly log: Logger;
  private readonly maxDurationMs: number;
  /** Where the call goes (trunk or sandbox) and what the far end may steer; known once routed. */
  private route: CallRoute | null = null;
  /** The terminal write, kept until it is stored (a dropped database connection may fail it). */
  private finish: CallFinish | null = null;
  private finished: CallRecord | null = null;
  private recorded = false;
  private readonly transfers: SessionTransfers;
  /** The conversation, gathered when the agent left a bridged call (the call itself goes on). */
  private gathered: Promise<Partial<CallFinish>> | null = null;
  private readonly statusEvents: CallStatusEvents;

  constructor(
    private readonly context: CallWorkerContext,
    readonly call: CallRecord,
    private readonly agent: AgentRecord | null,
    /** An agent-test call: sandbox only, never a trunk (callRoute.ts `sandboxOnly`). */
    private readonly testCall = false,
    /** A web call (channel 'web'): the browser's WebRTC leg, already answered, instead of an INVITE. */
    private readonly browser: WebRtcLeg | null = null,
    /** An inbound call (issue 40): the caller's INVITE, already screened and ringing, to answer. */
    private readonly inbound: IncomingCall | null = null,
  ) {
    this.maxDurationMs = (agent?.maxDurationS ?? 600) * 1000;
    this.log = context.logger.child({ callId: call.id });
    this.statusEvents = new CallStatusEvents(call, new StatusEventWriter(context.store.events, this.log));
    this.transfers = new SessionTransfers({
      store: context.store,
      legContext: { ...context, logger: this.log },
      log: this.log,
      statusEvents: this.statusEvents,
      callForWhisper: () => ({
        ...this.call,
        variables: this.variablesWithToolAnswers() ?? this.call.variables,
      }),
      routeOptions: () => this.routeOptions(),
      voice: () => this.callVoice,
      outgoing: () => this.outgoing,
      requestUri: () => this.route?.inviteOptions.requestUri,
      calleeRtp: () => this.rtp,
      ending: () => this.localEnding !== null,
      targetHungUp: () => {
        this.localEnding ??= { kind: 'transferred' };
        void this.outgoing?.hangUp().catch(() => undefined);
      },
    });
    this.done = this.run();
  }

  /** Whether the call's ending is in the store; if not, `recordEnd` tries again. */
  get endRecorded(): boolean {
    return this.recorded;
  }

  get isAnswered(): boolean {
    return this.answeredBy !== null;
  }

  /** Cancels before the answer or hangs up after it; the call ends as `canceled`. */
  cancel(): void {
    this.endLocally({ kind: 'canceled', answered: this.isAnswered });
  }

  /**
   * Shutdown: a call in conversation ends after the sentence the agent is speaking (completed /
   * interrupted); one not yet answered, or without a voice, is left to the grace deadline.
   */
  async wrapUp(): Promise<void> {
    const conversation = this.conversation;
    if (this.localEnding || !conversation || !('windDown' in conversation)) return;
    await conversation.windDown();
    this.endLocally({ kind: 'shutdown' });
  }

  /** Ends the call from our side with the given reason (max duration, agent hang-up, shutdown). */
  endLocally(ending: TelephonyEnding): void {
    this.localEnding ??= ending;
    const leg = this.transfers.answeredLeg;
    if (ending.kind === 'transferred' && leg) {
      // The agent leaves a bridged call: the callee stays, now with the target.
      if (!this.gathered && this.rtp) {
        this.gathered = this.gatherConversation();
        leg.bridge(this.rtp);
      }
      return;
    }
    this.browser?.hangUp();
    void this.inbound?.hangUp().catch((error: unknown) => this.log.warn({ err: error }, 'hang-up failed'));
    void this.outgoing?.hangUp().catch((error: unknown) => this.log.warn({ err: error }, 'hang-up failed'));
  }

  private async run(): Promise<CallRecord | null> {
    let ending: TelephonyEnding;
    try {
      ending = await this.place();
    } catch (error) {
      this.log.error({ err: error }, 'call failed inside the worker');
      ending = this.localEnding ?? { kind: 'internal_error' };
    } finally {
      this.transfers.hangUp();
      this.browser?.hangUp();
      this.releaseMedia();
    }
    const outcome = terminalOutcomeOf(ending);
    const endedAtIso = new Date().toISOString();
    const produced = await (this.gathered ?? this.gatherConversation());
    await this.statusEvents.beforeEnd(this.answeredBy);
    this.finish = { ...outcome, answeredBy: this.answeredBy, ...produced, atIso: endedAtIso };
    await this.recordEnd({ attempts: 4 });
    if (this.context.tracer && this.finished) recordCallTrace(this.context.tracer, this.finished);
    this.log.info({ status: outcome.status, endReason: outcome.endReason }, 'call ended');
    return this.finished;
  }

  /**
   * Writes the call's ending with its event; true once it is stored. Repeating it is safe: the
   * write only finishes a call that is not finished yet, so at most one event is ever made.
   */
  async recordEnd(options: { attempts?: number } = {}): Promise<boolean> {
    const finish = this.finish;
    if (this.recorded || !finish) return this.recorded;
    try {
      this.finished = await retryBriefly(
        () => this.context.store.calls.finish(this.call.id, finish, this.context.buildEvent),
        { attempts: options.attempts ?? 1 },
      );
      this.recorded = true;
    } catch (error) {
      this.log.error({ err: error }, 'could not record the end of the call; it is tried again');
    }
    return this.recorded;
  }

  /** The transcript, extracted data, metrics and recording of the conversation, if there was one. */
  private async gatherConversation(): Promise<Partial<CallFinish>> {
    const conversation = this.conversation;
    this.conversation = null;
    // A greeting still being synthesised ahead (never answered, or cut) stops with the call.
    this.prefetch?.close();
    if (!conversation) {
      // Never answered: the detector (in the WASM memory all calls share) still goes back.
      this.callVoice?.vad.close();
      this.callVoice?.release();
      if (!this.notDialledFor) return {};
      const metrics = notDialledMetrics(this.notDialledFor);
      this.context.metrics?.observeCallFigures(metrics);
      return { metrics };
    }
    try {
      const result = await conversation.finish();
      this.context.metrics?.observeCallFigures(result.metrics);
      if (this.answeredBy !== null) this.answeredBy = result.answeredBy;
      // settings.recording.enabled false: no audio is kept, only the transcript and the figures.
      const recordingPath =
        this.callVoice?.recordingEnabled === false
          ? null
          : await this.context.recordings.save(this.call.id, result.recorder.toWav());
      const variables = this.variablesWithToolAnswers();
      return {
        transcript: result.transcript,
        extractedData: result.extractedData,
        // What the agent's tools' answers set (response_variables) joins the request's variables.
        ...(variables ? { variables } : {}),
        analysis: result.analysis,
        metrics: {
          ...(await this.withUsageAndCost(result.metrics, result.recorder.elapsedMs)),
          ...this.mediaFigures(),
          ...this.actionTimings(),
        },
        recordingPath,
      };
    } catch (error) {
      this.log.error({ err: error }, 'could not gather the conversation');
      return {};
    } finally {
      this.callVoice?.vad.close();
      this.callVoice?.release();
    }
  }

  private async place(): Promise<TelephonyEnding> {
    const { context, call } = this;
    if (!this.agent) {
      this.log.error('the call has no readable agent; it is not dialled');
      return { kind: 'internal_error' };
    }
    // Checked at the last moment before the INVITE, so a number listed while the call queued counts.
    const suppressed =
      !this.browser &&
      !this.inbound &&
      (await retryBriefly(() => context.store.doNotCall.get(call.accountId, call.toNumber)));
    if (suppressed) {
      this.log.info('the number is on the do-not-call list: the call is not dialled');
      return { kind: 'do_not_call' };
    }
    if (context.voice) {
      try {
        // The account's own vendor keys come first; only this call's voice stack sees them opened.
        const accountKeys = await accountVendorKeys(context.store, context.secretBox, call.accountId);
        const signingSecrets = agentHasTools(this.agent)
          ? await toolSigningSecrets(context.store, context.secretBox, call.accountId)
          : null;
        this.callVoice = context.voice.forCall(this.agent, call, this.log, accountKeys, {
          signingSecrets,
          allowPrivate: context.toolAllowPrivate,
          openSecret: (sealed) => context.secretBox.open(sealed),
          scheduleCallback: (request) => scheduleCampaignCallback(context.store, call.id, request),
        });
      } catch (error) {
        this.log.warn({ err: error }, 'the agent cannot hold this call; it is not dialled');
        if (error instanceof ProviderError) this.notDialledFor = error;
        return { kind: error instanceof ProviderError ? 'provider_error' : 'internal_error' };
      }
    }
    if (this.browser) return this.placeInBrowser(this.browser);
    if (this.inbound) return this.answerInbound(this.inbound);
    // A refusal (AppError) is final; a failed read (a dropped connection) is tried again.
    const invite = await retryBriefly(() => inviteForCall(context.store, call, this.routeOptions()), {
      retryIf: (error) => !isAppError(error),
    }).catch((error: unknown) => {
      this.log.warn({ err: error }, 'no route for the call');
      return null;
    });
    if (!invite) return { kind: 'carrier_error', detail: 'no route' };
    this.route = invite;
    if (this.localEnding) return this.localEnding;

    const rtp = await RtpSession.open({
      logger: this.log,
      clock: context.clock,
      ports: context.ports,
      bindAddress: context.mediaBindAddress,
      publicAddress: invite.mediaPublicAddress ?? context.mediaPublicAddress,
      latching: invite.latching,
    });
    this.rtp = rtp;
    // The Call-ID is on the call row before the INVITE leaves: every INVITE a carrier sees can be
    // traced to exactly one call (a second dial would leave an INVITE no call points to).
    const sipCallId = randomBytes(16).toString('hex');
    await retryBriefly(() => context.store.calls.setSipCallId(call.id, sipCallId));
    if (this.localEnding) return this.localEnding;
    const media = new MediaRenegotiation(rtp, rtp.publicAddress, invite, this.log);
    const outgoing = context.ua.invite({
      ...invite.inviteOptions,
      callId: sipCallId,
      sdpOffer: media.offer(),
    });
    outgoing.answerOffersWith((offer) => media.answer(offer));
    this.outgoing = outgoing;
    this.prefetchGreeting();

    let ringing = false;
    outgoing.on('provisional', ({ status }) => {
      if (ringing || (status !== 180 && status !== 183)) return;
      ringing = true;
      this.recordTransition('ringing');
      // The greeting follows the answer: a voice that connects per reply connects while it rings.
      this.callVoice?.tts.prepare?.(this.callVoice.ttsVoice ? { voice: this.callVoice.ttsVoice } : {});
    });
    outgoing.on('answered', ({ sdpAnswer }) => {
      this.onAnswered(rtp, media, sdpAnswer);
      this.rememberDialog(outgoing);
    });

    const outcome = await outgoing.outcome;
    if (outcome.kind === 'failed') return endingOfFailure(outcome.failure, this.localEnding);
    if (this.localEnding) return this.localEnding;
    return outcome.ended.by === 'remote' ? { kind: 'callee_hangup' } : { kind: 'agent_hangup' };
  }

  /**
   * Synthesises the agent's opening line as the INVITE leaves, so that its first RTP packet follows
   * the 200 OK at once whatever the voice's first-byte time. (An unanswered call costs the vendor
   * characters of one greeting.)
   */
  private prefetchGreeting(): void {
    const voice = this.callVoice;
    if (!voice || voice.realtime || voice.turnTaking.waitForCallee) return;
    const greeting = voice.brain.greeting();
    if (!greeting) return;
    this.prefetch = new SpeechPrefetch(voice.tts, voice.ttsVoice, this.log);
    this.prefetch.prefetch(greeting);
  }

  /**
   * A web call: the same RTP session and conversation as a phone call, its packets carried to and
   * from the browser by the WebRTC leg; the browser connecting is the answer.
   */
  private async placeInBrowser(browser: WebRtcLeg): Promise<TelephonyEnding> {
    const { context } = this;
    const rtp = await RtpSession.open({
      logger: this.log,
      clock: context.clock,
      ports: context.ports,
      bindAddress: '127.0.0.1',
      publicAddress: '127.0.0.1',
    });
    this.rtp = rtp;
    this.prefetchGreeting();
    const remote = await browser.bridge(rtp);
    if (this.localEnding) return this.localEnding;
    if (!remote) return { kind: 'ring_timeout' };
    this.startMedia(rtp, remote);
    const by = await browser.ended;
    return this.localEnding ?? (by === 'remote' ? { kind: 'callee_hangup' } : { kind: 'agent_hangup' });
  }

  /**
   * An inbound call: our SDP answer to the caller's offer (SRTP when it offers keys), the 200 OK,
   * and once it is acknowledged the same conversation as an outbound call.
   */
  private async answerInbound(incoming: IncomingCall): Promise<TelephonyEnding> {
    const { context } = this;
    const ended = new Promise<'remote' | 'local'>((resolve) => incoming.on('ended', ({ by }) => resolve(by)));
    const rtp = await RtpSession.open({
      logger: this.log,
      clock: context.clock,
      ports: context.ports,
      bindAddress: context.mediaBindAddress,
      publicAddress: context.mediaPublicAddress,
    });
    this.rtp = rtp;
    const media = new MediaRenegotiation(
      rtp,
      rtp.publicAddress,
      { inviteOptions: {}, srtp: 'optional' },
      this.log,
    );
    const answer = incoming.sdpOffer === null ? null : media.answer(incoming.sdpOffer);
    if (answer === null || 'status' in answer || !media.remote) {
      incoming.reject(488);
      return { kind: 'carrier_error', detail: answer && 'reason' in answer ? answer.reason : 'no SDP offer' };
    }
    // The caller hanging up before the answer (CANCEL) is a call nobody answered.
    const unanswered = (): TelephonyEnding | null =>
      this.localEnding ?? (incoming.state === 'canceled' ? { kind: 'canceled', answered: false } : null);
    const remote = media.remote;
    if (unanswered()) return unanswered() as TelephonyEnding;
    this.prefetchGreeting();
    if (!(await incoming.answer(answer.sdp)))
      return unanswered() ?? { kind: 'carrier_error', detail: 'no ACK' };
    this.startMedia(rtp, remote);
    const by = await ended;
    return this.localEnding ?? (by === 'remote' ? { kind: 'callee_hangup' } : { kind: 'agent_hangup' });
  }

  private onAnswered(rtp: RtpSession, media: MediaRenegotiation, sdpAnswer: string): void {
    const remote = media.remoteOfAnswer(sdpAnswer);
    if ('refused' in remote) {
      this.endLocally({ kind: 'carrier_error', detail: remote.refused });
      return;
    }
    this.startMedia(rtp, remote);
  }

  /** The far end answered with `remote`: media flows, the conversation begins. */
  private startMedia(rtp: RtpSession, remote: RemoteMedia): void {
    this.answeredBy = 'unknown';
    rtp.start(remote);
    this.recordTransition('in_progress');
    this.maxDurationTimer = setTimeout(() => this.endLocally({ kind: 'max_duration' }), this.maxDurationMs);
    if (!this.callVoice) {
      void rtp.play(answerTone()).catch(() => undefined);
      return;
    }
    const shared = {
      rtp,
      logger: this.log,
      silenceTimeoutMs: (this.agent?.silenceTimeoutS ?? 20) * 1000,
      maxDurationMs: this.maxDurationMs,
      hangUp: (ending: AgentEnding) => this.endLocally({ kind: ending }),
      transfer: (target: string, summary?: string) => this.transfers.transferTo(target, summary),
      addToDoNotCall: async () => {
        await addCalleeToDoNotCall(this.context.store, this.call);
        this.log.info('the callee asked not to be called again: the number is on the do-not-call list');
      },
      onTranscriptChange: (transcript: TranscriptEntry[]) => this.storeLiveTranscript(transcript),
      onAnsweredBy: (answeredBy: AnsweredBy) => this.statusEvents.decided(answeredBy),
    };
    const { realtime, ...stages } = this.callVoice;
    this.conversation = realtime
      ? new RealtimeConversation({ ...shared, ...stages, ...realtime })
      : new Conversation({ ...shared, ...stages, ...(this.prefetch ? { prefetch: this.prefetch } : {}) });
    this.conversation.start();
  }

  /** When each tool call and transfer attempt ran, and how it went (the call's trace makes spans of them). */
  private actionTimings(): { tool_calls?: unknown[]; transfers?: unknown[] } {
    const toolCalls = this.callVoice?.toolCalls?.() ?? [];
    return {
      ...(toolCalls.length > 0 ? { tool_calls: [...toolCalls] } : {}),
      ...(this.transfers.timings.length > 0 ? { transfers: this.transfers.timings } : {}),
    };
  }

  /** The call's variables with what its tools' answers set (`response_variables`); null: none set. */
  private variablesWithToolAnswers(): Record<string, VariableValue> | null {
    const set = this.callVoice?.toolVariables?.() ?? {};
    return Object.keys(set).length > 0 ? { ...(this.call.variables ?? {}), ...set } : null;
  }

  private routeOptions(): CallRouteOptions {
    const { context } = this;
    return {
      sandbox: context.sandbox,
      secretBox: context.secretBox,
      ringTimeoutMs: context.ringTimeoutMs,
      trunkAllowPrivate: context.trunkAllowPrivate,
      sipBindAddress: context.mediaBindAddress,
      sandboxOnly: this.testCall,
    };
  }

  /**
   * Writes the transcript so far for live views, one write at a time: lines that arrive during a
   * write are written together by the next one, so a slow store never queues up writes.
   */
  private storeLiveTranscript(transcript: TranscriptEntry[]): void {
    this.pendingTranscript = transcript;
    if (this.transcriptWrite) return;
    const writeLatest = async (): Promise<void> => {
      while (this.pendingTranscript) {
        const latest = this.pendingTranscript;
        this.pendingTranscript = null;
        await this.context.store.calls
          .setLiveTranscript(this.call.id, latest)
          .catch((error: unknown) => this.log.warn({ err: error }, 'could not store the live transcript'));
      }
      this.transcriptWrite = null;
    };
    this.transcriptWrite = writeLatest();
  }

  /**
   * The call's metrics with what it used of each vendor and the line (`usage`), and what that cost
   * at the account's prices over the service's defaults (`cost`).
   */
  private async withUsageAndCost(
    metrics: Record<string, unknown>,
    answeredMs: number,
  ): Promise<Record<string, unknown>> {
    const usage = this.callVoice?.usage;
    if (!usage) return metrics;
    const trunkId = this.route?.trunkId ?? null;
    usage.add('telephony', trunkId ? 'trunk' : 'sandbox', trunkId, 'minutes', answeredMs / 60_000);
    let prices: Price[] = [];
    try {
      prices = await this.context.store.prices.get(this.call.accountId);
    } catch (error) {
      this.log.warn({ err: error }, "could not read the account's prices; the defaults apply");
    }
    const entries = usage.entries();
    return { ...metrics, usage: entries, cost: costOf(entries, prices) };
  }

  /** Stores an answered trunk call's SIP dialog, so a BYE can still end it should this process die. */
  private rememberDialog(outgoing: OutgoingCall): void {
    const state = outgoing.dialogState;
    const record = state && this.route ? sipDialogRecordOf(state, this.route) : null;
    if (!record) return;
    this.context.store.calls
      .setSipDialog(this.call.id, record)
      .catch((error: unknown) => this.log.error({ err: error }, 'could not store the SIP dialog'));
  }

  /** Stamps a live transition; a failed write is logged, never thrown into the call's media path. */
  private recordTransition(status: 'ringing' | 'in_progress'): void {
    const atIso = new Date().toISOString();
    if (status === 'ringing') this.statusEvents.ringing(atIso);
    else this.statusEvents.answered(atIso);
    this.context.store.calls
      .markLive(this.call.id, this.context.workerId, status, atIso)
      .catch((error: unknown) =>
        this.log.error({ err: error, status }, 'could not record a call transition'),
      );
  }

  /** The media's figures for the metrics: live, or as taken when the RTP session closed. */
  private mediaFigures(): { media?: Record<string, unknown> } {
    const media = this.rtp ? mediaMetrics(this.rtp) : this.media;
    return media ? { media } : {};
  }

  private releaseMedia(): void {
    if (this.maxDurationTimer) clearTimeout(this.maxDurationTimer);
    this.maxDurationTimer = null;
    if (this.rtp) this.media = mediaMetrics(this.rtp);
    this.rtp?.close();
    this.rtp = null;
  }
}

/**
 * The metrics of a call that was never dialled because a voice stage could not be used: the reason,
 * as a provider failure written through the same log as every other (so it is kept the same way).
 */
function notDialledMetrics(error: ProviderError): Record<string, unknown> {
  const failures = new ProviderFailureLog();
  failures.note(error instanceof StageUnusableError ? error.stage : 'tts', error.provider, error);
  return { provider_failures: providerFailureMetrics(failures).map((failure) => ({ ...failure, at_ms: 0 })) };
}
