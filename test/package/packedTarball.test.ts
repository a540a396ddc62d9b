import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generateWebhookSecret, webhookHeaders } from '../../src/webhooks/signing.js';

/**
 * The package as an integrator gets it: `npm pack` (which runs `prepare`, so dist/ is built from
 * the sources) installed into an empty project, then its public entry points imported by name.
 * The install prefers the npm cache `npm ci` filled (metadata may come from the registry) and skips
 * install scripts: the two entry points need no native module.
 */

const run = promisify(execFile);
const repoRoot = new URL('../../', import.meta.url).pathname;
let workDir: string;
let projectDir: string;

beforeAll(async () => {
  workDir = mkdtempSync(join(tmpdir(), 'callwright-pack-'));
  const { stdout } = await run('npm', ['pack', '--json', '--pack-destination', workDir], {
    cwd: repoRoot,
    maxBuffer: 64 * 1024 * 1024,
  });
  const [packed] = JSON.parse(stdout.slice(stdout.indexOf('['))) as Array<{ filename: string }>;
  projectDir = join(workDir, 'project');
  mkdirSync(projectDir);
  writeFileSync(
    join(projectDir, 'package.json'),
    JSON.stringify({ name: 'integrator', private: true, type: 'module' }),
  );
  await run(
    'npm',
    [
      'install',
      '--prefer-offline',
      '--ignore-scripts',
      '--no-audit',
      '--no-fund',
      join(workDir, packed?.filename ?? ''),
    ],
    { cwd: projectDir, maxBuffer: 64 * 1024 * 1024 },
  );
}, 240_000);

afterAll(() => {
  if (workDir) rmSync(workDir, { recursive: true, force: true });
});

async function nodeIn(directory: string, script: string): Promise<string> {
  const { stdout } = await run(process.execPath, ['--input-type=module', '-e', script], { cwd: directory });
  return stdout.trim();
}

describe('the packed tarball', () => {
  it('ships the built entry points and the command, and no tests or data', () => {
    const installed = join(projectDir, 'node_modules', 'callwright');
    const top = readdirSync(installed).sort();
    expect(top).toEqual(expect.arrayContaining(['bin', 'dist', 'package.json', 'README.md']));
    expect(top).not.toContain('test');
    expect(top).not.toContain('src');
    expect(top).not.toContain('data');
    expect(readdirSync(join(installed, 'dist', 'webhooks'))).toContain('verify.js');
  });

  it('callwright/webhooks verifies a signed delivery and refuses a tampered one', async () => {
    const secret = generateWebhookSecret();
    const body = JSON.stringify({ type: 'call.completed', data: { call_id: 'call_1' } });
    const headers = webhookHeaders({
      secrets: [secret],
      id: 'evt_1',
      timestampS: Math.floor(Date.now() / 1000),
      body,
    });
    const script = `
      import { verifyWebhook } from 'callwright/webhooks';
      const [secret, headers, body] = ${JSON.stringify([secret, headers, body])};
      const event = verifyWebhook(secret, headers, body);
      let tampered = 'accepted';
      try { verifyWebhook(secret, headers, body.replace('call_1', 'call_2')); } catch (error) { tampered = error.name; }
      console.log(JSON.stringify({ type: event.type, tampered }));`;
    expect(JSON.parse(await nodeIn(projectDir, script))).toEqual({
      type: 'call.completed',
      tampered: 'WebhookVerificationError',
    });
  });

  it('callwright/client places a call against an HTTP server', async () => {
    const script = `
      import { createServer } from 'node:http';
      import { CallwrightClient } from 'callwright/client';
      const seen = [];
      const server = createServer((request, response) => {
        let body = '';
        request.on('data', (chunk) => { body += chunk; });
        request.on('end', () => {
          seen.push({ method: request.method, url: request.url, key: request.headers['x-api-key'], body: JSON.parse(body) });
          response.setHeader('content-type', 'application/json');
          response.end(JSON.stringify({ call_id: 'call_7', status: 'queued', agent_id: 'agt_1',
            to_number: '+15550100001', from_number: '+15550009999', created_at: new Date().toISOString() }));
        });
      });
      await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
      const client = new CallwrightClient({ apiKey: 'cw_live_test', baseUrl: 'http://127.0.0.1:' + server.address().port });
      const created = await client.calls.createOutbound({ agent_id: 'agt_1', from_number: '+15550009999', to_number: '+15550100001' });
      server.close();
      console.log(JSON.stringify({ callId: created.call_id, request: seen[0] }));`;
    const result = JSON.parse(await nodeIn(projectDir, script));
    expect(result.callId).toBe('call_7');
    expect(result.request).toEqual({
      method: 'POST',
      url: '/v1/calls/outbound',
      key: 'cw_live_test',
      body: { agent_id: 'agt_1', from_number: '+15550009999', to_number: '+15550100001' },
    });
  });

  it("the root export resolves: `import 'callwright'` is the client and the verifier", async () => {
    const script = `
      import * as root from 'callwright';
      import { CallwrightClient } from 'callwright/client';
      import { verifyWebhook } from 'callwright/webhooks';
      console.log(JSON.stringify({
        client: root.CallwrightClient === CallwrightClient,
        verifier: root.verifyWebhook === verifyWebhook,
      }));`;
    expect(JSON.parse(await nodeIn(projectDir, script))).toEqual({ client: true, verifier: true });
  });

  it('the installed command runs', async () => {
    const { stdout } = await run(join(projectDir, 'node_modules', '.bin', 'callwright'), ['--help'], {
      cwd: projectDir,
    });
    expect(stdout).toMatch(/Usage: callwright/);
  });
});
