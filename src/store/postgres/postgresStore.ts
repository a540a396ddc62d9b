import type { ApiKeyWithAccount } from '../../domain/records.js';
import type { Logger } from '../../logger.js';
import { queueNames } from '../../queue/types.js';
import { KyselyAccounts, KyselyApiKeys } from '../kysely/accounts.js';
import { KyselyAgents } from '../kysely/agents.js';
import { KyselyAgentTests } from '../kysely/agentTests.js';
import { KyselyCallerIdHealth } from '../kysely/callerIdHealth.js';
import { KyselyCampaignContactEdits } from '../kysely/campaignContactEdits.js';
import { KyselyCampaignResults } from '../kysely/campaignResults.js';
import { KyselyCampaignRules } from '../kysely/campaignRules.js';
import { KyselyCampaigns } from '../kysely/campaigns.js';
import { KyselyCredentials } from '../kysely/credentials.js';
import { KyselyDashboardQueries, KyselySessions, KyselyUsers } from '../kysely/dashboard.js';
import { postgresQueries, type StoreQueries } from '../kysely/dialects.js';
import { KyselyDialRates } from '../kysely/dialRates.js';
import { KyselyDoNotCall } from '../kysely/doNotCall.js';
import { KyselyHoldAudio } from '../kysely/holdAudio.js';
import { KyselyInboundCalls } from '../kysely/inboundCalls.js';
import { KyselyPrices } from '../kysely/prices.js';
import { KyselyPrivacy } from '../kysely/privacy.js';
import { KyselyPhoneNumbers, KyselySandboxInvites, KyselyTrunks } from '../kysely/telephony.js';
import { KyselyWebCalls } from '../kysely/webCalls.js';
import type { Store } from '../types.js';
import { PostgresCalls } from './calls.js';
import { assertSchemaName, createPool, migrate, type PgPool, withTransaction } from './database.js';
import { PostgresEvents, PostgresWebhookEndpoints } from './events.js';
import type { PostgresStoreJobQueue, StartPostgresJobQueue } from './jobQueue.js';
import { type AccountRow, type ApiKeyRow, toAccount, toApiKey } from './rows.js';
import { PostgresSetupTokens } from './setupTokens.js';
import { sealStoredSecrets } from './storedSecrets.js';

function nowIso(): string {
  return new Date().toISOString();
}

/**
 * API keys through Kysely, except the lookup every authenticated request makes, which stays
 * hand-written SQL (the API's hot path).
 */
class PostgresApiKeys extends KyselyApiKeys {
  constructor(
    private readonly pool: PgPool,
    queries: StoreQueries,
  ) {
    super(queries);
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

/**
 * Erasure on PostgreSQL also deletes the erased calls' finished dispatch jobs: pg-boss keeps
 * finished jobs for days, and their payload is the call id (issue 34). After the rows, and
 * repeatable like them.
 */
class PostgresPrivacy extends KyselyPrivacy {
  constructor(
    queries: StoreQueries,
    private readonly pool: PgPool,
    private readonly jobs: PostgresStoreJobQueue,
  ) {
    super(queries);
  }

  override async eraseNumber(
    accountId: string,
    number: string,
    callIds: readonly string[],
  ): Promise<{ calls: number; contacts: number }> {
    const erased = await super.eraseNumber(accountId, number, callIds);
    await this.jobs.forgetFinished(
      this.pool,
      queueNames.dispatch,
      callIds.map((callId) => ({ call_id: callId })),
    );
    return erased;
  }
}

/** The scale-out store: PostgreSQL through a pool, shared by any number of API and worker processes. */
export class PostgresStore implements Store {
  readonly accounts: KyselyAccounts;
  readonly apiKeys: PostgresApiKeys;
  readonly agents: KyselyAgents;
  readonly numbers: KyselyPhoneNumbers;
  readonly calls: PostgresCalls;
  readonly trunks: KyselyTrunks;
  readonly credentials: KyselyCredentials;
  readonly prices: KyselyPrices;
  readonly doNotCall: KyselyDoNotCall;
  readonly campaigns: KyselyCampaigns;
  readonly campaignRules: KyselyCampaignRules;
  readonly callerIdHealth: KyselyCallerIdHealth;
  readonly webCalls: KyselyWebCalls;
  readonly inboundCalls: KyselyInboundCalls;
  readonly campaignContactEdits: KyselyCampaignContactEdits;
  readonly campaignResults: KyselyCampaignResults;
  readonly privacy: PostgresPrivacy;
  readonly dialRates: KyselyDialRates;
  readonly agentTests: KyselyAgentTests;
  readonly holdAudio: KyselyHoldAudio;
  readonly sandboxInvites: KyselySandboxInvites;
  readonly webhookEndpoints: PostgresWebhookEndpoints;
  readonly events: PostgresEvents;
  readonly users: KyselyUsers;
  readonly sessions: KyselySessions;
  readonly setupTokens: PostgresSetupTokens;
  readonly dashboard: KyselyDashboardQueries;
  private closed = false;

  private constructor(
    readonly pool: PgPool,
    readonly schema: string,
    readonly queue: PostgresStoreJobQueue,
  ) {
    // Plain records go through the one Kysely layer; the call path and the outbox stay hand-written.
    const queries = postgresQueries(pool);
    this.accounts = new KyselyAccounts(queries);
    this.apiKeys = new PostgresApiKeys(pool, queries);
    this.agents = new KyselyAgents(queries);
    this.numbers = new KyselyPhoneNumbers(queries);
    this.calls = new PostgresCalls(pool, queue);
    this.trunks = new KyselyTrunks(queries);
    this.credentials = new KyselyCredentials(queries);
    this.prices = new KyselyPrices(queries);
    this.doNotCall = new KyselyDoNotCall(queries);
    this.campaigns = new KyselyCampaigns(queries);
    this.campaignRules = new KyselyCampaignRules(queries);
    this.callerIdHealth = new KyselyCallerIdHealth(queries);
    this.webCalls = new KyselyWebCalls(queries);
    this.inboundCalls = new KyselyInboundCalls(queries);
    this.campaignContactEdits = new KyselyCampaignContactEdits(queries);
    this.campaignResults = new KyselyCampaignResults(queries);
    this.privacy = new PostgresPrivacy(queries, pool, queue);
    this.dialRates = new KyselyDialRates(queries);
    this.agentTests = new KyselyAgentTests(queries);
    this.holdAudio = new KyselyHoldAudio(queries);
    this.sandboxInvites = new KyselySandboxInvites(queries);
    this.webhookEndpoints = new PostgresWebhookEndpoints(pool, queue);
    this.events = new PostgresEvents(pool, queue);
    this.users = new KyselyUsers(queries);
    this.sessions = new KyselySessions(queries);
    this.setupTokens = new PostgresSetupTokens(pool);
    this.dashboard = new KyselyDashboardQueries(queries);
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
