import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { listenOnlyScriptPath } from '../helpers/agentScripts.js';
import { type CliResult, runCli, runCliJson, startServeProcess } from '../helpers/cli.js';
import { postCall } from '../helpers/http.js';
import { testCertificates } from '../helpers/testCertificates.js';

/** The admin command line, run as users run it: the built `dist/main.js` in a child process. */

let dataDir: string;

function cli(args: string[], env: Record<string, string> = {}): Promise<CliResult> {
  return runCli(dataDir, args, env);
}

function json(args: string[], env: Record<string, string> = {}): Promise<Record<string, unknown>> {
  return runCliJson(dataDir, args, env);
}

function expectOneLineError(result: CliResult): void {
  expect(result.code).not.toBe(0);
  expect(result.stdout).toBe('');
  expect(result.stderr.trim().split('\n')).toHaveLength(1);
  expect(result.stderr).toMatch(/^callwright: /);
}

beforeAll(() => {
  dataDir = mkdtempSync(join(tmpdir(), 'callwright-cli-'));
});

afterAll(() => {
  rmSync(dataDir, { recursive: true, force: true });
});

describe('accounts', () => {
  it('create prints the account id; list shows it beside the default account', async () => {
    const created = await json([
      'accounts',
      'create',
      '--name',
      'Acme',
      '--rate-limit',
      '50/10s',
      '--max-live-calls',
      '3',
    ]);
    expect(created).toMatchObject({ name: 'Acme', rate_limit: '50/10s', max_live_calls: 3, default: false });
    expect(created.account_id).toMatch(/^acct_/);
    await json(['keys', 'list']); // makes the default account
    const listed = (await json(['accounts', 'list'])).accounts as { account_id: string; default: boolean }[];
    expect(listed.map((account) => account.account_id)).toContain(created.account_id);
    expect(listed.filter((account) => account.default)).toHaveLength(1);
  });

  it('refuses bad input with one line and a non-zero status', async () => {
    expectOneLineError(await cli(['accounts', 'create']));
    expectOneLineError(await cli(['accounts', 'create', '--name', 'x', '--rate-limit', 'fast']));
    expectOneLineError(await cli(['accounts', 'create', '--name', 'x', '--max-live-calls', '0']));
    expectOneLineError(await cli(['accounts', 'create', '--name', 'x', '--bogus']));
    expectOneLineError(await cli(['accounts', 'explode']));
  });
});

describe('keys', () => {
  it('create shows the key once; list shows only prefix and last 4; revoke marks it', async () => {
    const created = await json(['keys', 'create', '--name', 'production']);
    expect(Object.keys(created).sort()).toEqual(['created_at', 'id', 'key', 'name']);
    const key = created.key as string;
    expect(key).toMatch(/^cw_live_[0-9A-Za-z]{38}$/);
    const listed = await cli(['keys', 'list', '--json']);
    expect(listed.stdout).not.toContain(key);
    const entry = (JSON.parse(listed.stdout).keys as Record<string, unknown>[]).find(
      (k) => k.id === created.id,
    );
    expect(entry).toMatchObject({
      name: 'production',
      display: `${key.slice(0, 12)}…${key.slice(-4)}`,
      revoked_at: null,
    });
    const revoked = await json(['keys', 'revoke', created.id as string]);
    expect(revoked.revoked_at).toEqual(expect.any(String));
    const human = await cli(['keys', 'list']);
    expect(human.code).toBe(0);
    expect(human.stdout).toContain('production');
  });

  it('keeps keys of other accounts apart', async () => {
    const account = await json(['accounts', 'create', '--name', 'Other']);
    const key = await json([
      'keys',
      'create',
      '--name',
      'other key',
      '--account',
      account.account_id as string,
    ]);
    const defaultKeys = (await json(['keys', 'list'])).keys as { id: string }[];
    expect(defaultKeys.map((k) => k.id)).not.toContain(key.id);
    expectOneLineError(await cli(['keys', 'revoke', key.id as string]));
  });

  it('refuses bad input', async () => {
    expectOneLineError(await cli(['keys', 'create']));
    expectOneLineError(await cli(['keys', 'create', '--name', '   ']));
    expectOneLineError(await cli(['keys', 'revoke']));
    expectOneLineError(await cli(['keys', 'revoke', 'key_nope']));
    expectOneLineError(await cli(['keys', 'list', '--account', 'acct_missing']));
    expectOneLineError(await cli(['keys', 'list', 'extra']));
  });
});

