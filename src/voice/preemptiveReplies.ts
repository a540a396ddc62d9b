import type { Logger } from '../logger.js';
import type { AgentReplies } from './agentReplies.js';
import type { AgentBrain, BrainDraft, CalleeTurn } from './brains/types.js';
import type { TurnTimeline } from './turnTimeline.js';

/**
 * Words a recogniser changes between its partial and its final hypothesis without changing what
 * was said: hesitations. (Case and punctuation are ignored too; see `sameWords`.)
 */
const fillerWords = new Set(['um', 'uh', 'erm', 'er', 'hmm', 'mm', 'uhm', 'ah']);

/** The words of `text` for comparison: lower case, no punctuation, no fillers. */
function wordsOf(text: string): string {
  return text
    .toLowerCase()
    .replace(/[^\p{L}\p{N}' ]+/gu, ' ')
    .split(/\s+/)
    .map((word) => word.replace(/^'+|'+$/g, ''))
    .filter((word) => word && !fillerWords.has(word))
    .join(' ');
}

/**
 * True when a partial and a final transcript say the same words: equal once case, punctuation and
 * filler words ("um", "uh", "erm", "er", "hmm", "mm", "ah") are set aside. Anything else — a word
 * more, a word less, a word heard differently — is different words, and a reply to them is dropped.
 */
export function sameWords(partial: string, final: string): boolean {
  const words = wordsOf(partial);
  return words !== '' && words === wordsOf(final);
}

interface AheadReply {
  /** The words it answers (the callee's partial transcript when they went quiet). */
  words: string;
  draft: BrainDraft;
  cancel: () => void;
  /** Lets it play (kept) or lets it wind down (dropped); it waits on nothing else. */
  openGate: () => void;
  signal: AbortSignal | null;
  /** Settles once the reply is over (played, cut or dropped). */
  over: Promise<unknown>;
}

/**
 * The agent's replies to callee turns, with preemptive generation. When the callee goes quiet
 * with words recognised so far (a partial transcript), a reply to those words starts at once — the
 * model, and the voice's synthesis of its first sentences — in parallel with the end-of-turn
 * decision and the recogniser's final; nothing of it is played or done (no key, no tool, no
 * hang-up) until the final transcript arrives. It is kept when the final says the same words
 * (`sameWords`), else dropped unheard (the brain forgets it: `BrainDraft`) and the reply starts
 * again on the final. The latest turn's reply can also be taken back while nothing of it has been
 * heard (the callee went on after a pause inside one answer). A brain without drafts (the script
 * brain) gets its turns as before: one reply, on the final transcript.
 */
export class PreemptiveReplies {
  private ahead: AheadReply | null = null;
  /** Replies of ours cancelled and not yet over. */
  private windingDown = 0;
  /** The reply to the latest callee turn, while it may still be taken back. */
  private latest: { draft: BrainDraft; cancel: () => void; over: Promise<unknown> } | null = null;

  constructor(
    private readonly options: {
      brain: AgentBrain;
      replies: AgentReplies;
      timeline: TurnTimeline;
      logger: Logger;
    },
  ) {}

  /**
   * The callee's words so far, each frame of their turn; `quiet`: they have gone quiet. A reply
   * begun on other words is dropped; on quiet, one is begun on these (unless the agent is busy).
   */
  follow(words: string, quiet: boolean): void {
    const { brain, replies, timeline } = this.options;
    if (this.ahead && !sameWords(this.ahead.words, words)) this.drop();
    // Never over a reply of the agent's own (one of ours dropped and still winding down is none).
    const busy = replies.active && this.windingDown === 0;
    if (!quiet || this.ahead || !brain.draft || busy || wordsOf(words) === '') return;
    timeline.replyAhead();
    const draft = brain.draft();
    let openGate = () => {};
    const gate = new Promise<void>((resolve) => {
      openGate = resolve;
    });
    const ahead: AheadReply = {
      words,
      draft,
      cancel: () => {},
      openGate,
      signal: null,
      over: Promise.resolve(),
    };
    this.ahead = ahead;
    ahead.cancel = replies.run(
      (signal) => {
        ahead.signal = signal;
        // Cut for any reason (the call ended, a machine answered): nothing waits on the gate.
        signal.addEventListener('abort', openGate, { once: true });
        return brain.onCalleeTurn({ text: words }, signal);
      },
      'agent_hangup',
      true,
      gate,
    );
    ahead.over = replies.lastLine;
  }

  /**
   * The callee's turn is final: the reply begun ahead is kept when it answers the same words,
   * otherwise it is dropped and the brain answers `turn` now.
   */
  answer(turn: CalleeTurn): void {
    const { brain, replies, timeline, logger } = this.options;
    const ahead = this.ahead;
    if (ahead) {
      this.ahead = null;
      if (sameWords(ahead.words, turn.text) && !ahead.signal?.aborted) {
        ahead.draft.keep(turn.text);
        ahead.openGate();
        timeline.preemptiveReply('used');
        this.latest = { draft: ahead.draft, cancel: ahead.cancel, over: ahead.over };
        return;
      }
      logger.debug('the final transcript differs from the words answered ahead; answering again');
      this.dropReply(ahead);
      timeline.dropReplyAhead();
      timeline.preemptiveReply('discarded');
    }
    const draft = brain.draft?.() ?? null;
    const cancel = replies.run((signal) => brain.onCalleeTurn(turn, signal), 'agent_hangup', true);
    this.latest = draft ? { draft, cancel, over: replies.lastLine } : null;
  }

  /** Drops the reply begun ahead, if any (the words changed, the turn was not answered). */
  drop(): void {
    const ahead = this.ahead;
    if (!ahead) return;
    this.ahead = null;
    this.dropReply(ahead);
    this.options.timeline.dropReplyAhead();
  }

  /**
   * Takes back the reply to the latest callee turn (and any begun ahead): the brain forgets the
   * turn and the reply. False when it cannot (a brain without drafts, or nothing to take back).
   */
  takeBackLatest(): boolean {
    const latest = this.latest;
    this.latest = null;
    const hadAhead = this.ahead !== null;
    this.drop();
    if (!latest) return hadAhead;
    this.windingDown++;
    void latest.over.finally(() => this.windingDown--);
    latest.cancel();
    latest.draft.drop();
    return true;
  }

  /** The latest turn's reply can no longer be taken back (it was heard, or another one began). */
  settleLatest(): void {
    this.latest = null;
  }

  private dropReply(ahead: AheadReply): void {
    this.windingDown++;
    void ahead.over.finally(() => this.windingDown--);
    ahead.cancel();
    ahead.draft.drop();
    ahead.openGate();
  }
}
