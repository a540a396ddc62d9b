import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { callFixture, startFullService } from '../helpers/fullService.js';

/**
 * `@callwright/client` as an integrator gets it: packed, installed from the tarball into an empty
 * project (no registry: it has no dependencies, so `--offline` must be enough), then used from
 * `import` and from `require` against the whole service with the sandbox carrier: the program sets
 * its own receiver as the webhook, places a call, polls it to the end and verifies the signed
 * `call.completed` it receives, refusing the same delivery with one byte changed.
 */

const run = promisify(execFile);
const repoRoot = new URL('../../', import.meta.url).pathname;
const packageDir = join(repoRoot, 'packages', 'client');
const maxInstalledBytes = 200_000;
let workDir: string;
let projectDir: string;
let installOutput = '';
let service: Awaited<ReturnType<typeof startFullService>>;
let fixture: Awaited<ReturnType<typeof callFixture>>;

beforeAll(async () => {
  // Compiles the package from src/ if the suite was started without a build (a no-op otherwise).
  await run('npm', ['run', 'build:client', '--silent'], { cwd: repoRoot });
  workDir = mkdtempSync(join(tmpdir(), 'callwright-client-pack-'));
  const { stdout } = await run('npm', ['pack', '--json', '--pack-destination', workDir], {
    cwd: packageDir,
    maxBuffer: 16 * 1024 * 1024,
  });
  const [packed] = JSON.parse(stdout.slice(stdout.indexOf('['))) as Array<{ filename: string }>;
  projectDir = join(workDir, 'project');
  mkdirSync(projectDir);
  writeFileSync(join(projectDir, 'package.json'), JSON.stringify({ name: 'integrator', private: true }));
  const installed = await run(
    'npm',
    ['install', '--offline', '--no-audit', '--no-fund', join(workDir, packed?.filename ?? '')],
    { cwd: projectDir, maxBuffer: 16 * 1024 * 1024 },
  );
  installOutput = `${installed.stdout}\n${installed.stderr}`;
  service = await startFullService({ CALLWRIGHT_WEBHOOK_ALLOW_PRIVATE: 'true' });
  fixture = await callFixture(service);
}, 240_000);

afterAll(async () => {
  await service?.dispose();
  if (workDir) rmSync(workDir, { recursive: true, force: true });
});

function bytesUnder(dir: string): number {
  return readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isFile())
    .reduce((sum, entry) => sum + statSync(join(entry.parentPath, entry.name)).size, 0);
}

/** The integrator's program; `load` is its first lines, ESM or CommonJS. */
function program(load: string): string {
  return `${load}
async function main() {
  const [baseUrl, apiKey, agentId, from, to] = process.argv.slice(2);
  let secret = '';
  let delivered;
  const completed = new Promise((resolve) => { delivered = resolve; });
  const receiver = createServer((request, response) => {
    const chunks = [];
    request.on('data', (chunk) => chunks.push(chunk));
    request.on('end', () => {
      const body = Buffer.concat(chunks);
      try {
        const event = verifyWebhook(secret, request.headers, body);
        let tampered = 'accepted';
        try { verifyWebhook(secret, request.headers, Buffer.concat([body, Buffer.from(' ')])); }
        catch (error) { tampered = error.name; }
        response.writeHead(204).end();
        if (event.type === 'call.completed') delivered({ event, tampered });
      } catch (error) {
        response.writeHead(400).end();
        console.error('refused a delivery:', error.message);
      }
    });
  });
  await new Promise((resolve) => receiver.listen(0, '127.0.0.1', resolve));
  const client = new CallwrightClient({ apiKey, baseUrl });
  secret = (await client.webhook.set('http://127.0.0.1:' + receiver.address().port + '/hook')).secret;
  const created = await client.calls.createOutbound({ agent_id: agentId, from_number: from, to_number: to });
  let call = await client.calls.get(created.call_id);
  while (!['completed', 'busy', 'no_answer', 'failed', 'canceled'].includes(call.status)) {
    await new Promise((resolve) => setTimeout(resolve, 100));
    call = await client.calls.get(created.call_id);
  }
  const { event, tampered } = await completed;
  receiver.close();
  console.log(JSON.stringify({
    callId: created.call_id,
    status: call.status,
    event: { type: event.type, callId: event.data.call_id, status: event.data.status },
    tampered,
    clientErrorsShared: new ValidationError({ status: 400, code: 'validation_error', message: 'm' }) instanceof CallwrightError,
  }));
}
main().catch((error) => { console.error(error); process.exit(1); });
`;
}