describe('agents', () => {
  it('create with variables and defaults, list, deactivate, activate', async () => {
    const agent = await json([
      'agents',
      'create',
      '--name',
      'Reminder',
      '--prompt',
      'Remind {{customer_name}}',
      '--first-message',
      'Hi {{customer_name}}',
      '--variable',
      'customer_name',
      '--variable',
      'slot=9am',
    ]);
    expect(agent.agent_id).toMatch(/^agt_/);
    expect(agent).toMatchObject({
      active: true,
      variables: [
        { name: 'customer_name', default: null, description: '' },
        { name: 'slot', default: '9am', description: '' },
      ],
    });
    const id = agent.agent_id as string;
    expect(
      ((await json(['agents', 'list'])).agents as { agent_id: string }[]).map((a) => a.agent_id),
    ).toContain(id);
    expect((await json(['agents', 'deactivate', id])).active).toBe(false);
    expect((await json(['agents', 'activate', id])).active).toBe(true);
    const inactive = await json([
      'agents',
      'create',
      '--name',
      'Off',
      '--prompt',
      'p',
      '--first-message',
      'Hi',
      '--inactive',
    ]);
    expect(inactive.active).toBe(false);
  });

  it('update changes what its flags give and keeps the rest (issue 38)', async () => {
    const created = await json([
      'agents',
      'create',
      '--name',
      'Booker',
      '--prompt',
      'Book {{party_size}} seats.',
      '--first-message',
      'Hi',
      '--variable',
      'party_size',
      '--extract',
      'booked:boolean:did they book',
      '--settings',
      '{"tts":{"voice":"slt"},"voicemail":{"action":"hang_up"}}',
    ]);
    const id = created.agent_id as string;
    const updated = await json([
      'agents',
      'update',
      id,
      '--variable',
      'party_size:number!',
      '--variable',
      'note=none',
      '--voice',
      'kal',
      '--max-duration',
      '90',
    ]);
    expect(updated).toMatchObject({
      agent_id: id,
      name: 'Booker',
      prompt: 'Book {{party_size}} seats.',
      first_message: 'Hi',
      max_duration_s: 90,
      extraction: [{ name: 'booked', type: 'boolean', description: 'did they book' }],
      variables: [
        { name: 'party_size', default: null, required: true, type: 'number' },
        { name: 'note', default: 'none', required: false, type: 'any' },
      ],
      // --voice changes the voice and keeps the rest of the settings.
      settings: { tts: { voice: 'kal' }, voicemail: { action: 'hang_up' } },
    });
    // The stored agent is what was printed; a bad flag changes nothing.
    expect(await json(['agents', 'show', id])).toMatchObject({ max_duration_s: 90 });
    expectOneLineError(await cli(['agents', 'update', id, '--variable', 'bad-name']));
    expectOneLineError(await cli(['agents', 'update', id]));
    expectOneLineError(await cli(['agents', 'update', 'agt_missing', '--name', 'x']));
    expect(await json(['agents', 'show', id])).toMatchObject({
      name: 'Booker',
      variables: [{ name: 'party_size' }, { name: 'note' }],
    });
  });

  it('refuses bad input and writes nothing', async () => {
    const before = ((await json(['agents', 'list'])).agents as unknown[]).length;
    expectOneLineError(await cli(['agents', 'create', '--name', 'x']));
    expectOneLineError(await cli(['agents', 'create', '--prompt', 'x']));
    expectOneLineError(
      await cli(['agents', 'create', '--name', 'x', '--prompt', 'p', '--variable', 'bad-name']),
    );
    expectOneLineError(
      await cli(['agents', 'create', '--name', 'x', '--prompt', 'p', '--variable', 'a', '--variable', 'a=1']),
    );
    expectOneLineError(await cli(['agents', 'activate', 'agt_missing']));
    expectOneLineError(await cli(['agents', 'deactivate']));
    expect(((await json(['agents', 'list'])).agents as unknown[]).length).toBe(before);
  });
});

describe('agents: brains, scripts, extraction, voice', () => {
  it('creates a script agent from a file and an llm agent with extraction fields and settings', async () => {
    const scriptPath = resolve(import.meta.dirname, '../../examples/agents/appointment-confirmation.json');
    const scripted = await json([
      'agents',
      'create',
      '--name',
      'Script',
      '--prompt',
      'p',
      '--script',
      scriptPath,
    ]);
    expect(scripted).toMatchObject({ brain: 'script', script: { start: 'greet' } });
    const llm = await json([
      'agents',
      'create',
      '--name',
      'LLM',
      '--prompt',
      'p',
      '--brain',
      'llm',
      '--llm-model',
      'llama3.1',
      '--voice',
      'slt',
      '--extract',
      'confirmed:boolean:Did they confirm?',
      '--extract',
      'new_day:string:Which day',
      '--voicemail-message',
      'Please call back.',
    ]);
    expect(llm).toMatchObject({
      brain: 'llm',
      script: null,
      extraction: [
        { name: 'confirmed', type: 'boolean', description: 'Did they confirm?' },
        { name: 'new_day', type: 'string', description: 'Which day' },
      ],
      settings: {
        tts: { voice: 'slt' },
        llm: { model: 'llama3.1' },
        voicemail: { action: 'leave_message', message: 'Please call back.' },
      },
    });
  });

  it('refuses bad brains, scripts and fields', async () => {
    expectOneLineError(await cli(['agents', 'create', '--name', 'x', '--prompt', 'p', '--brain', 'magic']));
    expectOneLineError(
      await cli(['agents', 'create', '--name', 'x', '--prompt', 'p', '--script', '/nonexistent.json']),
    );
    expectOneLineError(
      await cli(['agents', 'create', '--name', 'x', '--prompt', 'p', '--extract', 'when:datetime:x']),
    );
    expectOneLineError(
      await cli([
        'agents',
        'create',
        '--name',
        'x',
        '--prompt',
        'p',
        '--brain',
        'llm',
        '--script',
        resolve(import.meta.dirname, '../../examples/agents/appointment-confirmation.json'),
      ]),
    );
  });
});

