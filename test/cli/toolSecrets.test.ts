import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli, runCliJson } from '../helpers/cli.js';

/** The command line seals an agent's tool secrets as the API does, and never prints them (issue 35). */

let dataDir: string;

beforeAll(() => {
  dataDir = mkdtempSync(join(tmpdir(), 'callwright-cli-tools-'));
});

afterAll(() => {
  rmSync(dataDir, { recursive: true, force: true });
});

describe('agents create with tools that carry secrets', () => {
  it('seals them, prints them as {"sealed": true}, and keeps them out of the database in clear', async () => {
    const settings = {
      tools: [
        {
          name: 'check_order',
          description: 'Looks an order up.',
          url: 'https://shop.example.com/orders',
          method: 'GET',
          headers: { 'X-Api-Key': { secret: 'cli-SECRET-1' } },
          auth: { type: 'bearer', token: 'cli-SECRET-2' },
        },
      ],
    };
    const created = await runCli(dataDir, [
      'agents',
      'create',
      '--json',
      '--name',
      'Orders',
      '--prompt',
      'p',
      '--brain',
      'llm',
      '--settings',
      JSON.stringify(settings),
    ]);
    expect(created.stderr).not.toContain('SECRET');
    expect(created.code).toBe(0);
    expect(created.stdout).not.toContain('SECRET');
    const agent = JSON.parse(created.stdout) as { agent_id: string; settings: typeof settings };
    expect(agent.settings.tools[0]?.headers).toEqual({ 'X-Api-Key': { sealed: true } });
    const shown = await runCliJson(dataDir, ['agents', 'show', agent.agent_id]);
    expect(JSON.stringify(shown)).not.toContain('SECRET');
    const databaseFiles = readdirSync(dataDir, { recursive: true, encoding: 'utf8' }).filter((file) =>
      /\.(db|sqlite|sqlite3)(-wal)?$/.test(file),
    );
    expect(databaseFiles.length).toBeGreaterThan(0);
    for (const file of databaseFiles)
      expect(readFileSync(join(dataDir, file)).includes('cli-SECRET')).toBe(false);
  });

  it('agents update keeps the sealed secrets when other settings change, and refuses a sealed value from elsewhere', async () => {
    const settings = {
      tools: [
        {
          name: 'lookup',
          description: 'Looks an order up.',
          url: 'https://shop.example.com/orders',
          auth: { type: 'bearer', token: 'cli-SECRET-3' },
        },
      ],
    };
    const created = await runCliJson(dataDir, [
      'agents',
      'create',
      '--name',
      'Orders 2',
      '--prompt',
      'p',
      '--brain',
      'llm',
      '--settings',
      JSON.stringify(settings),
    ]);
    const agentId = created.agent_id as string;
    const updated = await runCli(dataDir, [
      'agents',
      'update',
      agentId,
      '--json',
      '--llm-model',
      'other-model',
    ]);
    expect(updated.stderr).toBe('');
    expect(updated.code).toBe(0);
    expect(JSON.parse(updated.stdout).settings).toMatchObject({
      llm: { model: 'other-model' },
      tools: [{ auth: { type: 'bearer', token: { sealed: true } } }],
    });
    const forged = {
      tools: [{ ...settings.tools[0], auth: { type: 'bearer', token: { sealed: 'v1.AAAAforged' } } }],
    };
    const refused = await runCli(dataDir, [
      'agents',
      'update',
      agentId,
      '--settings',
      JSON.stringify(forged),
    ]);
    expect(refused.code).not.toBe(0);
    expect(refused.stderr).toMatch(/settings\.tools\[0\]\.auth\.token must be a text or \{"sealed": true\}/);
  });
});
