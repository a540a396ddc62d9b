/**
 * The agent must not hear itself: an echo suppressor between the line and the listening pipeline
 * (VAD, end of turn, barge-in, recogniser). A callee's phone or browser without echo cancellation
 * (a speakerphone, a laptop's speakers, SIPp's echo) sends the agent's own voice back, delayed by the
 * round trip and attenuated; heard as the callee it would barge in on the greeting and be written
 * down as the callee's words.
 *
 * Per 20 ms frame, on the media clock (one callee frame per tick; the agent's frame of the same tick
 * follows it): the level in dB of what the agent played and of what the callee sent. The echo path
 * is found by correlating the two level envelopes at every lag from one frame to `maxLagFrames`
 * (exponentially weighted normalised cross-correlation); once one lag explains the callee's audio,
 * its echo return loss is measured there (the median level difference over recent echo frames).
 * A callee frame no louder than the agent's level at that lag plus the loss, plus a margin, is the
 * agent's echo: the listening pipeline gets silence for it (the recording keeps what came in). Speech
 * over the agent is louder than its echo and passes: a barge-in still cuts in. Before a lag is
 * found, a frame quieter than the agent's loudest recent frame minus `fallbackLossDb` counts as echo,
 * until the line shows it has none (the callee silent while the agent plays): then nothing is
 * suppressed unless an echo path is found later.
 * Levels, not waveforms: a suppressor rather than an adaptive (NLMS) canceller, so the G.711 coding
 * twice, the jitter buffers' stretching and the callee's own processing do not defeat it (decision
 * in docs/decisions.md).
 */

/** Lags searched, in frames: 1–30 (20–600 ms: the network's round trip, both jitter buffers, the far end). */
export const maxLagFrames = 30;
const historyFrames = maxLagFrames + 2;
/** The level of a frame of digital silence (and the floor of every level). */
const floorDb = -80;
/** The agent is playing audio (something an echo could follow) above this level. */
const agentActiveDb = -50;
/** A callee frame must be this much louder than the echo the agent's audio explains to count as speech. */
const marginDb = 6;
/** How far (20 ms frames) the echo may wander from its found lag and still be explained by it. */
const lagToleranceFrames = 3;
/** Before a lag is found: echo unless this much quieter than the agent's loudest recent frame. */
const fallbackLossDb = 6;
/** Weight of a new frame in the correlation (about a second and a half of memory). */
const correlationWeight = 1 / 75;
/** A lag explains the callee's audio above this correlation of the level envelopes. */
const lockCorrelation = 0.5;
/** Frames of agent activity before a correlation is trusted. */
const lockMinFrames = 25;
const lossSamples = 64;
/** The agent loud in the last 600 ms, the callee this much quieter: no echo came back in that frame. */
const echoFreeGapDb = 35;
/**
 * Frames of such quiet (longer than the longest lag: an echo would have come back by then) before the
 * line is taken for one without echo, for the rest of the call (the fallback no longer applies).
 */
const echoFreeMinFrames = maxLagFrames + 5;

/** The level of 16-bit samples in dBFS (mean square), floored. */
export function levelDb(samples: Int16Array): number {
  let sum = 0;
  for (let index = 0; index < samples.length; index++) {
    const sample = samples[index] as number;
    sum += sample * sample;
  }
  if (sum === 0) return floorDb;
  return Math.max(floorDb, 10 * Math.log10(sum / samples.length / (32768 * 32768)));
}

/** Moves the weighted mean `means[index]` towards `value`; returns the new mean. */
function ewma(means: Float64Array, index: number, value: number, weight: number): number {
  const mean = (means[index] as number) + weight * (value - (means[index] as number));
  means[index] = mean;
  return mean;
}

export interface EchoGuardStats {
  /** Callee frames taken for the agent's echo (silenced for the listening pipeline). */
  framesSuppressed: number;
  /** The echo path's lag in ms once found (null: no echo path found). */
  echoDelayMs: number | null;
  /** The echo's loss in dB at that lag (null: not measured). */
  echoLossDb: number | null;
}

/** The call's `metrics.echo`: snake_case as every other figure of the call record. */
export function echoMetrics(stats: EchoGuardStats) {
  return {
    frames_suppressed: stats.framesSuppressed,
    delay_ms: stats.echoDelayMs,
    loss_db: stats.echoLossDb,
  };
}

export class EchoGuard {
  /** The agent's level per tick, a ring indexed by tick. */
  private readonly agentDb = new Float64Array(historyFrames).fill(floorDb);
  private tick = 0;
  /** Per lag (index = lag in frames): weighted means of x (agent), y (callee), x², y², xy. */
  private readonly meanX = new Float64Array(maxLagFrames + 1);
  private readonly meanY = new Float64Array(maxLagFrames + 1);
  private readonly meanXx = new Float64Array(maxLagFrames + 1);
  private readonly meanYy = new Float64Array(maxLagFrames + 1);
  private readonly meanXy = new Float64Array(maxLagFrames + 1);
  private activeFrames = 0;
  private lagFrames = 0;
  private readonly losses: number[] = [];
  private lossDb: number | null = null;
  private suppressed = 0;
  /** Frames the agent played loud into and the callee stayed quiet, or not. */
  private quietFrames = 0;
  private echoingFrames = 0;
  /** Decided once: the callee's speech over the agent later must not undo it. */
  private noEchoSeen = false;

