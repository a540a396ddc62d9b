import type { TurnTakingSettings } from '../domain/turnTakingSettings.js';
import type { Logger } from '../logger.js';
import { frameLevelDb } from './ivrLoopGuard.js';
import type { FinalTranscript, SpeechToText, SpeechToTextSession } from './providers/index.js';
import { endOfTurnWaitMs, type TurnShape, turnShapeOf } from './turnShape.js';

/** Frame levels kept per utterance: 60 s (a longer one is no phone-menu prompt). */
const maxLevelFrames = 3_000;

/**
 * One stretch of the callee's speech, from the VAD's speech start to the end of their turn: its
 * recognition session (fed the frames before the start too), what its words so far say about the
 * turn (which sets how long a silence ends it), and whether it was spoken over the agent.
 */
export class CalleeUtterance {
  readonly speechStartMs: number;
  /** It began while the agent was speaking (or about to): a backchannel until it proves otherwise. */
  overlapped: boolean;
  /** It interrupted the agent. */
  bargedIn = false;
  /** Set when the turn was cut at the longest utterance. */
  endedBy: 'max_utterance' | null = null;
  shape: TurnShape = 'unknown';
  /** The recogniser said the speech is over, and has heard no more words since. */
  recognizerEnded = false;
  private readonly session: Promise<SpeechToTextSession>;
  /** The level of each frame heard (dB), for the phone-menu loop guard: a recording repeats its contour. */
  readonly levelsDb: number[] = [];
  /** The recogniser's latest hypothesis. */
  latest = '';
  private endedOn = '';
  /**
   * The callee's turn before this one, when this speech goes on with it (a pause inside one
   * answer, the reply to it not yet heard): the two are one turn.
   */
  continues: CalleeUtterance | null = null;
  /** Another utterance goes on with this one: its words are that turn's, not a turn of their own. */
  superseded = false;
  /** What the recogniser made of it in the end ('' when nothing, or recognition failed). */
  readonly heardText: Promise<string>;
  private settleHeard: (text: string) => void = () => {};

  constructor(
    private readonly options: {
      stt: SpeechToText;
      phrases: string[] | undefined;
      preRoll: Int16Array[];
      speechStartMs: number;
      overlapped: boolean;
      settings: TurnTakingSettings;
      /** Sets the silence that ends this turn (see EndOfTurnDetector.setTurnWindow). */
      setTurnWindow: (silenceMs: number) => void;
      logger: Logger;
    },
  ) {
    this.speechStartMs = options.speechStartMs;
    this.overlapped = options.overlapped;
    this.heardText = new Promise((resolve) => {
      this.settleHeard = resolve;
    });
    const { phrases } = options;
    for (const frame of options.preRoll) this.noteLevel(frame);
    this.session = options.stt.startSession(phrases ? { phrases } : {}).then((opened) => {
      opened.onPartial((partial) => {
        this.latest = partial.text;
        // The recogniser ended the speech, then heard more words after all.
        if (this.recognizerEnded && this.latest.length > this.endedOn.length) this.recognizerEnded = false;
        this.reshape();
      });
      opened.onEndOfSpeech?.(() => {
        this.recognizerEnded = true;
        this.endedOn = this.latest;
        this.reshape();
      });
      for (const frame of options.preRoll) opened.pushAudio(frame);
      return opened;
    });
    this.session.catch((error: unknown) => options.logger.warn({ err: error }, 'STT session failed'));
  }

  pushAudio(frame: Int16Array): void {
    this.noteLevel(frame);
    void this.session.then((session) => session.pushAudio(frame)).catch(() => undefined);
  }

  /** The words so far, with those of the turn this one goes on with. */
  get words(): string {
    return [this.continues?.words ?? '', this.latest].filter(Boolean).join(' ');
  }

  /** The final transcript of the utterance; the session is closed after it. */
  async finish(): Promise<FinalTranscript> {
    let text = '';
    try {
      const session = await this.session;
      try {
        const heard = await session.finish();
        text = heard.text.trim();
        return heard;
      } finally {
        session.close();
      }
    } finally {
      this.settleHeard(text);
    }
  }

  /** Drops the utterance unheard (a backchannel under the agent's speech). */
  discard(): void {
    this.settleHeard('');
    void this.session.then((session) => session.close()).catch(() => undefined);
  }

  private noteLevel(frame: Int16Array): void {
    if (this.levelsDb.length < maxLevelFrames) this.levelsDb.push(frameLevelDb(frame));
  }

  private reshape(): void {
    this.shape = turnShapeOf({
      text: this.latest,
      ...(this.options.phrases ? { expectedPhrases: this.options.phrases } : {}),
      recognizerEnded: this.recognizerEnded,
    });
    this.options.setTurnWindow(endOfTurnWaitMs(this.shape, this.options.settings));
  }
}
