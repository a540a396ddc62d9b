import { AppError } from '../../domain/errors.js';
import { newId } from '../../domain/ids.js';
import type {
  AccountRecord,
  AgentRecord,
  ApiKeyRecord,
  ApiKeyWithAccount,
  NewAgent,
  NewApiKey,
  PhoneNumberRecord,
} from '../../domain/records.js';
import type { JobQueue, SynchronousJobWriter } from '../../queue/types.js';
import type {
  AccountRepository,
  AgentRepository,
  ApiKeyRepository,
  PhoneNumberRepository,
  Store,
} from '../types.js';
import { SqliteCalls } from './calls.js';
import { SqliteDashboardQueries, SqliteSessions, SqliteUsers, updateAgentRow } from './dashboard.js';
import { isUniqueViolation, openSqliteDatabase, type SqliteDatabase } from './database.js';
import { SqliteEvents, SqliteWebhookEndpoints } from './events.js';
import { GroupCommitter } from './groupCommit.js';
import {
  type AccountRow,
  type AgentRow,
  type ApiKeyRow,
  type PhoneNumberRow,
  toAccount,
  toAgent,
  toApiKey,
  toPhoneNumber,
} from './rows.js';
import { SqliteSetupTokens } from './setupTokens.js';
import { sealStoredSecrets } from './storedSecrets.js';
import { SqliteSandboxInvites, SqliteTrunks } from './telephony.js';

function nowIso(): string {
  return new Date().toISOString();
}

class SqliteAccounts implements AccountRepository {
  private readonly byId;
  private readonly all;
  private readonly defaultAccount;
  private readonly insert;

  constructor(private readonly db: SqliteDatabase) {
    this.byId = db.prepare('SELECT * FROM accounts WHERE id = ?');
    this.all = db.prepare('SELECT * FROM accounts ORDER BY created_at, id');
    this.defaultAccount = db.prepare('SELECT * FROM accounts WHERE is_default = 1');
    this.insert = db.prepare(
      `INSERT INTO accounts (id, name, is_default, rate_limit_requests, rate_limit_window_s, max_live_calls, created_at)
       VALUES (@id, @name, @is_default, @rate_limit_requests, @rate_limit_window_s, @max_live_calls, @created_at)`,
    );
  }

  private insertAccount(
    name: string,
    isDefault: boolean,
    input?: Parameters<AccountRepository['create']>[0],
  ) {
    const row: AccountRow = {
      id: newId('account'),
      name,
      is_default: isDefault ? 1 : 0,
      rate_limit_requests: input?.ratePolicy?.requests ?? null,
      rate_limit_window_s: input?.ratePolicy?.windowS ?? null,
      max_live_calls: input?.maxLiveCalls ?? 10,
      created_at: nowIso(),
    };
    this.insert.run(row);
    return toAccount(row);
  }

  async create(input: Parameters<AccountRepository['create']>[0]): Promise<AccountRecord> {
    return this.insertAccount(input.name, false, input);
  }

  async get(id: string): Promise<AccountRecord | null> {
    const row = this.byId.get(id) as AccountRow | undefined;
    return row ? toAccount(row) : null;
  }

  async list(): Promise<AccountRecord[]> {
    return (this.all.all() as AccountRow[]).map(toAccount);
  }

  async getOrCreateDefault(): Promise<AccountRecord> {
    return this.db
      .transaction(() => {
        const row = this.defaultAccount.get() as AccountRow | undefined;
        return row ? toAccount(row) : this.insertAccount('Default account', true);
      })
      .immediate();
  }
}

class SqliteApiKeys implements ApiKeyRepository {
  private readonly insert;
  private readonly byHash;
  private readonly byAccount;
  private readonly byId;
  private readonly revokeStatement;
  private readonly touch;

  constructor(db: SqliteDatabase) {
    this.insert = db.prepare(
      `INSERT INTO api_keys (id, account_id, name, key_hash, prefix, last4, created_at)
       VALUES (@id, @account_id, @name, @key_hash, @prefix, @last4, @created_at)`,
    );
    this.byHash = db.prepare(
      `SELECT k.*, a.id AS a_id, a.name AS a_name, a.is_default AS a_is_default,
              a.rate_limit_requests AS a_rate_limit_requests, a.rate_limit_window_s AS a_rate_limit_window_s,
              a.max_live_calls AS a_max_live_calls, a.created_at AS a_created_at
       FROM api_keys k JOIN accounts a ON a.id = k.account_id WHERE k.key_hash = ?`,
    );
    this.byAccount = db.prepare('SELECT * FROM api_keys WHERE account_id = ? ORDER BY created_at, id');
    this.byId = db.prepare('SELECT * FROM api_keys WHERE account_id = ? AND id = ?');
    this.revokeStatement = db.prepare(
      'UPDATE api_keys SET revoked_at = COALESCE(revoked_at, ?) WHERE account_id = ? AND id = ?',
    );
    this.touch = db.prepare('UPDATE api_keys SET last_used_at = ? WHERE id = ?');
  }

