import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { listenOnlyScriptPath } from '../helpers/agentScripts.js';
import { runCli, runCliJson } from '../helpers/cli.js';

/**
 * `callwright campaigns` on the built command line: a campaign from a CSV file, refused whole with
 * a report by line when any row is bad (bad number, undeclared variable, repeated number, a file
 * that is not UTF-8, one too large), then shown, paused, resumed and canceled.
 */

let dataDir: string;
let agentId: string;

beforeAll(async () => {
  dataDir = mkdtempSync(join(tmpdir(), 'callwright-campaign-cli-'));
  const agent = await runCliJson(dataDir, [
    'agents',
    'create',
    '--name',
    'Reminder',
    '--prompt',
    'p',
    '--script',
    listenOnlyScriptPath,
    '--variable',
    'customer_name!',
    '--variable',
    'party:number=2',
  ]);
  agentId = agent.agent_id as string;
  await runCliJson(dataDir, ['numbers', 'add', '+15550009999']);
}, 60_000);

afterAll(() => {
  rmSync(dataDir, { recursive: true, force: true });
});

const create = (csv: string, extra: string[] = []) =>
  runCli(dataDir, [
    'campaigns',
    'create',
    '--json',
    '--csv',
    csv,
    '--agent',
    agentId,
    '--from',
    '+15550009999',
    '--window',
    '09:00-17:00',
    '--weekdays',
    '1-5',
    '--time-zone',
    'America/New_York',
    '--retry',
    'busy=30x3,no_answer=60x2',
    '--per-minute',
    '30',
    ...extra,
  ]);

