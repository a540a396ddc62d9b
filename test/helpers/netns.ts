import { execFileSync } from 'node:child_process';

/**
 * Three network namespaces of our own, wired as callwright behind a NAT:
 *
 *   app (callwright, 10.201.0.2) ── nat (a router: 10.201.0.1 | 10.202.0.1, nftables masquerade)
 *   ── far (the SIP peer, 10.202.0.2)
 *
 * `far` has no route back to 10.201.0.0/24: only what the NAT translated reaches back. The test
 * process (the root namespace) reaches `app` on its own link (10.203.N.1 ↔ 10.203.N.2, N from the
 * process id, so a link left by a killed run of another process does not shadow it) to drive
 * callwright's API. Everything is removed by `destroy()`, namespaces by name, nothing else touched.
 */
export interface NatTopology {
  app: string;
  far: string;
  appAddress: string;
  appApiAddress: string;
  farAddress: string;
  natOutsideAddress: string;
  /** Packets the NAT's masquerade rule translated so far. */
  translatedPackets(): number;
  destroy(): void;
}

function ip(...args: string[]): void {
  execFileSync('ip', args, { stdio: ['ignore', 'ignore', 'pipe'] });
}

export function createNatTopology(): NatTopology {
  const id = String(process.pid % 1_000_000);
  const rootNet = `10.203.${process.pid % 250}`;
  const app = `cw-app-${id}`;
  const nat = `cw-nat-${id}`;
  const far = `cw-far-${id}`;
  const names = {
    appNat: `cwa${id}`,
    natApp: `cwb${id}`,
    natFar: `cwc${id}`,
    farNat: `cwd${id}`,
    root: `cwe${id}`,
    appRoot: `cwf${id}`,
  };
  const destroy = () => {
    for (const ns of [app, nat, far]) {
      try {
        ip('netns', 'del', ns);
      } catch {
        // not there
      }
    }
    try {
      ip('link', 'del', names.root);
    } catch {
      // went with its peer
    }
  };
  destroy();
  try {
    for (const ns of [app, nat, far]) {
      ip('netns', 'add', ns);
      ip('-n', ns, 'link', 'set', 'lo', 'up');
    }
    const link = (a: string, aNs: string | null, b: string, bNs: string) => {
      ip('link', 'add', a, 'type', 'veth', 'peer', 'name', b);
      if (aNs) ip('link', 'set', a, 'netns', aNs);
      ip('link', 'set', b, 'netns', bNs);
    };
    link(names.appNat, app, names.natApp, nat);
    link(names.natFar, nat, names.farNat, far);
    link(names.root, null, names.appRoot, app);
    const up = (ns: string | null, dev: string, cidr: string) => {
      const prefix = ns ? ['-n', ns] : [];
      ip(...prefix, 'addr', 'add', cidr, 'dev', dev);
      ip(...prefix, 'link', 'set', dev, 'up');
    };
    up(app, names.appNat, '10.201.0.2/24');
    up(nat, names.natApp, '10.201.0.1/24');
    up(nat, names.natFar, '10.202.0.1/24');
    up(far, names.farNat, '10.202.0.2/24');
    up(null, names.root, `${rootNet}.1/24`);
    up(app, names.appRoot, `${rootNet}.2/24`);
    ip('-n', app, 'route', 'add', 'default', 'via', '10.201.0.1');
    execFileSync('ip', ['netns', 'exec', nat, 'sysctl', '-qw', 'net.ipv4.ip_forward=1']);
    const ruleset = `table ip callwright_nat {
  chain postrouting {
    type nat hook postrouting priority srcnat; policy accept;
    oifname "${names.natFar}" counter masquerade
  }
}
`;
    execFileSync('ip', ['netns', 'exec', nat, 'nft', '-f', '-'], { input: ruleset });
  } catch (error) {
    destroy();
    throw error;
  }
  return {
    app,
    far,
    appAddress: '10.201.0.2',
    appApiAddress: `${rootNet}.2`,
    farAddress: '10.202.0.2',
    natOutsideAddress: '10.202.0.1',
    translatedPackets() {
      const listing = execFileSync(
        'ip',
        ['netns', 'exec', nat, 'nft', 'list', 'table', 'ip', 'callwright_nat'],
        {
          encoding: 'utf8',
        },
      );
      return Number(/counter packets (\d+)/.exec(listing)?.[1] ?? 0);
    },
    destroy,
  };
}
