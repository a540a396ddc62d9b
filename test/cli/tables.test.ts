import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import type { Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  loopbackServeEnv,
  runCli,
  runCliJson,
  runCliWith,
  type ServeProcess,
  startServeProcess,
  startWebhookReceiverWithCli,
} from '../helpers/cli.js';

/**
 * Issue 38, item 8: every `list` and `show` verb, run as users run it against the data of a real
 * service (`serve` dialling the sandbox, webhooks delivered), prints lines of at most 120 columns
 * for people — ids whole, long text cut with an ellipsis — and with `--json` the full records.
 */

const repoRoot = new URL('../../', import.meta.url).pathname;
const dataDir = mkdtempSync(join(tmpdir(), 'callwright-tables-'));
const env = loopbackServeEnv(dataDir, 46_000 + (process.pid % 40) * 100, {
  CALLWRIGHT_WEBHOOK_ALLOW_PRIVATE: 'true',
  LOG_LEVEL: 'info',
});
let service: ServeProcess | undefined;
let receiver: Server | undefined;

const cli = (args: string[]) => runCli(dataDir, args, env);
const json = (args: string[]) => runCliJson(dataDir, args, env);
const longName =
  'Spring appointment reminders for every customer of the Berlin and Hamburg branches, round 2';
const longPrompt =
  'Confirm the appointment. Be polite and brief, greet the customer by name, say which day the ' +
  'appointment is on, offer another day when that one does not suit them, and say goodbye.';

let agentId = '';
let completedCallId = '';
let busyCallId = '';
let campaignId = '';
let eventId = '';

async function callEnded(callId: string): Promise<Record<string, unknown>> {
  const deadline = Date.now() + 90_000;
  for (;;) {
    const call = await json(['calls', 'show', callId]);
    if (!['queued', 'dialing', 'ringing', 'in_progress'].includes(call.status as string)) return call;
    if (Date.now() > deadline) throw new Error(`call ${callId} still ${String(call.status)}`);
    await new Promise((resolve) => setTimeout(resolve, 500));
  }
}

beforeAll(async () => {
  // The database and its default account first (the CLI makes them), then the service on it.
  await json(['keys', 'create', '--name', 'tables']);
  const accountId = ((await json(['accounts', 'list'])).accounts as { account_id: string }[])[0]
    ?.account_id as string;
  service = await startServeProcess([], env, 60_000);
  agentId = (
    await json([
      ...['agents', 'create', '--name', 'Appointments', '--prompt', longPrompt],
      ...['--script', join(repoRoot, 'examples/agents/appointment-confirmation.json')],
      ...[
        '--variable',
        'customer_name!',
        '--variable',
        'appointment_day=Tuesday',
        '--variable',
        'reschedule_to=',
      ],
    ])
  ).agent_id as string;
  await json(['numbers', 'add', '+15550009999']);
  receiver = await startWebhookReceiverWithCli(env, accountId, () => {});
  const place = async (to: string) =>
    (
      await json([
        ...['calls', 'place', '--agent', agentId, '--from', '+15550009999', '--to', to],
        ...['--var', 'customer_name=Ann'],
      ])
    ).call_id as string;
  completedCallId = await place('+15550100001');
  busyCallId = await place('+15550100002');
  expect((await callEnded(completedCallId)).status).toBe('completed');
  expect((await callEnded(busyCallId)).status).toBe('busy');

  const csv = join(dataDir, 'contacts.csv');
  writeFileSync(csv, 'to_number,customer_name\n+15550100001,Ann\n+15550100006,Bo\n');
  campaignId = (
    await json([
      ...['campaigns', 'create', '--csv', csv, '--agent', agentId, '--from', '+15550009999'],
      ...['--window', '09:00-17:00', '--time-zone', 'Europe/Berlin', '--name', longName],
      ...['--starts-at', '2099-01-05T08:00:00Z'],
    ])
  ).campaign_id as string;
  await json([
    'trunks',
    'add',
    '--name',
    'carrier',
    '--uri',
    'sip:sip.example.com',
    '--username',
    'acme',
    '--password',
    'pw-tables',
  ]);
  const credential = await runCliWith({ env, input: 'dg-key-for-the-tables-test\n' }, [
    ...['credentials', 'add', '--name', 'dg', '--provider', 'deepgram', '--json'],
  ]);
  expect(credential.code, credential.stderr).toBe(0);
  const user = await runCliWith({ env, input: 'a long enough password 1\n' }, [
    ...['users', 'create', '--email', 'owner@example.com', '--json'],
  ]);
  expect(user.code, user.stderr).toBe(0);
  await json(['do-not-call', 'add', '+15550100003']);
  await json(['calling-rules', 'dial-rate', '--caller-id', '+15550009999', '--per-second', '2']);
  await json([
    'calling-rules',
    'quiet-hours',
    '--start',
    '21:00',
    '--end',
    '08:00',
    '--time-zone',
    'Europe/Berlin',
  ]);
  await json(['privacy', 'erase-number', '+15550100007']);
  const events = (await json(['events', 'list'])).data as { event_id: string; delivered_at: string | null }[];
  eventId = events[0]?.event_id as string;
}, 180_000);

