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
import type { Logger } from '../../logger.js';
import type {
  AccountRepository,
  AgentRepository,
  ApiKeyRepository,
  PhoneNumberRepository,
  Store,
} from '../types.js';
import { PostgresCalls } from './calls.js';
import { PostgresDashboardQueries, PostgresSessions, PostgresUsers, updateAgentRow } from './dashboard.js';
import {
  assertSchemaName,
  createPool,
  isUniqueViolation,
  migrate,
  type PgPool,
  withTransaction,
} from './database.js';
import { PostgresEvents, PostgresWebhookEndpoints } from './events.js';
import type { PostgresStoreJobQueue, StartPostgresJobQueue } from './jobQueue.js';
import {
  type AccountRow,
  type AgentRow,
  type ApiKeyRow,
  jsonParam,
  type PhoneNumberRow,
  toAccount,
  toAgent,
  toApiKey,
  toPhoneNumber,
} from './rows.js';
import { PostgresSetupTokens } from './setupTokens.js';
import { sealStoredSecrets } from './storedSecrets.js';
import { PostgresSandboxInvites, PostgresTrunks } from './telephony.js';

function nowIso(): string {
  return new Date().toISOString();
}

const insertAccountSql = `INSERT INTO accounts (id, name, is_default, rate_limit_requests, rate_limit_window_s,
  max_live_calls, created_at) VALUES ($1, $2, $3, $4, $5, $6, $7) RETURNING *`;

class PostgresAccounts implements AccountRepository {
  constructor(private readonly pool: PgPool) {}

  async create(input: Parameters<AccountRepository['create']>[0]): Promise<AccountRecord> {
    const { rows } = await this.pool.query<AccountRow>(insertAccountSql, [
      newId('account'),
      input.name,
      false,
      input.ratePolicy?.requests ?? null,
      input.ratePolicy?.windowS ?? null,
      input.maxLiveCalls ?? 10,
      nowIso(),
    ]);
    return toAccount(rows[0] as AccountRow);
  }

  async get(id: string): Promise<AccountRecord | null> {
    const { rows } = await this.pool.query<AccountRow>('SELECT * FROM accounts WHERE id = $1', [id]);
    return rows[0] ? toAccount(rows[0]) : null;
  }

  async list(): Promise<AccountRecord[]> {
    const { rows } = await this.pool.query<AccountRow>('SELECT * FROM accounts ORDER BY created_at, id');
    return rows.map(toAccount);
  }

  async getOrCreateDefault(): Promise<AccountRecord> {
    // The partial unique index makes a concurrent second insert do nothing; then read the winner.
    await this.pool.query(
      `INSERT INTO accounts (id, name, is_default, max_live_calls, created_at)
       VALUES ($1, 'Default account', true, 10, $2) ON CONFLICT (is_default) WHERE is_default DO NOTHING`,
      [newId('account'), nowIso()],
    );
    const { rows } = await this.pool.query<AccountRow>('SELECT * FROM accounts WHERE is_default');
    return toAccount(rows[0] as AccountRow);
  }
}

class PostgresApiKeys implements ApiKeyRepository {
  constructor(private readonly pool: PgPool) {}

  async create(input: NewApiKey): Promise<ApiKeyRecord> {
    const { rows } = await this.pool.query<ApiKeyRow>(
      `INSERT INTO api_keys (id, account_id, name, key_hash, prefix, last4, created_at)
       VALUES ($1, $2, $3, $4, $5, $6, $7) RETURNING *`,
      [newId('apiKey'), input.accountId, input.name, input.keyHash, input.prefix, input.last4, nowIso()],
    );
    return toApiKey(rows[0] as ApiKeyRow);
  }

  async findByHash(keyHash: string): Promise<ApiKeyWithAccount | null> {
    const { rows } = await this.pool.query<ApiKeyRow & { account: AccountRow }>(
      `SELECT k.*, row_to_json(a) AS account FROM api_keys k JOIN accounts a ON a.id = k.account_id
       WHERE k.key_hash = $1`,
      [keyHash],
    );
    const row = rows[0];
    if (!row) return null;
    return { key: toApiKey(row), keyHash: row.key_hash, account: toAccount(row.account) };
  }

  async list(accountId: string): Promise<ApiKeyRecord[]> {
    const { rows } = await this.pool.query<ApiKeyRow>(
      'SELECT * FROM api_keys WHERE account_id = $1 ORDER BY created_at, id',
      [accountId],
    );
    return rows.map(toApiKey);
  }

