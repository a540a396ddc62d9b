import type { HoldAudioRepository, StoredHoldAudio } from '../holdAudioRepository.js';
import type { StoreQueries } from './dialects.js';

/** Agents' hold audio files (table agent_hold_audio), for both dialects. */
export class KyselyHoldAudio implements HoldAudioRepository {
  constructor(private readonly queries: StoreQueries) {}

  async put(accountId: string, agentId: string, audio: StoredHoldAudio, nowIso: string): Promise<void> {
    const values = { mulaw: audio.mulaw, duration_ms: audio.durationMs, updated_at: nowIso };
    await this.queries.db
      .insertInto('agent_hold_audio')
      .values({ agent_id: agentId, account_id: accountId, ...values })
      .onConflict((conflict) =>
        conflict.column('agent_id').doUpdateSet(values).where('agent_hold_audio.account_id', '=', accountId),
      )
      .execute();
  }

  async get(accountId: string, agentId: string): Promise<StoredHoldAudio | null> {
    const row = await this.queries.db
      .selectFrom('agent_hold_audio')
      .select(['mulaw', 'duration_ms'])
      .where('agent_id', '=', agentId)
      .where('account_id', '=', accountId)
      .executeTakeFirst();
    return row ? { mulaw: new Uint8Array(row.mulaw), durationMs: Number(row.duration_ms) } : null;
  }

  async remove(accountId: string, agentId: string): Promise<boolean> {
    const result = await this.queries.db
      .deleteFrom('agent_hold_audio')
      .where('agent_id', '=', agentId)
      .where('account_id', '=', accountId)
      .executeTakeFirst();
    return Number(result.numDeletedRows) > 0;
  }
}
