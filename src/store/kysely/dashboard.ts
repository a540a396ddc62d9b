import type { CallStatus } from '../../domain/callStatus.js';
import { AppError } from '../../domain/errors.js';
import { newId } from '../../domain/ids.js';
import type { CallRecord, CallsPerDay, NewUser, SessionRecord, UserRecord } from '../../domain/records.js';
import { callFromRow, sessionFromRow, userFromRow } from '../recordsFromRows.js';
import type { CallFilter, DashboardQueries, SessionRepository, UserRepository } from '../types.js';
import type { StoreQueries } from './dialects.js';

/** Dashboard users, written once for both dialects. */
export class KyselyUsers implements UserRepository {
  constructor(private readonly queries: StoreQueries) {}

  private toUser(row: Parameters<typeof userFromRow>[0]): UserRecord {
    return userFromRow(row, this.queries.dialect.columns);
  }

  private userColumns(input: NewUser) {
    return {
      id: newId('user'),
      account_id: input.accountId,
      email: input.email.toLowerCase(),
      password_hash: input.passwordHash,
      created_at: new Date().toISOString(),
    };
  }

  async create(input: NewUser): Promise<UserRecord> {
    try {
      const row = await this.queries.db
        .insertInto('users')
        .values(this.userColumns(input))
        .returningAll()
        .executeTakeFirstOrThrow();
      return this.toUser(row);
    } catch (error) {
      if (this.queries.dialect.isUniqueViolation(error)) {
        throw new AppError('conflict', 'a user with this email already exists');
      }
      throw error;
    }
  }

  /** One INSERT … SELECT … WHERE NOT EXISTS, serialised across processes (see QueryDialect). */
  createFirst(input: NewUser): Promise<UserRecord | null> {
    const columns = this.userColumns(input);
    const { dialect } = this.queries;
    return dialect.serialized(this.queries.db, 'callwright.users.first', async (db) => {
      const row = await db
        .insertInto('users')
        .columns(['id', 'account_id', 'email', 'password_hash', 'created_at'])
        .expression(
          db
            .selectNoFrom((eb) => [
              eb.val(columns.id).as('id'),
              eb.val(columns.account_id).as('account_id'),
              eb.val(columns.email).as('email'),
              eb.val(columns.password_hash).as('password_hash'),
              dialect.timestamp(columns.created_at).as('created_at'),
            ])
            .where(({ not, exists }) => not(exists(db.selectFrom('users').select('id')))),
        )
        .returningAll()
        .executeTakeFirst();
      return row ? this.toUser(row) : null;
    });
  }

  async findByEmail(email: string): Promise<UserRecord | null> {
    const row = await this.queries.db
      .selectFrom('users')
      .selectAll()
      .where('email', '=', email.toLowerCase())
      .executeTakeFirst();
    return row ? this.toUser(row) : null;
  }

  async count(): Promise<number> {
    const row = await this.queries.db
      .selectFrom('users')
      .select((eb) => eb.fn.countAll().as('n'))
      .executeTakeFirstOrThrow();
    return Number(row.n);
  }

  async list(accountId: string): Promise<UserRecord[]> {
    const rows = await this.queries.db
      .selectFrom('users')
      .selectAll()
      .where('account_id', '=', accountId)
      .orderBy('email')
      .execute();
    return rows.map((row) => this.toUser(row));
  }

  /**
   * A new password, then every session of the user ends (a transaction on PostgreSQL; on SQLite two
   * statements of the one in-process handle).
   */
  async setPasswordHash(accountId: string, email: string, passwordHash: string): Promise<UserRecord | null> {
    return this.queries.dialect.serialized(this.queries.db, 'callwright.users.change', async (trx) => {
      const row = await trx
        .updateTable('users')
        .set({ password_hash: passwordHash })
        .where('account_id', '=', accountId)
        .where('email', '=', email.toLowerCase())
        .returningAll()
        .executeTakeFirst();
      if (!row) return null;
      await trx.deleteFrom('sessions').where('user_id', '=', row.id).execute();
      return this.toUser(row);
    });
  }

  /** Removes the user and their sessions (as `setPasswordHash`); false when no such user. */
  async remove(accountId: string, email: string): Promise<boolean> {
    return this.queries.dialect.serialized(this.queries.db, 'callwright.users.change', async (trx) => {
      const user = await trx
        .selectFrom('users')
        .select('id')
        .where('account_id', '=', accountId)
        .where('email', '=', email.toLowerCase())
        .executeTakeFirst();
      if (!user) return false;
      await trx.deleteFrom('sessions').where('user_id', '=', user.id).execute();
      await trx.deleteFrom('users').where('id', '=', user.id).execute();
      return true;
    });
  }

  async recordSignIn(userId: string, atIso: string): Promise<void> {
    await this.queries.db
      .updateTable('users')
      .set({ last_sign_in_at: atIso })
      .where('id', '=', userId)
      .execute();
  }
}

/** Dashboard sessions, written once for both dialects. */
export class KyselySessions implements SessionRepository {
  constructor(private readonly queries: StoreQueries) {}