describe('trunks', () => {
  it('adds a trunk without ever printing its password, binds a number to it, and removes it', async () => {
    const added = await runCli(dataDir, [
      'trunks',
      'add',
      '--name',
      'carrier',
      '--uri',
      'sip:sip.example.com:5080',
      '--username',
      'acme',
      '--password',
      'hunter2-secret',
      '--json',
    ]);
    expect(added.code).toBe(0);
    expect(added.stdout).not.toContain('hunter2-secret');
    expect(JSON.parse(added.stdout)).toMatchObject({ name: 'carrier', username: 'acme', password: 'set' });
    const listed = await runCli(dataDir, ['trunks', 'list', '--json']);
    expect(listed.stdout).not.toContain('hunter2');
    expect(await json(['numbers', 'add', '+15550003000', '--route', 'carrier'])).toMatchObject({
      route: expect.stringMatching(/^trk_/),
    });
    expectOneLineError(await cli(['trunks', 'remove', 'carrier']));
    await json(['numbers', 'remove', '+15550003000']);
    expect(await json(['trunks', 'remove', 'carrier'])).toMatchObject({ removed: true });
  });

  it('refuses bad trunks', async () => {
    expectOneLineError(await cli(['trunks', 'add', '--name', 'bad', '--uri', 'http://x']));
    expectOneLineError(await cli(['trunks', 'add', '--name', 'sandbox', '--uri', 'sip:x.example.com']));
    expectOneLineError(
      await cli(['trunks', 'add', '--name', 'half', '--uri', 'sip:x.example.com', '--username', 'u']),
    );
  });

  it('adds a TLS trunk with its CA file or without verification, and refuses what it cannot honour', async () => {
    const certificates = testCertificates();
    expect(
      await json([
        'trunks',
        'add',
        '--name',
        'tls-ca',
        '--uri',
        'sips:pbx.example.com',
        '--tls-ca',
        certificates.caFile,
      ]),
    ).toMatchObject({ transport: 'tls', tls_ca: 'set', tls_verify: true });
    expect(
      await json([
        'trunks',
        'add',
        '--name',
        'tls-any',
        '--uri',
        'sip:pbx.example.com;transport=tls',
        '--tls-insecure',
      ]),
    ).toMatchObject({ transport: 'tls', tls_ca: null, tls_verify: false });
    expect(
      await json([
        ...['trunks', 'add', '--name', 'tcp', '--uri', 'sip:pbx.example.com;transport=tcp'],
        ...['--symmetric-rtp', '--asserted-identity', '--privacy'],
      ]),
    ).toMatchObject({ transport: 'tcp', symmetric_rtp: true, asserted_identity: true, privacy: true });
    const downgrade = await cli([
      'trunks',
      'add',
      '--name',
      'x',
      '--uri',
      'sips:pbx.example.com;transport=udp',
    ]);
    expectOneLineError(downgrade);
    expect(downgrade.stderr).toContain('cannot be honoured');
    const clearWithTls = await cli([
      'trunks',
      'add',
      '--name',
      'x',
      '--uri',
      'sip:pbx.example.com',
      '--tls-insecure',
    ]);
    expectOneLineError(clearWithTls);
    expect(clearWithTls.stderr).toContain('apply only to a sips: or transport=tls trunk');
    expectOneLineError(
      await cli([
        'trunks',
        'add',
        '--name',
        'x',
        '--uri',
        'sips:pbx.example.com',
        '--tls-ca',
        '/nonexistent.pem',
      ]),
    );
    for (const name of ['tls-ca', 'tls-any', 'tcp']) await json(['trunks', 'remove', name]);
  });

  it('refuses trunks at internal addresses unless CALLWRIGHT_TRUNK_ALLOW_PRIVATE is set', async () => {
    for (const uri of ['sip:169.254.169.254', 'sip:10.0.0.5:5060', 'sip:127.0.0.1:5432', 'sip:localhost']) {
      const refused = await cli(['trunks', 'add', '--name', 'inside', '--uri', uri]);
      expectOneLineError(refused);
      expect(refused.stderr).toContain('CALLWRIGHT_TRUNK_ALLOW_PRIVATE=true');
    }
    const allowPrivate = { CALLWRIGHT_TRUNK_ALLOW_PRIVATE: 'true' };
    expect(
      await json(['trunks', 'add', '--name', 'pbx', '--uri', 'sip:10.0.0.5:5060'], allowPrivate),
    ).toMatchObject({ name: 'pbx', uri: 'sip:10.0.0.5:5060' });
    expect(await json(['trunks', 'remove', 'pbx'])).toMatchObject({ removed: true });
  });
});

