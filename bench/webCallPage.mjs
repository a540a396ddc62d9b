// Web calls driven from one Chromium page, for bench:web and the concurrent web call test. The
// page gets the SDK from the service and, per call, a WebAudio microphone (given to the SDK's
// getUserMedia) that says the answer once the agent's greeting has ended; an AudioWorklet measures
// both directions on the page's one AudioContext clock (10 ms windows): voice-to-voice = the
// microphone's last audible window -> the agent's first audible window as received (the remote
// track after WebRTC's jitter buffer: what the visitor hears). One AudioContext for all the page's
// calls: Chromium runs a real-time audio thread per context, and twenty of them starve each other
// on two cores (the visitors' voices then reach the service as a few loud frames).

/**
 * Runs in the page: one AudioContext for all the page's calls (Chromium runs a real-time audio
 * thread per context: twenty pages' contexts starve each other on two cores). For each call a
 * WebAudio microphone given to the SDK's getUserMedia, an AudioWorklet measuring both directions,
 * the call through the SDK, and an answer to the greeting (and to later turns, up to maxAnswers).
 */
async function callsInPage({
  maxAnswers,
  calibrate,
  baseUrl,
  tokens,
  delaysMs,
  agentId,
  answerWavBase64,
  replyAfterQuietMs,
  callLimitMs,
  echo,
}) {
  const ctx = new AudioContext();
  await ctx.resume();
  const workletSource = `
    class Meter extends AudioWorkletProcessor {
      constructor() { super(); this.sum = [0, 0]; this.n = 0; this.loud = [false, false]; }
      process(inputs) {
        for (let i = 0; i < 2; i++) {
          const ch = inputs[i] && inputs[i][0];
          if (ch) for (let k = 0; k < ch.length; k++) this.sum[i] += ch[k] * ch[k];
        }
        this.n += 128;
        if (this.n >= sampleRate / 100) {
          const t = currentFrame / sampleRate;
          for (let i = 0; i < 2; i++) {
            const loud = Math.sqrt(this.sum[i] / this.n) > 0.01;
            if (loud !== this.loud[i]) { this.loud[i] = loud; this.port.postMessage({ who: i, loud, t }); }
            this.sum[i] = 0;
          }
          this.n = 0;
        }
        return true;
      }
    }
    registerProcessor('meter', Meter);`;
  await ctx.audioWorklet.addModule(
    URL.createObjectURL(new Blob([workletSource], { type: 'text/javascript' })),
  );
  const bytes = Uint8Array.from(atob(answerWavBase64), (c) => c.charCodeAt(0));
  const answerBuffer = await ctx.decodeAudioData(bytes.buffer);
  // The page's module script loaded the SDK (no import() here: test runners rewrite it).
  while (!globalThis.callwrightWeb) await new Promise((done) => setTimeout(done, 20));
  const { startWebCall } = globalThis.callwrightWeb;

  /**
   * The browser's own audio path, without the service: the same WebAudio microphone sent through
   * a second peer connection in this page (PCMU, loopback) and measured as it comes out of the
   * receiver, onset to onset.
   */
  async function browserPathMs() {
    const meter = new AudioWorkletNode(ctx, 'meter', { numberOfInputs: 2, numberOfOutputs: 0 });
    const onsets = [[], []];
    meter.port.onmessage = ({ data }) => data.loud && onsets[data.who].push(data.t);
    const microphone = ctx.createMediaStreamDestination();
    const sender = new RTCPeerConnection();
    const receiver = new RTCPeerConnection();
    sender.onicecandidate = (e) => e.candidate && receiver.addIceCandidate(e.candidate);
    receiver.onicecandidate = (e) => e.candidate && sender.addIceCandidate(e.candidate);
    const transceiver = sender.addTransceiver(microphone.stream.getAudioTracks()[0], {
      direction: 'sendonly',
    });
    const pcmu = RTCRtpSender.getCapabilities('audio').codecs.filter((c) => c.mimeType === 'audio/PCMU');
    transceiver.setCodecPreferences(pcmu);
    const received = new Promise((done) => {
      receiver.ontrack = (e) => done(e.streams[0] ?? new MediaStream([e.track]));
    });
    await sender.setLocalDescription(await sender.createOffer());
    await receiver.setRemoteDescription(sender.localDescription);
    await receiver.setLocalDescription(await receiver.createAnswer());
    await sender.setRemoteDescription(receiver.localDescription);
    const stream = await received;
    const sink = document.createElement('audio');
    sink.srcObject = stream;
    sink.muted = true;
    void sink.play().catch(() => {});
    ctx.createMediaStreamSource(stream).connect(meter, 0, 1);
    await new Promise((done) => setTimeout(done, 1000));
    const delays = [];
    for (let i = 0; i < 3; i++) {
      const source = ctx.createBufferSource();
      source.buffer = answerBuffer;
      source.connect(microphone);
      source.connect(meter, 0, 0);
      const at = ctx.currentTime + 0.05;
      source.start(at);
      await new Promise((done) => setTimeout(done, (answerBuffer.duration + 1) * 1000));
      const sent = onsets[0].find((t) => t >= at - 0.01);
      const heard = onsets[1].find((t) => t >= at - 0.01);
      if (sent !== undefined && heard !== undefined) delays.push(Math.round((heard - sent) * 1000));
    }
    sender.close();
    receiver.close();
    meter.disconnect();
    return delays.sort((a, b) => a - b)[Math.floor(delays.length / 2)] ?? null;
  }
  const browserOwnPathMs = calibrate ? await browserPathMs() : null;

  async function oneCall(token, delayMs) {
    await new Promise((done) => setTimeout(done, delayMs));
    const meter = new AudioWorkletNode(ctx, 'meter', { numberOfInputs: 2, numberOfOutputs: 0 });
    const microphone = ctx.createMediaStreamDestination();
    const events = [];
    let onEvent = () => {};
    meter.port.onmessage = (message) => {
      events.push(message.data);
      onEvent(message.data);
    };
    const audio = document.createElement('audio');
    document.body.append(audio);
    // startWebCall asks for the microphone before its first await: this call gets this stream.
    navigator.mediaDevices.getUserMedia = async () => microphone.stream;
    const calledAt = ctx.currentTime;
    let call;
    try {
      call = await startWebCall({ baseUrl, token, agentId, audioElement: audio });
    } catch (error) {
      return { error: `${error.code ?? ''} ${error.message ?? error}` };
    }
    const connectedAt = ctx.currentTime;
    await new Promise((done) => {
      if (call.remoteStream.getAudioTracks().length > 0) return done();
      call.remoteStream.addEventListener('addtrack', () => done(), { once: true });
    });
    const received = ctx.createMediaStreamSource(call.remoteStream);
    received.connect(meter, 0, 1);
    if (echo) {
      // A visitor's speakers without echo cancellation: what the page hears goes back into its
      // microphone, delayed and attenuated (the microphone is WebAudio's: no AEC applies to it).
      const delay = ctx.createDelay(1);
      delay.delayTime.value = echo.delayMs / 1000;
      const loss = ctx.createGain();
      loss.gain.value = 10 ** (-echo.lossDb / 20);
      received.connect(delay).connect(loss).connect(microphone);
    }

    // Answer after the greeting (audible, then quiet for replyAfterQuietMs); again after each later
    // agent turn, up to maxAnswers (a re-ask after an answer the agent missed gets answered).
    const answersAt = [];
    let answerEndsAt = 0;
    let agentSpokeSinceAnswer = true;
    let quietTimer = null;
    onEvent = (event) => {
      if (event.who !== 1) return;
      clearTimeout(quietTimer);
      if (event.loud) {
        if (event.t > answerEndsAt) agentSpokeSinceAnswer = true;
        return;
      }
      if (!agentSpokeSinceAnswer || answersAt.length >= maxAnswers) return;
      quietTimer = setTimeout(() => {
        if (!agentSpokeSinceAnswer || answersAt.length >= maxAnswers) return;
        const source = ctx.createBufferSource();
        source.buffer = answerBuffer;
        source.connect(microphone);
        source.connect(meter, 0, 0);
        const at = ctx.currentTime + 0.05;
        answersAt.push(at);
        answerEndsAt = at + answerBuffer.duration;
        agentSpokeSinceAnswer = false;
        source.start(at);
      }, replyAfterQuietMs);
    };
    // The downlink's jitter buffer (WebRTC stats), sampled while the call lasts.
    let jitterBufferMs = null;
    const statsTimer = setInterval(async () => {
      try {
        for (const report of (await call.peerConnection.getStats()).values()) {
          if (report.type === 'inbound-rtp' && report.jitterBufferEmittedCount > 0)
            jitterBufferMs = Math.round((1000 * report.jitterBufferDelay) / report.jitterBufferEmittedCount);
        }
      } catch {}
    }, 1000);
    const limit = new Promise((done) => setTimeout(() => done('limit'), callLimitMs));
    const ended = await Promise.race([call.ended, limit]);
    clearInterval(statsTimer);
    if (ended === 'limit') call.hangUp();
    meter.disconnect();

    const remoteOnsets = events.filter((e) => e.who === 1 && e.loud).map((e) => e.t);
    // Voice-to-voice of the first answer: its last quiet transition before any second answer.
    const beforeSecond = answersAt[1] ?? Number.POSITIVE_INFINITY;
    const micQuiet = events.filter((e) => e.who === 0 && !e.loud && e.t < beforeSecond).map((e) => e.t);
    const speechEnd = micQuiet.length > 0 ? micQuiet[micQuiet.length - 1] : null;
    const replyOnset = speechEnd === null ? undefined : remoteOnsets.find((t) => t > speechEnd);
    const greetingOnset = remoteOnsets.find((t) => t >= connectedAt);
    return {
      callId: call.callId,
      ended,
      answers: answersAt.length,
      connectMs: Math.round((connectedAt - calledAt) * 1000),
      jitterBufferMs,
      greetingMs: greetingOnset === undefined ? null : Math.round((greetingOnset - connectedAt) * 1000),
      voiceToVoiceMs:
        speechEnd === null || replyOnset === undefined ? null : Math.round((replyOnset - speechEnd) * 1000),
    };
  }
  const results = await Promise.all(tokens.map((token, i) => oneCall(token, delaysMs[i])));
  await ctx.close();
  return { results, browserOwnPathMs, baseLatencyMs: Math.round(ctx.baseLatency * 1000) };
}

