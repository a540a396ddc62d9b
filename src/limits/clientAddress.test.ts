import { describe, expect, it } from 'vitest';
import { addressLimitKey } from './clientAddress.js';

describe('addressLimitKey: what a per-address limit counts by', () => {
  it('an IPv4 address whole, also when written IPv4-mapped', () => {
    expect(addressLimitKey('203.0.113.7')).toBe('203.0.113.7');
    expect(addressLimitKey('::ffff:203.0.113.7')).toBe('203.0.113.7');
    expect(addressLimitKey('::FFFF:127.0.0.1')).toBe('127.0.0.1');
  });

  it('an IPv6 address by its /64, however it is written', () => {
    const key = '2001:db8:1:2::/64';
    for (const address of [
      '2001:db8:1:2::1',
      '2001:0db8:0001:0002:aaaa:bbbb:cccc:dddd',
      '2001:DB8:1:2:0:0:0:ffff',
      '2001:db8:1:2::192.0.2.1',
      'fe80::1%eth0'.replace('fe80::1', '2001:db8:1:2::9'),
    ]) {
      expect(addressLimitKey(address)).toBe(key);
    }
    expect(addressLimitKey('2001:db8:1:3::1')).toBe('2001:db8:1:3::/64');
    expect(addressLimitKey('2001:db8::1')).toBe('2001:db8:0:0::/64');
    expect(addressLimitKey('::1')).toBe('0:0:0:0::/64');
    expect(addressLimitKey('1::')).toBe('1:0:0:0::/64');
    expect(addressLimitKey('1:2::4:5:6:7:8')).toBe('1:2:0:4::/64');
    expect(addressLimitKey('1:2::6:7:1.2.3.4')).toBe('1:2:0:0::/64');
    expect(addressLimitKey('1:2::4:5:6:1.2.3.4')).toBe('1:2:0:4::/64');
  });

  it('anything else as it is', () => {
    expect(addressLimitKey('unknown')).toBe('unknown');
  });
});
