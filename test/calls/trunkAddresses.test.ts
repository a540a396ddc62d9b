import { randomBytes } from 'node:crypto';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { addPhoneNumber } from '../../src/admin/numbers.js';
import { addTrunk, describeTrunk, type TrunkInput } from '../../src/admin/trunks.js';
import { inviteForCall } from '../../src/calls/callRoute.js';
import { AppError } from '../../src/domain/errors.js';
import type { CallRecord } from '../../src/domain/records.js';
import type { TrunkSettings } from '../../src/domain/trunkSettings.js';
import type { HostnameLookup } from '../../src/net/hostGuard.js';
import { SecretBox } from '../../src/secrets/secretBox.js';
import { type AnyStore, openTestStore, storeKinds, type TestStoreHandle } from '../helpers/stores.js';
import { testCertificates } from '../helpers/testCertificates.js';

/**
 * SIP trunks may not name the service's own network (issue 12, defect 6): refused when added and
 * again when a call is dialled, with the trunk's name resolved once and the INVITE sent to that
 * vetted address; CALLWRIGHT_TRUNK_ALLOW_PRIVATE (allowPrivate here) lets private PBXs in.
 */

const secretBox = new SecretBox(randomBytes(32));
/** These names have no SRV records: their own address is used (SRV is tested in trunkSrv.test.ts). */
const noSrv = { resolveNaptr: async () => [], resolveSrv: async () => [] };
const internalUris = [
  'sip:169.254.169.254',
  'sip:169.254.169.254:80',
  'sip:10.1.2.3',
  'sip:10.0.0.1:5060;transport=udp',
  'sip:192.168.1.20',
  'sip:172.16.0.9:5080',
  'sip:127.0.0.1:5432',
  'sip:127.0.0.1',
  'sip:localhost:6379',
  'sip:pbx.localhost',
  'sip:[::1]:5060',
  'sip:[fe80::1]',
  'sip:[::ffff:169.254.169.254]',
  'sip:0.0.0.0',
  'sip:100.64.0.1',
  // Forms getaddrinfo reads as 127.0.0.1 and 169.254.169.254.
  'sip:2130706433',
  'sip:0x7f.1',
  'sip:127.1',
  'sip:0251.0376.0251.0376',
];

