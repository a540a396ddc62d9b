/**
 * Issue 37's campaign rules (caps per hour and day, holidays, contact priority) for SQLite, kept
 * apart from migrations.ts so that parallel work appends without conflicts.
 */
export const sqliteCampaignRulesMigrations: readonly { version: number; name: string; sql: string }[] = [
  {
    version: 372,
    name: 'campaign caps, holidays and contact priority',
    sql: `
      -- The campaign's calls per rolling hour and 24 h (null: no cap); its holiday calendar (JSON).
      ALTER TABLE campaigns ADD COLUMN max_calls_per_hour INTEGER;
      ALTER TABLE campaigns ADD COLUMN max_calls_per_day INTEGER;
      ALTER TABLE campaigns ADD COLUMN holidays TEXT;
      -- Higher first among due contacts.
      ALTER TABLE campaign_contacts ADD COLUMN priority INTEGER NOT NULL DEFAULT 0;
      CREATE INDEX campaign_contacts_due_priority ON campaign_contacts (campaign_id, priority DESC, due_at, position)
        WHERE due_at IS NOT NULL;
      -- Every claim (an attempt started), written by the claim's own statement through the trigger
      -- below, so the caps are counted in the same atomic step that claims; a released claim (its
      -- call could not be written) is taken back.
      CREATE TABLE campaign_claims (
        call_id TEXT PRIMARY KEY,
        campaign_id TEXT NOT NULL,
        claimed_at TEXT NOT NULL
      );
      CREATE INDEX campaign_claims_recent ON campaign_claims (campaign_id, claimed_at);
      INSERT OR IGNORE INTO campaign_claims (call_id, campaign_id, claimed_at)
        SELECT call_id, campaign_id, claimed_at FROM campaign_contacts
        WHERE call_id IS NOT NULL AND claimed_at IS NOT NULL;
      CREATE TRIGGER campaign_contacts_claimed AFTER UPDATE OF state ON campaign_contacts
        WHEN NEW.state = 'calling' AND OLD.state IS NOT 'calling' AND NEW.call_id IS NOT NULL BEGIN
        INSERT OR IGNORE INTO campaign_claims (call_id, campaign_id, claimed_at)
          VALUES (NEW.call_id, NEW.campaign_id, NEW.claimed_at);
      END;
      CREATE TRIGGER campaign_contacts_claim_released AFTER UPDATE OF state ON campaign_contacts
        WHEN OLD.state = 'calling' AND NEW.state IN ('pending', 'retry_wait')
          AND NEW.call_id IS NOT OLD.call_id BEGIN
        DELETE FROM campaign_claims WHERE call_id = OLD.call_id;
      END;
    `,
  },
  {
    version: 374,
    name: 'campaign callbacks',
    sql: `
      -- The callback the callee asked for on the contact's current call (schedule_callback);
      -- it becomes the contact's next attempt when that call is settled.
      ALTER TABLE campaign_contacts ADD COLUMN callback_at TEXT;
    `,
  },
];
