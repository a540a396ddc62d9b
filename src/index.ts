/**
 * The root export of the package: the API client and the webhook verifier, the two things an
 * integrator's code imports. The same file is the entry of the client package of its own,
 * `@callwright/client` (packages/client), built from these sources with no dependencies; the
 * server itself starts from main.ts, never from here.
 */
export * from './client/index.js';
export {
  defaultToleranceS,
  type HeaderLookup,
  type VerifyWebhookOptions,
  verifyWebhook,
  type WebhookRequestHeaders,
  WebhookVerificationError,
  webhookSecretPrefix,
} from './webhooks/verify.js';
