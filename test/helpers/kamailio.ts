import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort } from './freePort.js';
import { testCertificates } from './testCertificates.js';

/**
 * kamailio (Debian 5.6) as a carrier's trunk proxy on loopback: UDP and TCP on one port, TLS on
 * another (the test CA's certificate), digest challenges (407, MD5) on every INVITE, record-route
 * (double, between transports) and loose routing, forwarding INVITEs to one callee over UDP, and a
 * registrar (digest on REGISTER, at most 600 s granted, contacts kept in memory). It
 * logs one line per request it handles with the transport it came in on, for the test to read.
 */

export interface KamailioOptions {
  /** Where INVITEs go after authentication (a SIPp or baresip callee over UDP). */
  readonly calleePort: number;
  /** The digest user and password the proxy expects. */
  readonly username: string;
  readonly password: string;
  /**
   * Issue 40: an INVITE to an address of record someone registered (the service's number) goes to
   * the registered contact, without a challenge (a caller such as baresip reaching the service).
   */
  readonly routeToRegistered?: boolean;
  /** More digest users that may REGISTER (issue 40: baresip as a registered caller), name → password. */
  readonly registeringUsers?: Readonly<Record<string, string>>;
  /** How long the proxy may run before it is killed. Default 60 s. */
  readonly lifetimeMs?: number;
}

export interface RunningKamailio {
  readonly port: number;
  readonly tlsPort: number;
  /** Everything kamailio wrote (its log goes to stderr). */
  readonly log: () => string;
  /** `REQ <method> <transport>` lines, one per request received. */
  readonly requests: () => string[];
  /** Each REGISTER the registrar accepted: the address of record, transport and Expires asked. */
  readonly registrations: () => Array<{ aor: string; transport: string; expires: number }>;
  stop(): Promise<void>;
}

function configuration(
  options: KamailioOptions,
  port: number,
  tlsPort: number,
  tlsConfigPath: string,
): string {
  return `#!KAMAILIO
debug=1
log_stderror=yes
memdbg=5
memlog=5
children=2
tcp_children=2
enable_tls=yes
tcp_accept_aliases=yes
auto_aliases=no
listen=udp:127.0.0.1:${port}
listen=tcp:127.0.0.1:${port}
listen=tls:127.0.0.1:${tlsPort}
alias="127.0.0.1:${port}"
alias="127.0.0.1:${tlsPort}"

loadmodule "tls.so"
loadmodule "tm.so"
loadmodule "sl.so"
loadmodule "rr.so"
loadmodule "maxfwd.so"
loadmodule "textops.so"
loadmodule "siputils.so"
loadmodule "xlog.so"
loadmodule "pv.so"
loadmodule "auth.so"
loadmodule "usrloc.so"
loadmodule "registrar.so"

modparam("tls", "config", "${tlsConfigPath}")
modparam("rr", "enable_double_rr", 1)
modparam("usrloc", "db_mode", 0)
modparam("registrar", "max_expires", 600)

request_route {
  xlog("L_ALERT", "REQ $rm $pr\\n");
  if (!mf_process_maxfwd_header("10")) { sl_send_reply("483", "Too Many Hops"); exit; }
  if (has_totag()) {
    if (loose_route()) { route(RELAY); }
    if (is_method("ACK")) { if (t_check_trans()) { t_relay(); } exit; }
    sl_send_reply("404", "Not here");
    exit;
  }
  if (is_method("REGISTER")) {
    $var(password) = "${options.password}";
    ${Object.entries(options.registeringUsers ?? {})
      .map(([user, password]) => `if ($au == "${user}") { $var(password) = "${password}"; }`)
      .join('\n    ')}
    if (!pv_www_authenticate("$td", "$var(password)", "0") || ($au != "${options.username}"${Object.keys(
      options.registeringUsers ?? {},
    )
      .map((user) => ` && $au != "${user}"`)
      .join('')})) {
      www_challenge("$td", "1");
      exit;
    }
    if (!save("location")) { sl_reply_error(); exit; }
    xlog("L_ALERT", "REGISTERED $tu $pr expires=$hdr(Expires)\n");
    exit;
  }
  if (is_method("CANCEL")) { if (t_check_trans()) { route(RELAY); } exit; }
  ${options.routeToRegistered ? 'if (is_method("INVITE") && lookup("location")) { record_route(); route(RELAY); }' : ''}
  if (is_method("INVITE")) {
    if (!pv_proxy_authenticate("$fd", "${options.password}", "0") || $au != "${options.username}") {
      proxy_challenge("$fd", "1");
      exit;
    }
    consume_credentials();
    record_route();
    # The callee leg is plain UDP: a sips: Request-URI would make the proxy insist on TLS there.
    $ru = "sip:" + $rU + "@127.0.0.1:${options.calleePort};transport=udp";
    route(RELAY);
  }
  sl_send_reply("403", "Only INVITE");
  exit;
}

route[RELAY] {
  if (!t_relay()) { sl_reply_error(); }
  exit;
}
`;
}