describe('numbers', () => {
  it('add, list, remove', async () => {
    expect(await json(['numbers', 'add', '+15550001000'])).toMatchObject({
      number: '+15550001000',
      route: 'sandbox',
    });
    const listed = (await json(['numbers', 'list'])).numbers as { number: string }[];
    expect(listed.map((n) => n.number)).toContain('+15550001000');
    expect(await json(['numbers', 'remove', '+15550001000'])).toEqual({
      number: '+15550001000',
      removed: true,
    });
    expect(
      ((await json(['numbers', 'list'])).numbers as { number: string }[]).map((n) => n.number),
    ).not.toContain('+15550001000');
  });

  it('refuses bad input', async () => {
    expectOneLineError(await cli(['numbers', 'add', '5550001000']));
    expectOneLineError(await cli(['numbers', 'add']));
    expectOneLineError(await cli(['numbers', 'add', '+15550001001', '--route', 'nowhere']));
    await json(['numbers', 'add', '+15550001002']);
    expectOneLineError(await cli(['numbers', 'add', '+15550001002']));
    expectOneLineError(await cli(['numbers', 'remove', '+15550009998']));
  });
});

describe('configuration and usage', () => {
  it('prints usage for --help and refuses an unknown command', async () => {
    const help = await cli(['--help']);
    expect(help.code).toBe(0);
    expect(help.stdout).toContain('Usage: callwright');
    expectOneLineError(await cli(['launch']));
  });

  it('stops with one line naming a bad variable', async () => {
    for (const [name, value] of [
      ['PORT', 'eighty'],
      ['CALLWRIGHT_RATE_LIMIT', 'lots'],
      ['CALLWRIGHT_PUBLIC_URL', 'ftp://x'],
      ['LOG_LEVEL', 'loud'],
    ] as const) {
      const result = await cli(['serve'], { [name]: value });
      expectOneLineError(result);
      expect(result.stderr).toContain(name);
    }
  });
});

describe('serve', () => {
  it('serves the API and places calls from the data the CLI edits, and keeps it across a restart', async () => {
    const key = (await json(['keys', 'create', '--name', 'serve'])).key as string;
    const agent = (
      await json(['agents', 'create', '--name', 'S', '--prompt', 'p', '--script', listenOnlyScriptPath])
    ).agent_id as string;
    await json(['numbers', 'add', '+15550002000']);

    const startServer = () =>
      startServeProcess([], {
        CALLWRIGHT_DATA_DIR: dataDir,
        PORT: '0',
        HOST: '127.0.0.1',
        CALLWRIGHT_SIP_BIND: '127.0.0.1',
        CALLWRIGHT_SIP_PORT: '0',
        CALLWRIGHT_RTP_PORTS: `${36_000 + (process.pid % 50) * 40}-${36_038 + (process.pid % 50) * 40}`,
      });

    const first = await startServer();
    // The sandbox's unreachable persona: the call ends at once (failed / unreachable).
    const created = await postCall(first.url, key, {
      agent_id: agent,
      from_number: '+15550002000',
      to_number: '+15550100005',
    });
    expect(created.status).toBe(200);
    const firstCallId = (created.body as { call_id: string }).call_id;
    for (let i = 0; i < 100; i++) {
      const record = await fetch(`${first.url}/v1/calls/${firstCallId}`, { headers: { 'X-API-Key': key } });
      if (((await record.json()) as { status: string }).status === 'failed') break;
      await new Promise((done) => setTimeout(done, 100));
    }
    expect(await first.stop()).toBe(0);

    const second = await startServer();
    const callId = (created.body as { call_id: string }).call_id;
    const fetched = await fetch(`${second.url}/v1/calls/${callId}`, { headers: { 'X-API-Key': key } });
    expect(fetched.status).toBe(200);
    expect(await fetched.json()).toMatchObject({
      call_id: callId,
      status: 'failed',
      end_reason: 'unreachable',
    });
    expect(await second.stop()).toBe(0);
  });
});