  async create(input: NewApiKey): Promise<ApiKeyRecord> {
    const row: ApiKeyRow = {
      id: newId('apiKey'),
      account_id: input.accountId,
      name: input.name,
      key_hash: input.keyHash,
      prefix: input.prefix,
      last4: input.last4,
      created_at: nowIso(),
      last_used_at: null,
      revoked_at: null,
    };
    this.insert.run(row);
    return toApiKey(row);
  }

  async findByHash(keyHash: string): Promise<ApiKeyWithAccount | null> {
    const row = this.byHash.get(keyHash) as (ApiKeyRow & Record<string, unknown>) | undefined;
    if (!row) return null;
    const account = toAccount({
      id: row.a_id as string,
      name: row.a_name as string,
      is_default: row.a_is_default as number,
      rate_limit_requests: row.a_rate_limit_requests as number | null,
      rate_limit_window_s: row.a_rate_limit_window_s as number | null,
      max_live_calls: row.a_max_live_calls as number,
      created_at: row.a_created_at as string,
    });
    return { key: toApiKey(row), keyHash: row.key_hash, account };
  }

  async list(accountId: string): Promise<ApiKeyRecord[]> {
    return (this.byAccount.all(accountId) as ApiKeyRow[]).map(toApiKey);
  }

  async revoke(accountId: string, keyId: string, atIso: string): Promise<ApiKeyRecord | null> {
    this.revokeStatement.run(atIso, accountId, keyId);
    const row = this.byId.get(accountId, keyId) as ApiKeyRow | undefined;
    return row ? toApiKey(row) : null;
  }

  async touchLastUsed(keyId: string, atIso: string): Promise<void> {
    this.touch.run(atIso, keyId);
  }
}

class SqliteAgents implements AgentRepository {
  private readonly insert;
  private readonly byId;
  private readonly byAccount;
  private readonly setActiveStatement;

  constructor(private readonly db: SqliteDatabase) {
    this.insert = db.prepare(
      `INSERT INTO agents (id, account_id, name, active, prompt, first_message, variables, extraction, brain,
         script, settings, max_duration_s, silence_timeout_s, created_at, updated_at)
       VALUES (@id, @account_id, @name, @active, @prompt, @first_message, @variables, @extraction, @brain,
         @script, @settings, @max_duration_s, @silence_timeout_s, @created_at, @updated_at)`,
    );
    this.byId = db.prepare('SELECT * FROM agents WHERE account_id = ? AND id = ?');
    this.byAccount = db.prepare('SELECT * FROM agents WHERE account_id = ? ORDER BY created_at, id');
    this.setActiveStatement = db.prepare(
      'UPDATE agents SET active = ?, updated_at = ? WHERE account_id = ? AND id = ?',
    );
  }

  async create(input: NewAgent): Promise<AgentRecord> {
    const at = nowIso();
    const row: AgentRow = {
      id: newId('agent'),
      account_id: input.accountId,
      name: input.name,
      active: input.active ? 1 : 0,
      prompt: input.prompt,
      first_message: input.firstMessage,
      variables: JSON.stringify(input.variables),
      extraction: JSON.stringify(input.extraction),
      brain: input.brain,
      script: input.script === null || input.script === undefined ? null : JSON.stringify(input.script),
      settings: JSON.stringify(input.settings),
      max_duration_s: input.maxDurationS,
      silence_timeout_s: input.silenceTimeoutS,
      created_at: at,
      updated_at: at,
    };
    this.insert.run(row);
    return toAgent(row);
  }

  async get(accountId: string, agentId: string): Promise<AgentRecord | null> {
    const row = this.byId.get(accountId, agentId) as AgentRow | undefined;
    return row ? toAgent(row) : null;
  }

  async list(accountId: string): Promise<AgentRecord[]> {
    return (this.byAccount.all(accountId) as AgentRow[]).map(toAgent);
  }

  async update(
    accountId: string,
    agentId: string,
    fields: Parameters<AgentRepository['update']>[2],
  ): Promise<AgentRecord | null> {
    return updateAgentRow(this.db, accountId, agentId, fields);
  }

  async setActive(accountId: string, agentId: string, active: boolean): Promise<AgentRecord | null> {
    this.setActiveStatement.run(active ? 1 : 0, nowIso(), accountId, agentId);
    return this.get(accountId, agentId);
  }
}

class SqlitePhoneNumbers implements PhoneNumberRepository {
  private readonly insert;
  private readonly byNumber;
  private readonly byAccount;
  private readonly deleteStatement;

