import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AgentTool } from '../domain/agentTools.js';
import { createLogger } from '../logger.js';
import { generateWebhookSecret } from '../webhooks/signing.js';
import { ToolCaller, toolResultMaxBytes, toolTranscriptText } from './toolCaller.js';

/** The tool caller's own refusals, against a real local HTTP server. */

let server: Server;
let baseUrl: string;
let requests = 0;

beforeAll(async () => {
  server = createServer((request, response) => {
    requests++;
    request.resume();
    request.on('end', () => {
      response.writeHead(200, { 'content-type': 'application/json' });
      if (request.url === '/drip' || request.url === '/cut') {
        // A whole JSON value at once, then the body never finishes: whitespace drips past the
        // tool's deadline (valid JSON so far, so only completeness can tell), or the server hangs up.
        response.write('{"status":"shipped"}');
        if (request.url === '/cut') {
          setTimeout(() => response.socket?.destroy(), 50);
          return;
        }
        const drip = setInterval(() => response.write(' '), 100);
        const stop = () => clearInterval(drip);
        response.on('close', stop);
        setTimeout(() => {
          stop();
          response.end();
        }, 5_000);
        return;
      }
      response.end(
        request.url === '/big' ? JSON.stringify({ blob: 'x'.repeat(toolResultMaxBytes) }) : '{"ok":true}',
      );
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(() => {
  server.closeAllConnections();
  server.close();
});

const tool = (path: string): AgentTool => ({
  name: 'lookup',
  description: 'd',
  parameters: { type: 'object', properties: { id: { type: 'integer' } }, required: ['id'] },
  url: `${baseUrl}${path}`,
  timeoutMs: 2_000,
  sayWhileWaiting: null,
  filler: null,
  failedMessage: null,
  method: 'POST',
  query: {},
  headers: [],
  auth: null,
  responseVariables: [],
});

function caller(options: { secrets?: string[] | null; allowPrivate?: boolean } = {}): ToolCaller {
  return new ToolCaller({
    callId: 'call_1',
    variables: {},
    tools: [tool('/ok')],
    signingSecrets: options.secrets === undefined ? [generateWebhookSecret()] : options.secrets,
    allowPrivate: options.allowPrivate ?? true,
    logger: createLogger('silent'),
  });
}

describe('ToolCaller', () => {
  it('calls the tool when the arguments fit its schema', async () => {
    await expect(caller().call(tool('/ok'), '{"id": 7}')).resolves.toMatchObject({
      ok: true,
      result: { ok: true },
      status: 200,
    });
  });

  it('refuses, without a request, arguments that are not JSON or do not fit the schema', async () => {
    const before = requests;
    await expect(caller().call(tool('/ok'), '{"id": "seven"}')).resolves.toMatchObject({
      ok: false,
      error: expect.stringMatching(/do not fit.*\/id must be integer/),
    });
    await expect(caller().call(tool('/ok'), '{"id":')).resolves.toMatchObject({
      ok: false,
      error: /not JSON/,
    });
    expect(requests).toBe(before);
  });

  it('does not send unsigned: no webhook secret, no request', async () => {
    const before = requests;
    await expect(caller({ secrets: null }).call(tool('/ok'), '{"id": 1}')).resolves.toMatchObject({
      ok: false,
      error: expect.stringMatching(/no webhook secret/),
    });
    expect(requests).toBe(before);
  });

  it('refuses private addresses unless allowed, like webhooks', async () => {
    const before = requests;
    const outcome = await caller({ allowPrivate: false }).call(tool('/ok'), '{"id": 1}');
    expect(outcome).toMatchObject({ ok: false, status: null });
    expect(requests).toBe(before);
    // What the model reads says what happened, not which setting of the operator's would allow it.
    expect(outcome.ok ? '' : outcome.error).toMatch(/private|loopback|reserved/);
    expect(outcome.ok ? '' : outcome.error).not.toMatch(/CALLWRIGHT_|set .*=true/);
  });

  it('fails a call whose answer body does not complete within timeout_ms, or is cut off', async () => {
    const dripping = { ...tool('/drip'), timeoutMs: 500 };
    const outcome = await caller().call(dripping, '{"id": 7}');
    expect(outcome).toMatchObject({
      ok: false,
      status: 200,
      error: 'the answer did not arrive in full within 500 ms',
    });
    expect(outcome.latencyMs).toBeGreaterThanOrEqual(450);
    await expect(caller().call(tool('/cut'), '{"id": 7}')).resolves.toMatchObject({
      ok: false,
      status: 200,
      error: 'the answer did not arrive in full within 2000 ms',
    });
  });

  it('refuses an answer larger than the cap', async () => {
    await expect(caller().call(tool('/big'), '{"id": 1}')).resolves.toMatchObject({
      ok: false,
      error: expect.stringMatching(/larger than/),
    });
  });

  it('cuts long transcript lines', () => {
    expect(toolTranscriptText('y'.repeat(5_000))).toHaveLength(1_000);
  });
});
