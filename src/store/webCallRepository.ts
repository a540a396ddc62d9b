import type { CallRecord } from '../domain/records.js';
import type { VariableValue } from '../domain/templates.js';

export interface NewWebCall {
  id: string;
  accountId: string;
  agentId: string;
  apiKeyId: string;
  variables: Record<string, VariableValue> | null;
  metadata: Record<string, unknown> | null;
  tokenHash: string;
  createdAt: string;
  expiresAt: string;
}

/** Why a connection token was refused. */
export type WebCallTokenRefusal = 'unknown' | 'used' | 'expired';

/** A connection token's call, with what the connect route checks before it uses the token. */
export interface WebCallTokenOwner {
  callId: string;
  accountId: string;
  agentId: string;
  /** The origins the call's account allows (read in the same query). */
  allowedOrigins: string[];
}

/** Web calls (issue 39): a call row with `channel` 'web', and its one-use connection token. */
export interface WebCallRepository {
  /** Writes the call (queued, no dispatch job: the browser starts it) and its token's hash. */
  create(input: NewWebCall): Promise<CallRecord>;
  /** Whose token this is and the origins its account allows, in one query (before the token is used), or null. */
  tokenOwner(tokenHash: string): Promise<WebCallTokenOwner | null>;
  /** The origins the account allows its browsers to connect from (none until it sets them). */
  allowedOrigins(accountId: string): Promise<string[]>;
  /** Replaces the account's allowed origins with `origins` (one write). */
  setAllowedOrigins(accountId: string, origins: readonly string[], atIso: string): Promise<void>;
  /** Queued web calls whose token expired unused at `nowIso` (at most `limit`). */
  expiredUnused(nowIso: string, limit: number): Promise<string[]>;
  /** Marks the token used, atomically: only one caller ever gets the call for a token. */
  consume(
    tokenHash: string,
    nowIso: string,
  ): Promise<{ callId: string; accountId: string } | { refused: WebCallTokenRefusal }>;
}
