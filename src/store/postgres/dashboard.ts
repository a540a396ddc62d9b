import type { CallStatus } from '../../domain/callStatus.js';
import { AppError } from '../../domain/errors.js';
import { newId } from '../../domain/ids.js';
import type {
  AgentRecord,
  CallRecord,
  CallsPerDay,
  NewAgent,
  NewUser,
  SessionRecord,
  UserRecord,
} from '../../domain/records.js';
import { sessionFromRow, userFromRow } from '../recordsFromRows.js';
import type { CallFilter, DashboardQueries, SessionRepository, UserRepository } from '../types.js';
import { iso, isUniqueViolation, type PgPool, withTransaction } from './database.js';
import { type AgentRow, type CallRow, jsonParam, postgresColumns, toAgent, toCall } from './rows.js';

type Timestamp = Date | string;

interface UserRow {
  id: string;
  account_id: string;
  email: string;
  password_hash: string;
  created_at: Timestamp;
  last_sign_in_at: Timestamp | null;
}

interface SessionRow {
  token_hash: string;
  user_id: string;
  csrf_token: string;
  created_at: Timestamp;
  expires_at: Timestamp;
  last_seen_at: Timestamp;
}

const toUser = (row: UserRow) => userFromRow(row, postgresColumns);

const toSession = (row: SessionRow) => sessionFromRow(row, postgresColumns);

const insertUserSql = `INSERT INTO users (id, account_id, email, password_hash, created_at)
  VALUES ($1, $2, $3, $4, $5) RETURNING *`;

function userParams(input: NewUser): unknown[] {
  return [
    newId('user'),
    input.accountId,
    input.email.toLowerCase(),
    input.passwordHash,
    new Date().toISOString(),
  ];
}

export class PostgresUsers implements UserRepository {
  constructor(private readonly pool: PgPool) {}

  async create(input: NewUser): Promise<UserRecord> {
    try {
      const { rows } = await this.pool.query<UserRow>(insertUserSql, userParams(input));
      return toUser(rows[0] as UserRow);
    } catch (error) {
      if (isUniqueViolation(error)) throw new AppError('conflict', 'a user with this email already exists');
      throw error;
    }
  }

  createFirst(input: NewUser): Promise<UserRecord | null> {
    return withTransaction(this.pool, async (client) => {
      // Serialises first-run sign-ups across processes: only one sees an empty users table.
      await client.query("SELECT pg_advisory_xact_lock(hashtext('callwright.users.first'))");
      const { rows } = await client.query<{ n: number }>('SELECT count(*)::int AS n FROM users');
      if ((rows[0]?.n ?? 0) > 0) return null;
      const inserted = await client.query<UserRow>(insertUserSql, userParams(input));
      return toUser(inserted.rows[0] as UserRow);
    });
  }

  async findByEmail(email: string): Promise<UserRecord | null> {
    const { rows } = await this.pool.query<UserRow>('SELECT * FROM users WHERE email = $1', [
      email.toLowerCase(),
    ]);
    return rows[0] ? toUser(rows[0]) : null;
  }

  async count(): Promise<number> {
    const { rows } = await this.pool.query<{ n: number }>('SELECT count(*)::int AS n FROM users');
    return rows[0]?.n ?? 0;
  }

  async recordSignIn(userId: string, atIso: string): Promise<void> {
    await this.pool.query('UPDATE users SET last_sign_in_at = $1 WHERE id = $2', [atIso, userId]);
  }
}

export class PostgresSessions implements SessionRepository {
  constructor(private readonly pool: PgPool) {}

  async create(input: Omit<SessionRecord, 'lastSeenAt'>): Promise<SessionRecord> {
    const { rows } = await this.pool.query<SessionRow>(
      `INSERT INTO sessions (token_hash, user_id, csrf_token, created_at, expires_at, last_seen_at)
       VALUES ($1, $2, $3, $4, $5, $4) RETURNING *`,
      [input.tokenHash, input.userId, input.csrfToken, input.createdAt, input.expiresAt],
    );
    return toSession(rows[0] as SessionRow);
  }

  async find(
    tokenHash: string,
    nowIso: string,
  ): Promise<{ session: SessionRecord; user: UserRecord } | null> {
    const { rows } = await this.pool.query<SessionRow & Record<string, unknown>>(
      `SELECT s.*, u.id AS u_id, u.account_id AS u_account_id, u.email AS u_email,
              u.password_hash AS u_password_hash, u.created_at AS u_created_at,
              u.last_sign_in_at AS u_last_sign_in_at
       FROM sessions s JOIN users u ON u.id = s.user_id WHERE s.token_hash = $1 AND s.expires_at > $2`,
      [tokenHash, nowIso],
    );
    const row = rows[0];
    if (!row) return null;
    const user = toUser({
      id: row.u_id as string,
      account_id: row.u_account_id as string,
      email: row.u_email as string,
      password_hash: row.u_password_hash as string,
      created_at: row.u_created_at as Timestamp,
      last_sign_in_at: row.u_last_sign_in_at as Timestamp | null,
    });
    return { session: toSession(row), user };
  }

