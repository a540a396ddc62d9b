/** One INVITE the sandbox received (a new Call-ID; retransmissions are not recorded again). */
export interface InviteLogEntry {
  readonly sipCallId: string;
  /** The user part of the Request-URI, as sent (an E.164 number from the dispatcher). */
  readonly toNumber: string;
  /** ISO 8601. */
  readonly receivedAt: string;
}

/** Where the sandbox records every INVITE, so tests can prove no call was dialled twice. */
export interface InviteLog {
  record(entry: InviteLogEntry): Promise<void>;
}

/** An InviteLog in memory, for tests. */
export class MemoryInviteLog implements InviteLog {
  private readonly recorded: InviteLogEntry[] = [];

  async record(entry: InviteLogEntry): Promise<void> {
    this.recorded.push({ ...entry });
  }

  /** Every entry, oldest first. */
  get entries(): readonly InviteLogEntry[] {
    return this.recorded;
  }

  /** Entries of one Call-ID (more than one would mean a call was dialled twice). */
  entriesFor(sipCallId: string): InviteLogEntry[] {
    return this.recorded.filter((entry) => entry.sipCallId === sipCallId);
  }

  /** Call-IDs recorded more than once. */
  duplicateCallIds(): string[] {
    const counts = new Map<string, number>();
    for (const entry of this.recorded) counts.set(entry.sipCallId, (counts.get(entry.sipCallId) ?? 0) + 1);
    return [...counts].filter(([, count]) => count > 1).map(([callId]) => callId);
  }
}