describe('campaigns from the command line', () => {
  it('refuses a CSV with bad rows, naming each by its line, and creates nothing', async () => {
    const csv = join(dataDir, 'bad.csv');
    writeFileSync(
      csv,
      'to_number,customer_name,party,colour\n+12125550100,Ann,3,red\n555-0100,Bo,,\n+12125550100,Cy,,\n',
    );
    const refused = await create(csv);
    expect(refused.code).not.toBe(0);
    expect(refused.stderr).toContain('3 rows need fixing; nothing was created or dialled');
    expect(refused.stderr).toContain('line 2: variables.colour is not declared by the agent');
    expect(refused.stderr).toContain('line 3: to_number must be an E.164 phone number');
    expect(refused.stderr).toContain('line 4: to_number repeats line 2');

    writeFileSync(csv, Buffer.from([...Buffer.from('to_number,customer_name\n+12125550100,'), 0xe9, 0x0a]));
    expect((await create(csv)).stderr).toContain('line 1: the file is not UTF-8 text');

    writeFileSync(csv, `to_number,customer_name\n${'+12125550100,Ann\n'.repeat(2_100_000)}`);
    // Refused from its size, before it is read into memory (issue 34).
    const tooLarge = await create(csv);
    expect(tooLarge.stderr).toContain('is larger than 32 MiB (the limit of one campaign CSV)');
    expect(tooLarge.code).toBe(2);

    expect((await runCliJson(dataDir, ['campaigns', 'list'])).campaigns).toEqual([]);
  }, 60_000);

  it('creates a campaign from a good CSV with typed variables, and pauses, resumes and cancels it', async () => {
    const csv = join(dataDir, 'good.csv');
    writeFileSync(
      csv,
      'to_number,customer_name,party,time_zone\n+12125550100,Ann,3,\n+13105550100,Bo,,\n+15550100002,Cy,,Asia/Tokyo\n',
    );
    const result = await create(csv);
    expect(result.code).toBe(0);
    const campaign = JSON.parse(result.stdout) as Record<string, unknown>;
    expect(campaign).toMatchObject({
      status: 'running',
      contact_count: 3,
      calling_window: { start: '09:00', end: '17:00', weekdays: [1, 2, 3, 4, 5] },
      retry: {
        busy: { after_minutes: 30, max_attempts: 3 },
        no_answer: { after_minutes: 60, max_attempts: 2 },
      },
      calls_per_minute: 30,
      progress: { pending: 3 },
    });
    const id = campaign.campaign_id as string;
    expect(await runCliJson(dataDir, ['campaigns', 'pause', id])).toMatchObject({ status: 'paused' });
    expect(await runCliJson(dataDir, ['campaigns', 'resume', id])).toMatchObject({ status: 'running' });
    expect(await runCliJson(dataDir, ['campaigns', 'cancel', id])).toMatchObject({
      status: 'canceled',
      progress: { canceled: 3 },
    });
    expect((await runCli(dataDir, ['campaigns', 'resume', id])).code).not.toBe(0);
    expect(await runCliJson(dataDir, ['campaigns', 'show', id])).toMatchObject({ campaign_id: id });
  }, 60_000);

  it('adds and removes contacts live, and writes the results and figures (issue 37)', async () => {
    const csv = join(dataDir, 'live.csv');
    writeFileSync(csv, 'to_number,customer_name\n+12125550110,Ann\n');
    const id = (JSON.parse((await create(csv)).stdout) as { campaign_id: string }).campaign_id;
    const more = join(dataDir, 'more.csv');
    writeFileSync(more, 'to_number,customer_name\n+12125550111,Bo\n+12125550110,Ann\n');
    const refused = await runCli(dataDir, ['campaigns', 'add-contacts', id, '--csv', more]);
    expect(refused.code).not.toBe(0);
    expect(refused.stderr).toContain('line 3: to_number is already in the campaign');
    writeFileSync(more, 'to_number,customer_name\n+12125550111,Bo\n+12125550112,Cy\n');
    expect(await runCliJson(dataDir, ['campaigns', 'add-contacts', id, '--csv', more])).toMatchObject({
      added: 2,
      first_position: 1,
      campaign: { contact_count: 3 },
    });
    expect(
      await runCliJson(dataDir, ['campaigns', 'remove-contacts', id, '--number', '+12125550111']),
    ).toMatchObject({ removed: 1, on_call: 0, unmatched: 0 });
    const results = await runCli(dataDir, ['campaigns', 'results', id, '--format', 'csv']);
    expect(results.code).toBe(0);
    expect(
      results.stdout
        .trim()
        .split('\r\n')
        .map((line) => line.split(',').slice(1, 3)),
    ).toEqual([
      ['to_number', 'status'],
      ["'+12125550110", 'pending'],
      ["'+12125550111", 'removed'],
      ["'+12125550112", 'pending'],
    ]);
    expect(await runCliJson(dataDir, ['campaigns', 'figures', id])).toMatchObject({
      overall: { attempts: 0 },
    });
    await runCliJson(dataDir, ['campaigns', 'cancel', id]);
  }, 60_000);

  it('sets caller-ID health at create and edit, checked like the API (issue 37)', async () => {
    const csv = join(dataDir, 'health.csv');
    writeFileSync(csv, 'to_number,customer_name\n+12125550120,Di\n');
    const created = await create(csv, ['--caller-id-health', 'window=10,min=5']);
    expect(created.code).toBe(0);
    const campaign = JSON.parse(created.stdout) as { campaign_id: string; caller_id_health: unknown };
    expect(campaign.caller_id_health).toEqual({
      window_attempts: 10,
      min_attempts: 5,
      min_share_of_pool: 0.5,
      rest_minutes: 240,
    });
    const id = campaign.campaign_id;
    expect(
      await runCliJson(dataDir, [
        'campaigns',
        'edit',
        id,
        '--caller-id-health',
        'window_attempts=30,share=0.25,rest=45',
      ]),
    ).toMatchObject({
      caller_id_health: { window_attempts: 30, min_attempts: 10, min_share_of_pool: 0.25, rest_minutes: 45 },
    });
    const outOfRange = await runCli(dataDir, ['campaigns', 'edit', id, '--caller-id-health', 'share=2']);
    expect(outOfRange.code).not.toBe(0);
    expect(outOfRange.stderr).toContain('caller_id_health.min_share_of_pool');
    const malformed = await runCli(dataDir, ['campaigns', 'edit', id, '--caller-id-health', 'often=3']);
    expect(malformed.code).not.toBe(0);
    expect(malformed.stderr).toContain('--caller-id-health takes');
    expect(
      await runCliJson(dataDir, ['campaigns', 'edit', id, '--caller-id-health', 'default']),
    ).toMatchObject({
      caller_id_health: { window_attempts: 20, min_attempts: 10, min_share_of_pool: 0.5, rest_minutes: 240 },
    });
    await runCliJson(dataDir, ['campaigns', 'cancel', id]);
  }, 60_000);

  it('sets retention, erases a number and lists the audit log from the command line', async () => {
    expect(await runCliJson(dataDir, ['privacy', 'retention'])).toEqual({ retention_days: null });
    expect(await runCliJson(dataDir, ['privacy', 'retention', '--days', '90'])).toEqual({
      retention_days: 90,
    });
    expect((await runCli(dataDir, ['privacy', 'retention', '--days', '0'])).code).not.toBe(0);
    expect(await runCliJson(dataDir, ['privacy', 'erase-number', '+12125550100'])).toMatchObject({
      calls_erased: 0,
      campaign_contacts_erased: 1,
    });
    const audit = (await runCliJson(dataDir, ['privacy', 'audit'])).entries as Record<string, unknown>[];
    expect(audit[0]).toMatchObject({ action: 'erase_number', actor: 'cli', subject: '+1212*****00' });
    expect((await runCli(dataDir, ['privacy', 'erase-number', '555'])).code).not.toBe(0);
  }, 60_000);

  it('caps calls per second of a caller ID and sets quiet hours from the command line', async () => {
    expect(await runCliJson(dataDir, ['calling-rules', 'show'])).toEqual({
      dial_rates: [],
      quiet_hours: null,
    });
    expect(
      await runCliJson(dataDir, [
        'calling-rules',
        'dial-rate',
        '--caller-id',
        '+15550009999',
        '--per-second',
        '2',
      ]),
    ).toEqual({ scope: 'caller_id', subject: '+15550009999', calls_per_second: 2 });
    // Not the account's number, no trunk of that name, a rate out of range, both or neither subject.
    const refusals: [string[], RegExp][] = [
      [['--caller-id', '+15550001111', '--per-second', '2'], /no such number in this account/],
      [['--trunk', 'nowhere', '--per-second', '2'], /no such trunk in this account/],
      [['--caller-id', '+15550009999', '--per-second', '500'], /from 1 to 100/],
      [['--caller-id', '+15550009999', '--trunk', 't', '--off'], /--caller-id NUMBER or --trunk NAME/],
      [['--caller-id', '+15550009999'], /--per-second N or --off/],
    ];
    for (const [args, message] of refusals) {
      const refused = await runCli(dataDir, ['calling-rules', 'dial-rate', ...args]);
      expect(refused.code, args.join(' ')).not.toBe(0);
      expect(refused.stderr).toMatch(message);
    }
    expect(
      await runCliJson(dataDir, [
        'calling-rules',
        'quiet-hours',
        '--start',
        '21:00',
        '--end',
        '08:00',
        '--time-zone',
        'Europe/Berlin',
      ]),
    ).toEqual({ quiet_hours: { start: '21:00', end: '08:00', time_zone: 'Europe/Berlin' } });
    const badZone = await runCli(dataDir, [
      'calling-rules',
      'quiet-hours',
      '--start',
      '21:00',
      '--end',
      '08:00',
      '--time-zone',
      'Mars/Base',
    ]);
    expect(badZone.stderr).toMatch(/IANA time zone/);
    expect(await runCliJson(dataDir, ['calling-rules', 'show'])).toEqual({
      dial_rates: [{ scope: 'caller_id', subject: '+15550009999', calls_per_second: 2 }],
      quiet_hours: { start: '21:00', end: '08:00', time_zone: 'Europe/Berlin' },
    });
    await runCliJson(dataDir, ['calling-rules', 'dial-rate', '--caller-id', '+15550009999', '--off']);
    expect(await runCliJson(dataDir, ['calling-rules', 'quiet-hours', '--off'])).toEqual({
      quiet_hours: null,
    });
    expect(await runCliJson(dataDir, ['calling-rules', 'show'])).toEqual({
      dial_rates: [],
      quiet_hours: null,
    });
  }, 60_000);
});
