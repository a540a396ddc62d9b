/** The ports of the store for dial caps and data rules (src/store/types.ts re-exports them). */

export const dialRateScopes = ['caller_id', 'trunk'] as const;
export type DialRateScope = (typeof dialRateScopes)[number];

/** A cap on calls per second leaving one caller ID (`subject`: the number) or one trunk (its name). */
export interface DialRate {
  scope: DialRateScope;
  subject: string;
  callsPerSecond: number;
}

export interface DialRateRepository {
  list(accountId: string): Promise<DialRate[]>;
  /** Every account's caps (a small table: the dispatcher keeps it in memory a few seconds). */
  listAll(): Promise<(DialRate & { accountId: string })[]>;
  /** Sets a cap, or removes it with `callsPerSecond: null`. */
  set(
    accountId: string,
    rate: DialRate | { scope: DialRateScope; subject: string; callsPerSecond: null },
  ): Promise<void>;
  /** The account's quiet hours (local `HH:MM` start and end, the zone for numbers without one), or null. */
  quietHours(accountId: string): Promise<QuietHoursRule | null>;
  /** Every account's quiet hours (a small table: the dispatcher keeps it in memory a few seconds). */
  allQuietHours(): Promise<(QuietHoursRule & { accountId: string })[]>;
  setQuietHours(accountId: string, hours: QuietHoursRule | null): Promise<void>;
}

/** An account's quiet hours as set: no call starts from `start` to `end`, local to the callee. */
export interface QuietHoursRule {
  start: string;
  end: string;
  timeZone: string;
}

/** A record of an action on personal data (an erasure), kept without the data itself. */
export interface AuditEntry {
  id: string;
  accountId: string;
  action: string;
  /** Who asked: `api_key:key_…`, `user:usr_…`, `cli`. */
  actor: string;
  /** What it was about, masked (a phone number keeps its first and last digits). */
  subject: string;
  detail: Record<string, unknown>;
  createdAt: string;
}

export interface PrivacyRepository {
  /**
   * The account's calls to a number (any status), and the agent-test replays of those calls (they
   * played the callee's recorded voice), with their recording locations.
   */
  callsOfNumber(
    accountId: string,
    number: string,
  ): Promise<{ id: string; status: string; recordingPath: string | null }[]>;
  /**
   * Deletes the ended calls among `callIds` with their events, delivery attempts and campaign
   * attempts, the number's campaign contacts not on a call, and its sandbox INVITE log. Repeatable.
   */
  eraseNumber(
    accountId: string,
    number: string,
    callIds: readonly string[],
  ): Promise<{ calls: number; contacts: number }>;
  /**
   * After an erasure: makes the storage let go of the erased bytes — SQLite checkpoints its WAL
   * into the file (whose deleted content `secure_delete` has zeroed) and truncates it; PostgreSQL
   * vacuums the tables an erasure touches (docs/decisions.md says what that does and does not do).
   */
  reclaimErased(): Promise<void>;
  addAudit(entry: AuditEntry): Promise<void>;
  /** Newest first, strictly before the `before` id. */
  listAudit(accountId: string, options: { limit: number; before?: string }): Promise<AuditEntry[]>;
  retentionDays(accountId: string): Promise<number | null>;
  /** Null: keep transcripts and recordings (the default). */
  setRetentionDays(accountId: string, days: number | null, atIso: string): Promise<void>;
  retentionRules(): Promise<{ accountId: string; days: number }[]>;
  /** Calls that ended before `endedBeforeIso` whose transcript and recording are still kept. */
  callsPastRetention(
    accountId: string,
    endedBeforeIso: string,
    limit: number,
  ): Promise<{ id: string; recordingPath: string | null }[]>;
  /** Empties the calls' transcripts (in their events too) and forgets their recordings. */
  scrubCalls(callIds: readonly string[], atIso: string): Promise<void>;
}
