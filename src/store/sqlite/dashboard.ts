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
import type { SqliteDatabase } from './database.js';
import { isUniqueViolation } from './database.js';
import { type AgentRow, type CallRow, sqliteColumns, toAgent, toCall } from './rows.js';

interface UserRow {
  id: string;
  account_id: string;
  email: string;
  password_hash: string;
  created_at: string;
  last_sign_in_at: string | null;
}

interface SessionRow {
  token_hash: string;
  user_id: string;
  csrf_token: string;
  created_at: string;
  expires_at: string;
  last_seen_at: string;
}

const toUser = (row: UserRow) => userFromRow(row, sqliteColumns);

const toSession = (row: SessionRow) => sessionFromRow(row, sqliteColumns);

export class SqliteUsers implements UserRepository {
  private readonly insert;
  private readonly byEmail;
  private readonly countAll;
  private readonly signedIn;

  constructor(private readonly db: SqliteDatabase) {
    this.insert = db.prepare(
      `INSERT INTO users (id, account_id, email, password_hash, created_at)
       VALUES (@id, @account_id, @email, @password_hash, @created_at)`,
    );
    this.byEmail = db.prepare('SELECT * FROM users WHERE email = ?');
    this.countAll = db.prepare('SELECT COUNT(*) FROM users').pluck();
    this.signedIn = db.prepare('UPDATE users SET last_sign_in_at = ? WHERE id = ?');
  }

  private insertUser(input: NewUser): UserRecord {
    const row: UserRow = {
      id: newId('user'),
      account_id: input.accountId,
      email: input.email.toLowerCase(),
      password_hash: input.passwordHash,
      created_at: new Date().toISOString(),
      last_sign_in_at: null,
    };
    try {
      this.insert.run(row);
    } catch (error) {
      if (isUniqueViolation(error)) throw new AppError('conflict', 'a user with this email already exists');
      throw error;
    }
    return toUser(row);
  }

  async create(input: NewUser): Promise<UserRecord> {
    return this.insertUser(input);
  }

  async createFirst(input: NewUser): Promise<UserRecord | null> {
    return this.db
      .transaction(() => (Number(this.countAll.get()) > 0 ? null : this.insertUser(input)))
      .immediate();
  }

  async findByEmail(email: string): Promise<UserRecord | null> {
    const row = this.byEmail.get(email.toLowerCase()) as UserRow | undefined;
    return row ? toUser(row) : null;
  }

  async count(): Promise<number> {
    return Number(this.countAll.get());
  }

  async recordSignIn(userId: string, atIso: string): Promise<void> {
    this.signedIn.run(atIso, userId);
  }
}

export class SqliteSessions implements SessionRepository {
  private readonly insert;
  private readonly live;
  private readonly touchStatement;
  private readonly deleteStatement;
  private readonly deleteExpiredStatement;

  constructor(db: SqliteDatabase) {
    this.insert = db.prepare(
      `INSERT INTO sessions (token_hash, user_id, csrf_token, created_at, expires_at, last_seen_at)
       VALUES (@token_hash, @user_id, @csrf_token, @created_at, @expires_at, @last_seen_at)`,
    );
    this.live = db.prepare(
      `SELECT s.*, u.id AS u_id, u.account_id AS u_account_id, u.email AS u_email,
              u.password_hash AS u_password_hash, u.created_at AS u_created_at,
              u.last_sign_in_at AS u_last_sign_in_at
       FROM sessions s JOIN users u ON u.id = s.user_id WHERE s.token_hash = ? AND s.expires_at > ?`,
    );
    this.touchStatement = db.prepare('UPDATE sessions SET last_seen_at = ? WHERE token_hash = ?');
    this.deleteStatement = db.prepare('DELETE FROM sessions WHERE token_hash = ?');
    this.deleteExpiredStatement = db.prepare('DELETE FROM sessions WHERE expires_at <= ?');
  }

  async create(input: Omit<SessionRecord, 'lastSeenAt'>): Promise<SessionRecord> {
    const row: SessionRow = {
      token_hash: input.tokenHash,
      user_id: input.userId,
      csrf_token: input.csrfToken,
      created_at: input.createdAt,
      expires_at: input.expiresAt,
      last_seen_at: input.createdAt,
    };
    this.insert.run(row);
    return toSession(row);
  }

  async find(
    tokenHash: string,
    nowIso: string,
  ): Promise<{ session: SessionRecord; user: UserRecord } | null> {
    const row = this.live.get(tokenHash, nowIso) as (SessionRow & Record<string, unknown>) | undefined;
    if (!row) return null;
    const user = toUser({
      id: row.u_id as string,
      account_id: row.u_account_id as string,
      email: row.u_email as string,
      password_hash: row.u_password_hash as string,
      created_at: row.u_created_at as string,
      last_sign_in_at: row.u_last_sign_in_at as string | null,
    });
    return { session: toSession(row), user };
  }

