import { variablesProblem } from '../../domain/agentVariables.js';
import { AppError } from '../../domain/errors.js';
import { type RateDecision, type RatePolicy, takeToken } from '../../domain/rateLimit.js';
import type { AgentVariable, CallRecord } from '../../domain/records.js';
import { queueNames } from '../../queue/types.js';
import type { AuthorizedCallAttempt, AuthorizedCaller, AuthorizedCallOutcome } from '../types.js';
import { isConnectionLoss, isUniqueViolation, type PgPool } from './database.js';
import type { PostgresJobWriter } from './jobQueue.js';
import { type AccountRow, type CallRow, toAccount, toCall } from './rows.js';

/** The database clock in ms, read once per statement: one clock for every process. */
const clockSql = '(extract(epoch FROM clock_timestamp()) * 1000)::bigint';

/**
 * Takes from the buckets named in `demand` (a relation: bucket_key, n, capacity, window_s) for `n`
 * requests each, in one upsert: under the row lock it refills the bucket, grants
 * min(n, whole tokens) and keeps what the bucket held before (tokens_before_take), from which the
 * caller tells which of the n got a token. Rows are locked in key order, so two statements never
 * wait on each other's buckets in a cycle. A missing row is a full bucket.
 */
function bucketTakeSql(demand: string): string {
  const refilled = `LEAST(d.capacity, b.tokens + GREATEST(0, excluded.updated_at_ms - b.updated_at_ms)
        * d.capacity / (d.window_s * 1000))`;
  return `INSERT INTO rate_buckets AS b (bucket_key, tokens, updated_at_ms, allowed, tokens_before_take)
    SELECT d.bucket_key, d.capacity - LEAST(d.n, floor(d.capacity)), c.now_ms, d.n <= floor(d.capacity), d.capacity
    FROM ${demand} d CROSS JOIN clock c
    ORDER BY d.bucket_key
    ON CONFLICT (bucket_key) DO UPDATE SET (tokens_before_take, tokens, allowed, updated_at_ms) = (
      SELECT x.refilled, x.refilled - LEAST(x.n, floor(x.refilled)), x.n <= floor(x.refilled),
        GREATEST(b.updated_at_ms, excluded.updated_at_ms)
      FROM (SELECT d.n, ${refilled} AS refilled FROM ${demand} d WHERE d.bucket_key = b.bucket_key) AS x)
    RETURNING bucket_key, tokens_before_take`;
}

/**
 * DESIGN §1 steps 1, 2 and 6–9 for a batch of requests, as one statement (so one round trip and
 * one commit). Parameters: ten arrays with one element per request (key hash, failure bucket,
 * call id — null when the request failed validation —, agent, from, to, first message, context,
 * variables as JSON, created at), then the failure policy (size, window s) and the default rate
 * policy (size, window s).
 *
 * - The key: not revoked, FOR SHARE, so a revocation committing meanwhile either waits for this
 *   statement or is seen by it (a revoked key's request in flight gets 401).
 * - The address's failure bucket: a failed key takes a token under the row lock; a request finds
 *   its address held off when the failures before it in the batch have spent the whole tokens.
 *   A bucket with no failures in the batch is only read (a valid key gives its token back).
 * - The account's bucket: one token per authenticated request, in order, under the row lock.
 * - The agent (active), the number and the declared variables; then the calls and their dispatch
 *   jobs, only for the requests that passed everything.
 */