  async touch(tokenHash: string, atIso: string): Promise<void> {
    await this.pool.query('UPDATE sessions SET last_seen_at = $1 WHERE token_hash = $2', [atIso, tokenHash]);
  }

  async delete(tokenHash: string): Promise<void> {
    await this.pool.query('DELETE FROM sessions WHERE token_hash = $1', [tokenHash]);
  }

  async deleteExpired(nowIso: string): Promise<number> {
    const result = await this.pool.query('DELETE FROM sessions WHERE expires_at <= $1', [nowIso]);
    return result.rowCount ?? 0;
  }
}

export class PostgresDashboardQueries implements DashboardQueries {
  constructor(private readonly pool: PgPool) {}

  async listCalls(accountId: string, filter: CallFilter): Promise<CallRecord[]> {
    const where = ['account_id = $1'];
    const params: unknown[] = [accountId];
    if (filter.status) where.push(`status = $${params.push(filter.status)}`);
    if (filter.fromIso) where.push(`created_at >= $${params.push(filter.fromIso)}`);
    if (filter.toIso) where.push(`created_at < $${params.push(filter.toIso)}`);
    const limit = `$${params.push(filter.limit)}`;
    const { rows } = await this.pool.query<CallRow>(
      `SELECT * FROM calls WHERE ${where.join(' AND ')} ORDER BY id DESC LIMIT ${limit}`,
      params,
    );
    return rows.map(toCall);
  }

  async callsPerDay(accountId: string, sinceIso: string): Promise<CallsPerDay[]> {
    const { rows } = await this.pool.query<{ day: string; status: string; count: number }>(
      `SELECT to_char(created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD') AS day, status, count(*)::int AS count
       FROM calls WHERE account_id = $1 AND created_at >= $2
       GROUP BY day, status ORDER BY day, status COLLATE "C"`,
      [accountId, sinceIso],
    );
    return rows.map((row) => ({ day: row.day, status: row.status as CallStatus, count: row.count }));
  }

  async callMetricsSince(
    accountId: string,
    sinceIso: string,
  ): Promise<{ id: string; endedAt: string; metrics: Record<string, unknown> }[]> {
    const { rows } = await this.pool.query<{ id: string; ended_at: Date; metrics: unknown }>(
      `SELECT id, ended_at, metrics FROM calls
       WHERE account_id = $1 AND ended_at >= $2 AND metrics IS NOT NULL ORDER BY ended_at LIMIT 5000`,
      [accountId, sinceIso],
    );
    const out: { id: string; endedAt: string; metrics: Record<string, unknown> }[] = [];
    for (const row of rows) {
      if (row.metrics && typeof row.metrics === 'object' && !Array.isArray(row.metrics)) {
        out.push({ id: row.id, endedAt: iso(row.ended_at), metrics: row.metrics as Record<string, unknown> });
      }
    }
    return out;
  }

  async eventIdForCall(accountId: string, callId: string): Promise<string | null> {
    const { rows } = await this.pool.query<{ id: string }>(
      'SELECT id FROM events WHERE account_id = $1 AND call_id = $2',
      [accountId, callId],
    );
    return rows[0]?.id ?? null;
  }
}

/** `agents.update`, kept here with the other dashboard additions; PostgresAgents delegates to it. */
export async function updateAgentRow(
  pool: PgPool,
  accountId: string,
  agentId: string,
  fields: Omit<NewAgent, 'accountId' | 'active'>,
): Promise<AgentRecord | null> {
  const { rows } = await pool.query<AgentRow>(
    `UPDATE agents SET name = $1, prompt = $2, first_message = $3, variables = $4::jsonb, extraction = $5::jsonb,
       brain = $6, script = $7::jsonb, settings = $8::jsonb, max_duration_s = $9, silence_timeout_s = $10,
       updated_at = $11
     WHERE account_id = $12 AND id = $13 RETURNING *`,
    [
      fields.name,
      fields.prompt,
      fields.firstMessage,
      JSON.stringify(fields.variables),
      JSON.stringify(fields.extraction),
      fields.brain,
      jsonParam(fields.script),
      JSON.stringify(fields.settings),
      fields.maxDurationS,
      fields.silenceTimeoutS,
      new Date().toISOString(),
      accountId,
      agentId,
    ],
  );
  return rows[0] ? toAgent(rows[0]) : null;
}
