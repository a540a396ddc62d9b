import { readFileSync, statSync } from 'node:fs';
import { addCampaignContacts, removeCampaignContacts } from '../campaigns/campaignContactChanges.js';
import { campaignOf, campaignResource } from '../campaigns/campaignControl.js';
import { campaignFigures, campaignResultChunks } from '../campaigns/campaignResults.js';
import { campaignCsvLimits, parseCampaignCsv } from '../domain/campaignCsv.js';
import { type ResultFormat, resultFormats } from '../domain/campaignResults.js';
import { isAppError } from '../domain/errors.js';
import {
  type CommandContext,
  parseOptions,
  print,
  requiredOption,
  resolveAccount,
  UsageError,
  withRows,
} from './context.js';

type Verb = (context: CommandContext, args: string[]) => Promise<void>;

function readCsvFile(path: string): Buffer {
  try {
    if (statSync(path).size > campaignCsvLimits.bytesMax)
      throw new UsageError(`${path} is larger than ${campaignCsvLimits.bytesMax / 1024 / 1024} MiB`);
    return readFileSync(path);
  } catch (error) {
    if (error instanceof UsageError) throw error;
    throw new UsageError(`cannot read ${path}: ${(error as NodeJS.ErrnoException).code ?? 'error'}`);
  }
}

/**
 * `campaigns results|figures|add-contacts|remove-contacts`: the export, the figures and the live
 * contact edits of issue 37, on the same paths as the API.
 */
export const campaignResultVerbs: Record<string, Verb> = {
  async results(context, args) {
    const { values, positionals } = parseOptions(args, { format: { type: 'string' } }, ['CAMPAIGN_ID']);
    const format = (values.format ?? 'csv') as string;
    if (!(resultFormats as readonly string[]).includes(format))
      throw new UsageError(`--format is ${resultFormats.join(' or ')}`);
    const account = await resolveAccount(context);
    const campaign = await campaignOf(context.store, account.id, positionals[0] ?? '');
    // Page by page to standard output: `> results.csv`.
    for await (const chunk of campaignResultChunks(context.store, campaign, format as ResultFormat))
      context.out.stdout(chunk);
  },
  async figures(context, args) {
    const { positionals } = parseOptions(args, {}, ['CAMPAIGN_ID']);
    const account = await resolveAccount(context);
    const campaign = await campaignOf(context.store, account.id, positionals[0] ?? '');
    print(context, await campaignFigures(context.store, campaign));
  },
  async 'add-contacts'(context, args) {
    const { values, positionals } = parseOptions(args, { csv: { type: 'string' } }, ['CAMPAIGN_ID']);
    const bytes = readCsvFile(requiredOption(values, 'csv'));
    const account = await resolveAccount(context);
    try {
      const { campaign, added, firstPosition } = await addCampaignContacts(
        context.store,
        account.id,
        positionals[0] ?? '',
        { kind: 'csv', file: await parseCampaignCsv(bytes) },
        'cli',
      );
      print(context, {
        added,
        first_position: firstPosition,
        campaign: await campaignResource(context.store, campaign),
      });
    } catch (error) {
      throw isAppError(error) ? withRows(error) : error;
    }
  },
  async 'remove-contacts'(context, args) {
    const { values, positionals } = parseOptions(
      args,
      { id: { type: 'string', multiple: true }, number: { type: 'string', multiple: true } },
      ['CAMPAIGN_ID'],
    );
    const account = await resolveAccount(context);
    const { campaign, ...result } = await removeCampaignContacts(
      context.store,
      account.id,
      positionals[0] ?? '',
      {
        ...(values.id ? { contact_ids: values.id } : {}),
        ...(values.number ? { to_numbers: values.number } : {}),
      },
      'cli',
    );
    print(context, { ...result, campaign: await campaignResource(context.store, campaign) });
  },
};