function authorizedCreationSql(jobs: PostgresJobWriter): string {
  return `WITH clock AS MATERIALIZED (SELECT ${clockSql} AS now_ms),
request AS MATERIALIZED (
  SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[], $6::text[], $7::text[],
      $8::text[], $9::text[], $10::text[]) WITH ORDINALITY
    AS r(key_hash, failure_bucket, call_id, agent_id, from_number, to_number, first_message, context,
      variables, created_at, position)
),
valid_key AS MATERIALIZED (
  SELECT id, account_id, key_hash FROM api_keys
  WHERE key_hash = ANY($1::text[]) AND revoked_at IS NULL
  ORDER BY id
  FOR SHARE
),
attempt AS MATERIALIZED (
  SELECT r.*, k.id AS api_key_id, k.account_id,
    count(*) FILTER (WHERE k.id IS NULL) OVER (PARTITION BY r.failure_bucket ORDER BY r.position
      ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING) AS failures_before
  FROM request r LEFT JOIN valid_key k ON k.key_hash = r.key_hash
),
failure_demand AS MATERIALIZED (
  SELECT failure_bucket AS bucket_key, count(*)::float8 AS n, $11::float8 AS capacity, $12::float8 AS window_s
  FROM attempt WHERE api_key_id IS NULL GROUP BY failure_bucket
),
failure_take AS (${bucketTakeSql('failure_demand')}),
failure_state AS MATERIALIZED (
  SELECT d.failure_bucket, COALESCE(t.tokens_before_take,
      LEAST($11::float8, b.tokens + GREATEST(0, c.now_ms - b.updated_at_ms) * $11::float8 / ($12::float8 * 1000)),
      $11::float8) AS tokens_before
  FROM (SELECT DISTINCT failure_bucket FROM request) AS d CROSS JOIN clock c
  LEFT JOIN failure_take t ON t.bucket_key = d.failure_bucket
  LEFT JOIN LATERAL (SELECT tokens, updated_at_ms FROM rate_buckets WHERE bucket_key = d.failure_bucket) AS b ON true
),
admitted AS MATERIALIZED (
  SELECT a.*, row_number() OVER (PARTITION BY a.account_id ORDER BY a.position) - 1 AS account_position
  FROM attempt a JOIN failure_state f USING (failure_bucket)
  WHERE a.api_key_id IS NOT NULL AND a.failures_before + 1 <= f.tokens_before
),
account_demand AS MATERIALIZED (
  SELECT 'account:' || a.account_id AS bucket_key, a.n,
    (CASE WHEN ac.rate_limit_requests IS NOT NULL AND ac.rate_limit_window_s IS NOT NULL
      THEN ac.rate_limit_requests ELSE $13::int END)::float8 AS capacity,
    (CASE WHEN ac.rate_limit_requests IS NOT NULL AND ac.rate_limit_window_s IS NOT NULL
      THEN ac.rate_limit_window_s ELSE $14::int END)::float8 AS window_s
  FROM (SELECT account_id, count(*)::float8 AS n FROM admitted GROUP BY account_id) AS a
  CROSS JOIN LATERAL (SELECT * FROM accounts WHERE id = a.account_id) AS ac
),
account_take AS (${bucketTakeSql('account_demand')}),
checked AS MATERIALIZED (
  SELECT a.*, ag.id IS NOT NULL AND ag.active AS agent_ok, pn.number IS NOT NULL AS number_ok,
    (a.variables IS NULL OR NOT EXISTS (
      SELECT 1 FROM jsonb_object_keys(a.variables::jsonb) AS given(name)
      WHERE NOT EXISTS (SELECT 1 FROM jsonb_array_elements(ag.variables) AS declared
        WHERE declared ->> 'name' = given.name)))
    -- domain/agentVariables.ts in SQL: a typed value of another JSON type, or a required variable
    -- with neither a value nor a default (agents stored before these fields: untyped, optional).
    AND NOT EXISTS (
      SELECT 1 FROM jsonb_array_elements(ag.variables) AS declared
      WHERE (COALESCE(declared ->> 'type', 'any') <> 'any'
          AND COALESCE(a.variables::jsonb, '{}'::jsonb) ? (declared ->> 'name')
          AND jsonb_typeof(a.variables::jsonb -> (declared ->> 'name')) <> declared ->> 'type')
        OR (COALESCE((declared ->> 'required')::boolean, false) AND declared ->> 'default' IS NULL
          AND NOT COALESCE(a.variables::jsonb, '{}'::jsonb) ? (declared ->> 'name'))) AS variables_ok,
    ag.variables AS declared_variables
  FROM admitted a
  JOIN account_take t ON t.bucket_key = 'account:' || a.account_id
    AND a.account_position + 1 <= t.tokens_before_take
  LEFT JOIN agents ag ON ag.account_id = a.account_id AND ag.id = a.agent_id
  LEFT JOIN phone_numbers pn ON pn.account_id = a.account_id AND pn.number = a.from_number
  WHERE a.call_id IS NOT NULL
),
inserted AS (
  INSERT INTO calls (id, account_id, agent_id, api_key_id, from_number, to_number, first_message, context,
    variables, status, created_at, updated_at)
  SELECT call_id, account_id, agent_id, api_key_id, from_number, to_number, first_message, context,
    variables::jsonb, 'queued', created_at::timestamptz, created_at::timestamptz
  FROM checked WHERE agent_ok AND number_ok AND variables_ok
  ORDER BY position
  RETURNING *
),
dispatch_job AS (
  ${jobs.insertForEachRowSql(queueNames.dispatch, "(SELECT jsonb_build_object('call_id', id) AS data FROM inserted)")}
)
SELECT a.api_key_id, a.failures_before, f.tokens_before AS failure_tokens_before,
  ad.account_position, t.tokens_before_take AS account_tokens_before,
  CASE WHEN ad.position IS NOT NULL THEN (SELECT row_to_json(ac) FROM accounts ac WHERE ac.id = a.account_id) END
    AS account,
  ch.agent_ok, ch.number_ok, ch.variables_ok,
  CASE WHEN NOT ch.variables_ok THEN ch.declared_variables END AS declared_variables,
  row_to_json(i) AS call
FROM attempt a
JOIN failure_state f USING (failure_bucket)
LEFT JOIN admitted ad ON ad.position = a.position
LEFT JOIN account_take t ON t.bucket_key = 'account:' || ad.account_id
LEFT JOIN checked ch ON ch.position = a.position
LEFT JOIN inserted i ON i.id = a.call_id
ORDER BY a.position`;
}

