/**
 * Issue 37's campaign rules (caps per hour and day, holidays, contact priority) for PostgreSQL,
 * kept apart from migrations.ts so that parallel work appends without conflicts.
 */
export const postgresCampaignRulesMigrations: readonly { version: number; name: string; sql: string }[] = [
  {
    version: 372,
    name: 'campaign caps, holidays and contact priority',
    sql: `
      -- The campaign's calls per rolling hour and 24 h (null: no cap); its holiday calendar.
      ALTER TABLE campaigns ADD COLUMN max_calls_per_hour integer;
      ALTER TABLE campaigns ADD COLUMN max_calls_per_day integer;
      ALTER TABLE campaigns ADD COLUMN holidays jsonb;
      -- Higher first among due contacts.
      ALTER TABLE campaign_contacts ADD COLUMN priority integer NOT NULL DEFAULT 0;
      CREATE INDEX campaign_contacts_due_priority ON campaign_contacts (campaign_id, priority DESC, due_at, position)
        WHERE due_at IS NOT NULL;
      -- Every claim (an attempt started), written in the claim's own transaction by the trigger
      -- below, so the caps are counted in the same atomic step that claims (under the claim's
      -- advisory lock); a released claim (its call could not be written) is taken back.
      CREATE TABLE campaign_claims (
        call_id text COLLATE "C" PRIMARY KEY,
        campaign_id text COLLATE "C" NOT NULL,
        claimed_at timestamptz NOT NULL
      );
      CREATE INDEX campaign_claims_recent ON campaign_claims (campaign_id, claimed_at);
      INSERT INTO campaign_claims (call_id, campaign_id, claimed_at)
        SELECT call_id, campaign_id, claimed_at FROM campaign_contacts
        WHERE call_id IS NOT NULL AND claimed_at IS NOT NULL
        ON CONFLICT DO NOTHING;
      CREATE FUNCTION campaign_claims_follow() RETURNS trigger LANGUAGE plpgsql AS $body$
      BEGIN
        IF NEW.state = 'calling' AND OLD.state IS DISTINCT FROM 'calling' AND NEW.call_id IS NOT NULL
          AND NEW.claimed_at IS NOT NULL THEN
          INSERT INTO campaign_claims (call_id, campaign_id, claimed_at)
            VALUES (NEW.call_id, NEW.campaign_id, NEW.claimed_at) ON CONFLICT DO NOTHING;
        ELSIF OLD.state = 'calling' AND NEW.state IN ('pending', 'retry_wait')
          AND NEW.call_id IS DISTINCT FROM OLD.call_id THEN
          DELETE FROM campaign_claims WHERE call_id = OLD.call_id;
        END IF;
        RETURN NULL;
      END
      $body$;
      CREATE TRIGGER campaign_contacts_claims AFTER UPDATE OF state ON campaign_contacts
        FOR EACH ROW EXECUTE FUNCTION campaign_claims_follow();
    `,
  },
  {
    version: 374,
    name: 'campaign callbacks',
    sql: `
      -- The callback the callee asked for on the contact's current call (schedule_callback);
      -- it becomes the contact's next attempt when that call is settled.
      ALTER TABLE campaign_contacts ADD COLUMN callback_at timestamptz;
    `,
  },
];