  constructor(db: SqliteDatabase) {
    this.insert = db.prepare(
      'INSERT INTO phone_numbers (account_id, number, route, created_at) VALUES (@account_id, @number, @route, @created_at)',
    );
    this.byNumber = db.prepare('SELECT * FROM phone_numbers WHERE account_id = ? AND number = ?');
    this.byAccount = db.prepare('SELECT * FROM phone_numbers WHERE account_id = ? ORDER BY number');
    this.deleteStatement = db.prepare('DELETE FROM phone_numbers WHERE account_id = ? AND number = ?');
  }

  async add(input: { accountId: string; number: string; route: string }): Promise<PhoneNumberRecord> {
    const row: PhoneNumberRow = {
      account_id: input.accountId,
      number: input.number,
      route: input.route,
      created_at: nowIso(),
    };
    try {
      this.insert.run(row);
    } catch (error) {
      if (isUniqueViolation(error)) throw new AppError('conflict', `${input.number} is already configured`);
      throw error;
    }
    return toPhoneNumber(row);
  }

  async get(accountId: string, number: string): Promise<PhoneNumberRecord | null> {
    const row = this.byNumber.get(accountId, number) as PhoneNumberRow | undefined;
    return row ? toPhoneNumber(row) : null;
  }

  async list(accountId: string): Promise<PhoneNumberRecord[]> {
    return (this.byAccount.all(accountId) as PhoneNumberRow[]).map(toPhoneNumber);
  }

  async remove(accountId: string, number: string): Promise<boolean> {
    return this.deleteStatement.run(accountId, number).changes > 0;
  }
}

/** What the SQLite store needs of the job queue in its file (the jobs table: see src/openStore.ts). */
export interface SqliteStoreJobQueue extends JobQueue, SynchronousJobWriter {}

/** The embedded store: one SQLite file, shared by the API, the CLI and (later) the workers. */
export class SqliteStore implements Store {
  readonly accounts: SqliteAccounts;
  readonly apiKeys: SqliteApiKeys;
  readonly agents: SqliteAgents;
  readonly numbers: SqlitePhoneNumbers;
  readonly calls: SqliteCalls;
  readonly trunks: SqliteTrunks;
  readonly sandboxInvites: SqliteSandboxInvites;
  readonly webhookEndpoints: SqliteWebhookEndpoints;
  readonly events: SqliteEvents;
  readonly users: SqliteUsers;
  readonly sessions: SqliteSessions;
  readonly setupTokens: SqliteSetupTokens;
  readonly dashboard: SqliteDashboardQueries;
  readonly queue: SqliteStoreJobQueue;
  readonly db: SqliteDatabase;
  private readonly committer: GroupCommitter;

  /** `createQueue` builds the job queue on the same connection, so a store transaction holds its jobs. */
  constructor(db: SqliteDatabase, createQueue: (db: SqliteDatabase) => SqliteStoreJobQueue) {
    this.db = db;
    this.committer = new GroupCommitter(db);
    this.queue = createQueue(db);
    this.accounts = new SqliteAccounts(db);
    this.apiKeys = new SqliteApiKeys(db);
    this.agents = new SqliteAgents(db);
    this.numbers = new SqlitePhoneNumbers(db);
    this.calls = new SqliteCalls(db, this.committer, this.queue);
    this.trunks = new SqliteTrunks(db);
    this.sandboxInvites = new SqliteSandboxInvites(db);
    this.users = new SqliteUsers(db);
    this.sessions = new SqliteSessions(db);
    this.setupTokens = new SqliteSetupTokens(db);
    this.dashboard = new SqliteDashboardQueries(db);
    this.webhookEndpoints = new SqliteWebhookEndpoints(db, this.queue);
    this.events = new SqliteEvents(db, this.committer, this.queue);
  }

  async sealStoredSecrets(
    reseal: (stored: string) => string | null,
    serviceSecretNames: readonly string[],
  ): Promise<number> {
    return sealStoredSecrets(this.db, reseal, serviceSecretNames);
  }

  async serviceSecret(name: string, create: () => string): Promise<string> {
    return this.db
      .transaction(() => {
        const existing = this.db
          .prepare('SELECT value FROM service_secrets WHERE name = ?')
          .pluck()
          .get(name);
        if (typeof existing === 'string') return existing;
        const value = create();
        this.db
          .prepare('INSERT INTO service_secrets (name, value, created_at) VALUES (?, ?, ?)')
          .run(name, value, nowIso());
        return value;
      })
      .immediate();
  }

  /** Most callers want `openSqliteStore(path)` (src/openStore.ts), which supplies the queue. */
  static open(path: string, createQueue: (db: SqliteDatabase) => SqliteStoreJobQueue): SqliteStore {
    if (typeof createQueue !== 'function') {
      throw new Error(
        'SqliteStore.open needs its job queue: use openSqliteStore(path) from src/openStore.ts',
      );
    }
    return new SqliteStore(openSqliteDatabase(path), createQueue);
  }

  async ping(): Promise<void> {
    this.db.prepare('SELECT 1').get();
  }

  async close(): Promise<void> {
    this.committer.flush();
    if (this.db.open) this.db.close();
  }
}
