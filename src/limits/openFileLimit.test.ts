import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { connectionSourceKey } from '../telephony/sip/streamTransport.js';
import { openFileSoftLimit, sipConnectionBudget } from './openFileLimit.js';

describe('the SIP connection budget', () => {
  it('reads the soft open-file limit from /proc/self/limits, null when there is none', () => {
    const directory = mkdtempSync(join(tmpdir(), 'limits-'));
    const file = join(directory, 'limits');
    writeFileSync(
      file,
      'Limit                     Soft Limit           Hard Limit           Units\nMax open files            1024                 524288               files\n',
    );
    expect(openFileSoftLimit(file)).toBe(1024);
    writeFileSync(file, 'Max open files            unlimited            unlimited            files\n');
    expect(openFileSoftLimit(file)).toBeNull();
    expect(openFileSoftLimit(join(directory, 'absent'))).toBeNull();
    rmSync(directory, { recursive: true });
    expect(openFileSoftLimit()).toBeGreaterThan(0);
  });

  it('keeps the cap within half the limit', () => {
    expect(sipConnectionBudget(256, 20_000)).toBe(256);
    expect(sipConnectionBudget(256, 256)).toBe(128);
    expect(sipConnectionBudget(256, null)).toBe(256);
    expect(sipConnectionBudget(256, 1)).toBe(1);
  });

  it('counts an IPv4 address as itself, an IPv4-mapped one as IPv4, and IPv6 by its /64', () => {
    expect(connectionSourceKey('192.0.2.7')).toBe('192.0.2.7');
    expect(connectionSourceKey('::ffff:192.0.2.7')).toBe('192.0.2.7');
    expect(connectionSourceKey('2001:db8:1:2:aaaa::1')).toBe('2001:db8:1:2::/64');
    expect(connectionSourceKey('2001:DB8:1:2:bbbb:cccc:dddd:eeee')).toBe('2001:db8:1:2::/64');
    expect(connectionSourceKey('2001:db8::1')).toBe('2001:db8:0:0::/64');
    expect(connectionSourceKey('::1')).toBe('0:0:0:0::/64');
  });
});
