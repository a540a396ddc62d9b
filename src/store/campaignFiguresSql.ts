/**
 * A campaign's figures (issue 37): attempts, connected time, cost, answers, voicemails and
 * successes, kept per (campaign, caller ID, hour of the callee's local day) in `campaign_figures`
 * by a trigger on `calls`, in the transaction that finishes the call. Reading them is one indexed
 * read of at most (caller IDs × 24) rows, whatever the number of contacts or calls; the overall,
 * per-caller-ID and per-hour figures are sums of those rows.
 *
 * Counted once per call, when it moves from a live status to a finished one (`finish` writes the
 * status, timestamps, metrics and analysis in that one UPDATE), and only for calls that rang out:
 * a call canceled before it was dialled (cancel, do-not-call, outside calling hours) is no attempt.
 * The local hour was fixed when the attempt was recorded (`campaign_attempts.local_hour`; -1 for
 * attempts made before this migration). Erasure deletes calls, not figures: the figures carry no
 * number, only sums.
 *
 * Both stores upsert with `ON CONFLICT DO UPDATE`, which on PostgreSQL adds atomically however
 * many call completions commit at once (one row per completion is locked: no lock order to keep).
 */

export const liveStatuses = "('queued', 'dialing', 'ringing', 'in_progress')";
export const rangStatuses = "('completed', 'busy', 'no_answer', 'failed')";
export const figureColumns = [
  'attempts',
  'connected_ms',
  'cost_micro_usd',
  'answered',
  'voicemail',
  'succeeded',
] as const;

const addOnConflict = figureColumns
  .map((column) => `${column} = campaign_figures.${column} + EXCLUDED.${column}`)
  .join(', ');

/** A call's contributions, as SQL over the call row `c` (dialect-specific pieces passed in). */
/** Whether the finished call row `c` was picked up, and by a machine; SQL. */
export function pickedUpSql(c: string): { pickedUp: string; voicemail: string } {
  return {
    voicemail: `(${c}.end_reason = 'voicemail' OR ${c}.answered_by = 'machine')`,
    pickedUp: `${c}.status NOT IN ('busy', 'no_answer', 'failed')`,
  };
}

function contributions(pieces: { connectedMs: string; costUsd: string; passed: string }, c: string) {
  const { voicemail, pickedUp } = pickedUpSql(c);
  return {
    attempts: '1',
    connected_ms: pieces.connectedMs,
    cost_micro_usd: `COALESCE(ROUND(${pieces.costUsd} * 1000000), 0)`,
    answered: `CASE WHEN ${pickedUp} AND NOT COALESCE(${voicemail}, FALSE) THEN 1 ELSE 0 END`,
    voicemail: `CASE WHEN ${pickedUp} AND COALESCE(${voicemail}, FALSE) THEN 1 ELSE 0 END`,
    succeeded: `CASE WHEN ${pieces.passed} THEN 1 ELSE 0 END`,
  };
}

function tableSql(integer: string, text: string): string {
  return `CREATE TABLE campaign_figures (
        campaign_id ${text} NOT NULL,
        caller_id ${text} NOT NULL,
        local_hour integer NOT NULL,
        ${figureColumns.map((column) => `${column} ${integer} NOT NULL DEFAULT 0`).join(',\n        ')},
        PRIMARY KEY (campaign_id, caller_id, local_hour)
      );`;
}

const sqlitePieces = (c: string) => ({
  connectedMs: `COALESCE(CAST(ROUND((julianday(${c}.ended_at) - julianday(${c}.in_progress_at)) * 86400000) AS INTEGER), 0)`,
  costUsd: `json_extract(${c}.metrics, '$.cost.total_usd')`,
  passed: `COALESCE(json_extract(${c}.analysis, '$.success.passed'), 0) = 1`,
});

