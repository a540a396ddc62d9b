/** The store's port for agents' hold audio files (src/store/types.ts re-exports it). */

/** An agent's hold audio: 8 kHz G.711 mu-law, as validated and converted at upload. */
export interface StoredHoldAudio {
  mulaw: Uint8Array;
  durationMs: number;
}

export interface HoldAudioRepository {
  /** Stores (or replaces) the agent's hold audio; the agent must be the account's. */
  put(accountId: string, agentId: string, audio: StoredHoldAudio, nowIso: string): Promise<void>;
  /** The agent's hold audio, or null when none was uploaded. */
  get(accountId: string, agentId: string): Promise<StoredHoldAudio | null>;
  /** Forgets it; false when there was none. */
  remove(accountId: string, agentId: string): Promise<boolean>;
}
