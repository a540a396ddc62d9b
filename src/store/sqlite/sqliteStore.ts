import type { ApiKeyWithAccount } from '../../domain/records.js';
import type { JobQueue, SynchronousJobWriter } from '../../queue/types.js';
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
import { type StoreQueries, sqliteQueries } from '../kysely/dialects.js';
import { KyselyDialRates } from '../kysely/dialRates.js';
import { KyselyDoNotCall } from '../kysely/doNotCall.js';
import { KyselyHoldAudio } from '../kysely/holdAudio.js';
import { KyselyInboundCalls } from '../kysely/inboundCalls.js';
import { KyselyPrices } from '../kysely/prices.js';
import { KyselyPrivacy } from '../kysely/privacy.js';
import { KyselyPhoneNumbers, KyselySandboxInvites, KyselyTrunks } from '../kysely/telephony.js';
import { KyselyWebCalls } from '../kysely/webCalls.js';
import type { Store } from '../types.js';
import { SqliteCalls } from './calls.js';
import { openSqliteDatabase, type SqliteDatabase } from './database.js';
import { SqliteEvents, SqliteWebhookEndpoints } from './events.js';
import { GroupCommitter } from './groupCommit.js';
import { type ApiKeyRow, toAccount, toApiKey } from './rows.js';
import { SqliteSetupTokens } from './setupTokens.js';
import { sealStoredSecrets } from './storedSecrets.js';

function nowIso(): string {
  return new Date().toISOString();
}

/**
 * API keys through Kysely, except the lookup every authenticated request makes, which stays a
 * statement prepared once (the API's hot path).
 */
class SqliteApiKeys extends KyselyApiKeys {
  private readonly byHash;

  constructor(db: SqliteDatabase, queries: StoreQueries) {
    super(queries);
    this.byHash = db.prepare(
      `SELECT k.*, a.id AS a_id, a.name AS a_name, a.is_default AS a_is_default,
              a.rate_limit_requests AS a_rate_limit_requests, a.rate_limit_window_s AS a_rate_limit_window_s,
              a.max_live_calls AS a_max_live_calls, a.created_at AS a_created_at
       FROM api_keys k JOIN accounts a ON a.id = k.account_id WHERE k.key_hash = ?`,
    );
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
}

/** What the SQLite store needs of the job queue in its file (the jobs table: see src/openStore.ts). */
export interface SqliteStoreJobQueue extends JobQueue, SynchronousJobWriter {}

/** The embedded store: one SQLite file, shared by the API, the CLI and (later) the workers. */
export class SqliteStore implements Store {
  readonly accounts: KyselyAccounts;
  readonly apiKeys: SqliteApiKeys;
  readonly agents: KyselyAgents;
  readonly numbers: KyselyPhoneNumbers;
  readonly calls: SqliteCalls;
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
  readonly privacy: KyselyPrivacy;
  readonly dialRates: KyselyDialRates;
  readonly agentTests: KyselyAgentTests;
  readonly holdAudio: KyselyHoldAudio;
  readonly sandboxInvites: KyselySandboxInvites;
  readonly webhookEndpoints: SqliteWebhookEndpoints;
  readonly events: SqliteEvents;
  readonly users: KyselyUsers;
  readonly sessions: KyselySessions;
  readonly setupTokens: SqliteSetupTokens;
  readonly dashboard: KyselyDashboardQueries;
  readonly queue: SqliteStoreJobQueue;
  readonly db: SqliteDatabase;
  private readonly committer: GroupCommitter;

  /** `createQueue` builds the job queue on the same connection, so a store transaction holds its jobs. */
  constructor(db: SqliteDatabase, createQueue: (db: SqliteDatabase) => SqliteStoreJobQueue) {
    this.db = db;
    this.committer = new GroupCommitter(db);
    this.queue = createQueue(db);
    // Plain records go through the one Kysely layer; the call path and the outbox stay hand-written.
    const queries = sqliteQueries(db);
    this.accounts = new KyselyAccounts(queries);
    this.apiKeys = new SqliteApiKeys(db, queries);
    this.agents = new KyselyAgents(queries);
    this.numbers = new KyselyPhoneNumbers(queries);
    this.calls = new SqliteCalls(db, this.committer, this.queue);
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
    this.privacy = new KyselyPrivacy(queries);
    this.dialRates = new KyselyDialRates(queries);
    this.agentTests = new KyselyAgentTests(queries);
    this.holdAudio = new KyselyHoldAudio(queries);
    this.sandboxInvites = new KyselySandboxInvites(queries);
    this.users = new KyselyUsers(queries);
    this.sessions = new KyselySessions(queries);
    this.setupTokens = new SqliteSetupTokens(db);
    this.dashboard = new KyselyDashboardQueries(queries);
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
