import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { commandGroups } from '../../src/cli/commands.js';
import { commandHelp } from '../../src/cli/help.js';
import { startFakeDeepgram } from '../fakes/deepgramLiveServer.js';
import { listenOnlyScriptPath } from '../helpers/agentScripts.js';
import { runCli, runCliJson, runCliWith } from '../helpers/cli.js';

/**
 * The command line guides (issue 13, item 9): help for every command from one table, the version,
 * "did you mean", tables with a header row, calls and users managed from it, and no second database
 * made silently when it is run from the wrong folder.
 */

let dataDir: string;
const version = (
  JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string }
).version;

beforeAll(() => {
  dataDir = mkdtempSync(join(tmpdir(), 'callwright-guidance-'));
});

afterAll(() => {
  rmSync(dataDir, { recursive: true, force: true });
});

const cli = (args: string[], env: Record<string, string> = {}) => runCli(dataDir, args, env);
const json = (args: string[], env: Record<string, string> = {}) => runCliJson(dataDir, args, env);

const cliWith = runCliWith;

/** Runs the CLI in `cwd` with CALLWRIGHT_DATA_DIR unset, as a person typing in some folder. */
const cliIn = (cwd: string, args: string[]) => cliWith({ cwd }, args);

describe('help and version', () => {
  it('every command that runs has help, and every help entry runs', () => {
    const runnable = Object.entries(commandGroups).flatMap(([group, verbs]) =>
      Object.keys(verbs).map((verb) => `${group} ${verb}`),
    );
    const documented = Object.entries(commandHelp)
      .filter(([group]) => group !== 'serve' && group !== 'test')
      .flatMap(([group, entry]) => Object.keys(entry.verbs).map((verb) => `${group} ${verb}`));
    expect(documented.sort()).toEqual(runnable.sort());
  });

  it('--version, per-command --help, and a near miss named', async () => {
    expect((await cli(['--version'])).stdout).toBe(`callwright ${version}\n`);
    expect(JSON.parse((await cli(['-V', '--json'])).stdout)).toEqual({ version });

    const group = await cli(['calls', '--help']);
    expect(group.code).toBe(0);
    expect(group.stdout).toMatch(/^callwright calls: place, follow and end calls/);
    for (const verb of ['place', 'list', 'show', 'cancel']) expect(group.stdout).toContain(`calls ${verb}`);

    const verb = await cli(['agents', 'create', '--help']);
    expect(verb.code).toBe(0);
    expect(verb.stdout).toContain('NAME[:TYPE][!][=DEFAULT]');
    expect(verb.stdout).toContain('example: callwright agents create');
    expect(verb.stdout).not.toContain('agents list');
    expect((await cli(['help', 'users', 'reset-password'])).stdout).toContain('signed out everywhere');
    expect((await cli(['serve', '--help'])).stdout).toContain('--role R');

    const typo = await cli(['agnets', 'list']);
    expect(typo.code).toBe(2);
    expect(typo.stderr).toMatch(/unknown command "agnets" \(did you mean agents\?\)/);
    expect((await cli(['calls', 'plcae'])).stderr).toMatch(/did you mean calls place\?/);
  });
});

describe('calls from the command line', () => {
  it('place queues with the API checks; list has a header row; show and cancel read and end it', async () => {
    await cli(['numbers', 'add', '+15550009999']);
    const agent = await json([
      'agents',
      'create',
      '--name',
      'Listener',
      '--prompt',
      'p',
      '--script',
      listenOnlyScriptPath,
      '--first-message',
      'Hello {{customer_name}}',
      '--variable',
      'customer_name!',
      '--variable',
      'party:number=2',
    ]);
    const agentId = agent.agent_id as string;

    const missing = await cli([
      'calls',
      'place',
      '--agent',
      agentId,
      '--from',
      '+15550009999',
      '--to',
      '+15550100001',
    ]);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toMatch(/variables\.customer_name is required by the agent/);
    const badPhone = await cli([
      'calls',
      'place',
      '--agent',
      agentId,
      '--from',
      '+15550009999',
      '--to',
      '555',
    ]);
    expect(badPhone.stderr).toMatch(/to_number/);

    const placed = await json([
      'calls',
      'place',
      '--agent',
      agentId,
      '--from',
      '+15550009999',
      '--to',
      '+15550100001',
      '--var',
      'customer_name=Ann',
      '--var',
      'party=3',
    ]);
    expect(placed).toMatchObject({ status: 'queued', to_number: '+15550100001' });
    const callId = placed.call_id as string;

    const listed = await cli(['calls', 'list']);
    const [header, ...rows] = listed.stdout.trim().split('\n');
    expect(header).toMatch(/^CALL_ID +STATUS +END_REASON +TO_NUMBER +DURATION_SECONDS +CREATED_AT$/);
    expect(rows.some((row) => row.startsWith(callId) && / queued /.test(row))).toBe(true);

    const shown = await json(['calls', 'show', callId]);
    expect(shown).toMatchObject({
      call_id: callId,
      status: 'queued',
      variables: { customer_name: 'Ann', party: 3 },
    });

    const canceled = await json(['calls', 'cancel', callId]);
    expect(canceled).toMatchObject({ call_id: callId, status: 'canceled' });
    const again = await cli(['calls', 'cancel', callId]);
    expect(again.stderr).toMatch(/has already ended \(canceled\)/);
    const text = await cli(['calls', 'show', callId]);
    expect(text.stdout).toMatch(/^status +canceled$/m);
    expect(text.stdout).toContain('(no transcript)');

    const shownAgent = await cli(['agents', 'show', agentId]);
    expect(shownAgent.stdout).toMatch(/^NAME +TYPE +REQUIRED +DEFAULT$/m);
    expect(shownAgent.stdout).toMatch(/^customer_name +any +yes +-$/m);
    expect(shownAgent.stdout).toMatch(/^party +number +no +"2"$/m);
  });
});

