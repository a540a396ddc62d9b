import { describe, expect, it } from 'vitest';
import { isMediaError } from './mediaError.js';
import { PortAllocator } from './portAllocator.js';

describe('PortAllocator', () => {
  it('hands out even ports of the range, rotating, and reuses released ones last', () => {
    const ports = new PortAllocator({ minPort: 10001, maxPort: 10008 });
    expect(ports.capacity).toBe(4);
    const first = [ports.allocate(), ports.allocate()];
    expect(first).toEqual([10002, 10004]);
    ports.release(10002);
    expect(ports.allocate()).toBe(10006);
    expect(ports.allocate()).toBe(10008);
    expect(ports.allocate()).toBe(10002);
    expect(ports.inUseCount).toBe(4);
  });

  it('fails with ports_exhausted when the range is used up', () => {
    const ports = new PortAllocator({ minPort: 20000, maxPort: 20002 });
    ports.allocate();
    ports.allocate();
    let error: unknown;
    try {
      ports.allocate();
    } catch (caught) {
      error = caught;
    }
    expect(isMediaError(error) && error.reason).toBe('ports_exhausted');
    expect(isMediaError(error) && error.code).toBe('unavailable');
  });

  it('rejects an empty or privileged range', () => {
    expect(() => new PortAllocator({ minPort: 100, maxPort: 200 })).toThrow(RangeError);
    expect(() => new PortAllocator({ minPort: 20001, maxPort: 20001 })).toThrow(RangeError);
  });
});
