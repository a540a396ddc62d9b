import { spawn } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { encodeWav } from '../../src/voice/providers/audio/wav.js';
import { wavSamples } from './recordings.js';

/**
 * baresip (the Debian package's softphone) as an auto-answering callee on loopback: it plays a
 * WAV to the caller (its `aufile` source) and records what it hears (the `sndfile` filter writes
 * the decoded far-end audio), with the media encryption asked for (`srtp-mand` is RTP/SAVP with
 * SDES keys). Bounded: killed after `lifetimeMs` whatever happens.
 */
export interface BaresipCalleeOptions {
  sipPort: number;
  /** The user part calls are addressed to (baresip answers only its accounts' users). */
  user: string;
  /** 8 kHz mono 16-bit samples baresip sends once answered. */
  say: Int16Array;
  /** baresip's `mediaenc`: none, srtp (best effort), srtp-mand (RTP/SAVP). */
  mediaEncryption?: 'srtp' | 'srtp-mand';
  /** baresip's `rtcp_mux`: RTCP on the RTP port when the offer allows (RFC 5761). Default off. */
  rtcpMux?: boolean;
  lifetimeMs?: number;
}

export interface RunningBaresip {
  /** What baresip heard of the call (decoded, after SRTP), 8 kHz mono; empty before a call. */
  heard(): Int16Array;
  output(): string;
  stop(): Promise<void>;
}

export async function startBaresipCallee(options: BaresipCalleeOptions): Promise<RunningBaresip> {
  const encryption = options.mediaEncryption ? `;mediaenc=${options.mediaEncryption}` : '';
  return runBaresip({
    sipPort: options.sipPort,
    say: options.say,
    player: 'callee',
    modules: ['module srtp.so', 'module_app account.so'],
    extraConfig: [`rtcp_mux ${options.rtcpMux ? 'yes' : 'no'}`],
    account: `<sip:${options.user}@127.0.0.1>;regint=0;answermode=auto;audio_codecs=PCMU,PCMA${encryption}`,
    args: [],
    waitUntilReady: true,
    lifetimeMs: options.lifetimeMs,
  });
}

/**
 * baresip as a caller (issue 40): dials `target` once it is ready (its `menu` module's `/dial`),
 * plays `say` once answered and records what it hears, like the callee above.
 */
export async function startBaresipCaller(options: {
  sipPort: number;
  user: string;
  target: string;
  say: Int16Array;
  lifetimeMs?: number;
  /** Registers `user` there first (digest), as a phone on the carrier's registrar does. */
  register?: { registrar: string; password: string };
}): Promise<RunningBaresip> {
  return runBaresip({
    sipPort: options.sipPort,
    say: options.say,
    player: 'caller',
    modules: ['module_app account.so', 'module_app menu.so'],
    extraConfig: [],
    account: options.register
      ? `<sip:${options.user}@${options.register.registrar};transport=udp>;auth_pass=${options.register.password};regint=60;audio_codecs=PCMU,PCMA`
      : `<sip:${options.user}@127.0.0.1>;regint=0;audio_codecs=PCMU,PCMA`,
    args: ['-e', `/dial ${options.target}`],
    waitUntilReady: false,
    lifetimeMs: options.lifetimeMs,
  });
}

/**
 * One baresip in a folder of its own: plays `say` (aufile) into a call, records the decoded far end
 * (sndfile) through a sound-card-less player (aubridge), killed after `lifetimeMs` whatever happens.
 */
async function runBaresip(options: {
  sipPort: number;
  say: Int16Array;
  player: string;
  modules: string[];
  extraConfig: string[];
  account: string;
  args: string[];
  waitUntilReady: boolean;
  lifetimeMs: number | undefined;
}): Promise<RunningBaresip> {
  const directory = mkdtempSync(join(tmpdir(), `callwright-baresip-${options.player}-`));
  writeFileSync(join(directory, 'say.wav'), encodeWav(options.say, 8000));
  writeFileSync(
    join(directory, 'config'),
    [
      'poll_method epoll',
      `sip_listen 127.0.0.1:${options.sipPort}`,
      'net_interface 127.0.0.1',
      `audio_source aufile,${join(directory, 'say.wav')}`,
      // No sound card: the bridge device consumes what is played, so the decode path (and the
      // recording filter in it) runs as it would with a speaker.
      `audio_player aubridge,${options.player}`,
      'audio_alert aubridge,alert',
      'audio_srate 8000',
      'audio_channels 1',
      'module_path /usr/lib/baresip/modules',
      'module g711.so',
      'module aufile.so',
      'module aubridge.so',
      'module sndfile.so',
      ...options.modules,
      `snd_path ${directory}`,
      ...options.extraConfig,
      '',
    ].join('\n'),
  );
  writeFileSync(join(directory, 'accounts'), `${options.account}\n`);
  const child = spawn('baresip', ['-f', directory, ...options.args], {
    cwd: directory,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  const collect = (chunk: Buffer) => {
    output = (output + chunk.toString('utf8')).slice(-8_000);
  };
  child.stdout.on('data', collect);
  child.stderr.on('data', collect);
  const killer = setTimeout(() => child.kill('SIGKILL'), options.lifetimeMs ?? 60_000);
  const exited = new Promise<void>((resolve) => child.on('exit', () => resolve()));
  const stop = async () => {
    clearTimeout(killer);
    if (child.exitCode === null) child.kill('SIGTERM');
    await Promise.race([exited, new Promise((resolve) => setTimeout(resolve, 3_000))]);
    if (child.exitCode === null) child.kill('SIGKILL');
    rmSync(directory, { recursive: true, force: true });
  };
  if (options.waitUntilReady) {
    const deadline = Date.now() + 10_000;
    while (!output.includes('baresip is ready') && Date.now() < deadline) {
      if (child.exitCode !== null) break;
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    if (!output.includes('baresip is ready')) {
      await stop();
      throw new Error(`baresip did not start:\n${output}`);
    }
  }
  return {
    heard() {
      const decoded = readdirSync(directory).find((name) => name.endsWith('-dec.wav'));
      return decoded ? wavSamples(readFileSync(join(directory, decoded))) : new Int16Array(0);
    },
    output: () => output,
    stop,
  };
}