describe('the do-not-call list from the command line', () => {
  it('imports a CSV only when every row is good, adds, lists and removes', async () => {
    const csv = join(dataDir, 'opt-outs.csv');
    writeFileSync(csv, 'number,reason\n+14155550140,letter\nnot-a-number\n+14155550141\n');
    const refused = await cli(['do-not-call', 'import', '--csv', csv]);
    expect(refused.code).not.toBe(0);
    expect(refused.stderr).toContain('line 3: "not-a-number" is not an E.164 number');
    expect((await json(['do-not-call', 'list'])).numbers).toEqual([]);

    writeFileSync(csv, 'number,reason\n+14155550140,letter\n+14155550141\n');
    expect(await json(['do-not-call', 'import', '--csv', csv, '--reason', 'bulk'])).toEqual({
      rows: 2,
      added: 2,
      already_listed: 0,
    });
    expect(await json(['do-not-call', 'add', '+14155550142'])).toEqual({
      number: '+14155550142',
      added: true,
    });
    const listed = (await json(['do-not-call', 'list'])).numbers as {
      number: string;
      reason: string;
      source: string;
    }[];
    expect(listed.map((entry) => [entry.number, entry.reason, entry.source])).toEqual([
      ['+14155550140', 'letter', 'cli'],
      ['+14155550141', 'bulk', 'cli'],
      ['+14155550142', null, 'cli'],
    ]);
    expect(await json(['do-not-call', 'remove', '+14155550141'])).toEqual({
      number: '+14155550141',
      removed: true,
    });
    expect((await cli(['do-not-call', 'remove', '+14155550141'])).code).not.toBe(0);
    expect((await cli(['do-not-call', 'add', '555-0100'])).stderr).toContain('is not an E.164 number');
  }, 60_000);
});

describe('dashboard users from the command line', () => {
  it('list, reset-password (ends their sessions), remove', async () => {
    const created = await cliWith(
      { env: { CALLWRIGHT_DATA_DIR: dataDir }, input: 'a long enough password 1\n' },
      ['users', 'create', '--email', 'second@example.com', '--json'],
    );
    expect(created.code, created.stderr).toBe(0);
    const listed = (await json(['users', 'list'])).users as { email: string }[];
    expect(listed.map((user) => user.email)).toContain('second@example.com');
    const table = await cli(['users', 'list']);
    expect(table.stdout.split('\n')[0]).toMatch(/^EMAIL +USER_ID +CREATED_AT +LAST_SIGN_IN_AT$/);

    const reset = await cliWith(
      { env: { CALLWRIGHT_DATA_DIR: dataDir }, input: 'another long password 2\n' },
      ['users', 'reset-password', '--email', 'second@example.com', '--json'],
    );
    expect(reset.code, reset.stderr).toBe(0);
    expect(JSON.parse(reset.stdout)).toMatchObject({ email: 'second@example.com', password_reset: true });

    expect(await json(['users', 'remove', '--email', 'second@example.com'])).toEqual({
      email: 'second@example.com',
      removed: true,
    });
    const gone = await cli(['users', 'remove', '--email', 'second@example.com']);
    expect(gone.code).toBe(1);
    expect(gone.stderr).toMatch(/no user second@example\.com/);
  });
});

