import {
  describeWebhookEndpoint,
  getWebhookEndpoint,
  listEvents,
  maxEventPageSize,
  resendEvent,
  rotateWebhookSecret,
  setWebhookEnabled,
  setWebhookEndpoint,
  setWebhookEventTypes,
  showEvent,
} from '../admin/webhooks.js';
import {
  type CommandContext,
  parseOptions,
  print,
  printList,
  resolveAccount,
  UsageError,
} from './context.js';

type Verb = (context: CommandContext, args: string[]) => Promise<void>;

/** `webhook …`: the account's endpoint and its signing secret. */
const webhook: Record<string, Verb> = {
  async set(context, args) {
    const { positionals } = parseOptions(args, {}, ['URL']);
    const account = await resolveAccount(context);
    const endpoint = await setWebhookEndpoint(
      context.store,
      await context.secretBox(),
      account.id,
      positionals[0] as string,
      {
        allowPrivate: context.webhookAllowPrivate === true,
      },
    );
    print(context, { url: endpoint.url, secret: endpoint.secret });
    if (!context.json) context.out.stderr('Verify deliveries with this secret (see docs/webhooks.md).\n');
  },
  async show(context, args) {
    parseOptions(args, {});
    const account = await resolveAccount(context);
    print(
      context,
      describeWebhookEndpoint(await getWebhookEndpoint(context.store, await context.secretBox(), account.id)),
    );
  },
  async 'rotate-secret'(context, args) {
    parseOptions(args, {});
    const account = await resolveAccount(context);
    const endpoint = await rotateWebhookSecret(context.store, await context.secretBox(), account.id);
    const described = describeWebhookEndpoint(endpoint);
    print(context, {
      url: described.url,
      secret: described.secret,
      previous_secret_expires_at: described.previous_secret_expires_at,
    });
  },
  async disable(context, args) {
    const { values } = parseOptions(args, { reason: { type: 'string' } });
    const account = await resolveAccount(context);
    const reason = typeof values.reason === 'string' ? values.reason.slice(0, 200) : null;
    const endpoint = await setWebhookEnabled(context.store, account.id, false, reason);
    print(context, {
      url: endpoint.url,
      enabled: endpoint.enabled,
      disabled_reason: endpoint.disabledReason,
    });
  },
  async 'set-events'(context, args) {
    const { positionals } = parseOptions(args, {}, ['TYPES']);
    const types = (positionals[0] as string)
      .split(',')
      .map((type) => type.trim())
      .filter((type) => type !== '');
    const account = await resolveAccount(context);
    const endpoint = await setWebhookEventTypes(context.store, account.id, types);
    print(context, { url: endpoint.url, events: endpoint.eventTypes });
  },
  async enable(context, args) {
    parseOptions(args, {});
    const account = await resolveAccount(context);
    const endpoint = await setWebhookEnabled(context.store, account.id, true);
    print(context, {
      url: endpoint.url,
      enabled: endpoint.enabled,
      disabled_reason: endpoint.disabledReason,
    });
  },
};

/** `events …`: the account's webhook events and their delivery attempts. */
const events: Record<string, Verb> = {
  async list(context, args) {
    const { values } = parseOptions(args, { limit: { type: 'string' }, cursor: { type: 'string' } });
    const limitText = typeof values.limit === 'string' ? values.limit : '20';
    if (!/^[0-9]{1,3}$/.test(limitText) || Number(limitText) < 1 || Number(limitText) > maxEventPageSize) {
      throw new UsageError(`--limit must be a whole number from 1 to ${maxEventPageSize}`);
    }
    const account = await resolveAccount(context);
    const page = await listEvents(context.store, account.id, {
      limit: Number(limitText),
      cursor: typeof values.cursor === 'string' ? values.cursor : undefined,
    });
    const { data, ...cursor } = page;
    printList(
      context,
      'data',
      data,
      (event) => ({
        event_id: event.event_id,
        type: event.type,
        call_id: event.call_id,
        status: event.status,
        attempts: event.attempts,
        created_at: event.created_at,
      }),
      cursor,
    );
    if (!context.json && page.has_more) context.out.stdout(`(more: --cursor ${page.next_cursor})\n`);
  },
  async show(context, args) {
    const { positionals } = parseOptions(args, {}, ['event id']);
    const account = await resolveAccount(context);
    print(context, await showEvent(context.store, account.id, positionals[0] as string));
  },
  async resend(context, args) {
    const { positionals } = parseOptions(args, {}, ['event id']);
    const account = await resolveAccount(context);
    print(context, await resendEvent(context.store, account.id, positionals[0] as string));
  },
};

export const webhookCommandGroups: Record<string, Record<string, Verb>> = { webhook, events };