  async revoke(accountId: string, keyId: string, atIso: string): Promise<ApiKeyRecord | null> {
    const { rows } = await this.pool.query<ApiKeyRow>(
      `UPDATE api_keys SET revoked_at = COALESCE(revoked_at, $1) WHERE account_id = $2 AND id = $3 RETURNING *`,
      [atIso, accountId, keyId],
    );
    return rows[0] ? toApiKey(rows[0]) : null;
  }

  async touchLastUsed(keyId: string, atIso: string): Promise<void> {
    await this.pool.query('UPDATE api_keys SET last_used_at = $1 WHERE id = $2', [atIso, keyId]);
  }
}

class PostgresAgents implements AgentRepository {
  constructor(private readonly pool: PgPool) {}

  async create(input: NewAgent): Promise<AgentRecord> {
    const at = nowIso();
    const { rows } = await this.pool.query<AgentRow>(
      `INSERT INTO agents (id, account_id, name, active, prompt, first_message, variables, extraction, brain,
         script, settings, max_duration_s, silence_timeout_s, created_at, updated_at)
       VALUES ($1, $2, $3, $4, $5, $6, $7::jsonb, $8::jsonb, $9, $10::jsonb, $11::jsonb, $12, $13, $14, $14)
       RETURNING *`,
      [
        newId('agent'),
        input.accountId,
        input.name,
        input.active,
        input.prompt,
        input.firstMessage,
        JSON.stringify(input.variables),
        JSON.stringify(input.extraction),
        input.brain,
        jsonParam(input.script),
        JSON.stringify(input.settings),
        input.maxDurationS,
        input.silenceTimeoutS,
        at,
      ],
    );
    return toAgent(rows[0] as AgentRow);
  }

  async get(accountId: string, agentId: string): Promise<AgentRecord | null> {
    const { rows } = await this.pool.query<AgentRow>(
      'SELECT * FROM agents WHERE account_id = $1 AND id = $2',
      [accountId, agentId],
    );
    return rows[0] ? toAgent(rows[0]) : null;
  }

  async list(accountId: string): Promise<AgentRecord[]> {
    const { rows } = await this.pool.query<AgentRow>(
      'SELECT * FROM agents WHERE account_id = $1 ORDER BY created_at, id',
      [accountId],
    );
    return rows.map(toAgent);
  }

  update(
    accountId: string,
    agentId: string,
    fields: Parameters<AgentRepository['update']>[2],
  ): Promise<AgentRecord | null> {
    return updateAgentRow(this.pool, accountId, agentId, fields);
  }

  async setActive(accountId: string, agentId: string, active: boolean): Promise<AgentRecord | null> {
    const { rows } = await this.pool.query<AgentRow>(
      'UPDATE agents SET active = $1, updated_at = $2 WHERE account_id = $3 AND id = $4 RETURNING *',
      [active, nowIso(), accountId, agentId],
    );
    return rows[0] ? toAgent(rows[0]) : null;
  }
}

class PostgresPhoneNumbers implements PhoneNumberRepository {
  constructor(private readonly pool: PgPool) {}

  async add(input: { accountId: string; number: string; route: string }): Promise<PhoneNumberRecord> {
    try {
      const { rows } = await this.pool.query<PhoneNumberRow>(
        'INSERT INTO phone_numbers (account_id, number, route, created_at) VALUES ($1, $2, $3, $4) RETURNING *',
        [input.accountId, input.number, input.route, nowIso()],
      );
      return toPhoneNumber(rows[0] as PhoneNumberRow);
    } catch (error) {
      if (isUniqueViolation(error)) throw new AppError('conflict', `${input.number} is already configured`);
      throw error;
    }
  }

  async get(accountId: string, number: string): Promise<PhoneNumberRecord | null> {
    const { rows } = await this.pool.query<PhoneNumberRow>(
      'SELECT * FROM phone_numbers WHERE account_id = $1 AND number = $2',
      [accountId, number],
    );
    return rows[0] ? toPhoneNumber(rows[0]) : null;
  }

  async list(accountId: string): Promise<PhoneNumberRecord[]> {
    const { rows } = await this.pool.query<PhoneNumberRow>(
      'SELECT * FROM phone_numbers WHERE account_id = $1 ORDER BY number',
      [accountId],
    );
    return rows.map(toPhoneNumber);
  }