describe.each(storeKinds)('trunk addresses on %s', (kind) => {
  let handle: TestStoreHandle;
  let store: AnyStore;
  let accountId: string;

  beforeEach(async () => {
    handle = await openTestStore(kind);
    store = handle.store;
    accountId = (await store.accounts.create({ name: 'trunks' })).id;
  });

  afterEach(async () => {
    await handle.dispose();
  });

  it.each(internalUris)('refuses to add a trunk at %s, and allows it with the setting', async (uri) => {
    const added = addTrunk(store, secretBox, accountId, { name: 'internal', uri }, { allowPrivate: false });
    await expect(added).rejects.toThrow(/CALLWRIGHT_TRUNK_ALLOW_PRIVATE=true/);
    await expect(added).rejects.toMatchObject({ code: 'validation_error' });
    expect(await store.trunks.list(accountId)).toEqual([]);
    const allowed = await addTrunk(store, secretBox, accountId, { name: 'pbx', uri }, { allowPrivate: true });
    expect(allowed.uri).toBe(uri);
  });

  it('adds trunks with public names and addresses', async () => {
    for (const [name, uri] of [
      ['carrier', 'sip:sip.example.com:5080'],
      ['public-ip', 'sip:8.8.4.4'],
      ['v6', 'sip:[2606:4700::1111]:5060'],
    ] as const) {
      await addTrunk(store, secretBox, accountId, { name, uri }, { allowPrivate: false });
    }
    expect((await store.trunks.list(accountId)).map((trunk) => trunk.name).sort()).toEqual([
      'carrier',
      'public-ip',
      'v6',
    ]);
  });

  it('refuses, when it is saved, a trunk whose transport or TLS settings could not be honoured', async () => {
    const add = (uri: string, extra: Partial<TrunkInput> = {}) =>
      addTrunk(store, secretBox, accountId, { name: 'carrier', uri, ...extra }, { allowPrivate: false });
    await expect(add('sips:sip.example.com;transport=udp')).rejects.toThrow(
      'transport=udp cannot be honoured',
    );
    await expect(add('sip:sip.example.com;transport=ws')).rejects.toThrow('transport=ws is not supported');
    await expect(add('sip:sip.example.com;maddr=10.0.0.1')).rejects.toThrow(
      'parameter ;maddr=10.0.0.1 is not supported',
    );
    await expect(add('sip:sip.example.com;transport=tcp;transport=tls')).rejects.toThrow('not supported');
    await expect(add('sip:sip.example.com', { tlsVerify: false })).rejects.toThrow(
      'apply only to a sips: or transport=tls',
    );
    await expect(add('sips:sip.example.com', { tlsCaPem: 'not a certificate' })).rejects.toThrow(
      'PEM certificates',
    );
    await expect(add('sip:sip.example.com', { outboundProxy: 'sip:10.0.0.9' })).rejects.toThrow(
      'outbound proxy points to a private address',
    );
    await expect(add('sips:sip.example.com', { outboundProxy: 'sip:proxy.example.com' })).rejects.toThrow(
      'a TLS trunk needs a TLS outbound proxy',
    );
    await expect(add('sip:sip.example.com', { outboundProxy: 'http://proxy' })).rejects.toThrow(
      'must look like sip:',
    );
    await expect(add('sip:sip.example.com', { register: true })).rejects.toThrow(
      'a trunk that registers needs --username and --password',
    );
    expect(await store.trunks.list(accountId)).toEqual([]);

    const certificates = testCertificates();
    const saved = await add('sip:sip.example.com:5081;transport=tls', { tlsCaPem: certificates.caPem });
    expect(saved.settings).toEqual({ tlsCaPem: certificates.caPem.trim() });
    expect(describeTrunk(saved)).toMatchObject({ transport: 'tls', tls_ca: 'set', tls_verify: true });
    const stored = await store.trunks.get(accountId, 'carrier');
    expect(stored?.settings).toEqual(saved.settings);
  });

  describe('at dial time', () => {
    let answers: string[];
    let lookups: string[];
    const lookup: HostnameLookup = async (hostname) => {
      lookups.push(hostname);
      return answers.map((address) => ({ address, family: address.includes(':') ? 6 : 4 }));
    };

    async function callThrough(uri: string, settings: TrunkSettings = {}): Promise<CallRecord> {
      const trunk = await store.trunks.create({
        accountId,
        name: `t${lookups.length}${randomBytes(2).toString('hex')}`,
        uri,
        username: 'acme',
        passwordCiphertext: secretBox.seal('hunter2'),
        fromDomain: null,
        settings,
      });
      const from = `+1555000${String(Math.floor(Math.random() * 9000) + 1000)}`;
      await addPhoneNumber(store, accountId, from, trunk.name);
      return {
        accountId,
        fromNumber: from,
        toNumber: '+14155550123',
        variables: {},
      } as unknown as CallRecord;
    }

    beforeEach(() => {
      answers = ['93.184.215.14'];
      lookups = [];
    });

    it('resolves the trunk name once and sends the INVITE to that address, keeping the name in the URI', async () => {
      const call = await callThrough('sip:pbx.example.com:5070');
      const route = await inviteForCall(store, call, {
        sandbox: null,
        secretBox,
        ringTimeoutMs: 5_000,
        trunkAllowPrivate: false,
        lookup,
        dns: noSrv,
      });
      expect(lookups).toEqual(['pbx.example.com']);
      expect(route.inviteOptions.requestUri).toBe('sip:+14155550123@pbx.example.com:5070');
      expect(route.inviteOptions.destination).toEqual({
        host: '93.184.215.14',
        port: 5070,
        transport: 'udp',
      });
      expect(route.inviteOptions.credentials).toEqual({ username: 'acme', password: 'hunter2' });
      expect(route.inviteOptions.allowsRemoteAddress?.('93.184.215.99')).toBe(true);
      expect(route.inviteOptions.allowsRemoteAddress?.('169.254.169.254')).toBe(false);
      expect(route.inviteOptions.allowsRemoteAddress?.('10.0.0.8')).toBe(false);
      expect(route.inviteOptions.allowsRemoteAddress?.('steer.example.com')).toBe(false);
    });

    it('refuses the call when the name now resolves to an internal address (DNS changed)', async () => {
      const call = await callThrough('sip:pbx.example.com');
      await inviteForCall(store, call, {
        sandbox: null,
        secretBox,
        ringTimeoutMs: 5_000,
        trunkAllowPrivate: false,
        lookup,
        dns: noSrv,
      });
      answers = ['93.184.215.14', '169.254.169.254'];
      const refused = inviteForCall(store, call, {
        sandbox: null,
        secretBox,
        ringTimeoutMs: 5_000,
        trunkAllowPrivate: false,
        lookup,
        dns: noSrv,
      });
      await expect(refused).rejects.toThrow(
        'trunk URI host pbx.example.com resolves to a link-local address (169.254.169.254); set CALLWRIGHT_TRUNK_ALLOW_PRIVATE=true to allow it',
      );
      await expect(refused).rejects.toBeInstanceOf(AppError);
      answers = ['10.20.30.40'];
      const allowed = await inviteForCall(store, call, {
        sandbox: null,
        secretBox,
        ringTimeoutMs: 5_000,
        trunkAllowPrivate: true,
        lookup,
        dns: noSrv,
      });
      expect(allowed.inviteOptions.destination).toEqual({
        host: '10.20.30.40',
        port: 5060,
        transport: 'udp',
      });
      expect(allowed.inviteOptions.allowsRemoteAddress?.('10.20.30.41')).toBe(true);
    });

    it('dials a sips: trunk over TLS checked against its configured name, and transport=tcp over TCP', async () => {
      const options = {
        sandbox: null,
        secretBox,
        ringTimeoutMs: 5_000,
        trunkAllowPrivate: false,
        lookup,
        dns: noSrv,
      };
      const tls = await inviteForCall(store, await callThrough('sips:pbx.example.com'), options);
      expect(tls.inviteOptions.requestUri).toBe('sips:+14155550123@pbx.example.com');
      expect(tls.inviteOptions.destination).toEqual({
        host: '93.184.215.14',
        port: 5061,
        transport: 'tls',
        tls: { serverName: 'pbx.example.com' },
      });
      const tcp = await inviteForCall(store, await callThrough('sip:pbx.example.com;transport=TCP'), options);
      expect(tcp.inviteOptions.requestUri).toBe('sip:+14155550123@pbx.example.com;transport=TCP');
      expect(tcp.inviteOptions.destination).toEqual({ host: '93.184.215.14', port: 5060, transport: 'tcp' });
      // A URI this release cannot honour (stored before the check) fails the dial; it is never sent over UDP.
      await expect(
        inviteForCall(store, await callThrough('sip:pbx.example.com;transport=sctp'), options),
      ).rejects.toThrow('cannot be honoured');
    });

    it('sends every request through the outbound proxy, resolved and vetted, keeping the trunk in the Request-URI', async () => {
      const options = {
        sandbox: null,
        secretBox,
        ringTimeoutMs: 5_000,
        trunkAllowPrivate: false,
        lookup,
        dns: noSrv,
      };
      const call = await callThrough('sip:carrier.example.com', {
        outboundProxy: 'sip:proxy.example.com:5080;transport=tcp',
      });
      const route = await inviteForCall(store, call, options);
      expect(lookups).toEqual(['proxy.example.com']);
      expect(route.inviteOptions.requestUri).toBe('sip:+14155550123@carrier.example.com');
      const proxy = { host: '93.184.215.14', port: 5080, transport: 'tcp' };
      expect(route.inviteOptions.outboundProxy).toEqual(proxy);
      expect(route.inviteOptions.destination).toEqual(proxy);
    });

    it('refuses, with what to change, a trunk of the other IP family than the SIP bind address', async () => {
      const options = {
        sandbox: null,
        secretBox,
        ringTimeoutMs: 5_000,
        trunkAllowPrivate: false,
        lookup,
        dns: noSrv,
      };
      answers = ['2606:4700::1111'];
      const call = await callThrough('sip:pbx.example.com');
      await expect(inviteForCall(store, call, { ...options, sipBindAddress: '0.0.0.0' })).rejects.toThrow(
        'is at an IPv6 address (2606:4700::1111) but SIP is bound to IPv4 (CALLWRIGHT_SIP_BIND=0.0.0.0): bind to ::',
      );
      const dualStack = await inviteForCall(store, call, { ...options, sipBindAddress: '::' });
      expect(dualStack.inviteOptions.destination?.host).toBe('2606:4700::1111');
      answers = ['93.184.215.14'];
      await expect(inviteForCall(store, call, { ...options, sipBindAddress: '2001:db8::5' })).rejects.toThrow(
        'is at an IPv4 address (93.184.215.14) but SIP is bound to IPv6 2001:db8::5',
      );
      expect(
        (await inviteForCall(store, call, { ...options, sipBindAddress: '0.0.0.0' })).trunkId,
      ).not.toBeNull();
    });

    it('honours symmetric RTP, P-Asserted-Identity and Privacy when the trunk asks, and only then', async () => {
      const options = {
        sandbox: null,
        secretBox,
        ringTimeoutMs: 5_000,
        trunkAllowPrivate: false,
        lookup,
        dns: noSrv,
      };
      const plain = await inviteForCall(store, await callThrough('sip:pbx.example.com'), options);
      expect(plain.latching).toBe('sdp-address');
      expect(plain.inviteOptions.extraHeaders).toBeUndefined();
      const call = await callThrough('sip:pbx.example.com', {
        symmetricRtp: true,
        assertedIdentity: true,
        privacy: true,
      });
      const route = await inviteForCall(store, call, options);
      expect(route.latching).toBe('any');
      expect(route.inviteOptions.extraHeaders).toEqual([
        { name: 'P-Asserted-Identity', value: `<sip:${call.fromNumber}@pbx.example.com>` },
        { name: 'Privacy', value: 'id' },
      ]);
    });

    it('refuses a trunk stored before the check existed (an internal literal) without any lookup', async () => {
      const call = await callThrough('sip:169.254.169.254:80');
      await expect(
        inviteForCall(store, call, {
          sandbox: null,
          secretBox,
          ringTimeoutMs: 5_000,
          trunkAllowPrivate: false,
          lookup,
          dns: noSrv,
        }),
      ).rejects.toThrow(/link-local address \(169\.254\.169\.254\)/);
      expect(lookups).toEqual([]);
    });

    it('keeps the sandbox carrier on loopback working, and lets only its address steer requests', async () => {
      const from = '+15550001111';
      await addPhoneNumber(store, accountId, from);
      const call = {
        accountId,
        fromNumber: from,
        toNumber: '+15550100001',
        variables: {},
      } as unknown as CallRecord;
      const route = await inviteForCall(store, call, {
        sandbox: { host: '127.0.0.1', port: 5099 },
        secretBox,
        ringTimeoutMs: 5_000,
        trunkAllowPrivate: false,
        lookup,
        dns: noSrv,
      });
      expect(route.trunkId).toBeNull();
      expect(route.inviteOptions.destination).toEqual({ host: '127.0.0.1', port: 5099 });
      expect(route.inviteOptions.allowsRemoteAddress?.('127.0.0.1')).toBe(true);
      expect(route.inviteOptions.allowsRemoteAddress?.('127.0.0.77')).toBe(false);
      expect(lookups).toEqual([]);
    });
  });
});
