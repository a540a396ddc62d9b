import { describeDialRate, describeQuietHours, setDialRate, setQuietHours } from '../admin/callingRules.js';
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

/** `calling-rules …`: caps on calls per second by caller ID or trunk, and the quiet hours. */
export const callingRules: Record<string, Verb> = {
  async show(context, args) {
    parseOptions(args, {});
    const account = await resolveAccount(context);
    const [rates, quiet] = await Promise.all([
      context.store.dialRates.list(account.id),
      context.store.dialRates.quietHours(account.id),
    ]);
    print(context, { dial_rates: rates.map(describeDialRate), ...describeQuietHours(quiet) });
  },
  async 'dial-rate'(context, args) {
    const { values } = parseOptions(args, {
      'caller-id': { type: 'string' },
      trunk: { type: 'string' },
      'per-second': { type: 'string' },
      off: { type: 'boolean' },
    });
    const callerId = values['caller-id'];
    const trunk = values.trunk;
    if ((callerId === undefined) === (trunk === undefined))
      throw new UsageError('give --caller-id NUMBER or --trunk NAME');
    if ((values['per-second'] === undefined) === (values.off !== true))
      throw new UsageError('give --per-second N or --off');
    const perSecond = values.off ? null : Number(values['per-second']);
    const account = await resolveAccount(context);
    print(
      context,
      await setDialRate(context.store, account.id, {
        scope: callerId === undefined ? 'trunk' : 'caller_id',
        subject: callerId ?? trunk,
        calls_per_second: perSecond,
      }),
    );
  },
  async 'quiet-hours'(context, args) {
    const { values } = parseOptions(args, {
      start: { type: 'string' },
      end: { type: 'string' },
      'time-zone': { type: 'string' },
      off: { type: 'boolean' },
    });
    const given = [values.start, values.end, values['time-zone']].filter(
      (value) => value !== undefined,
    ).length;
    if (values.off ? given > 0 : given !== 3)
      throw new UsageError('give --start HH:MM --end HH:MM --time-zone ZONE, or --off');
    const account = await resolveAccount(context);
    const value = values.off
      ? null
      : { start: values.start, end: values.end, time_zone: values['time-zone'] };
    print(context, await setQuietHours(context.store, account.id, value));
  },
};
