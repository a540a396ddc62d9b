import type { Browser } from 'playwright-core';

export interface PageWebCallResult {
  callId?: string;
  error?: string;
  ended?: 'hung_up' | 'ended' | 'failed' | 'limit';
  /** How many times the visitor answered (1 unless the agent asked again). */
  answers?: number;
  connectMs?: number;
  jitterBufferMs?: number | null;
  greetingMs?: number | null;
  voiceToVoiceMs?: number | null;
}

export function webCallsFromOnePage(
  browser: Browser,
  options: {
    serviceUrl: string;
    tokens: string[];
    agentId: string;
    answerWav: Uint8Array;
    spreadMs?: number;
    calibrate?: boolean;
    /** Answer each agent turn, up to this many times (default 1: the greeting only). */
    maxAnswers?: number;
    replyAfterQuietMs?: number;
    callLimitMs?: number;
    /** The agent's audio mixed back into the visitor's microphone (speakers without AEC). */
    echo?: { delayMs: number; lossDb: number };
  },
): Promise<{ results: PageWebCallResult[]; browserOwnPathMs: number | null; baseLatencyMs: number | null }>;

export const webCallChromiumArgs: string[];