async function runProgram(fileName: string, load: string, toNumber: string) {
  writeFileSync(join(projectDir, fileName), program(load));
  const { stdout } = await run(
    process.execPath,
    [fileName, service.url, fixture.key, fixture.agentId, fixture.from, toNumber],
    { cwd: projectDir, timeout: 60_000 },
  );
  return JSON.parse(stdout.trim()) as Record<string, unknown>;
}

describe('the packed @callwright/client', () => {
  it('installs alone, with no dependency, under 200 kB and without an npm warning', () => {
    expect(installOutput).not.toMatch(/npm warn|npm err/i);
    const modules = readdirSync(join(projectDir, 'node_modules')).filter((name) => !name.startsWith('.'));
    expect(modules).toEqual(['@callwright']);
    expect(readdirSync(join(projectDir, 'node_modules', '@callwright'))).toEqual(['client']);
    const installedDir = join(projectDir, 'node_modules', '@callwright', 'client');
    const manifest = JSON.parse(readFileSync(join(installedDir, 'package.json'), 'utf8'));
    for (const field of ['dependencies', 'peerDependencies', 'optionalDependencies'])
      expect(Object.keys(manifest[field] ?? {}), field).toEqual([]);
    expect(manifest.engines.node).toBe('>=18');
    const lock = JSON.parse(readFileSync(join(projectDir, 'package-lock.json'), 'utf8'));
    expect(Object.keys(lock.packages).filter((path) => path !== '')).toEqual([
      'node_modules/@callwright/client',
    ]);
    expect(bytesUnder(installedDir)).toBeLessThan(maxInstalledBytes);
    expect(readdirSync(installedDir).sort()).toEqual(['README.md', 'cjs', 'esm', 'package.json']);
  });

  it('from import: places a sandbox call and verifies its signed call.completed', {
    timeout: 90_000,
  }, async () => {
    const result = await runProgram(
      'esm.mjs',
      `import { createServer } from 'node:http';
import { CallwrightClient, CallwrightError, ValidationError } from '@callwright/client';
import { verifyWebhook } from '@callwright/client/webhooks';`,
      '+15550100006',
    );
    expect(result).toMatchObject({
      status: 'completed',
      event: { type: 'call.completed', callId: result.callId, status: 'completed' },
      tampered: 'WebhookVerificationError',
      clientErrorsShared: true,
    });
  });

  it('from require: places a sandbox call and verifies its signed call.completed', {
    timeout: 90_000,
  }, async () => {
    const result = await runProgram(
      'cjs.cjs',
      `const { createServer } = require('node:http');
const { CallwrightClient, CallwrightError, ValidationError, verifyWebhook } = require('@callwright/client');
if (verifyWebhook !== require('@callwright/client/webhooks').verifyWebhook) throw new Error('two verifiers');`,
      '+15550100005',
    );
    expect(result).toMatchObject({
      status: 'failed',
      event: { type: 'call.completed', callId: result.callId, status: 'failed' },
      tampered: 'WebhookVerificationError',
      clientErrorsShared: true,
    });
  });

  it('its types check from an ES module and a CommonJS module, without @types/node', {
    timeout: 120_000,
  }, async () => {
    writeFileSync(
      join(projectDir, 'types.mts'),
      `import { CallwrightClient, CallwrightError, verifyWebhook, type CallCompletedEvent } from '@callwright/client';
import { WebhookVerificationError } from '@callwright/client/webhooks';
const client: CallwrightClient = new CallwrightClient({ apiKey: 'k', baseUrl: 'http://127.0.0.1:1' });
const event = verifyWebhook('whsec_a2V5', {}, '') as unknown as CallCompletedEvent;
export const used = [client, event, CallwrightError, WebhookVerificationError];
`,
    );
    writeFileSync(
      join(projectDir, 'types.cts'),
      `import { CallwrightClient, verifyWebhook, type CreatedCall } from '@callwright/client';
import webhooks = require('@callwright/client/webhooks');
const client = new CallwrightClient({ apiKey: 'k', baseUrl: 'http://127.0.0.1:1' });
const created: Promise<CreatedCall> = client.calls.createOutbound({ agent_id: 'a', from_number: '+1', to_number: '+2' });
export const used = [created, verifyWebhook === webhooks.verifyWebhook];
`,
    );
    const tsc = join(repoRoot, 'node_modules', 'typescript', 'bin', 'tsc');
    const options = ['--noEmit', '--strict', '--module', 'node16', '--moduleResolution', 'node16'];
    const { stdout } = await run(
      process.execPath,
      [tsc, ...options, '--target', 'es2022', '--lib', 'es2022,dom', 'types.mts', 'types.cts'],
      { cwd: projectDir },
    ).catch((error: { stdout: string }) => error);
    expect(stdout).toBe('');
  });
});
