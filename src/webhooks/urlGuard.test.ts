import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { AppError } from '../domain/errors.js';
import { refusedRangeOf } from '../net/ipRanges.js';
import { checkWebhookUrl, type HostnameLookup, resolveDeliveryAddress } from './urlGuard.js';

function appErrorOf(action: () => unknown): AppError {
  try {
    action();
  } catch (error) {
    expect(error).toBeInstanceOf(AppError);
    return error as AppError;
  }
  return expect.fail('expected an AppError');
}

async function rejectionOf(work: Promise<unknown>): Promise<AppError> {
  try {
    await work;
  } catch (error) {
    expect(error).toBeInstanceOf(AppError);
    return error as AppError;
  }
  return expect.fail('expected an AppError');
}

function fixedLookup(addresses: readonly string[]): HostnameLookup {
  return async () => addresses.map((address) => ({ address, family: address.includes(':') ? 6 : 4 }));
}

describe('refusedRangeOf', () => {
  it.each([
    ['0.0.0.0', 'unspecified'],
    ['0.1.2.3', 'reserved'],
    ['10.0.0.5', 'private'],
    ['10.255.255.255', 'private'],
    ['100.64.0.1', 'shared (CGNAT)'],
    ['100.127.255.255', 'shared (CGNAT)'],
    ['127.0.0.1', 'loopback'],
    ['127.255.255.254', 'loopback'],
    ['169.254.169.254', 'link-local'],
    ['172.16.0.1', 'private'],
    ['172.31.255.255', 'private'],
    ['192.0.0.8', 'reserved'],
    ['192.0.2.10', 'documentation'],
    ['192.88.99.1', 'reserved'],
    ['192.168.1.1', 'private'],
    ['198.18.0.1', 'benchmarking'],
    ['198.19.255.255', 'benchmarking'],
    ['198.51.100.7', 'documentation'],
    ['203.0.113.9', 'documentation'],
    ['224.0.0.251', 'multicast'],
    ['239.255.255.250', 'multicast'],
    ['240.0.0.1', 'reserved'],
    ['255.255.255.255', 'broadcast'],
  ])('IPv4 %s is %s', (address, kind) => {
    expect(refusedRangeOf(address)).toBe(kind);
  });

  it.each([
    '1.1.1.1',
    '8.8.8.8',
    '9.255.255.255',
    '11.0.0.0',
    '100.63.255.255',
    '100.128.0.0',
    '172.15.255.255',
    '172.32.0.0',
    '192.167.255.255',
    '192.169.0.0',
    '198.17.255.255',
    '198.20.0.0',
    '223.255.255.255',
  ])('IPv4 %s is public', (address) => {
    expect(refusedRangeOf(address)).toBeNull();
  });

  it.each([
    ['::', 'unspecified'],
    ['::1', 'loopback'],
    ['[::1]', 'loopback'],
    ['::ffff:127.0.0.1', 'loopback'],
    ['::ffff:7f00:1', 'loopback'],
    ['0:0:0:0:0:ffff:a00:5', 'private'],
    ['::ffff:0.0.0.0', 'unspecified'],
    ['::ffff:169.254.169.254', 'link-local'],
    ['::ffff:0:10.0.0.1', 'private'],
    ['::127.0.0.1', 'loopback'],
    ['::7f00:1', 'loopback'],
    ['::8.8.8.8', 'reserved'],
    ['64:ff9b::10.0.0.1', 'private'],
    ['64:ff9b::a9fe:a9fe', 'link-local'],
    ['64:ff9b:1::1', 'reserved'],
    ['2002:7f00:1::1', 'loopback'],
    ['2002:c0a8:101::1', 'private'],
    ['2002:808:808::1', 'reserved'],
    ['100::1', 'reserved'],
    ['2001::1', 'reserved'],
    ['2001:0:4136:e378:8000:63bf:3fff:fdd2', 'reserved'],
    ['2001:2::1', 'benchmarking'],
    ['2001:db8::1', 'documentation'],
    ['3fff::1', 'documentation'],
    ['fc00::1', 'unique-local'],
    ['fd12:3456:789a::1', 'unique-local'],
    ['fe80::1', 'link-local'],
    ['fe80::1%eth0', 'link-local'],
    ['febf::1', 'link-local'],
    ['fec0::1', 'reserved'],
    ['ff02::1', 'multicast'],
    ['ff0e::101', 'multicast'],
    ['5f00::1', 'reserved'],
    ['4000::1', 'reserved'],
  ])('IPv6 %s is %s', (address, kind) => {
    expect(refusedRangeOf(address)).toBe(kind);
  });

  it.each([
    '2606:4700:4700::1111',
    '2001:4860:4860::8888',
    '2a00:1450:4001:81c::200e',
    '::ffff:8.8.8.8',
    '64:ff9b::808:808',
    '2001:200::1',
  ])('IPv6 %s is public', (address) => {
    expect(refusedRangeOf(address)).toBeNull();
  });

  it('refuses text that is not an address', () => {
    expect(() => refusedRangeOf('example.com')).toThrow(TypeError);
  });

  it('judges an IPv4-mapped IPv6 address exactly like its IPv4 address', () => {
    fc.assert(
      fc.property(fc.ipV4(), (ipv4) => {
        expect(refusedRangeOf(`::ffff:${ipv4}`)).toBe(refusedRangeOf(ipv4));
      }),
      { numRuns: 2000 },
    );
  });

  it('refuses every address of the private IPv4 blocks', () => {
    const privateAddress = fc.oneof(
      fc.tuple(fc.constant(10), fc.nat(255), fc.nat(255), fc.nat(255)),
      fc.tuple(fc.constant(172), fc.integer({ min: 16, max: 31 }), fc.nat(255), fc.nat(255)),
      fc.tuple(fc.constant(192), fc.constant(168), fc.nat(255), fc.nat(255)),
    );
    fc.assert(
      fc.property(privateAddress, (octets) => {
        expect(refusedRangeOf(octets.join('.'))).toBe('private');
      }),
    );
  });
});