  async remove(accountId: string, number: string): Promise<boolean> {
    const result = await this.pool.query('DELETE FROM phone_numbers WHERE account_id = $1 AND number = $2', [
      accountId,
      number,
    ]);
    return (result.rowCount ?? 0) > 0;
  }
}

export interface PostgresStoreOptions {
  connectionString: string;
  /** The schema of callwright's tables; pg-boss's jobs live in `<schema>_jobs`. */
  schema?: string;
  maxConnections?: number;
  /** Installs the job queue kept in this database (pg-boss: see src/openStore.ts). */
  startQueue: StartPostgresJobQueue;
  logger: Logger;
}

/** The scale-out store: PostgreSQL through a pool, shared by any number of API and worker processes. */
export class PostgresStore implements Store {
  readonly accounts: PostgresAccounts;
  readonly apiKeys: PostgresApiKeys;
  readonly agents: PostgresAgents;
  readonly numbers: PostgresPhoneNumbers;
  readonly calls: PostgresCalls;
  readonly trunks: PostgresTrunks;
  readonly sandboxInvites: PostgresSandboxInvites;
  readonly webhookEndpoints: PostgresWebhookEndpoints;
  readonly events: PostgresEvents;
  readonly users: PostgresUsers;
  readonly sessions: PostgresSessions;
  readonly setupTokens: PostgresSetupTokens;
  readonly dashboard: PostgresDashboardQueries;
  private closed = false;

  private constructor(
    readonly pool: PgPool,
    readonly schema: string,
    readonly queue: PostgresStoreJobQueue,
  ) {
    this.accounts = new PostgresAccounts(pool);
    this.apiKeys = new PostgresApiKeys(pool);
    this.agents = new PostgresAgents(pool);
    this.numbers = new PostgresPhoneNumbers(pool);
    this.calls = new PostgresCalls(pool, queue);
    this.trunks = new PostgresTrunks(pool);
    this.sandboxInvites = new PostgresSandboxInvites(pool);
    this.webhookEndpoints = new PostgresWebhookEndpoints(pool, queue);
    this.events = new PostgresEvents(pool, queue);
    this.users = new PostgresUsers(pool);
    this.sessions = new PostgresSessions(pool);
    this.setupTokens = new PostgresSetupTokens(pool);
    this.dashboard = new PostgresDashboardQueries(pool);
  }

  /** Connects, migrates our schema and then starts the job queue (under one advisory lock). */
  static async open(options: PostgresStoreOptions): Promise<PostgresStore> {
    if (typeof options.startQueue !== 'function') {
      throw new Error(
        'PostgresStore.open needs its job queue: use openPostgresStore() from src/openStore.ts',
      );
    }
    const schema = assertSchemaName(options.schema ?? 'callwright');
    const pool = createPool({
      connectionString: options.connectionString,
      schema,
      logger: options.logger,
      ...(options.maxConnections ? { maxConnections: options.maxConnections } : {}),
    });
    try {
      let queue: PostgresStoreJobQueue | undefined;
      await migrate(pool, schema, async () => {
        queue = await options.startQueue({ pool, schema });
      });
      if (!queue) throw new Error('the job queue did not start');
      return new PostgresStore(pool, schema, queue);
    } catch (error) {
      await pool.end().catch(() => undefined);
      throw error;
    }
  }

  sealStoredSecrets(
    reseal: (stored: string) => string | null,
    serviceSecretNames: readonly string[],
  ): Promise<number> {
    return sealStoredSecrets(this.pool, reseal, serviceSecretNames);
  }

  serviceSecret(name: string, create: () => string): Promise<string> {
    return withTransaction(this.pool, async (client) => {
      const existing = await client.query<{ value: string }>(
        'SELECT value FROM service_secrets WHERE name = $1',
        [name],
      );
      if (existing.rows[0]) return existing.rows[0].value;
      // Another process may insert the same name meanwhile: its value wins for everyone.
      await client.query(
        'INSERT INTO service_secrets (name, value, created_at) VALUES ($1, $2, $3) ON CONFLICT DO NOTHING',
        [name, create(), nowIso()],
      );
      const { rows } = await client.query<{ value: string }>(
        'SELECT value FROM service_secrets WHERE name = $1',
        [name],
      );
      return (rows[0] as { value: string }).value;
    });
  }

  async ping(): Promise<void> {
    await this.pool.query('SELECT 1');
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await this.queue.stop();
    await this.pool.end();
  }
}