  async create(input: Omit<SessionRecord, 'lastSeenAt'>): Promise<SessionRecord> {
    const row = await this.queries.db
      .insertInto('sessions')
      .values({
        token_hash: input.tokenHash,
        user_id: input.userId,
        csrf_token: input.csrfToken,
        created_at: input.createdAt,
        expires_at: input.expiresAt,
        last_seen_at: input.createdAt,
      })
      .returningAll()
      .executeTakeFirstOrThrow();
    return sessionFromRow(row, this.queries.dialect.columns);
  }

  async find(
    tokenHash: string,
    nowIso: string,
  ): Promise<{ session: SessionRecord; user: UserRecord } | null> {
    const row = await this.queries.db
      .selectFrom('sessions')
      .innerJoin('users', 'users.id', 'sessions.user_id')
      .selectAll('sessions')
      .select([
        'users.account_id',
        'users.email',
        'users.password_hash',
        'users.created_at as user_created_at',
        'users.last_sign_in_at',
      ])
      .where('sessions.token_hash', '=', tokenHash)
      .where('sessions.expires_at', '>', nowIso)
      .executeTakeFirst();
    if (!row) return null;
    const columns = this.queries.dialect.columns;
    const user = userFromRow({ ...row, id: row.user_id, created_at: row.user_created_at }, columns);
    return { session: sessionFromRow(row, columns), user };
  }

  async touch(tokenHash: string, atIso: string): Promise<void> {
    await this.queries.db
      .updateTable('sessions')
      .set({ last_seen_at: atIso })
      .where('token_hash', '=', tokenHash)
      .execute();
  }

  async delete(tokenHash: string): Promise<void> {
    await this.queries.db.deleteFrom('sessions').where('token_hash', '=', tokenHash).execute();
  }

  async deleteExpired(nowIso: string): Promise<number> {
    const result = await this.queries.db
      .deleteFrom('sessions')
      .where('expires_at', '<=', nowIso)
      .executeTakeFirst();
    return Number(result.numDeletedRows);
  }
}

/** The dashboard's read-only queries over calls and events, written once for both dialects. */
export class KyselyDashboardQueries implements DashboardQueries {
  constructor(private readonly queries: StoreQueries) {}

  async listCalls(accountId: string, filter: CallFilter): Promise<CallRecord[]> {
    let query = this.queries.db.selectFrom('calls').selectAll().where('account_id', '=', accountId);
    if (filter.status) query = query.where('status', '=', filter.status);
    if (filter.fromIso) query = query.where('created_at', '>=', filter.fromIso);
    if (filter.toIso) query = query.where('created_at', '<', filter.toIso);
    const rows = await query.orderBy('id', 'desc').limit(filter.limit).execute();
    return rows.map((row) => callFromRow(row, this.queries.dialect.columns));
  }

  async callsPerDay(accountId: string, sinceIso: string): Promise<CallsPerDay[]> {
    const { db, dialect } = this.queries;
    const day = dialect.utcDay('created_at');
    const rows = await db
      .selectFrom('calls')
      .select((eb) => [day.as('day'), 'status', eb.fn.countAll().as('count')])
      .where('account_id', '=', accountId)
      .where('created_at', '>=', sinceIso)
      .groupBy([day, 'status'])
      .orderBy('day')
      .orderBy(dialect.byteOrder('status'))
      .execute();
    return rows.map((row) => ({ day: row.day, status: row.status as CallStatus, count: Number(row.count) }));
  }

  async callMetricsSince(
    accountId: string,
    sinceIso: string,
  ): Promise<{ id: string; agentId: string; endedAt: string; metrics: Record<string, unknown> }[]> {
    const columns = this.queries.dialect.columns;
    const rows = await this.queries.db
      .selectFrom('calls')
      .select(['id', 'agent_id', 'ended_at', 'metrics'])
      .where('account_id', '=', accountId)
      .where('ended_at', '>=', sinceIso)
      .where('metrics', 'is not', null)
      .orderBy('ended_at')
      .limit(5000)
      .execute();
    const out: { id: string; agentId: string; endedAt: string; metrics: Record<string, unknown> }[] = [];
    for (const row of rows) {
      let metrics: unknown;
      try {
        metrics = columns.json(row.metrics);
      } catch {
        continue; // A metrics value that is not JSON is left out of the chart.
      }
      if (metrics && typeof metrics === 'object' && !Array.isArray(metrics)) {
        out.push({
          id: row.id,
          agentId: row.agent_id,
          endedAt: columns.time(row.ended_at),
          metrics: metrics as Record<string, unknown>,
        });
      }
    }
    return out;
  }

  async eventIdForCall(accountId: string, callId: string): Promise<string | null> {
    const row = await this.queries.db
      .selectFrom('events')
      .select('id')
      .where('account_id', '=', accountId)
      .where('call_id', '=', callId)
      // The call's status events (call.ringing…) have the call too: the page shows its ending's.
      .where('type', '=', 'call.completed')
      .executeTakeFirst();
    return row?.id ?? null;
  }
}