/**
 * One web call per token from one page of `browser` on the service's own origin (allowed without
 * an origin list), started over `spreadMs`; each visitor says `answerWav` once after the greeting.
 */
export async function webCallsFromOnePage(browser, options) {
  const { serviceUrl, tokens, agentId, answerWav, spreadMs = 0, calibrate = false } = options;
  const context = await browser.newContext();
  try {
    const page = await context.newPage();
    await page.route(`${serviceUrl}/bench/web-call.html`, (route) =>
      route.fulfill({
        contentType: 'text/html',
        body: `<!doctype html><title>web calls</title><body><script type="module">
          import * as sdk from '/v1/web-calls/sdk.js'; globalThis.callwrightWeb = sdk;</script></body>`,
      }),
    );
    await page.goto(`${serviceUrl}/bench/web-call.html`);
    return await page.evaluate(callsInPage, {
      calibrate,
      maxAnswers: options.maxAnswers ?? 1,
      baseUrl: serviceUrl,
      tokens,
      delaysMs: tokens.map((_, i) => (spreadMs * i) / tokens.length),
      agentId,
      answerWavBase64: Buffer.from(answerWav).toString('base64'),
      replyAfterQuietMs: options.replyAfterQuietMs ?? 900,
      echo: options.echo ?? null,
      callLimitMs: options.callLimitMs ?? 60_000,
    });
  } catch (error) {
    return {
      results: tokens.map(() => ({ error: String(error).slice(0, 300) })),
      browserOwnPathMs: null,
      baseLatencyMs: null,
    };
  } finally {
    await context.close();
  }
}

/** Chromium flags for web calls without a person: media allowed, audio plays, nothing throttled. */
export const webCallChromiumArgs = [
  '--autoplay-policy=no-user-gesture-required',
  '--use-fake-ui-for-media-stream',
  '--disable-background-timer-throttling',
  '--disable-renderer-backgrounding',
  '--disable-backgrounding-occluded-windows',
];