afterAll(async () => {
  await service?.stop();
  receiver?.close();
  rmSync(dataDir, { recursive: true, force: true });
});

function expectFits(args: string[], stdout: string): void {
  const lines = stdout.split('\n');
  const wide = lines.filter((line) => line.length > 120);
  expect(wide, `${args.join(' ')} prints a line wider than 120 columns`).toEqual([]);
  expect(stdout, args.join(' ')).not.toMatch(/[{[]"/);
}

describe('the command line for people and for programs (issue 38, item 8)', () => {
  it('every list and show verb fits 120 columns, and --json parses', async () => {
    const verbs = [
      ['accounts', 'list'],
      ['keys', 'list'],
      ['agents', 'list'],
      ['agents', 'show', agentId],
      ['numbers', 'list'],
      ['trunks', 'list'],
      ['calls', 'list'],
      ['calls', 'show', completedCallId],
      ['calls', 'show', busyCallId],
      ['credentials', 'list'],
      ['do-not-call', 'list'],
      ['campaigns', 'list'],
      ['campaigns', 'show', campaignId],
      ['campaigns', 'contacts', campaignId],
      ['campaigns', 'figures', campaignId],
      ['events', 'list'],
      ['events', 'show', eventId],
      ['webhook', 'show'],
      ['users', 'list'],
      ['privacy', 'audit'],
      ['calling-rules', 'show'],
    ];
    for (const args of verbs) {
      const human = await cli(args);
      expect(human.code, `${args.join(' ')}: ${human.stderr}`).toBe(0);
      expect(human.stdout.trim().length, args.join(' ')).toBeGreaterThan(0);
      expectFits(args, human.stdout);
      await json(args);
    }
  }, 120_000);

  it('tables keep ids whole and cut long text with an ellipsis; --json has the full records', async () => {
    const campaigns = await cli(['campaigns', 'list']);
    const [header, row] = campaigns.stdout.trim().split('\n');
    expect(header).toMatch(/^CAMPAIGN_ID +STATUS +CONTACTS +OPEN +WINDOW +TIME_ZONE +CREATED_AT +NAME$/);
    expect(row).toMatch(new RegExp(`^${campaignId} +running +2 +2 +09:00-17:00 +Europe/Berlin `));
    expect(row).toMatch(/ {2}Spring a[a-z ]*…$/);
    const full = (await json(['campaigns', 'list'])).campaigns as Record<string, unknown>[];
    expect(full[0]).toMatchObject({
      campaign_id: campaignId,
      name: longName,
      calling_window: { start: '09:00', end: '17:00' },
      progress: { pending: 2 },
    });

    const agents = await cli(['agents', 'list']);
    expect(agents.stdout).toContain(agentId);
    expect(agents.stdout).toMatch(/ {2}\d{4}-\d\d-\d\d \d\d:\d\d:\d\d {2}customer_name,appointment_/);
    expect(agents.stdout).not.toContain(longPrompt);
    expect(((await json(['agents', 'list'])).agents as { prompt: string }[])[0]?.prompt).toBe(longPrompt);

    const events = await cli(['events', 'list']);
    const [eventHeader, ...eventRows] = events.stdout.trim().split('\n');
    expect(eventHeader).toMatch(/^EVENT_ID +TYPE +CALL_ID +STATUS +ATTEMPTS +CREATED_AT$/);
    expect(eventRows.some((line) => line.startsWith(eventId) && line.includes(completedCallId))).toBe(true);
    const page = await json(['events', 'list']);
    expect(page).toMatchObject({ has_more: false });
    expect((page.data as Record<string, unknown>[]).map((event) => event.call_id).sort()).toEqual(
      [busyCallId, completedCallId].sort(),
    );

    // The conversation's turns, each wrapped under itself; the prompt wrapped, not cut.
    const call = await cli(['calls', 'show', completedCallId]);
    expect(call.stdout).toMatch(/^ +[0-9.]+ s {2}agent {3}\S/m);
    const agent = await cli(['agents', 'show', agentId]);
    expect(agent.stdout.replace(/\n +/g, ' ')).toContain(longPrompt);
  });
});