describe('vendor credentials from the command line', () => {
  it('add reads the key from stdin and shows only its last 4; list and remove', async () => {
    const added = await cliWith({ env: { CALLWRIGHT_DATA_DIR: dataDir }, input: 'dg-secret-key-77aa\n' }, [
      'credentials',
      'add',
      '--name',
      'dg',
      '--provider',
      'deepgram',
      '--json',
    ]);
    expect(added.code, added.stderr).toBe(0);
    expect(JSON.parse(added.stdout)).toMatchObject({
      name: 'dg',
      provider: 'deepgram',
      api_key_last4: '77aa',
    });
    expect(added.stdout).not.toContain('dg-secret-key');
    const listed = await cli(['credentials', 'list']);
    expect(listed.stdout).toMatch(/^CREDENTIAL_ID +NAME +PROVIDER +API_KEY_LAST4 +BASE_URL +CREATED_AT$/m);
    expect(listed.stdout).not.toContain('dg-secret-key');
    const privateUrl = await cliWith({ env: { CALLWRIGHT_DATA_DIR: dataDir }, input: 'another-key-0001' }, [
      'credentials',
      'add',
      '--name',
      'local',
      '--provider',
      'deepgram',
      '--base-url',
      'ws://127.0.0.1:9/',
    ]);
    expect(privateUrl.code).toBe(1);
    expect(privateUrl.stderr).toMatch(/CALLWRIGHT_PROVIDER_ALLOW_PRIVATE/);
    expect(await json(['credentials', 'remove', 'dg'])).toMatchObject({ name: 'dg', removed: true });
  });
});

describe('trying a vendor key and choosing vendors from the command line', () => {
  it('credentials test: exit 0 with the vendor acceptance, exit 1 with its error (never the key)', async () => {
    const deepgram = await startFakeDeepgram({ apiKey: 'dg-cli-good-key-01', transcripts: [''] });
    try {
      const env = { CALLWRIGHT_DATA_DIR: dataDir, CALLWRIGHT_PROVIDER_ALLOW_PRIVATE: 'true' };
      for (const [name, key] of [
        ['dg-good', 'dg-cli-good-key-01'],
        ['dg-bad', 'dg-cli-wrong-key-02'],
      ] as const) {
        const added = await cliWith({ env, input: key }, [
          'credentials',
          'add',
          '--name',
          name,
          '--provider',
          'deepgram',
          '--base-url',
          deepgram.baseUrl,
        ]);
        expect(added.code, added.stderr).toBe(0);
      }
      const good = await cliWith({ env }, ['credentials', 'test', 'dg-good', '--json']);
      expect(good.code, good.stderr).toBe(0);
      expect(JSON.parse(good.stdout)).toMatchObject({ name: 'dg-good', ok: true, status: 200 });
      const bad = await cliWith({ env }, ['credentials', 'test', 'dg-bad']);
      expect(bad.code).toBe(1);
      expect(bad.stderr).toMatch(/the key did not work: deepgram answered HTTP 401: Invalid credentials/);
      expect(bad.stdout + bad.stderr).not.toContain('dg-cli-wrong-key-02');
    } finally {
      await deepgram.close();
    }
  });

  it('agents create --settings takes the voice settings as JSON or @FILE, checked like the dashboard', async () => {
    const realtime = { realtime: { provider: 'openai', voice: 'marin' } };
    const created = await json([
      'agents',
      'create',
      '--name',
      'Realtime',
      '--prompt',
      'Be brief.',
      '--brain',
      'llm',
      '--settings',
      JSON.stringify(realtime),
    ]);
    expect(created).toMatchObject({ settings: realtime });
    const refused = await cli([
      'agents',
      'create',
      '--name',
      'R2',
      '--prompt',
      'p',
      '--first-message',
      'Hello.',
      '--settings',
      JSON.stringify(realtime),
    ]);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toMatch(/settings\.realtime needs the llm brain/);
    const unreadable = await cli([
      'agents',
      'create',
      '--name',
      'R3',
      '--prompt',
      'p',
      '--settings',
      '@/nonexistent/s.json',
    ]);
    expect(unreadable.code).toBe(2);
    expect(unreadable.stderr).toMatch(/cannot read the settings file/);
  });
});

describe('the data folder', () => {
  it('run from a folder without the service, it says where it looked instead of making a second database', async () => {
    const elsewhere = mkdtempSync(join(tmpdir(), 'callwright-elsewhere-'));
    try {
      const result = await cliIn(elsewhere, ['keys', 'list']);
      expect(result.code).toBe(1);
      expect(result.stderr).toContain(`no callwright database in ${join(elsewhere, 'data')}`);
      expect(result.stderr).toContain('CALLWRIGHT_DATA_DIR');
      expect((await cliIn(elsewhere, ['--help'])).code).toBe(0);
      const { readdirSync } = await import('node:fs');
      expect(readdirSync(elsewhere)).toEqual([]);
    } finally {
      rmSync(elsewhere, { recursive: true, force: true });
    }
  });
});
