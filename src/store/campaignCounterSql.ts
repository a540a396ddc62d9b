import { attemptOutcomes, contactStates } from '../domain/campaigns.js';

/**
 * A campaign's progress (contacts by state, finished attempts by outcome) kept as counters in one
 * row per campaign, `campaign_counters`, maintained by triggers on `campaign_contacts` in the
 * transaction that changes a contact: reading progress is one primary-key read however many
 * contacts a campaign has (issue 34: a listing recounted every contact of every campaign shown).
 * Triggers, not application code, so no writer (scheduler, call worker, cancel, erasure, a future
 * one) can forget them, and a counter can never disagree with the rows it counts.
 *
 * One row per campaign, not one per (state, outcome): a contact's change then locks exactly one
 * counter row, so two transactions moving contacts in opposite directions (calling → retry_wait
 * and retry_wait → calling) cannot deadlock on the counters.
 */

export const counterColumns = [
  ...contactStates.map((state) => ({ column: `state_${state}`, field: 'state', value: state })),
  ...attemptOutcomes.map((outcome) => ({
    column: `outcome_${outcome}`,
    field: 'last_outcome',
    value: outcome,
  })),
] as const;

const columnList = counterColumns.map(({ column }) => column).join(', ');

function tableSql(integer: string, id: string): string {
  return `CREATE TABLE campaign_counters (
        campaign_id ${id} PRIMARY KEY,
        ${counterColumns.map(({ column }) => `${column} ${integer} NOT NULL DEFAULT 0`).join(',\n        ')}
      );`;
}

/** The counts of `source` rows (`campaign_id`, `state`, `last_outcome`, `sign`), by campaign. */
function sums(source: string): string {
  return `SELECT campaign_id, ${counterColumns
    .map(
      ({ column, field, value }) => `SUM(CASE WHEN ${field} = '${value}' THEN sign ELSE 0 END) AS ${column}`,
    )
    .join(', ')} FROM ${source} GROUP BY campaign_id`;
}

/** SQLite: row triggers (one writer at a time, so no lock order to keep). */
export function sqliteCampaignCountersSql(): string {
  const delta = (sign: '+' | '-', row: 'NEW' | 'OLD') =>
    counterColumns.map(
      ({ column, field, value }) => `${column} = ${column} ${sign} (${row}.${field} IS '${value}')`,
    );
  return `
      ${tableSql('INTEGER', 'TEXT')}
      INSERT INTO campaign_counters (campaign_id, ${columnList})
        ${sums('(SELECT campaign_id, state, last_outcome, 1 AS sign FROM campaign_contacts)')};
      CREATE TRIGGER campaign_contacts_count_insert AFTER INSERT ON campaign_contacts BEGIN
        INSERT OR IGNORE INTO campaign_counters (campaign_id) VALUES (NEW.campaign_id);
        UPDATE campaign_counters SET ${delta('+', 'NEW').join(', ')} WHERE campaign_id = NEW.campaign_id;
      END;
      CREATE TRIGGER campaign_contacts_count_update AFTER UPDATE OF state, last_outcome ON campaign_contacts
        WHEN OLD.state IS NOT NEW.state OR OLD.last_outcome IS NOT NEW.last_outcome BEGIN
        UPDATE campaign_counters SET ${counterColumns
          .map(
            ({ column, field, value }) =>
              `${column} = ${column} + (NEW.${field} IS '${value}') - (OLD.${field} IS '${value}')`,
          )
          .join(', ')} WHERE campaign_id = NEW.campaign_id;
      END;
      CREATE TRIGGER campaign_contacts_count_delete AFTER DELETE ON campaign_contacts BEGIN
        UPDATE campaign_counters SET ${delta('-', 'OLD').join(', ')} WHERE campaign_id = OLD.campaign_id;
      END;
    `;
}

/**
 * PostgreSQL: statement triggers with transition tables, so inserting a campaign's 100,000
 * contacts updates its counter row once, not 100,000 times; counter rows are locked in campaign
 * order when one statement touches several campaigns (an erasure).
 */
export function postgresCampaignCountersSql(): string {
  const apply = (name: string, changes: string) => `
      CREATE FUNCTION ${name}() RETURNS trigger LANGUAGE plpgsql AS $body$
      BEGIN
        INSERT INTO campaign_counters (campaign_id, ${columnList})
          ${sums(`(${changes}) AS changes`)} ORDER BY campaign_id
        ON CONFLICT (campaign_id) DO UPDATE SET ${counterColumns
          .map(({ column }) => `${column} = campaign_counters.${column} + EXCLUDED.${column}`)
          .join(', ')};
        RETURN NULL;
      END
      $body$;`;
  const changed = 'n.state IS DISTINCT FROM o.state OR n.last_outcome IS DISTINCT FROM o.last_outcome';
  return `
      ${tableSql('bigint', 'text COLLATE "C"')}
      INSERT INTO campaign_counters (campaign_id, ${columnList})
        ${sums('(SELECT campaign_id, state, last_outcome, 1 AS sign FROM campaign_contacts) AS existing')};
      ${apply('campaign_counters_inserted', 'SELECT campaign_id, state, last_outcome, 1 AS sign FROM new_rows')}
      ${apply(
        'campaign_counters_updated',
        `SELECT n.campaign_id, n.state, n.last_outcome, 1 AS sign FROM new_rows n JOIN old_rows o USING (id) WHERE ${changed}
         UNION ALL
         SELECT o.campaign_id, o.state, o.last_outcome, -1 AS sign FROM old_rows o JOIN new_rows n USING (id) WHERE ${changed}`,
      )}
      ${apply('campaign_counters_deleted', 'SELECT campaign_id, state, last_outcome, -1 AS sign FROM old_rows')}
      CREATE TRIGGER campaign_contacts_count_insert AFTER INSERT ON campaign_contacts
        REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION campaign_counters_inserted();
      CREATE TRIGGER campaign_contacts_count_update AFTER UPDATE ON campaign_contacts
        REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows
        FOR EACH STATEMENT EXECUTE FUNCTION campaign_counters_updated();
      CREATE TRIGGER campaign_contacts_count_delete AFTER DELETE ON campaign_contacts
        REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION campaign_counters_deleted();
    `;
}
