import type { CallStatus } from '../domain/callStatus.js';
import type {
  CallDirection,
  CallRecord,
  InboundFallback,
  PhoneNumberRecord,
  TrunkRecord,
} from '../domain/records.js';
import type { VariableValue } from '../domain/templates.js';

/** An inbound call to write, answered at once by this worker (it is live from its first row). */
export interface NewInboundCall {
  id: string;
  accountId: string;
  agentId: string;
  /** The caller (E.164), and the number of ours that was called. */
  fromNumber: string;
  toNumber: string;
  callbackOf: string | null;
  context: string | null;
  variables: Record<string, VariableValue> | null;
  sipCallId: string;
  workerId: string;
  leaseUntilIso: string;
  atIso: string;
}

export interface InboundCallListQuery {
  direction?: CallDirection;
  status?: CallStatus;
  limit: number;
  before?: string;
}

/** Issue 40: numbers' inbound settings, the callback lookup and the race-free inbound claim. */
export interface InboundCallRepository {
  /** The number's inbound settings; null when the account has no such number. */
  setNumberInbound(
    accountId: string,
    number: string,
    settings: {
      inboundAgentId: string | null;
      inboundFallback: InboundFallback;
      maxLiveCalls: number | null;
    },
  ): Promise<PhoneNumberRecord | null>;
  /** Every account's configuration of a called number (a number may be routed by one account only in practice). */
  numbersCalled(number: string): Promise<PhoneNumberRecord[]>;
  /** The latest outbound call from `ourNumber` to `caller` created at or after `sinceIso`. */
  latestOutboundTo(
    accountId: string,
    ourNumber: string,
    caller: string,
    sinceIso: string,
  ): Promise<CallRecord | null>;
  /**
   * Writes the call already `dialing` under this worker's lease, in one serialised step that counts
   * the account's live calls (inbound and outbound) against its cap and the number's live calls
   * against the number's cap. Nothing is written when a cap is reached.
   */
  createAnswering(
    input: NewInboundCall,
  ): Promise<{ created: CallRecord } | { refused: 'account_capped' | 'number_capped' }>;
  /** Every account's trunks (the inbound rules are built from their settings). */
  allTrunks(): Promise<TrunkRecord[]>;
  /**
   * The campaign contact whose attempt was `callId` called back: it is `done`, answered, and never
   * retried. False when it was not waiting for a retry (already done, or no campaign call).
   */
  markContactAnswered(callId: string, atIso: string): Promise<boolean>;
  /** Calls newest first, filtered by direction and status. */
  list(accountId: string, query: InboundCallListQuery): Promise<CallRecord[]>;
}
