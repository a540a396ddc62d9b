import { describeAuditEntry, eraseNumber, retentionDaysMax } from '../privacy/dataRules.js';
import { type CommandContext, parseOptions, print, resolveAccount, UsageError } from './context.js';

type Verb = (context: CommandContext, args: string[]) => Promise<void>;

/** `privacy …`: retention of transcripts and recordings, erasure of a number, the audit log. */
export const privacy: Record<string, Verb> = {
  async 'erase-number'(context, args) {
    const { positionals } = parseOptions(args, {}, ['NUMBER']);
    const account = await resolveAccount(context);
    print(
      context,
      await eraseNumber(context.store, context.recordings ?? null, account.id, positionals[0] ?? '', 'cli'),
    );
  },
  async retention(context, args) {
    const { values } = parseOptions(args, { days: { type: 'string' }, off: { type: 'boolean' } });
    const account = await resolveAccount(context);
    if (values.days !== undefined && values.off) throw new UsageError('give --days N or --off, not both');
    if (values.days !== undefined || values.off) {
      const days = values.off ? null : Number(values.days);
      if (days !== null && (!Number.isInteger(days) || days < 1 || days > retentionDaysMax))
        throw new UsageError(`--days is a whole number from 1 to ${retentionDaysMax}`);
      await context.store.privacy.setRetentionDays(account.id, days, new Date().toISOString());
    }
    print(context, { retention_days: await context.store.privacy.retentionDays(account.id) });
  },
  async audit(context, args) {
    const { values } = parseOptions(args, { limit: { type: 'string' } });
    const limit = values.limit === undefined ? 20 : Number(values.limit);
    if (!Number.isInteger(limit) || limit < 1 || limit > 100) throw new UsageError('--limit is 1 to 100');
    const account = await resolveAccount(context);
    const entries = await context.store.privacy.listAudit(account.id, { limit });
    print(context, { entries: entries.map(describeAuditEntry) });
  },
};
