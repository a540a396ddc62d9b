import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { appendFileSync, chownSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/**
 * Machines on one switch, made of network namespaces: a bridge in the root namespace (the test
 * process sits on it at .1, like an operator's laptop on the LAN) and one namespace per machine,
 * each joined to the bridge by a veth pair and given its own address. Cutting a machine off is
 * taking its link down (`cutOff`), as a pulled cable or a dead host looks to the others: no RST,
 * no FIN, packets vanish. `destroy()` removes the namespaces and the bridge by name, nothing else.
 *
 * Names and the /24 carry the test process's pid so a run killed halfway does not collide with
 * the next one (and the next one deletes what the same pid left, if any).
 */
export interface NodeNetwork {
  readonly gateway: string;
  addressOf(machine: string): string;
  namespaceOf(machine: string): string;
  cutOff(machine: string): void;
  destroy(): void;
}

function ip(...args: string[]): void {
  execFileSync('ip', args, { stdio: ['ignore', 'ignore', 'pipe'] });
}

export function createNodeNetwork(machines: readonly string[]): NodeNetwork {
  const id = String(process.pid % 100_000);
  const subnet = `10.204.${process.pid % 250}`;
  const bridge = `cwbr${id}`;
  const namespaceOf = (machine: string) => `cw-${machine}-${id}`;
  const hostLink = (index: number) => `cwh${index}x${id}`;
  const nodeLink = (index: number) => `cwn${index}x${id}`;
  const addresses = new Map(machines.map((machine, index) => [machine, `${subnet}.${10 + index}`]));
  const destroy = () => {
    for (const machine of machines) {
      try {
        ip('netns', 'del', namespaceOf(machine));
      } catch {
        // not there
      }
    }
    machines.forEach((_, index) => {
      try {
        ip('link', 'del', hostLink(index));
      } catch {
        // went with its namespace's end
      }
    });
    try {
      ip('link', 'del', bridge);
    } catch {
      // not there
    }
  };
  destroy();
  try {
    ip('link', 'add', bridge, 'type', 'bridge');
    ip('addr', 'add', `${subnet}.1/24`, 'dev', bridge);
    ip('link', 'set', bridge, 'up');
    machines.forEach((machine, index) => {
      const ns = namespaceOf(machine);
      ip('netns', 'add', ns);
      ip('-n', ns, 'link', 'set', 'lo', 'up');
      ip('link', 'add', hostLink(index), 'type', 'veth', 'peer', 'name', nodeLink(index));
      ip('link', 'set', nodeLink(index), 'netns', ns);
      ip('link', 'set', hostLink(index), 'master', bridge);
      ip('link', 'set', hostLink(index), 'up');
      ip('-n', ns, 'addr', 'add', `${addresses.get(machine)}/24`, 'dev', nodeLink(index));
      ip('-n', ns, 'link', 'set', nodeLink(index), 'up');
    });
  } catch (error) {
    destroy();
    throw error;
  }
  return {
    gateway: `${subnet}.1`,
    addressOf: (machine) => {
      const address = addresses.get(machine);
      if (!address) throw new Error(`no machine ${machine}`);
      return address;
    },
    namespaceOf,
    cutOff: (machine) => {
      const index = machines.indexOf(machine);
      ip('-n', namespaceOf(machine), 'link', 'set', nodeLink(index), 'down');
    },
    destroy,
  };
}

/**
 * A PostgreSQL server of the test's own (Debian's binaries), in `namespace`, listening on
 * `address` only, trusting every connection; fsync off (the test is about calls, not disks).
 * initdb refuses to run as root, so the cluster belongs to the `postgres` user.
 */
export async function startNamespacedPostgres(
  namespace: string,
  address: string,
): Promise<{ url: string; stop(): Promise<void> }> {
  const bin = execFileSync('pg_config', ['--bindir'], { encoding: 'utf8' }).trim();
  const dataDir = mkdtempSync(join(tmpdir(), 'callwright-nodes-pg-'));
  const owner = execFileSync('id', ['-u', 'postgres'], { encoding: 'utf8' }).trim();
  const group = execFileSync('id', ['-g', 'postgres'], { encoding: 'utf8' }).trim();
  chownSync(dataDir, Number(owner), Number(group));
  const asPostgres = ['setpriv', '--reuid=postgres', '--regid=postgres', '--init-groups'];
  execFileSync(
    asPostgres[0] as string,
    [
      ...asPostgres.slice(1),
      join(bin, 'initdb'),
      ...['-D', join(dataDir, 'data'), '-A', 'trust', '-U', 'postgres', '--no-sync'],
    ],
    { stdio: ['ignore', 'ignore', 'pipe'] },
  );
  // The machines on the switch may connect (initdb's default trusts only the local socket).
  appendFileSync(join(dataDir, 'data', 'pg_hba.conf'), `host all all ${address}/24 trust\n`);
  const child: ChildProcess = spawn(
    'ip',
    [
      ...['netns', 'exec', namespace, ...asPostgres, join(bin, 'postgres')],
      ...['-D', join(dataDir, 'data'), '-k', dataDir, '-c', `listen_addresses=${address}`],
      ...['-c', 'fsync=off', '-c', 'synchronous_commit=off', '-c', 'max_connections=300'],
    ],
    { stdio: ['ignore', 'ignore', 'pipe'] },
  );
  let output = '';
  child.stderr?.on('data', (chunk: Buffer) => {
    output = (output + chunk.toString()).slice(-4_000);
  });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const stop = async () => {
    // SIGINT: PostgreSQL's fast shutdown (SIGTERM would wait for the vanished nodes' sessions).
    child.kill('SIGINT');
    await Promise.race([exited, new Promise((resolve) => setTimeout(resolve, 5_000))]);
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    rmSync(dataDir, { recursive: true, force: true });
  };
  for (let waited = 0; ; waited += 100) {
    if (/ready to accept connections/.test(output)) break;
    if (child.exitCode !== null || waited > 20_000) {
      await stop();
      throw new Error(`postgres did not start: ${output}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  return { url: `postgres://postgres@${address}:5432/postgres`, stop };
}
