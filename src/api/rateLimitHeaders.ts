import type { RateDecision, RatePolicy } from '../domain/rateLimit.js';

/**
 * The IETF httpapi rate-limit headers (structured-field form of the current draft):
 * `RateLimit-Policy: "account";q=100;w=10` and `RateLimit: "account";r=57;t=3`.
 */
export function rateLimitHeaders(policyName: string, policy: RatePolicy, decision: RateDecision) {
  return {
    'RateLimit-Policy': `"${policyName}";q=${policy.requests};w=${policy.windowS}`,
    RateLimit: `"${policyName}";r=${decision.remaining};t=${decision.resetS}`,
  };
}
