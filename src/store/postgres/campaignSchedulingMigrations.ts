/**
 * Issue 37's PostgreSQL schema change, kept apart from migrations.ts so that parallel work appends
 * without conflicts. Append-only like the rest; its version is chosen clear of the main sequence.
 */
export const postgresCampaignSchedulingMigrations: readonly { version: number; name: string; sql: string }[] =
  [
    {
      version: 37,
      name: 'campaign waiting reasons and pause events',
      sql: `
      -- Why a contact waits (window, daily_cap, or a queued call's quiet_hours, dial_rate,
      -- account_live_calls); the reasons that follow from the campaign (paused, starts_at, pace,
      -- concurrency, retry) are derived when read.
      ALTER TABLE campaign_contacts ADD COLUMN waiting_reason text;
      -- Why a campaign is paused (requested, api_key_revoked), null otherwise.
      ALTER TABLE campaigns ADD COLUMN status_reason text;
      -- campaign.paused may come more than once per campaign (paused, resumed, paused again);
      -- campaign.completed and campaign.canceled still come at most once.
      DROP INDEX events_once_per_campaign;
      CREATE UNIQUE INDEX events_once_per_campaign ON events (campaign_id, type)
        WHERE campaign_id IS NOT NULL AND type <> 'campaign.paused';
    `,
    },
  ];
