import type { TransferDetail } from '../domain/statusEvents.js';
import { transferOutcomeOf } from '../domain/transferSettings.js';
import type { TransferResult } from '../telephony/sip/index.js';

/**
 * One transfer attempt as `metrics.transfers` keeps it: the target's name (never its number), how
 * it went, when it started and how long it took — what the call's trace makes its `transfer` span of.
 */
export interface TransferTiming {
  target: string;
  via: TransferDetail['via'] | null;
  outcome: TransferDetail['outcome'];
  sip_status: number | null;
  started_at: string;
  duration_ms: number;
}

/** Starts timing a transfer; `reported` takes the attempt's detail, `over` its result. */
export function startTransferTiming(target: string, nowMs: () => number = Date.now) {
  const startedAtMs = nowMs();
  let detail: TransferDetail | null = null;
  return {
    reported(reportedDetail: TransferDetail): void {
      detail = reportedDetail;
    },
    over(result: TransferResult): TransferTiming {
      return {
        target,
        via: detail?.via ?? null,
        outcome: detail?.outcome ?? transferOutcomeOf(result),
        sip_status: result.status ?? null,
        started_at: new Date(startedAtMs).toISOString(),
        duration_ms: Math.max(0, Math.round(nowMs() - startedAtMs)),
      };
    },
  };
}
