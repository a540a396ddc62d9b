import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mainScript, runCliJsonSync } from '../helpers/cli.js';
import { createNatTopology, type NatTopology } from '../helpers/netns.js';
import { agentChannel, calleeChannel, loudFrames } from '../helpers/recordings.js';

/**
 * callwright in its own network namespace behind a real NAT (nftables masquerade in a router
 * namespace), dialling a SIP peer (SIPp echoing RTP) in a third namespace that has no route back
 * to callwright's private address. The call must connect (responses come back through the NAT
 * to the port we sent from: rport), the agent's audio must reach the peer and come back (the
 * callee side of the recording holds the echo), and the agent's BYE must get through.
 */

let topology: NatTopology;
let dataDir: string;
let env: Record<string, string>;
let serve: { url: string; stop(): Promise<void>; output(): string };
let sipp: { exited: Promise<{ code: number | null; output: string }>; kill(): void };

function inNamespace(ns: string, command: string, args: string[], childEnv: Record<string, string>) {
  return spawn('ip', ['netns', 'exec', ns, command, ...args], {
    env: childEnv,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
}

beforeAll(async () => {
  topology = createNatTopology();
  dataDir = mkdtempSync(join(tmpdir(), 'callwright-nat-'));
  env = {
    PATH: process.env.PATH ?? '',
    CALLWRIGHT_DATA_DIR: dataDir,
    HOST: topology.appApiAddress,
    PORT: '0',
    CALLWRIGHT_SIP_BIND: topology.appAddress,
    CALLWRIGHT_SIP_PORT: '5060',
    // What callwright knows of itself behind the NAT: only its private address.
    CALLWRIGHT_PUBLIC_IP: topology.appAddress,
    CALLWRIGHT_RTP_PORTS: '31000-31098',
    CALLWRIGHT_RING_TIMEOUT_S: '10',
    CALLWRIGHT_TRUNK_ALLOW_PRIVATE: 'true',
  };
  // The peer: SIPp's built-in UAS in the far namespace, echoing every RTP packet to its sender.
  const sippChild = inNamespace(
    topology.far,
    'sipp',
    [
      ...['-sn', 'uas', '-i', topology.farAddress, '-p', '5060', '-mi', topology.farAddress, '-mp', '6000'],
      ...['-rtp_echo', '-m', '1', '-timeout', '40s', '-timeout_error', '-nostdin'],
    ],
    { PATH: process.env.PATH ?? '' },
  );
  let sippOutput = '';
  sippChild.stdout.on('data', (chunk: Buffer) => {
    sippOutput = (sippOutput + chunk.toString()).slice(-4_000);
  });
  sippChild.stderr.on('data', (chunk: Buffer) => {
    sippOutput = (sippOutput + chunk.toString()).slice(-4_000);
  });
  const sippKiller = setTimeout(() => sippChild.kill('SIGKILL'), 50_000);
  sipp = {
    exited: new Promise((resolve) =>
      sippChild.on('exit', (code) => {
        clearTimeout(sippKiller);
        resolve({ code, output: sippOutput });
      }),
    ),
    kill: () => sippChild.kill('SIGKILL'),
  };
  // callwright serving inside the app namespace; its API is reached over the test's own link.
  const child = inNamespace(topology.app, process.execPath, [mainScript, 'serve'], env);
  let output = '';
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`serve did not start: ${output}`)), 30_000);
    child.stdout.on('data', (chunk: Buffer) => {
      output = (output + chunk.toString()).slice(-20_000);
      const match = /"url":"(http:\/\/[^"]+)"/.exec(output);
      if (match) {
        clearTimeout(timer);
        resolve(match[1] as string);
      }
    });
    child.stderr.on('data', (chunk: Buffer) => {
      output = (output + chunk.toString()).slice(-20_000);
    });
    child.on('exit', () => reject(new Error(`serve exited: ${output}`)));
  });
  const exited = new Promise<void>((resolve) => child.on('exit', () => resolve()));
  serve = {
    url,
    output: () => output,
    stop: async () => {
      child.kill('SIGTERM');
      await Promise.race([exited, new Promise((resolve) => setTimeout(resolve, 5_000))]);
      if (child.exitCode === null) child.kill('SIGKILL');
    },
  };
}, 60_000);

afterAll(async () => {
  sipp?.kill();
  await serve?.stop();
  topology?.destroy();
  if (dataDir) rmSync(dataDir, { recursive: true, force: true });
});

describe('callwright behind a NAT (network namespaces, nftables)', () => {
  it('connects through the NAT and the audio flows both ways; the BYE gets through', async () => {
    const cli = (args: string[]) => runCliJsonSync(env, args);
    const accountId = cli(['accounts', 'create', '--name', 'nat']).account_id as string;
    const key = cli(['keys', 'create', '--name', 'k', '--account', accountId]).key as string;
    cli([
      'trunks',
      'add',
      '--name',
      'far',
      '--uri',
      `sip:${topology.farAddress}:5060`,
      '--account',
      accountId,
    ]);
    cli(['numbers', 'add', '+15550007777', '--route', 'far', '--account', accountId]);
    const agentId = cli([
      ...['agents', 'create', '--name', 'a', '--prompt', 'p', '--account', accountId, '--max-duration', '6'],
      ...['--first-message', 'Hello, this is a line check through a NAT. One, two, three, four, five.'],
      // SIPp echoes the agent's audio with no echo canceller: the echo must not cut the greeting
      // short (it is the audio path through the NAT that is measured here, not barge-in).
      ...['--settings', JSON.stringify({ turn_taking: { interruptions: { enabled: false } } })],
    ]).agent_id as string;

    const headers = { 'content-type': 'application/json', 'X-API-Key': key };
    const placed = await fetch(`${serve.url}/v1/calls/outbound`, {
      method: 'POST',
      headers,
      body: JSON.stringify({ agent_id: agentId, from_number: '+15550007777', to_number: '+14155550111' }),
    });
    expect(placed.status, serve.output()).toBe(200);
    const callId = ((await placed.json()) as { call_id: string }).call_id;
    let call: Record<string, unknown> = {};
    for (let i = 0; i < 300; i++) {
      call = (await (await fetch(`${serve.url}/v1/calls/${callId}`, { headers })).json()) as Record<
        string,
        unknown
      >;
      if (['completed', 'failed', 'busy', 'no_answer', 'canceled'].includes(String(call.status))) break;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    expect(call, serve.output().slice(-3_000)).toMatchObject({
      status: 'completed',
      end_reason: 'max_duration',
    });
    // The peer got our BYE through the NAT and its scenario ended cleanly.
    const peer = await sipp.exited;
    expect(peer.code, peer.output).toBe(0);
    // Everything went through the NAT's translation.
    expect(topology.translatedPackets()).toBeGreaterThan(0);
    // The agent's greeting went out and came back through the NAT: the callee side holds its echo.
    const recording = await fetch(`${serve.url}/v1/calls/${callId}/recording`, { headers });
    expect(recording.status).toBe(200);
    const wav = Buffer.from(await recording.arrayBuffer());
    const spoken = loudFrames(agentChannel(wav));
    expect(spoken).toBeGreaterThan(25);
    // An echo of at least most of what the agent said (a lost return path would leave silence).
    expect(loudFrames(calleeChannel(wav))).toBeGreaterThan(spoken * 0.6);
  }, 60_000);
});