const postgresPieces = (c: string) => ({
  connectedMs: `COALESCE(ROUND(EXTRACT(EPOCH FROM (${c}.ended_at - ${c}.in_progress_at)) * 1000), 0)`,
  costUsd: `(${c}.metrics -> 'cost' ->> 'total_usd')::numeric`,
  passed: `COALESCE(${c}.analysis -> 'success' ->> 'passed', '') = 'true'`,
});

/** Sums of `contributions` of the rows of `from` (which names the call `c` and attempt `a`). */
function summedInsert(pieces: ReturnType<typeof sqlitePieces>, from: string, hour: string): string {
  const values = contributions(pieces, 'c');
  return `INSERT INTO campaign_figures (campaign_id, caller_id, local_hour, ${figureColumns.join(', ')})
        SELECT a.campaign_id, c.from_number, ${hour}, ${figureColumns
          .map((column) => `SUM(${values[column]})`)
          .join(', ')}
        ${from}
        GROUP BY 1, 2, 3
        ORDER BY 1, 2, 3
        ON CONFLICT (campaign_id, caller_id, local_hour) DO UPDATE SET ${addOnConflict}`;
}

const attemptColumns = (time: string) => `
      -- When a contact was removed from its campaign (a live edit): never dialled again.
      ALTER TABLE campaign_contacts ADD COLUMN removed_at ${time};
      -- The hour of the callee's local day the attempt was made in (0-23), for the figures.
      ALTER TABLE campaign_attempts ADD COLUMN local_hour integer;`;

const backfillFrom = `FROM calls c JOIN campaign_attempts a ON a.call_id = c.id WHERE c.status IN ${rangStatuses}`;

export function sqliteCampaignFiguresSql(): string {
  const values = contributions(sqlitePieces('NEW'), 'NEW');
  return `${attemptColumns('TEXT')}
      ${tableSql('INTEGER', 'TEXT')}
      ${summedInsert(sqlitePieces('c'), backfillFrom, '-1')};
      CREATE TRIGGER calls_campaign_figures AFTER UPDATE OF status ON calls
        WHEN OLD.status IN ${liveStatuses} AND NEW.status IN ${rangStatuses} BEGIN
        INSERT INTO campaign_figures (campaign_id, caller_id, local_hour, ${figureColumns.join(', ')})
          SELECT a.campaign_id, NEW.from_number, COALESCE(a.local_hour, -1), ${figureColumns
            .map((column) => values[column])
            .join(', ')}
          FROM campaign_attempts a WHERE a.call_id = NEW.id
          ON CONFLICT (campaign_id, caller_id, local_hour) DO UPDATE SET ${addOnConflict};
      END;`;
}

export function postgresCampaignFiguresSql(): string {
  const values = contributions(postgresPieces('NEW'), 'NEW');
  // A row trigger whose WHEN is checked before it fires: the many other updates of a call
  // (status steps, leases, live transcript) cost one comparison each.
  return `${attemptColumns('timestamptz')}
      ${tableSql('bigint', 'text COLLATE "C"')}
      ${summedInsert(postgresPieces('c'), backfillFrom, '-1')};
      CREATE FUNCTION campaign_figures_of_finished_call() RETURNS trigger LANGUAGE plpgsql AS $body$
      BEGIN
        INSERT INTO campaign_figures (campaign_id, caller_id, local_hour, ${figureColumns.join(', ')})
          SELECT a.campaign_id, NEW.from_number, COALESCE(a.local_hour, -1), ${figureColumns
            .map((column) => values[column])
            .join(', ')}
          FROM campaign_attempts a WHERE a.call_id = NEW.id
          ON CONFLICT (campaign_id, caller_id, local_hour) DO UPDATE SET ${addOnConflict};
        RETURN NULL;
      END
      $body$;
      CREATE TRIGGER calls_campaign_figures AFTER UPDATE OF status ON calls FOR EACH ROW
        WHEN (OLD.status IN ${liveStatuses} AND NEW.status IN ${rangStatuses})
        EXECUTE FUNCTION campaign_figures_of_finished_call();`;
}
