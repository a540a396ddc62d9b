import { defaultCallerIdHealth } from '../domain/callerIdHealth.js';
import { liveStatuses, pickedUpSql, rangStatuses } from './campaignFiguresSql.js';

/**
 * Caller-ID health (issue 37, src/domain/callerIdHealth.ts): each caller ID's last
 * `windowAttempts` finished attempts in a campaign, kept in `campaign_caller_ids.recent` as a
 * string of '1' (answered by a person) and '0' (anything else: busy, no answer, failed,
 * voicemail), oldest first. A trigger on `calls` appends the call's outcome in the transaction
 * that finishes the call — the same moment and the same rule (answered, not voicemail) as the
 * campaign figures — and cuts the string to the campaign's live window, so reading a number's
 * rate is one row, never a count over calls. `ON CONFLICT DO UPDATE` appends atomically however
 * many completions commit at once. `rested_until`: the number is out of the campaign's rotation
 * until then; the rest is written by `restCallerId` (src/store/kysely/callerIdHealth.ts).
 */

const table = (text: string, time: string) => `
      CREATE TABLE campaign_caller_ids (
        campaign_id ${text} NOT NULL,
        caller_id ${text} NOT NULL,
        recent ${text} NOT NULL DEFAULT '',
        rested_until ${time},
        PRIMARY KEY (campaign_id, caller_id)
      );
      -- The campaign's caller-ID health settings (JSON; null: the defaults).
      ALTER TABLE campaigns ADD COLUMN caller_id_health ${text === 'TEXT' ? 'TEXT' : 'jsonb'};
      -- number.rested comes once per rest, many times per campaign (like campaign.paused).
      DROP INDEX events_once_per_campaign;
      CREATE UNIQUE INDEX events_once_per_campaign ON events (campaign_id, type)
        WHERE campaign_id IS NOT NULL AND type NOT IN ('campaign.paused', 'number.rested');`;

function answeredBit(c: string): string {
  const { pickedUp, voicemail } = pickedUpSql(c);
  return `CASE WHEN ${pickedUp} AND NOT COALESCE(${voicemail}, FALSE) THEN '1' ELSE '0' END`;
}

const append = (windowOf: string, keepLast: (text: string, chars: string) => string) => `
        INSERT INTO campaign_caller_ids (campaign_id, caller_id, recent)
          SELECT a.campaign_id, NEW.from_number, ${answeredBit('NEW')}
          FROM campaign_attempts a WHERE a.call_id = NEW.id
          ON CONFLICT (campaign_id, caller_id) DO UPDATE SET recent = ${keepLast(
            'campaign_caller_ids.recent || EXCLUDED.recent',
            `(SELECT ${windowOf} FROM campaigns WHERE campaigns.id = campaign_caller_ids.campaign_id)`,
          )};`;

export function sqliteCallerIdHealthSql(): string {
  const windowOf = `COALESCE(json_extract(caller_id_health, '$.windowAttempts'), ${defaultCallerIdHealth.windowAttempts})`;
  return `${table('TEXT', 'TEXT')}
      CREATE TRIGGER calls_campaign_caller_id_window AFTER UPDATE OF status ON calls
        WHEN OLD.status IN ${liveStatuses} AND NEW.status IN ${rangStatuses} BEGIN
        ${append(windowOf, (text, chars) => `substr(${text}, -${chars})`)}
      END;`;
}

export function postgresCallerIdHealthSql(): string {
  const windowOf = `COALESCE((caller_id_health ->> 'windowAttempts')::int, ${defaultCallerIdHealth.windowAttempts})`;
  return `${table('text COLLATE "C"', 'timestamptz')}
      CREATE FUNCTION campaign_caller_id_window_of_finished_call() RETURNS trigger LANGUAGE plpgsql AS $body$
      BEGIN
        ${append(windowOf, (text, chars) => `right(${text}, ${chars})`)}
        RETURN NULL;
      END
      $body$;
      CREATE TRIGGER calls_campaign_caller_id_window AFTER UPDATE OF status ON calls FOR EACH ROW
        WHEN (OLD.status IN ${liveStatuses} AND NEW.status IN ${rangStatuses})
        EXECUTE FUNCTION campaign_caller_id_window_of_finished_call();`;
}
