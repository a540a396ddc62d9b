import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** A throwaway certificate authority and a server certificate it signed, made with openssl. */
export interface TestCertificates {
  readonly dir: string;
  readonly caPem: string;
  readonly caFile: string;
  readonly certPem: string;
  readonly certFile: string;
  readonly keyPem: string;
  readonly keyFile: string;
  /** The DNS name the server certificate carries (it also names 127.0.0.1). */
  readonly serverName: string;
}

let made: TestCertificates | null = null;

/** Made once per test process (two openssl runs, ~100 ms), in a fresh temporary directory. */
export function testCertificates(): TestCertificates {
  if (made) return made;
  const dir = mkdtempSync(join(tmpdir(), 'callwright-tls-'));
  const file = (name: string) => join(dir, name);
  const openssl = (...args: string[]) => execFileSync('openssl', args, { cwd: dir, stdio: 'pipe' });
  const serverName = 'pbx.callwright.test';
  openssl(
    'req',
    '-x509',
    '-newkey',
    'rsa:2048',
    '-nodes',
    '-days',
    '2',
    '-subj',
    '/CN=callwright test CA',
    '-keyout',
    file('ca.key'),
    '-out',
    file('ca.pem'),
  );
  openssl(
    'req',
    '-newkey',
    'rsa:2048',
    '-nodes',
    '-subj',
    `/CN=${serverName}`,
    '-keyout',
    file('server.key'),
    '-out',
    file('server.csr'),
  );
  writeFileSync(file('server.ext'), `subjectAltName=DNS:${serverName},IP:127.0.0.1\n`);
  openssl(
    'x509',
    '-req',
    '-in',
    file('server.csr'),
    '-CA',
    file('ca.pem'),
    '-CAkey',
    file('ca.key'),
    '-CAcreateserial',
    '-days',
    '2',
    '-extfile',
    file('server.ext'),
    '-out',
    file('server.pem'),
  );
  made = {
    dir,
    caFile: file('ca.pem'),
    caPem: readFileSync(file('ca.pem'), 'utf8'),
    certFile: file('server.pem'),
    certPem: readFileSync(file('server.pem'), 'utf8'),
    keyFile: file('server.key'),
    keyPem: readFileSync(file('server.key'), 'utf8'),
    serverName,
  };
  return made;
}