interface OutcomeRow {
  api_key_id: string | null;
  failures_before: string | number;
  failure_tokens_before: number;
  account_position: string | number | null;
  account_tokens_before: number | null;
  account: AccountRow | null;
  agent_ok: boolean | null;
  number_ok: boolean | null;
  variables_ok: boolean | null;
  declared_variables: AgentVariable[] | null;
  call: CallRow | null;
}

/**
 * The decision the `taken + 1`-th take from a bucket that held `tokensBefore` gets (after the
 * earlier ones took what they could): the arithmetic of every other take (takeToken).
 */
function decisionAfter(policy: RatePolicy, tokensBefore: number, earlierTakes: number): RateDecision {
  const taken = Math.min(earlierTakes, Math.floor(tokensBefore));
  return takeToken({ tokens: tokensBefore - taken, updatedAtMs: 0 }, policy, 0);
}

function outcomeOf(row: OutcomeRow, attempt: AuthorizedCallAttempt): AuthorizedCallOutcome {
  if (row.api_key_id === null || row.account_position === null || row.account === null) {
    const authFailures = decisionAfter(
      attempt.authFailurePolicy,
      row.failure_tokens_before,
      Number(row.failures_before),
    );
    // A key that was never looked at because the address is held off, or a failed key that took its token.
    if (!authFailures.allowed || row.api_key_id !== null) return { kind: 'held_off', authFailures };
    return { kind: 'unauthorized', authFailures };
  }
  const account = toAccount(row.account);
  const policy = account.ratePolicy ?? attempt.defaultRatePolicy;
  const caller: AuthorizedCaller = {
    account,
    apiKeyId: row.api_key_id,
    rate: decisionAfter(policy, row.account_tokens_before ?? 0, Number(row.account_position)),
  };
  if (!caller.rate.allowed) return { kind: 'rate_limited', caller };
  const call = attempt.call;
  if (call === null) return { kind: 'request_refused', caller };
  if (!row.agent_ok) return { kind: 'agent_not_found', caller };
  if (!row.number_ok) return { kind: 'number_not_configured', caller };
  if (!row.variables_ok) {
    const problem =
      variablesProblem(row.declared_variables ?? [], call.variables ?? undefined) ??
      new AppError('validation_error', 'variables do not fit the agent');
    return { kind: 'variables_refused', caller, problem };
  }
  if (!row.call) throw new Error(`call ${call.id} passed every check but was not written`);
  return { kind: 'created', caller, call: toCall(row.call) };
}

interface PendingAttempt {
  attempt: AuthorizedCallAttempt;
  resolve: (outcome: AuthorizedCallOutcome) => void;
  reject: (error: unknown) => void;
}

/**
 * Runs AuthorizedCallAttempts as one statement per batch: the attempts that arrive while earlier
 * statements are in flight wait and go together in the next (group commit), at most
 * `maxInFlight` statements at once (default 1 per process; other processes run theirs beside it).
 * An account's bucket row is locked until its statement commits, so statements of one account
 * commit one after another anyway: fewer, larger batches carry more creations per commit than many
 * small ones queued on the same lock (bench:api -- --postgres: 3,048 creations/s with 1 in flight,
 * 2,786 with 2, 2,516 with 4). A failed batch is retried one attempt at a time, so one bad row
 * fails only itself.
 */
export class AuthorizedCallCreation {
  private pending: PendingAttempt[] = [];
  private inFlight = 0;
  private scheduled = false;
  private readonly sql: string;

  constructor(
    private readonly pool: PgPool,
    jobs: PostgresJobWriter,
    private readonly afterCommit: () => void,
    private readonly options: { maxInFlight: number; maxBatch: number } = { maxInFlight: 1, maxBatch: 200 },
  ) {
    this.sql = authorizedCreationSql(jobs);
  }

  create(attempt: AuthorizedCallAttempt): Promise<AuthorizedCallOutcome> {
    return new Promise((resolve, reject) => {
      this.pending.push({ attempt, resolve, reject });
      this.schedule();
    });
  }