/** Starts kamailio in the foreground on free loopback ports; resolves once it listens. */
export async function startKamailio(options: KamailioOptions): Promise<RunningKamailio> {
  const certificates = testCertificates();
  const dir = mkdtempSync(join(tmpdir(), 'callwright-kamailio-'));
  const port = await freePort();
  const tlsPort = await freePort();
  const tlsConfigPath = join(dir, 'tls.cfg');
  writeFileSync(
    tlsConfigPath,
    `[server:default]\nmethod = TLSv1.2+\nverify_certificate = no\nrequire_certificate = no\n` +
      `private_key = ${certificates.keyFile}\ncertificate = ${certificates.certFile}\n\n` +
      `[client:default]\nmethod = TLSv1.2+\nverify_certificate = no\nrequire_certificate = no\n`,
  );
  const configPath = join(dir, 'kamailio.cfg');
  writeFileSync(configPath, configuration(options, port, tlsPort, tlsConfigPath));
  const child: ChildProcess = spawn(
    'kamailio',
    ['-f', configPath, '-DD', '-E', '-Y', dir, '-w', dir, '-m', '64', '-M', '8'],
    { stdio: ['ignore', 'pipe', 'pipe'] },
  );
  let output = '';
  const collect = (chunk: Buffer) => {
    output = (output + chunk.toString('utf8')).slice(-200_000);
  };
  child.stdout?.on('data', collect);
  child.stderr?.on('data', collect);
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const limit = setTimeout(() => child.kill('SIGKILL'), options.lifetimeMs ?? 60_000);
  const stop = async () => {
    clearTimeout(limit);
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
    await Promise.race([exited, new Promise((resolve) => setTimeout(resolve, 3_000))]);
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    rmSync(dir, { recursive: true, force: true });
  };
  // It listens once its TLS port accepts a connection.
  const { connect } = await import('node:net');
  for (let attempt = 0; ; attempt++) {
    const up = await new Promise<boolean>((resolve) => {
      const socket = connect({ host: '127.0.0.1', port: tlsPort }, () => {
        socket.destroy();
        resolve(true);
      });
      socket.on('error', () => resolve(false));
    });
    if (up) break;
    if (attempt > 100 || child.exitCode !== null) {
      await stop();
      throw new Error(`kamailio did not start:\n${output.slice(-3_000)}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  return {
    port,
    tlsPort,
    log: () => output,
    requests: () => [...output.matchAll(/REQ (\w+) (\w+)/g)].map((match) => `REQ ${match[1]} ${match[2]}`),
    registrations: () =>
      [...output.matchAll(/REGISTERED (\S+) (\w+) expires=(\d+)/g)].map((match) => ({
        aor: match[1] as string,
        transport: match[2] as string,
        expires: Number(match[3]),
      })),
    stop,
  };
}