describe('checkWebhookUrl', () => {
  const refuse = (url: string) => appErrorOf(() => checkWebhookUrl(url, { allowPrivate: false }));

  it('accepts public http and https URLs and returns them parsed', () => {
    expect(checkWebhookUrl('https://hooks.example.com/callwright?x=1', { allowPrivate: false }).href).toBe(
      'https://hooks.example.com/callwright?x=1',
    );
    expect(checkWebhookUrl('http://8.8.8.8:8080/hook', { allowPrivate: false }).port).toBe('8080');
    expect(checkWebhookUrl('https://[2606:4700:4700::1111]/', { allowPrivate: false }).hostname).toBe(
      '[2606:4700:4700::1111]',
    );
  });

  it.each([
    ['not a url', 'not a valid absolute URL'],
    ['/relative/path', 'not a valid absolute URL'],
    ['ftp://example.com/hook', 'must use http or https, not ftp:'],
    ['file:///etc/passwd', 'must use http or https'],
    ['javascript:alert(1)', 'must use http or https'],
    ['https://user:secret@example.com/hook', 'must not contain a user name or password'],
    ['https://user@example.com/hook', 'must not contain a user name or password'],
    [`https://example.com/${'a'.repeat(2048)}`, 'longer than 2048 characters'],
  ])('refuses %s', (url, messagePart) => {
    const error = appErrorOf(() => checkWebhookUrl(url, { allowPrivate: true }));
    expect(error.code).toBe('validation_error');
    expect(error.message).toContain(messagePart);
  });

  it.each([
    ['http://127.0.0.1/hook', 'loopback', '127.0.0.1'],
    ['http://127.1/hook', 'loopback', '127.0.0.1'],
    ['http://0x7f.1/hook', 'loopback', '127.0.0.1'],
    ['http://0x7f000001/hook', 'loopback', '127.0.0.1'],
    ['http://2130706433/hook', 'loopback', '127.0.0.1'],
    ['http://017700000001/hook', 'loopback', '127.0.0.1'],
    ['http://0177.0.0.01/hook', 'loopback', '127.0.0.1'],
    ['http://127.0.0.1./hook', 'loopback', '127.0.0.1'],
    ['http://0/hook', 'unspecified', '0.0.0.0'],
    ['http://0.0.0.0:8080/hook', 'unspecified', '0.0.0.0'],
    ['http://10.0.0.5/hook', 'private', '10.0.0.5'],
    ['http://167772165/hook', 'private', '10.0.0.5'],
    ['http://169.254.169.254/latest/meta-data', 'link-local', '169.254.169.254'],
    ['http://100.64.1.1/', 'shared (CGNAT)', '100.64.1.1'],
    ['http://224.0.0.1/', 'multicast', '224.0.0.1'],
    ['http://192.0.2.1/', 'documentation', '192.0.2.1'],
    ['http://[::1]/hook', 'loopback', '::1'],
    ['http://[::]/hook', 'unspecified', '::'],
    ['http://[::ffff:127.0.0.1]/hook', 'loopback', '::ffff:7f00:1'],
    ['http://[0:0:0:0:0:ffff:7f00:1]/hook', 'loopback', '::ffff:7f00:1'],
    ['http://[::127.0.0.1]/hook', 'loopback', '::7f00:1'],
    ['http://[::ffff:10.0.0.5]/hook', 'private', '::ffff:a00:5'],
    ['http://[fe80::1]/hook', 'link-local', 'fe80::1'],
    ['http://[fd00::1]/hook', 'unique-local', 'fd00::1'],
    ['http://[ff02::1]/hook', 'multicast', 'ff02::1'],
    ['http://localhost:3000/hook', 'loopback', 'localhost'],
    ['http://LOCALHOST./hook', 'loopback', 'localhost.'],
    ['http://api.localhost/hook', 'loopback', 'api.localhost'],
  ])('refuses %s as %s unless private addresses are allowed', (url, kind, address) => {
    const error = refuse(url);
    expect(error.code).toBe('validation_error');
    const article = kind === 'unspecified' ? 'an' : 'a';
    expect(error.message).toBe(
      `webhook URL points to ${article} ${kind} address (${address}); set CALLWRIGHT_WEBHOOK_ALLOW_PRIVATE=true to allow it`,
    );
    expect(checkWebhookUrl(url, { allowPrivate: true })).toBeInstanceOf(URL);
  });
});