  private schedule(): void {
    if (this.scheduled || this.pending.length === 0 || this.inFlight >= this.options.maxInFlight) return;
    this.scheduled = true;
    // Let the requests of this event-loop turn join the batch.
    setImmediate(() => {
      this.scheduled = false;
      while (this.pending.length > 0 && this.inFlight < this.options.maxInFlight) {
        void this.run(this.pending.splice(0, this.options.maxBatch));
      }
    });
  }

  private async run(batch: PendingAttempt[]): Promise<void> {
    this.inFlight += 1;
    try {
      await this.commit(batch, false);
    } finally {
      this.inFlight -= 1;
      this.schedule();
    }
  }

  /** `afterLoss`: an earlier run of these attempts lost its connection, so it may have committed. */
  private async commit(batch: PendingAttempt[], afterLoss: boolean): Promise<void> {
    try {
      const outcomes = await this.execute(batch.map((item) => item.attempt));
      for (const [index, item] of batch.entries()) item.resolve(outcomes[index] as AuthorizedCallOutcome);
      if (outcomes.some((outcome) => outcome.kind === 'created')) this.afterCommit();
    } catch (error) {
      // A lost connection leaves the statement's outcome unknown: each attempt runs again alone,
      // once; a batch refused for one bad row runs again one attempt at a time.
      const lost = isConnectionLoss(error);
      if (batch.length > 1 || (lost && !afterLoss)) {
        await Promise.all(batch.map((item) => this.commit([item], afterLoss || lost)));
        return;
      }
      const item = batch[0] as PendingAttempt;
      // Its id already taken after a lost answer: that earlier run did store it.
      const stored =
        afterLoss && isUniqueViolation(error) && item.attempt.call
          ? await this.storedCreation(item.attempt).catch(() => null)
          : null;
      if (stored) item.resolve(stored);
      else item.reject(error);
    }
  }

  private async execute(attempts: AuthorizedCallAttempt[]): Promise<AuthorizedCallOutcome[]> {
    const first = attempts[0] as AuthorizedCallAttempt;
    const column = <T>(pick: (attempt: AuthorizedCallAttempt) => T) => attempts.map(pick);
    // A named statement: each connection plans it once (its plan is reused after a few runs),
    // where planning it anew took as long as running it for 30 creations.
    const { rows } = await this.pool.query<OutcomeRow>({
      name: 'callwright_create_authorized',
      text: this.sql,
      values: [
        column((attempt) => attempt.keyHash),
        column((attempt) => attempt.authFailureBucket),
        column((attempt) => attempt.call?.id ?? null),
        column((attempt) => attempt.call?.agentId ?? null),
        column((attempt) => attempt.call?.fromNumber ?? null),
        column((attempt) => attempt.call?.toNumber ?? null),
        column((attempt) => attempt.call?.firstMessage ?? null),
        column((attempt) => attempt.call?.context ?? null),
        column((attempt) => (attempt.call?.variables ? JSON.stringify(attempt.call.variables) : null)),
        column((attempt) => attempt.call?.createdAt ?? null),
        // One service-wide policy per process: the batch's first attempt speaks for all.
        first.authFailurePolicy.requests,
        first.authFailurePolicy.windowS,
        first.defaultRatePolicy.requests,
        first.defaultRatePolicy.windowS,
      ],
    });
    return rows.map((row, index) => outcomeOf(row, attempts[index] as AuthorizedCallAttempt));
  }

  /** The outcome of an attempt whose call an earlier, unanswered run stored (with this key). */
  private async storedCreation(attempt: AuthorizedCallAttempt): Promise<AuthorizedCallOutcome | null> {
    const { rows } = await this.pool.query<{ call: CallRow; account: AccountRow; tokens: number | null }>(
      `SELECT row_to_json(c) AS call, row_to_json(a) AS account, b.tokens
       FROM calls c JOIN accounts a ON a.id = c.account_id
       JOIN api_keys k ON k.id = c.api_key_id
       LEFT JOIN rate_buckets b ON b.bucket_key = 'account:' || a.id
       WHERE c.id = $1 AND k.key_hash = $2`,
      [attempt.call?.id, attempt.keyHash],
    );
    const row = rows[0];
    if (!row) return null;
    const call: CallRecord = toCall(row.call);
    const account = toAccount(row.account);
    const policy = account.ratePolicy ?? attempt.defaultRatePolicy;
    // The take happened in the run that stored it: report the bucket as it is now.
    const rate = decisionAfter(policy, (row.tokens ?? policy.requests - 1) + 1, 0);
    return { kind: 'created', caller: { account, apiKeyId: call.apiKeyId ?? '', rate }, call };
  }
}