  /** The agent's frame played at this tick (after the callee's frame of the same tick). */
  agentFrame(samples: Int16Array): void {
    const slot = this.tick % historyFrames;
    this.agentDb[slot] = Math.max(this.agentDb[slot] as number, levelDb(samples));
  }

  /**
   * A callee frame (one per tick, concealed gaps included: `received` false): true when it is the
   * agent's echo and must not count as the callee speaking.
   */
  calleeFrame(samples: Int16Array, received = true): boolean {
    this.tick++;
    this.agentDb[this.tick % historyFrames] = floorDb;
    let agentMaxDb = floorDb;
    for (let lag = 1; lag <= maxLagFrames; lag++) agentMaxDb = Math.max(agentMaxDb, this.agentAt(lag));
    // Nothing the agent played in the last 600 ms: whatever comes is the callee.
    if (agentMaxDb < agentActiveDb) return false;
    const calleeDb = received ? levelDb(samples) : floorDb;
    if (received) {
      this.correlate(calleeDb);
      this.noteEchoFree(calleeDb, agentMaxDb);
    }
    let echo: boolean;
    if (this.lagFrames > 0 && this.lossDb !== null) {
      const lag = this.lagFrames;
      // ±3 frames around the lag: a loaded machine's jitter buffers move the echo by more than one.
      let atLagDb = floorDb;
      for (let near = Math.max(1, lag - lagToleranceFrames); near <= lag + lagToleranceFrames; near++)
        atLagDb = Math.max(atLagDb, this.agentAt(near));
      echo = calleeDb < atLagDb + this.lossDb + marginDb;
      // The loss is measured on frames the echo explains (speech over it would inflate it).
      if (echo && this.agentAt(lag) >= agentActiveDb) this.noteLoss(calleeDb - this.agentAt(lag));
    } else {
      echo = !this.echoFree() && calleeDb < agentMaxDb - fallbackLossDb;
      if (this.lagFrames > 0 && this.agentAt(this.lagFrames) >= agentActiveDb)
        this.noteLoss(calleeDb - this.agentAt(this.lagFrames));
    }
    if (echo && calleeDb > floorDb) this.suppressed++;
    return echo;
  }

  stats(): EchoGuardStats {
    return {
      framesSuppressed: this.suppressed,
      echoDelayMs: this.lagFrames > 0 ? this.lagFrames * 20 : null,
      echoLossDb: this.lossDb === null ? null : Math.round(this.lossDb * 10) / 10,
    };
  }

  /** The line has shown no echo: the callee stayed quiet while the agent played. */
  private echoFree(): boolean {
    if (
      !this.noEchoSeen &&
      this.quietFrames >= echoFreeMinFrames &&
      this.echoingFrames * 4 < this.quietFrames
    )
      this.noEchoSeen = true;
    return this.noEchoSeen;
  }

  private noteEchoFree(calleeDb: number, agentMaxDb: number): void {
    // Only frames the agent was playing loud into say anything about the echo.
    if (this.noEchoSeen || agentMaxDb < agentActiveDb + 10) return;
    if (calleeDb < agentMaxDb - echoFreeGapDb) this.quietFrames++;
    else this.echoingFrames++;
  }

  /** The agent's level `lag` ticks before this one (lags past the history: silence). */
  private agentAt(lag: number): number {
    if (lag < 1 || lag > maxLagFrames + 1 || lag > this.tick) return floorDb;
    return this.agentDb[(this.tick - lag) % historyFrames] as number;
  }

  private correlate(calleeDb: number): void {
    this.activeFrames++;
    const weight = this.activeFrames < 1 / correlationWeight ? 1 / this.activeFrames : correlationWeight;
    let bestLag = 0;
    let bestCorrelation = lockCorrelation;
    for (let lag = 1; lag <= maxLagFrames; lag++) {
      const x = this.agentAt(lag);
      const y = calleeDb;
      const mx = ewma(this.meanX, lag, x, weight);
      const my = ewma(this.meanY, lag, y, weight);
      const mxx = ewma(this.meanXx, lag, x * x, weight);
      const myy = ewma(this.meanYy, lag, y * y, weight);
      const mxy = ewma(this.meanXy, lag, x * y, weight);
      const varianceX = mxx - mx * mx;
      const varianceY = myy - my * my;
      // A flat envelope (a silent callee, a tone) correlates with nothing.
      if (varianceX < 1 || varianceY < 1) continue;
      const correlation = (mxy - mx * my) / Math.sqrt(varianceX * varianceY);
      if (correlation > bestCorrelation) {
        bestCorrelation = correlation;
        bestLag = lag;
      }
    }
    if (this.activeFrames < lockMinFrames || bestLag === 0 || bestLag === this.lagFrames) return;
    // A neighbouring lag is the same path (the jitter buffers move it by a frame): its loss holds.
    const samePath = Math.abs(bestLag - this.lagFrames) <= 1;
    this.lagFrames = bestLag;
    if (samePath) return;
    // A new path: its loss is measured afresh.
    this.losses.length = 0;
    this.lossDb = null;
  }

  private noteLoss(differenceDb: number): void {
    this.losses.push(differenceDb);
    if (this.losses.length > lossSamples) this.losses.shift();
    if (this.losses.length < 10) return;
    const sorted = [...this.losses].sort((a, b) => a - b);
    this.lossDb = sorted[Math.floor(sorted.length / 2)] as number;
  }
}