describe('resolveDeliveryAddress', () => {
  it('connects to the resolved address while keeping the hostname for Host and TLS', async () => {
    const target = await resolveDeliveryAddress('https://hooks.example.com:8443/in?x=1', {
      allowPrivate: false,
      lookup: fixedLookup(['93.184.215.14', '2606:2800:21f:cb07:6820:80da:af6b:8b2c']),
    });
    expect(target).toMatchObject({
      hostHeader: 'hooks.example.com:8443',
      tlsServerName: 'hooks.example.com',
      address: '93.184.215.14',
      family: 4,
      port: 8443,
    });
    expect(target.url.pathname).toBe('/in');
  });

  it('uses an IP literal as it is, without DNS', async () => {
    const lookupThatFails: HostnameLookup = async () => expect.fail('no lookup for an IP literal');
    const target = await resolveDeliveryAddress('http://[2606:4700:4700::1111]/hook', {
      allowPrivate: false,
      lookup: lookupThatFails,
    });
    expect(target).toMatchObject({
      address: '2606:4700:4700::1111',
      family: 6,
      port: 80,
      tlsServerName: undefined,
    });
    expect(target.hostHeader).toBe('[2606:4700:4700::1111]');
  });

  it('refuses a public-looking hostname that resolves to a private address (DNS rebinding)', async () => {
    const error = await rejectionOf(
      resolveDeliveryAddress('https://hooks.example.com/in', {
        allowPrivate: false,
        lookup: fixedLookup(['10.0.0.5']),
      }),
    );
    expect(error.code).toBe('validation_error');
    expect(error.message).toBe(
      'webhook URL host hooks.example.com resolves to a private address (10.0.0.5); set CALLWRIGHT_WEBHOOK_ALLOW_PRIVATE=true to allow it',
    );
  });

  it('refuses when any one of several resolved addresses is refused', async () => {
    const error = await rejectionOf(
      resolveDeliveryAddress('https://hooks.example.com/in', {
        allowPrivate: false,
        lookup: fixedLookup(['93.184.215.14', '::ffff:127.0.0.1']),
      }),
    );
    expect(error.message).toContain('resolves to a loopback address (::ffff:127.0.0.1)');
  });

  it('allows private addresses when asked to', async () => {
    const target = await resolveDeliveryAddress('http://hooks.internal:8080/in', {
      allowPrivate: true,
      lookup: fixedLookup(['10.0.0.5']),
    });
    expect(target).toMatchObject({ address: '10.0.0.5', port: 8080, hostHeader: 'hooks.internal:8080' });
  });

  it('reports a name that does not resolve as unavailable', async () => {
    const notFound: HostnameLookup = async () => {
      throw Object.assign(new Error('getaddrinfo ENOTFOUND nowhere.example'), { code: 'ENOTFOUND' });
    };
    const error = await rejectionOf(
      resolveDeliveryAddress('https://nowhere.example/in', { allowPrivate: false, lookup: notFound }),
    );
    expect(error.code).toBe('unavailable');
    expect(error.message).toBe('webhook URL host nowhere.example could not be resolved (ENOTFOUND)');
    const empty = await rejectionOf(
      resolveDeliveryAddress('https://nowhere.example/in', { allowPrivate: false, lookup: fixedLookup([]) }),
    );
    expect(empty.message).toBe('webhook URL host nowhere.example resolved to no address');
  });

  it('refuses a literal in a refused range before any lookup', async () => {
    const lookupThatFails: HostnameLookup = async () => expect.fail('no lookup for an IP literal');
    const error = await rejectionOf(
      resolveDeliveryAddress('http://0x7f.1/in', { allowPrivate: false, lookup: lookupThatFails }),
    );
    expect(error.message).toContain('loopback address (127.0.0.1)');
  });

  it('resolves localhost with the system resolver when private addresses are allowed', async () => {
    const target = await resolveDeliveryAddress('http://localhost:9/in', { allowPrivate: true });
    expect(refusedRangeOf(target.address)).toBe('loopback');
  });
});