  async touch(tokenHash: string, atIso: string): Promise<void> {
    this.touchStatement.run(atIso, tokenHash);
  }

  async delete(tokenHash: string): Promise<void> {
    this.deleteStatement.run(tokenHash);
  }

  async deleteExpired(nowIso: string): Promise<number> {
    return this.deleteExpiredStatement.run(nowIso).changes;
  }
}

export class SqliteDashboardQueries implements DashboardQueries {
  private readonly perDay;
  private readonly withMetrics;
  private readonly eventOfCall;

  constructor(private readonly db: SqliteDatabase) {
    this.eventOfCall = db.prepare('SELECT id FROM events WHERE account_id = ? AND call_id = ?').pluck();
    this.perDay = db.prepare(
      `SELECT substr(created_at, 1, 10) AS day, status, COUNT(*) AS count FROM calls
       WHERE account_id = ? AND created_at >= ? GROUP BY day, status ORDER BY day, status`,
    );
    this.withMetrics = db.prepare(
      `SELECT id, ended_at, metrics FROM calls
       WHERE account_id = ? AND ended_at >= ? AND metrics IS NOT NULL ORDER BY ended_at LIMIT 5000`,
    );
  }

  async listCalls(accountId: string, filter: CallFilter): Promise<CallRecord[]> {
    const where = ['account_id = @accountId'];
    if (filter.status) where.push('status = @status');
    if (filter.fromIso) where.push('created_at >= @fromIso');
    if (filter.toIso) where.push('created_at < @toIso');
    const rows = this.db
      .prepare(`SELECT * FROM calls WHERE ${where.join(' AND ')} ORDER BY id DESC LIMIT @limit`)
      .all({
        accountId,
        status: filter.status ?? null,
        fromIso: filter.fromIso ?? null,
        toIso: filter.toIso ?? null,
        limit: filter.limit,
      }) as CallRow[];
    return rows.map(toCall);
  }

  async callsPerDay(accountId: string, sinceIso: string): Promise<CallsPerDay[]> {
    return this.perDay.all(accountId, sinceIso) as CallsPerDay[];
  }

  async callMetricsSince(
    accountId: string,
    sinceIso: string,
  ): Promise<{ id: string; endedAt: string; metrics: Record<string, unknown> }[]> {
    const rows = this.withMetrics.all(accountId, sinceIso) as {
      id: string;
      ended_at: string;
      metrics: string;
    }[];
    const out: { id: string; endedAt: string; metrics: Record<string, unknown> }[] = [];
    for (const row of rows) {
      try {
        const metrics: unknown = JSON.parse(row.metrics);
        if (metrics && typeof metrics === 'object' && !Array.isArray(metrics)) {
          out.push({ id: row.id, endedAt: row.ended_at, metrics: metrics as Record<string, unknown> });
        }
      } catch {
        // A metrics value that is not JSON is left out of the chart.
      }
    }
    return out;
  }

  async eventIdForCall(accountId: string, callId: string): Promise<string | null> {
    const id = this.eventOfCall.get(accountId, callId);
    return typeof id === 'string' ? id : null;
  }
}

/** `agents.update`, kept here with the other dashboard additions; SqliteAgents delegates to it. */
export function updateAgentRow(
  db: SqliteDatabase,
  accountId: string,
  agentId: string,
  fields: Omit<NewAgent, 'accountId' | 'active'>,
): AgentRecord | null {
  const changes = db
    .prepare(
      `UPDATE agents SET name = @name, prompt = @prompt, first_message = @first_message, variables = @variables,
         extraction = @extraction, brain = @brain, script = @script, settings = @settings,
         max_duration_s = @max_duration_s, silence_timeout_s = @silence_timeout_s, updated_at = @updated_at
       WHERE account_id = @account_id AND id = @id`,
    )
    .run({
      name: fields.name,
      prompt: fields.prompt,
      first_message: fields.firstMessage,
      variables: JSON.stringify(fields.variables),
      extraction: JSON.stringify(fields.extraction),
      brain: fields.brain,
      script: fields.script === null || fields.script === undefined ? null : JSON.stringify(fields.script),
      settings: JSON.stringify(fields.settings),
      max_duration_s: fields.maxDurationS,
      silence_timeout_s: fields.silenceTimeoutS,
      updated_at: new Date().toISOString(),
      account_id: accountId,
      id: agentId,
    }).changes;
  if (changes === 0) return null;
  const row = db.prepare('SELECT * FROM agents WHERE account_id = ? AND id = ?').get(accountId, agentId) as
    | AgentRow
    | undefined;
  return row ? toAgent(row) : null;
}
